"""Sharded reads: each touched innermost chunk located through the shard indexes
(engine.sharding.index: one snapshot of each shard per call, indexes cached per
version), its bytes then fetched on their own and decoded and scattered by the
same native batch as unsharded chunks, so a shard's inner chunks decode in
parallel.  ``locate`` finds the byte range of each innermost chunk through the
indexes of every level.
"""

from __future__ import annotations

import math
from collections.abc import Callable
from contextlib import closing
from typing import Any

import numpy as np

from zarrc._kernels.read import ReadBatch
from zarrc.codecs.shard_index import DAMAGED, EMPTY
from zarrc.core import indexing
from zarrc.engine import batch as b
from zarrc.engine.sharding.index import MAX_OPEN_SHARDS, ShardReads, cached_index, damaged
from zarrc.engine.state import ChunkedArray
from zarrc.runtime.threads import run_io, submit_fetch

SMALL = 64      # locate() this many chunks or fewer in plain Python
# (innermost chunk coordinates, rows -> True for each chunk whose damaged index
# entry a read may take as empty: a write will wholly overwrite it; see locate)
Tolerate = Callable[[np.ndarray], np.ndarray]


def chunk_labels(arr: ChunkedArray, coords: np.ndarray) -> list[str]:
    """Names of inner chunks (rows of ``coords``) for error messages."""
    shards = arr.levels[0].shards_at(coords * np.asarray(arr.chunks, np.int64))
    return [_label(key, row) for key, row in zip(arr.chunk_keys(shards), coords)]


def _label(shard_key: str, coords: Any) -> str:
    """An inner chunk's name: its shard's key and its chunk grid coordinates."""
    return f"{shard_key} (inner chunk {tuple(int(c) for c in coords)})"


# Index tables of at most this many entries (or four per chunk located) are stacked
# to locate chunks in one lookup (_locate_stacked).
STACK_MIN = 1 << 16


def locate(arr: ChunkedArray, reads: ShardReads, coords: np.ndarray,
           tolerate: Tolerate | None = None) -> tuple[list[str], np.ndarray, np.ndarray, np.ndarray]:
    """Where each innermost chunk (rows of ``coords``) is stored in the versions of
    its shards that ``reads`` holds: (shard keys, key index per chunk, byte offset,
    byte length); offset -1 for empty chunks.  Raises CodecError (before anything
    is read) for a chunk whose index entry, at any level, is damaged
    (shard_index.check_index), unless ``tolerate`` (given the coordinates of such
    chunks, True for each one a write will wholly overwrite) accepts them all: they
    are then located as empty."""
    levels = arr.levels
    n, ndim = coords.shape
    if n <= SMALL:
        return _locate_small(arr, reads, coords, tolerate)
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
        flat = level.entries_at(pos, shards[which] if level.offsets is not None else None)
        live = np.flatnonzero(present)
        # the container of each chunk at this depth: its shard, and where in it the
        # (sub-)shard starts
        if depth == 0:
            ids, group = np.unique(which[live], return_inverse=True)
        else:      # a sub-shard: its shard and its offset in it
            ids, group = np.unique(np.stack([which[live], offset[live]]), axis=1, return_inverse=True)
        count = ids.shape[-1]
        if depth == 0 and count * level.nchunks <= max(STACK_MIN, 4 * len(live)):
            _locate_stacked(arr, reads, keys, shards, ids, group.reshape(-1), flat, live, present, offset, length,
                            coords, tolerate)
            continue
        order = np.argsort(group.reshape(-1), kind="stable")
        bounds = np.searchsorted(group.reshape(-1)[order], np.arange(count + 1))
        for j in range(count):
            members = live[order[bounds[j]:bounds[j + 1]]]
            first = members[0]
            where = (keys[which[first]], int(offset[first]), None if depth == 0 else int(length[first]))
            cps = level.cps_of(shards[which[first]]) if depth == 0 else level.cps
            table = cached_index(arr, reads, depth, *where, math.prod(cps))
            if table is None:
                present[members] = False
                continue
            entries = table[flat[members]]
            bad = np.flatnonzero(entries[:, 0] == DAMAGED)
            if len(bad):
                if tolerate is None or not tolerate(coords[members[bad]]).all():
                    t = members[bad[0]]
                    raise damaged(arr, reads, depth, *where, int(flat[t]), tuple(coords[t].tolist()), cps)
                entries[bad] = EMPTY
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


def _prefetch(arr: ChunkedArray, reads: ShardReads, keys: list[str], shards: np.ndarray,
              touched: np.ndarray) -> None:
    """For a store whose reads wait on a network: every shard's version and index
    fetched at once, not one shard after another; a shard the read mostly covers
    fetched whole in one request (``ShardReads.load_whole``) rather than as a
    version check, an index and ranges (``shards``: their grid coordinates)."""
    top = arr.levels[0]
    small = arr.chain is not None and top.nchunks * arr.chain.chunk_nbytes <= WHOLE_SHARD_BYTES

    def fetch(i: int) -> None:
        nchunks = top.nchunks_of(shards[i])
        if small and touched[i] >= WHOLE_SHARE * nchunks:
            reads.load_whole(keys[i], f"shard {keys[i]} of {arr.name}")
        cached_index(arr, reads, 0, keys[i], 0, None, nchunks)

    run_io(range(len(keys)), fetch)


