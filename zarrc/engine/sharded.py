"""The sharded strategy: reads and writes of sharded arrays (``sharding_indexed``,
nested too).

The unit of work is the innermost chunk.  A selection is planned over the
innermost chunk grid; each touched chunk is located through the shard indexes
(engine.shards: one snapshot of each shard per call, indexes cached per
version), and its bytes are then fetched on their own.  The chunks are decoded
and scattered by the same native batch as unsharded chunks, so a shard's inner
chunks decode in parallel.

Writes encode the touched inner chunks in parallel (native), keep every
untouched inner chunk of a partly written shard byte for byte, and assemble each
shard natively before storing it once; a write covering whole shards never reads
them.  With nested sharding, each touched shard is rebuilt from its decoded
contents, untouched sub-shards and inner chunks copied from the old shard.
"""

from __future__ import annotations

import math
from typing import Any

import numpy as np

from zarrc import indexing
from zarrc._kernels import chunk_files
from zarrc._kernels.batch import TaskError
from zarrc._kernels.chunk_files import temp_tag
from zarrc._kernels.plan import COL_COUNT, PROJECTION_COLS
from zarrc._kernels.read import ReadBatch
from zarrc._kernels.shard import assemble_shard
from zarrc._kernels.write import STORED, WriteBatch
from zarrc.codecs.sharding import EMPTY
from zarrc.engine import batch as b
from zarrc.engine.native import NativeStrategy
from zarrc.engine.shards import (
    MAX_OPEN_SHARDS,
    LazyLabels,
    ShardLevel,
    ShardReads,
    cached_index,
    empty_shard,
    locate,
    located_sources,
    parse_shard,
    shard_numbers,
)
from zarrc.engine.state import ChunkedArray
from zarrc.errors import StoreError, from_kernel
from zarrc.stores.base import BytesSnapshot
from zarrc.threads import counted_call, item_threads, run_each


class ShardedStrategy(NativeStrategy):
    """The native strategy for a sharded array (``arr.levels``): planned chunks are
    located through the shard indexes; writes rebuild each touched shard once."""

    def read_planned(self, table: np.ndarray, local: np.ndarray, outidx: np.ndarray,
                     tasks: np.ndarray, coords: np.ndarray, out: np.ndarray,
                     strides: tuple[int, ...]) -> None:
        read_planned(self.arr, table, local, outidx, tasks, coords, out, strides)

    @counted_call
    def write_from(self, dims: indexing.Plan, value: np.ndarray) -> None:
        write_from(self.arr, dims, value)


def read_planned(arr: ChunkedArray, table: np.ndarray, local: np.ndarray,
                 outidx: np.ndarray, tasks: np.ndarray, coords: np.ndarray, out: np.ndarray,
                 strides: tuple[int, ...], pinned: dict | None = None) -> None:
    """engine's native read of a planned selection, for a sharded array: each shard
    from one snapshot (``pinned``: snapshots to use for some shard keys), at most
    MAX_OPEN_SHARDS shards at a time (a local store's snapshot holds a file open)."""
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


def _read_region(arr: ChunkedArray, region: tuple[slice, ...], pinned: dict) -> np.ndarray:
    """``arr[region]`` read with the snapshots ``pinned`` for their shard keys."""
    dims, shape = indexing.plan(region, arr.shape, arr.chunks)
    out = np.empty(shape, arr.dtype)
    table, local, outidx, tasks = b.assemble(dims)
    read_planned(arr, table, local, outidx, tasks, b.task_coords(table, tasks), out,
                 b.array_strides(dims, out.strides), pinned)
    return out


# ---------------------------------------------------------------- writes

def encode_region(arr: ChunkedArray, value: np.ndarray, shape: tuple[int, ...],
                  chunk_shape: tuple[int, ...]) -> list:
    """Encode every chunk of ``value`` (an array of ``shape``, a shard's contents) with
    the innermost chain: encoded bytes per chunk in C order, None where a chunk is
    all fill value (and empty chunks are not kept)."""
    dims, _ = indexing.plan(Ellipsis, shape, chunk_shape)
    table, local, outidx, tasks = b.assemble(dims)
    assert arr.chain is not None          # (a sharded array's inner chain is native)
    batch = WriteBatch(arr.chain, table, local, outidx, tasks, value,
                       b.array_strides(dims, value.strides), arr.fill, [None] * len(tasks),
                       b".tmp", arr.write_empty_chunks)
    b.run_batch(batch, len(tasks))
    b.raise_task_error(batch, arr, [f"inner chunk {i} of a shard" for i in range(len(tasks))])
    return [batch.encoded(t) if batch.outcome(t) == STORED else None for t in range(len(tasks))]


