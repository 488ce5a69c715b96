"""Sharded reads: each touched innermost chunk located through the shard indexes
(engine.sharding.index: one snapshot of each shard per call, indexes cached per
version), its bytes then fetched on their own and decoded and scattered by the
same native batch as unsharded chunks, so a shard's inner chunks decode in
parallel.  ``locate`` finds the byte range of each innermost chunk through the
indexes of every level.
"""

from __future__ import annotations

from contextlib import closing
from typing import Any

import numpy as np

from zarrc._kernels.read import ReadBatch
from zarrc.codecs.shard_index import EMPTY
from zarrc.core import indexing
from zarrc.engine import batch as b
from zarrc.engine.sharding.index import MAX_OPEN_SHARDS, ShardReads, cached_index
from zarrc.engine.state import ChunkedArray
from zarrc.runtime.threads import run_io, submit_fetch

SMALL = 64      # locate() this many chunks or fewer in plain Python


def chunk_labels(arr: ChunkedArray, coords: np.ndarray) -> list[str]:
    """Names of inner chunks (rows of ``coords``) for error messages."""
    shards = coords * np.asarray(arr.chunks, np.int64) // np.asarray(arr.levels[0].shard_shape, np.int64)
    return [_label(key, row) for key, row in zip(arr.chunk_keys(shards), coords)]


def _label(shard_key: str, coords: Any) -> str:
    """An inner chunk's name: its shard's key and its chunk grid coordinates."""
    return f"{shard_key} (inner chunk {tuple(int(c) for c in coords)})"


# Index tables of at most this many entries (or four per chunk located) are stacked
# to locate chunks in one lookup (_locate_stacked).
STACK_MIN = 1 << 16


def locate(arr: ChunkedArray, reads: ShardReads,
           coords: np.ndarray) -> tuple[list[str], np.ndarray, np.ndarray, np.ndarray]:
    """Where each innermost chunk (rows of ``coords``) is stored in the versions of
    its shards that ``reads`` holds: (shard keys, key index per chunk, byte offset,
    byte length); offset -1 for empty chunks."""
    levels = arr.levels
    n, ndim = coords.shape
    if n <= SMALL:
        return _locate_small(arr, reads, coords)
    pos = coords * np.asarray(arr.chunks, np.int64)
    if ndim:
        shard_ids, which = np.unique(shard_numbers(arr, coords), return_inverse=True)
        shards = np.stack(np.unravel_index(shard_ids, shard_grid(arr)), axis=1)
    else:
        which, shards = np.zeros(n, np.int64), np.zeros((1, 0), np.int64)
    which = which.reshape(-1)
    keys = arr.chunk_keys(shards)
    offset = np.zeros(n, np.int64)
    length = np.full(n, -1, np.int64)
    present = np.ones(n, bool)
    for depth, level in enumerate(levels):
        within = (pos % np.asarray(level.shard_shape, np.int64)) // np.asarray(level.inner_shape, np.int64)
        flat = np.ravel_multi_index(within.T, level.cps) if ndim else np.zeros(n, np.int64)
        live = np.flatnonzero(present)
        # the container of each chunk at this depth: its shard, and where in it the
        # (sub-)shard starts
        if depth == 0:
            ids, group = np.unique(which[live], return_inverse=True)
        else:      # a sub-shard: its shard and its offset in it
            ids, group = np.unique(np.stack([which[live], offset[live]]), axis=1, return_inverse=True)
        count = ids.shape[-1]
        if depth == 0 and count * level.nchunks <= max(STACK_MIN, 4 * len(live)):
            _locate_stacked(arr, reads, keys, ids, group.reshape(-1), flat, live, present, offset, length)
            continue
        order = np.argsort(group.reshape(-1), kind="stable")
        bounds = np.searchsorted(group.reshape(-1)[order], np.arange(count + 1))
        for j in range(count):
            members = live[order[bounds[j]:bounds[j + 1]]]
            first = members[0]
            table = cached_index(arr, reads, depth, keys[which[first]], int(offset[first]),
                           None if depth == 0 else int(length[first]))
            if table is None:
                present[members] = False
                continue
            entries = table[flat[members]]
            empty = entries[:, 0] == EMPTY
            present[members[empty]] = False
            offset[members[~empty]] = entries[~empty, 0].astype(np.int64)
            length[members[~empty]] = entries[~empty, 1].astype(np.int64)
    offset[~present] = -1
    return keys, which, offset, length