def _locate_stacked(arr, reads, keys, shards, ids, group, flat, live, present, offset, length, coords,
                    tolerate) -> None:
    """locate()'s top level for chunks ``live`` in shards ``ids`` (``group``: each
    chunk's shard among them, ``flat``: its number in the shard): the shards' index
    tables stacked, then one lookup for all chunks (no numpy calls per shard)."""
    level = arr.levels[0]
    missing = np.full((level.nchunks, 2), EMPTY, np.uint64)
    if level.offsets is None:
        tables = [cached_index(arr, reads, 0, keys[i], 0, None) for i in ids.tolist()]
    else:         # (shards of several sizes: each table padded to the largest's)
        tables = [_padded(cached_index(arr, reads, 0, keys[i], 0, None, level.nchunks_of(shards[i])), missing)
                  for i in ids.tolist()]
    stacked = np.stack([missing if t is None else t for t in tables])
    entries = stacked[group, flat[live]]
    bad = np.flatnonzero(entries[:, 0] == DAMAGED)
    if len(bad):
        if tolerate is None or not tolerate(coords[live[bad]]).all():
            t = live[bad[0]]
            raise damaged(arr, reads, 0, keys[ids[group[bad[0]]]], 0, None, int(flat[t]),
                          tuple(coords[t].tolist()), level.cps_of(shards[ids[group[bad[0]]]]))
        entries[bad] = EMPTY
    empty = entries[:, 0] == EMPTY
    present[live[empty]] = False
    offset[live] = np.where(empty, 0, entries[:, 0].astype(np.int64))
    length[live] = np.where(empty, -1, entries[:, 1].astype(np.int64))


def _padded(table: np.ndarray | None, missing: np.ndarray) -> np.ndarray | None:
    """An index ``table`` extended with ``missing``'s empty entries to its length."""
    if table is None or len(table) == len(missing):
        return table
    return np.concatenate([table, missing[len(table):]])


def _locate_small(arr: ChunkedArray, reads: ShardReads, coords: np.ndarray, tolerate: Tolerate | None):
    """locate() for a few chunks, in plain Python (numpy's per-call costs would dominate)."""
    levels = arr.levels
    top = levels[0]
    positions = [[c * k for c, k in zip(row, arr.chunks)] for row in coords.tolist()]
    shard_ids: dict = {}
    which = [shard_ids.setdefault(top.shard_of(pos), len(shard_ids)) for pos in positions]
    shards = list(shard_ids)
    keys = arr.chunk_keys(np.array(shards, np.int64).reshape(len(shard_ids), len(top.shard_shape)))
    offset, length = [], []
    for r, (row, pos, k) in enumerate(zip(coords.tolist(), positions, which)):
        start, size = 0, None
        for depth, level in enumerate(levels):
            flat, cps = level.entry_in(pos, shards[k])      # (shards[k]: used by the top level only)
            table = cached_index(arr, reads, depth, keys[k], start, size,
                                 None if cps is level.cps else math.prod(cps))
            entry = None if table is None else table[flat]
            if entry is not None and entry[0] == DAMAGED:
                if tolerate is not None and tolerate(coords[r:r + 1])[0]:
                    start = -1
                    break
                raise damaged(arr, reads, depth, keys[k], start, size if depth else None, flat,
                              tuple(int(c) for c in row), cps)
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
    return arr.levels[0].grid(arr.shape)


def shard_numbers(arr: ChunkedArray, coords: np.ndarray) -> np.ndarray:
    """The top-level shard (C-order number in the shard grid) of each inner chunk."""
    if not coords.shape[1]:
        return np.zeros(len(coords), np.int64)
    return np.ravel_multi_index(arr.levels[0].shards_at(coords * np.asarray(arr.chunks, np.int64)).T,
                                shard_grid(arr))


class LazyLabels:
    """Chunk names for error messages, made only when one is needed."""

    def __init__(self, keys, which, coords) -> None:
        self._keys, self._which, self._coords = keys, which, coords

    def __getitem__(self, t: int) -> str:
        return _label(self._keys[self._which[t]], self._coords[t])