def _encode_shard(arr: ChunkedArray, reads: ShardReads, depth: int, contents: np.ndarray,
                  origin: np.ndarray, touched: list, old: tuple | None) -> bytes | None:
    """Encode the level-``depth`` shard whose contents start at array index
    ``origin``.  Inner chunks / sub-shards the write does not touch (``touched``:
    per dimension, the sorted array indices written) are copied byte for byte from
    ``old`` = (key, start, length, bytes of the whole stored shard) of the old shard,
    if there is one (``reads`` holds those bytes as the shard's snapshot)."""
    level = arr.levels[depth]
    # the old shard's index and bytes, both set when ``kept`` (Any: mypy cannot
    # follow that, and the loop below tests only ``kept``)
    table: Any = None
    blob: Any = None
    old_key = None
    if old is not None:
        old_key = old[0]
        table = cached_index(arr, reads, depth, old_key, old[1], old[2] if depth else None)
        blob = old[3]
    kept = table is not None and blob is not None
    last = depth == len(arr.levels) - 1
    fresh = encode_region(arr, contents, level.shard_shape, level.inner_shape) if last else []
    parts: list = []
    for i, corner in enumerate(np.ndindex(*level.cps)):
        lo = origin + np.asarray(corner) * np.asarray(level.inner_shape)
        hit = all(np.searchsorted(t, a) < np.searchsorted(t, a + n)
                  for t, a, n in zip(touched, lo, level.inner_shape))
        if not hit and kept:
            off, nb = table[i]
            parts.append(None if off == EMPTY else (blob, int(off), int(nb)))
        elif last:
            parts.append(fresh[i])
        else:
            sub = tuple(slice(c * n, (c + 1) * n) for c, n in zip(corner, level.inner_shape))
            entry = table[i] if kept else None
            inner_old = (None if entry is None or entry[0] == EMPTY
                         else (old_key, int(entry[0]), int(entry[1]), blob))
            parts.append(_encode_shard(arr, reads, depth + 1, np.ascontiguousarray(contents[sub]), lo,
                                       touched, inner_old))
    codec = level.codec
    return assemble_shard(parts, codec.index_location == "start", codec.index_big_endian, codec.index_crc)


def _store_shard(arr: ChunkedArray, key: str, data: bytes | None, existed: bool) -> None:
    if data is not None:
        arr.store.set(key, data)
    elif existed:
        if arr.store.supports_deletes:
            arr.store.delete(key)
        elif arr.store.exists(key):
            # a zip cannot delete: store a shard whose inner chunks are all empty (only
            # over an existing shard; a shard that was never stored stays absent)
            arr.store.set(key, empty_shard(arr.levels[0]))
    arr.shard_cache.forget(key)