# A remote shard of which a read touches at least this share of the inner chunks,
# and whose inner chunks hold at most WHOLE_SHARD_BYTES decoded, is fetched whole
WHOLE_SHARE = 0.5
WHOLE_SHARD_BYTES = 256 << 20


def _prefetch(arr: ChunkedArray, reads: ShardReads, keys: list[str], touched: np.ndarray) -> None:
    """For a store whose reads wait on a network: every shard's version and index
    fetched at once, not one shard after another; a shard the read mostly covers
    fetched whole in one request (``ShardReads.load_whole``) rather than as a
    version check, an index and ranges."""
    top = arr.levels[0]
    small = arr.chain is not None and top.nchunks * arr.chain.chunk_nbytes <= WHOLE_SHARD_BYTES

    def fetch(i: int) -> None:
        if small and touched[i] >= WHOLE_SHARE * top.nchunks:
            reads.load_whole(keys[i], f"shard {keys[i]} of {arr.name}")
        cached_index(arr, reads, 0, keys[i], 0, None)

    run_io(range(len(keys)), fetch)


def _locate_stacked(arr, reads, keys, ids, group, flat, live, present, offset, length) -> None:
    """locate()'s top level for chunks ``live`` in shards ``ids`` (``group``: each
    chunk's shard among them, ``flat``: its number in the shard): the shards' index
    tables stacked, then one lookup for all chunks (no numpy calls per shard)."""
    level = arr.levels[0]
    missing = np.full((level.nchunks, 2), EMPTY, np.uint64)
    tables = [cached_index(arr, reads, 0, keys[i], 0, None) for i in ids.tolist()]
    stacked = np.stack([missing if t is None else t for t in tables])
    entries = stacked[group, flat[live]]
    empty = entries[:, 0] == EMPTY
    present[live[empty]] = False
    offset[live] = np.where(empty, 0, entries[:, 0].astype(np.int64))
    length[live] = np.where(empty, -1, entries[:, 1].astype(np.int64))