def read_planned(arr: ChunkedArray, table: np.ndarray, local: np.ndarray,
                 outidx: np.ndarray, tasks: np.ndarray, coords: np.ndarray, out: np.ndarray,
                 strides: tuple[int, ...], pinned: dict | None = None, tolerate: Tolerate | None = None) -> None:
    """engine's native read of a planned selection, for a sharded array: each shard
    from one snapshot (``pinned``: snapshots to use for some shard keys), at most
    MAX_OPEN_SHARDS shards at a time (a local store's snapshot holds a file open).
    ``tolerate``: see locate."""
    if arr.store.fetch_window is not None and len(coords):
        _read_streamed(arr, table, local, outidx, tasks, coords, out, strides, pinned, tolerate)
        return
    shard = shard_numbers(arr, coords)
    first = np.unique(shard)
    if len(first) <= MAX_OPEN_SHARDS:
        _read_group(arr, table, local, outidx, tasks, coords, out, strides, pinned, tolerate)
        return
    for lo in range(0, len(first), MAX_OPEN_SHARDS):
        group = first[lo:lo + MAX_OPEN_SHARDS]
        members = np.flatnonzero((shard >= group[0]) & (shard <= group[-1]))
        _read_group(arr, table, local, outidx, np.ascontiguousarray(tasks[members]),
                    coords[members], out, strides, pinned, tolerate)


def _read_group(arr, table, local, outidx, tasks, coords, out, strides, pinned, tolerate) -> None:
    with ShardReads(arr, pinned) as reads:
        keys, which, offset, length = locate(arr, reads, coords, tolerate)
        sources = located_sources(reads, keys, which, offset, length)
        batch = ReadBatch(arr.chain, table, local, outidx, tasks, out, strides, arr.fill, sources)
        b.run_batch(batch, len(tasks))
    b.raise_task_error(batch, arr, LazyLabels(keys, which, coords))


# A streamed read (a store whose reads wait on a network) takes its shards in parts
# of about PART_BYTES decoded bytes of touched inner chunks (whole shards, at least
# one), fetching the next ones while one decodes (batch.fetched_ahead): as many
# parts ahead as AHEAD_BYTES of them hold (at least batch.AHEAD).  Small parts let
# the first decode start after one shard's round trip, and the parts ahead keep
# the requests in flight: at most max(AHEAD_BYTES, batch.AHEAD parts) + a part's
# bytes are held at once.
PART_BYTES = 4 << 20
AHEAD_BYTES = 64 << 20


def _read_streamed(arr, table, local, outidx, tasks, coords, out, strides, pinned, tolerate) -> None:
    """read_planned for a store whose reads wait on a network: the shards in parts
    (PART_BYTES), each part's shard versions, indexes and inner chunk bytes fetched
    on the fetch threads (``_fetch_part``, AHEAD_BYTES of parts ahead) while the
    parts before decode, so I/O and decoding overlap and a selection's bytes are
    never all held."""
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
    largest = max(map(len, spans)) * max(1, arr.chain.chunk_nbytes)
    ahead = max(b.AHEAD, AHEAD_BYTES // largest)

    def fetch(members: np.ndarray) -> Any:
        return submit_fetch(lambda: _fetch_part(arr, coords[members], pinned, tolerate))

    def drop(future: Any) -> None:       # (a part fetched for a read that failed)
        try:
            future.result()[0].close()
        except Exception:                # noqa: BLE001, S110 - the read's own error is raised
            pass

    with closing(b.fetched_ahead(spans, fetch, drop, ahead, as_done=True)) as fetched:
        for members, (reads, keys, which, sources) in fetched:
            with reads:
                part = np.ascontiguousarray(tasks[members])
                batch = ReadBatch(arr.chain, table, local, outidx, part, out, strides, arr.fill, sources)
                b.run_batch(batch, len(part))
            b.raise_task_error(batch, arr, LazyLabels(keys, which, coords[members]))


def _fetch_part(arr: ChunkedArray, coords: np.ndarray, pinned: dict | None,
                tolerate: Tolerate | None = None) -> tuple:
    """A streamed read's part (inner chunks ``coords``): (its ShardReads, to close
    once decoded; shard keys; key index per chunk; the chunks' batch sources), the
    shards' versions and indexes fetched at once (``_prefetch``), then the inner
    chunks' ranges."""
    reads = ShardReads(arr, pinned)
    try:
        shards, touched = np.unique(shard_numbers(arr, coords), return_counts=True)
        grid = np.stack(np.unravel_index(shards, shard_grid(arr)), axis=1) if coords.shape[1] else \
            np.zeros((1, 0), np.int64)
        _prefetch(arr, reads, arr.chunk_keys(grid), grid, touched)
        keys, which, offset, length = locate(arr, reads, coords, tolerate)
        return reads, keys, which, located_sources(reads, keys, which, offset, length)
    except BaseException:
        reads.close()
        raise


def read_region(arr: ChunkedArray, region: tuple[slice, ...], pinned: dict,
                tolerate: Tolerate | None = None) -> np.ndarray:
    """``arr[region]`` read with the snapshots ``pinned`` for their shard keys
    (``tolerate``: see locate; such chunks read as the fill value)."""
    dims, shape = indexing.plan(region, arr.shape, arr.chunks)
    out = b.new_output(shape, arr.dtype)
    table, local, outidx, tasks = b.assemble(dims)
    read_planned(arr, table, local, outidx, tasks, b.task_coords(table, tasks), out,
                 b.array_strides(dims, out.strides), pinned, tolerate)
    return out