def write_from(arr: ChunkedArray, dims: indexing.Plan, value: np.ndarray) -> None:
    """engine write_from for a sharded array (see the module docstring)."""
    top = arr.levels[0]
    shard_shape = np.asarray(top.shard_shape, np.int64)
    table, local, outidx, tasks, coords = b.planned(dims)
    pos = coords * np.asarray(arr.chunks, np.int64)
    shards, which = np.unique(pos // shard_shape, axis=0, return_inverse=True)
    which = which.reshape(-1)
    keys = arr.chunk_keys(shards)
    if len(arr.levels) > 1:
        _write_whole_shards(arr, dims, value, shards, keys)
        return
    full = b.tasks_full(table, tasks)
    flat = (np.ravel_multi_index(((pos % shard_shape) // np.asarray(top.inner_shape)).T, top.cps)
            if len(top.cps) else np.zeros(len(tasks), np.int64))
    order = np.argsort(which, kind="stable")
    bounds = np.searchsorted(which[order], np.arange(len(keys) + 1))
    assert arr.chain is not None          # (a sharded array's inner chain is native)
    work = _ShardWrite(arr, table, local, outidx, tasks, value, b.array_strides(dims, value.strides),
                       keys, shards, which, coords, full, flat, order, bounds)
    per_group = max(1, GROUP_BYTES // max(1, top.nchunks * arr.chain.chunk_nbytes))
    try:
        for k0 in range(0, len(keys), per_group):
            work.group(k0, min(len(keys), k0 + per_group))
    except BaseException:
        work.discard()
        raise
    work.commit()


# A sharded write reads, rebuilds and writes the shards it touches a group at a
# time, each group's inner chunks holding about this many bytes decoded: its
# memory is bounded by this, not by the number of shards (files are staged and
# named once every group succeeded).
GROUP_BYTES = 4 << 20


class _ShardWrite:
    """One sharded write (one level of sharding), a group of shards at a time: the
    old shards read, their inner chunks encoded in one batch, each shard assembled
    and, for a store of files, written to its temporary file (``staged``), else
    kept (``built``); ``commit`` names the files (deletes emptied shards) or stores
    the shards, ``discard`` deletes the temporary files."""

    def __init__(self, arr, table, local, outidx, tasks, value, strides, keys, shards, which, coords,
                 full, flat, order, bounds) -> None:
        self.arr, self.table, self.local, self.outidx, self.tasks = arr, table, local, outidx, tasks
        self.value, self.strides, self.keys, self.shards = value, strides, keys, shards
        self.which, self.coords, self.full, self.flat = which, coords, full, flat
        self.order, self.bounds = order, bounds
        codec = arr.levels[0].codec
        self.layout = (codec.index_location == "start", codec.index_big_endian, codec.index_crc)
        self.tag = temp_tag()
        self.staged: list[tuple[str, bytes]] = []      # (key, file) with a temporary file
        self.emptied: list[str] = []                   # shards left with no data
        self.built: list[tuple[str, bytes | None]] = []

    def group(self, k0: int, k1: int) -> None:
        """Rewrite shards k0..k1-1 (their tasks: ``order[bounds[k0]:bounds[k1]]``)."""
        arr, top, bounds = self.arr, self.arr.levels[0], self.bounds
        members = self.order[bounds[k0]:bounds[k1]]
        n = len(members)
        old: dict[int, tuple[bytes, np.ndarray]] = {}
        # each partly written inner chunk's old bytes: a range of its old shard (one
        # native "ranges" source: no Python object per inner chunk)
        owner = np.full(n, -1, np.int64)
        start = np.zeros(n, np.int64)
        length = np.zeros(n, np.int64)
        holders: list[bytes] = []
        for k in range(k0, k1):
            lo, hi = bounds[k] - bounds[k0], bounds[k + 1] - bounds[k0]
            mine = members[lo:hi]
            if self.full[mine].sum() == _inner_chunks_in_bounds(arr, top, self.shards[k]):
                continue                                   # the whole shard is rewritten: no read
            blob = arr.store.get(self.keys[k])
            if blob is None:
                continue
            blob = bytes(blob)
            index_table = parse_shard(top, blob, f"shard {self.keys[k]} of {arr.name}")
            old[k] = (blob, index_table)
            entries = index_table[self.flat[mine]]
            kept = np.flatnonzero(~self.full[mine] & (entries[:, 0] != EMPTY))
            owner[lo + kept] = len(holders)
            start[lo + kept] = entries[kept, 0].astype(np.int64)
            length[lo + kept] = entries[kept, 1].astype(np.int64)
            holders.append(blob)
        batch = WriteBatch(arr.chain, self.table, self.local, self.outidx,
                           np.ascontiguousarray(self.tasks[members]), self.value, self.strides, arr.fill,
                           ("ranges", owner, start, length, holders), b".tmp", arr.write_empty_chunks)
        b.run_batch(batch, n)
        b.raise_task_error(batch, arr, LazyLabels(self.keys, self.which[members], self.coords[members]))

        def plan_shard(k: int) -> tuple[np.ndarray, Any]:
            """Each inner chunk's task in the batch (-1: none) and the old parts kept."""
            task_of_chunk = np.full(top.nchunks, -1, np.int64)
            lo, hi = bounds[k] - bounds[k0], bounds[k + 1] - bounds[k0]
            task_of_chunk[self.flat[members[lo:hi]]] = np.arange(lo, hi)
            if k not in old:
                return task_of_chunk, None
            blob, index_table = old[k]
            offsets = np.where(index_table[:, 0] == EMPTY, -1, index_table[:, 0].astype(np.int64))
            return task_of_chunk, (blob, offsets, index_table[:, 1].astype(np.int64))

        if arr.files is None:
            for k in range(k0, k1):
                self.built.append((self.keys[k], batch.shard(*plan_shard(k), *self.layout)))
            return

        def stage(k: int) -> None:
            key = self.keys[k]
            path = arr.key_file(key)
            try:
                written = batch.write_shard(path, self.tag, *plan_shard(k), *self.layout, stage=True)
            except TaskError as exc:     # (a failed I/O call: a StoreError)
                raise from_kernel(exc, f"shard {key} of {arr.name}: ") from None
            if written:
                self.staged.append((key, path))
            else:
                self.emptied.append(key)

        run_each(range(k0, k1), stage, item_threads(k1 - k0))

    def commit(self) -> None:
        arr = self.arr
        for key, path in self.staged:
            try:
                chunk_files.finish(path, self.tag, True)
            except OSError as exc:
                raise StoreError(f"cannot write shard {key} of {arr.name}: {exc.strerror}") from None
            arr.shard_cache.forget(key)
        for key in self.emptied:
            _store_shard(arr, key, None, existed=arr.store.exists(key))
        for key, data in self.built:
            _store_shard(arr, key, data, existed=True)

    def discard(self) -> None:
        for _, path in self.staged:
            try:
                chunk_files.finish(path, self.tag, False)
            except OSError:
                pass
        self.staged = []


def _inner_chunks_in_bounds(arr: ChunkedArray, level: ShardLevel, shard: np.ndarray) -> int:
    origin = shard * np.asarray(level.shard_shape)
    return math.prod(min(c, -(-(s - o) // i))
                     for c, s, o, i in zip(level.cps, arr.shape, origin, level.inner_shape))


def _write_whole_shards(arr, dims, value, shards, keys) -> None:
    """Nested sharding: rebuild each touched shard from its full contents, keeping the
    sub-shards and inner chunks the write does not touch byte for byte."""
    top = arr.levels[0]
    if isinstance(dims, indexing.Points):
        points = _point_positions(arr, dims)
        touched = [np.unique(p) for p in points]      # (per dimension: a superset of the chunks hit)
    else:
        positions = [_dim_positions(d, c) for d, c in zip(dims, arr.chunks)]
        touched = [np.unique(absolute) for absolute, _ in positions]
    fill = arr.fill_scalar()
    encoded = []
    for shard, key in zip(shards, keys):
        origin = shard * np.asarray(top.shard_shape)
        region = tuple(slice(int(o), int(min(o + s, n))) for o, s, n in zip(origin, top.shard_shape, arr.shape))
        contents = np.full(top.shard_shape, fill, arr.dtype)
        # the selection is the product of its dimensions' indices: it covers the
        # shard if each dimension's indices cover the shard's extent (points: never
        # taken to cover it)
        covered = not isinstance(dims, indexing.Points) and all(np.array_equal(t[(t >= r.start) & (t < r.stop)], np.arange(r.start, r.stop))
                      for t, r in zip(touched, region))
        # only a partly written shard needs its old contents: read once, they give
        # the old values and the parts kept byte for byte (one version of the shard)
        blob = None if covered else arr.store.get(key)
        pinned: dict[str, BytesSnapshot | None] = {key: None}
        if blob is not None:
            blob = bytes(blob)
            pinned[key] = BytesSnapshot(blob, f"shard {key} of {arr.name}")
            contents[tuple(slice(0, r.stop - r.start) for r in region)] = _read_region(arr, region, pinned)
        if isinstance(dims, indexing.Points):
            inside = np.logical_and.reduce([(p >= o) & (p < o + n)
                                            for p, o, n in zip(points, origin, top.shard_shape)])
            # (in the points' order: where one repeats, the last wins)
            contents[tuple(p[inside] - o for p, o in zip(points, origin))] = value[dims.out[inside]]
        else:
            src, dst = [], []
            for (absolute, out_pos), d, o, n in zip(positions, dims, origin, top.shard_shape):
                inside = (absolute >= o) & (absolute < o + n)
                dst.append(absolute[inside] - o)
                if not d.dropped:
                    src.append(out_pos[inside])
            contents[np.ix_(*dst)] = value[np.ix_(*src)].reshape([len(x) for x in dst]) if src else value
        old = None if blob is None else (key, 0, None, blob)
        with ShardReads(arr, pinned) as reads:
            encoded.append(_encode_shard(arr, reads, 0, contents, origin, touched, old))
    for key, data in zip(keys, encoded):
        _store_shard(arr, key, data, existed=True)


def _point_positions(arr: ChunkedArray, points: indexing.Points) -> list[np.ndarray]:
    """Per dimension, the array index of every point, in the plan's order (that of
    ``points.local`` and ``points.out``)."""
    counts = points.table[points.tasks[:, -1], COL_COUNT]
    corner = np.repeat(points.coords * np.asarray(arr.chunks, np.int64), counts, axis=0)
    within = np.unravel_index(points.local, arr.chunks)
    return [corner[:, d] + within[d] for d in range(len(arr.chunks))]


def _dim_positions(d: indexing.DimProjection, chunk: int) -> tuple[np.ndarray, np.ndarray]:
    """(array index, position in the value) of every element a dimension selects."""
    rows = np.asarray(d.table, np.int64).reshape(-1, PROJECTION_COLS)
    # (a row with ix >= 0 indexes d.local and d.out, which are then arrays)
    local = b.NO_INDEX if d.local is None else d.local
    positions = b.NO_INDEX if d.out is None else d.out
    absolute, out = [], []
    for c, start, step, count, out0, ix in rows:
        if ix < 0:
            absolute.append(c * chunk + start + step * np.arange(count))
            out.append(out0 + np.arange(count))
        else:
            absolute.append(c * chunk + local[ix:ix + count])
            out.append(positions[ix:ix + count])
    if not absolute:
        return np.zeros(0, np.int64), np.zeros(0, np.int64)
    return np.concatenate(absolute), np.concatenate(out)