def _locate_small(arr: ChunkedArray, reads: ShardReads, coords: np.ndarray):
    """locate() for a few chunks, in plain Python (numpy's per-call costs would dominate)."""
    levels = arr.levels
    top = levels[0].shard_shape
    positions = [[c * k for c, k in zip(row, arr.chunks)] for row in coords.tolist()]
    shard_ids: dict = {}
    which = [shard_ids.setdefault(tuple(p // s for p, s in zip(pos, top)), len(shard_ids))
             for pos in positions]
    keys = arr.chunk_keys(np.array(list(shard_ids), np.int64).reshape(len(shard_ids), len(top)))
    offset, length = [], []
    for pos, k in zip(positions, which):
        start, size = 0, None
        for depth, level in enumerate(levels):
            table = cached_index(arr, reads, depth, keys[k], start, size)
            flat = 0
            for p, s, i, c in zip(pos, level.shard_shape, level.inner_shape, level.cps):
                flat = flat * c + (p % s) // i
            entry = None if table is None else table[flat]
            if entry is None or entry[0] == EMPTY:
                start = -1
                break
            start, size = int(entry[0]), int(entry[1])
        offset.append(start)
        length.append(size if start >= 0 else -1)
    return keys, np.array(which, np.int64), np.array(offset, np.int64), np.array(length, np.int64)


def located_sources(reads: ShardReads, keys: list[str], which: np.ndarray, offset: np.ndarray,
             length: np.ndarray) -> list | tuple:
    """Native batch sources of located chunks: their byte ranges in the shard
    versions ``reads`` holds (ranges of open files, or bytes in memory): one
    ("ranges", ...) source for all when every snapshot has a holder (no Python
    object per chunk), else one source per chunk."""
    sources: list = [None] * len(which)
    present = np.flatnonzero(offset >= 0)
    if not len(present):
        return sources
    present = present[np.argsort(which[present], kind="stable")]
    bounds = np.searchsorted(which[present], np.arange(len(keys) + 1)).tolist()
    ranges = _holder_ranges(reads, keys, which, offset, length, present, bounds)
    if ranges is not None:
        return ranges
    def fetch(k: int) -> None:
        members = present[bounds[k]:bounds[k + 1]]
        if len(members):
            snap = reads.snapshot(keys[k])
            assert snap is not None        # (locate found chunks in it)
            found = snap.sources(offset[members].tolist(), length[members].tolist())
            for t, src in zip(members.tolist(), found):
                sources[t] = src

    if reads.store.fetch_window is not None:       # (a remote store: the shards' ranges at once)
        run_io(range(len(keys)), fetch)
    else:
        for k in range(len(keys)):
            fetch(k)
    return sources


def _holder_ranges(reads, keys, which, offset, length, present, bounds) -> tuple | None:
    """located_sources' ("ranges", holder per chunk (-1: none), offset, length,
    holders), or None if a snapshot has no holder.  StoreError for a range outside
    its snapshot."""
    holders: list = []
    owner = np.full(len(which), -1, np.int64)
    start = offset.copy()
    for k, key in enumerate(keys):
        lo, hi = bounds[k], bounds[k + 1]
        if lo == hi:
            continue
        snap = reads.snapshot(key)
        assert snap is not None        # (locate found chunks in it)
        held = snap.holder()
        if held is None:
            return None
        members = present[lo:hi]
        snap.check_ranges(offset[members], length[members])
        owner[members] = len(holders)
        start[members] += held[1]
        holders.append(held[0])
    return ("ranges", owner, start, length, holders)


def shard_grid(arr: ChunkedArray) -> tuple[int, ...]:
    """The shape of the grid of top-level shards."""
    return tuple(-(-s // c) for s, c in zip(arr.shape, arr.levels[0].shard_shape))


def shard_numbers(arr: ChunkedArray, coords: np.ndarray) -> np.ndarray:
    """The top-level shard (C-order number in the shard grid) of each inner chunk."""
    if not coords.shape[1]:
        return np.zeros(len(coords), np.int64)
    shard_shape = np.asarray(arr.levels[0].shard_shape, np.int64)
    return np.ravel_multi_index(((coords * np.asarray(arr.chunks, np.int64)) // shard_shape).T,
                                shard_grid(arr))


class LazyLabels:
    """Chunk names for error messages, made only when one is needed."""

    def __init__(self, keys, which, coords) -> None:
        self._keys, self._which, self._coords = keys, which, coords

    def __getitem__(self, t: int) -> str:
        return _label(self._keys[self._which[t]], self._coords[t])


def read_planned(arr: ChunkedArray, table: np.ndarray, local: np.ndarray,
                 outidx: np.ndarray, tasks: np.ndarray, coords: np.ndarray, out: np.ndarray,
                 strides: tuple[int, ...], pinned: dict | None = None) -> None:
    """engine's native read of a planned selection, for a sharded array: each shard
    from one snapshot (``pinned``: snapshots to use for some shard keys), at most
    MAX_OPEN_SHARDS shards at a time (a local store's snapshot holds a file open)."""
    if arr.store.fetch_window is not None and len(coords):
        _read_streamed(arr, table, local, outidx, tasks, coords, out, strides, pinned)
        return
    shard = shard_numbers(arr, coords)
    first = np.unique(shard)
    if len(first) <= MAX_OPEN_SHARDS:
        _read_group(arr, table, local, outidx, tasks, coords, out, strides, pinned)
        return
    for lo in range(0, len(first), MAX_OPEN_SHARDS):
        group = first[lo:lo + MAX_OPEN_SHARDS]
        members = np.flatnonzero((shard >= group[0]) & (shard <= group[-1]))
        _read_group(arr, table, local, outidx, np.ascontiguousarray(tasks[members]),
                    coords[members], out, strides, pinned)


def _read_group(arr, table, local, outidx, tasks, coords, out, strides, pinned) -> None:
    with ShardReads(arr, pinned) as reads:
        keys, which, offset, length = locate(arr, reads, coords)
        sources = located_sources(reads, keys, which, offset, length)
        batch = ReadBatch(arr.chain, table, local, outidx, tasks, out, strides, arr.fill, sources)
        b.run_batch(batch, len(tasks))
    b.raise_task_error(batch, arr, LazyLabels(keys, which, coords))


# A streamed read (a store whose reads wait on a network) takes its shards in parts
# of about this many decoded bytes of touched inner chunks (whole shards, at least
# one), fetching the next ones while one decodes (batch.fetched_ahead): at most
# batch.AHEAD + 1 parts' bytes are held at once.
PART_BYTES = 16 << 20


def _read_streamed(arr, table, local, outidx, tasks, coords, out, strides, pinned) -> None:
    """read_planned for a store whose reads wait on a network: the shards in parts
    (PART_BYTES), each part's shard versions, indexes and inner chunk bytes fetched
    on the fetch threads (``_fetch_part``) while the part before decodes, so I/O and
    decoding overlap and a selection's bytes are never all held."""
    shard = shard_numbers(arr, coords)
    order = np.argsort(shard, kind="stable")
    _, starts, counts = np.unique(shard[order], return_index=True, return_counts=True)
    per_part = max(1, PART_BYTES // max(1, arr.chain.chunk_nbytes))
    parts, lo, taken = [], 0, 0
    for i, n in enumerate(counts.tolist()):
        if taken and taken + n > per_part:
            parts.append((lo, i))
            lo, taken = i, 0
        taken += n
    parts.append((lo, len(counts)))
    spans = [order[starts[a]:starts[z] if z < len(starts) else len(order)] for a, z in parts]

    def fetch(members: np.ndarray) -> Any:
        return submit_fetch(lambda: _fetch_part(arr, coords[members], pinned))

    def drop(future: Any) -> None:       # (a part fetched for a read that failed)
        try:
            future.result()[0].close()
        except Exception:                # noqa: BLE001, S110 - the read's own error is raised
            pass

    with closing(b.fetched_ahead(spans, fetch, drop)) as fetched:
        for members, (reads, keys, which, sources) in fetched:
            with reads:
                part = np.ascontiguousarray(tasks[members])
                batch = ReadBatch(arr.chain, table, local, outidx, part, out, strides, arr.fill, sources)
                b.run_batch(batch, len(part))
            b.raise_task_error(batch, arr, LazyLabels(keys, which, coords[members]))


def _fetch_part(arr: ChunkedArray, coords: np.ndarray, pinned: dict | None) -> tuple:
    """A streamed read's part (inner chunks ``coords``): (its ShardReads, to close
    once decoded; shard keys; key index per chunk; the chunks' batch sources), the
    shards' versions and indexes fetched at once (``_prefetch``), then the inner
    chunks' ranges."""
    reads = ShardReads(arr, pinned)
    try:
        shards, touched = np.unique(shard_numbers(arr, coords), return_counts=True)
        grid = np.stack(np.unravel_index(shards, shard_grid(arr)), axis=1) if coords.shape[1] else \
            np.zeros((1, 0), np.int64)
        _prefetch(arr, reads, arr.chunk_keys(grid), touched)
        keys, which, offset, length = locate(arr, reads, coords)
        return reads, keys, which, located_sources(reads, keys, which, offset, length)
    except BaseException:
        reads.close()
        raise


def read_region(arr: ChunkedArray, region: tuple[slice, ...], pinned: dict) -> np.ndarray:
    """``arr[region]`` read with the snapshots ``pinned`` for their shard keys."""
    dims, shape = indexing.plan(region, arr.shape, arr.chunks)
    out = np.empty(shape, arr.dtype)
    table, local, outidx, tasks = b.assemble(dims)
    read_planned(arr, table, local, outidx, tasks, b.task_coords(table, tasks), out,
                 b.array_strides(dims, out.strides), pinned)
    return out
