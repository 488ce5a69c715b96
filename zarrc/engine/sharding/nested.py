"""Writes of arrays with nested sharding: each touched shard rebuilt from its
decoded contents (read once, from one version of the shard), the sub-shards and
inner chunks the write does not touch copied byte for byte from the old shard.
Unlike one level of sharding (engine.sharding.writes), this holds a whole shard
in memory.
"""

from __future__ import annotations

import math
from typing import Any

import numpy as np

from zarrc._kernels.plan import COL_COUNT, PROJECTION_COLS
from zarrc._kernels.write import STORED, WriteBatch
from zarrc.codecs.shard_index import DAMAGED, EMPTY
from zarrc.core import indexing
from zarrc.engine import batch as b
from zarrc.engine.sharding.index import ShardReads, cached_index, damaged
from zarrc.engine.sharding.reads import read_region
from zarrc.engine.state import ChunkedArray
from zarrc.stores.base import BytesSnapshot


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
    """Encode the level-``depth`` shard whose contents (of the shard's shape: on a
    rectilinear grid's top level, its own) start at array index ``origin``.  Inner chunks / sub-shards the write does not touch (``touched``:
    per dimension, the sorted array indices written) are copied byte for byte from
    ``old`` = (key, start, length, bytes of the whole stored shard) of the old shard,
    if there is one (``reads`` holds those bytes as the shard's snapshot)."""
    level = arr.levels[depth]
    cps = tuple(n // i for n, i in zip(contents.shape, level.inner_shape))
    # the old shard's index and bytes, both set when ``kept`` (Any: mypy cannot
    # follow that, and the loop below tests only ``kept``)
    table: Any = None
    blob: Any = None
    old_key: Any = None
    old_start, old_length = 0, None
    if old is not None:
        old_key, old_start, old_length = old[0], old[1], old[2] if depth else None
        table = cached_index(arr, reads, depth, old_key, old_start, old_length, math.prod(cps))
        blob = old[3]
    kept = table is not None and blob is not None
    last = depth == len(arr.levels) - 1
    fresh = encode_region(arr, contents, contents.shape, level.inner_shape) if last else []
    parts: list = []
    for i, corner in enumerate(np.ndindex(*cps)):
        lo = origin + np.asarray(corner) * np.asarray(level.inner_shape)
        hit = all(np.searchsorted(t, a) < np.searchsorted(t, a + n)
                  for t, a, n in zip(touched, lo, level.inner_shape))
        if kept and table[i][0] == DAMAGED and not hit:      # (to be kept: unreadable)
            raise damaged(arr, reads, depth, old_key, old_start, old_length, i, cps=cps)
        # (a damaged entry the write hits: wholly overwritten, or reading the old
        # contents failed already; it is rebuilt from the contents, repaired)
        if not hit and kept:
            off, nb = table[i]
            parts.append(None if off == EMPTY else (blob, int(off), int(nb)))
        elif last:
            parts.append(fresh[i])
        else:
            sub = tuple(slice(c * n, (c + 1) * n) for c, n in zip(corner, level.inner_shape))
            entry = table[i] if kept else None
            inner_old = (None if entry is None or entry[0] == EMPTY or entry[0] == DAMAGED
                         else (old_key, int(entry[0]), int(entry[1]), blob))
            parts.append(_encode_shard(arr, reads, depth + 1, np.ascontiguousarray(contents[sub]), lo,
                                       touched, inner_old))
    return level.index_format.assemble(parts)


def store_shard(arr: ChunkedArray, key: str, data: bytes | None, existed: bool,
                nchunks: int | None = None) -> None:
    """Store shard ``key`` (``data`` None: it holds nothing; ``nchunks``: its index
    entries, default the top level's)."""
    if data is not None:
        arr.store.set(key, data)
    elif existed:
        if arr.store.supports_deletes:
            arr.store.delete(key)
        elif arr.store.exists(key):
            # a zip cannot delete: store a shard whose inner chunks are all empty (only
            # over an existing shard; a shard that was never stored stays absent)
            top = arr.levels[0]
            arr.store.set(key, top.index_format.empty(top.nchunks if nchunks is None else nchunks))
    arr.shard_cache.forget(key)


def write_whole_shards(arr, dims, value, shards, keys) -> None:
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
    # (each shard's first element and shape: on a rectilinear grid, its own)
    origins = top.origins(shards)
    extents = top.shard_cps(shards) * np.asarray(top.inner_shape, np.int64)
    for shard, key, origin, extent in zip(shards, keys, origins, extents):
        extent = tuple(extent.tolist())
        region = tuple(slice(int(o), int(min(o + s, n))) for o, s, n in zip(origin, extent, arr.shape))
        contents = np.full(extent, fill, arr.dtype)
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
            # (inner chunks with damaged index entries read as the fill value if the
            # write wholly overwrites them: the new shard repairs them)
            tolerate = None if isinstance(dims, indexing.Points) else _wholly_written(arr, touched)
            contents[tuple(slice(0, r.stop - r.start) for r in region)] = read_region(arr, region, pinned,
                                                                                      tolerate)
        if isinstance(dims, indexing.Points):
            inside = np.logical_and.reduce([(p >= o) & (p < o + n)
                                            for p, o, n in zip(points, origin, extent)])
            # (in the points' order: where one repeats, the last wins)
            contents[tuple(p[inside] - o for p, o in zip(points, origin))] = value[dims.out[inside]]
        else:
            src, dst = [], []
            for (absolute, out_pos), d, o, n in zip(positions, dims, origin, extent):
                inside = (absolute >= o) & (absolute < o + n)
                dst.append(absolute[inside] - o)
                if not d.dropped:
                    src.append(out_pos[inside])
            contents[np.ix_(*dst)] = value[np.ix_(*src)].reshape([len(x) for x in dst]) if src else value
        old = None if blob is None else (key, 0, None, blob)
        with ShardReads(arr, pinned) as reads:
            encoded.append(_encode_shard(arr, reads, 0, contents, origin, touched, old))
    for key, data, shard in zip(keys, encoded, shards):
        store_shard(arr, key, data, True, top.nchunks_of(shard))


def _wholly_written(arr: ChunkedArray, touched: list[np.ndarray]) -> Any:
    """The ``tolerate`` of reads.locate for a write of the product of ``touched`` (per
    dimension, the sorted array indices written): True for each innermost chunk
    (coordinate rows) the write wholly overwrites."""
    chunks = np.asarray(arr.chunks, np.int64)
    shape = np.asarray(arr.shape, np.int64)

    def tolerate(coords: np.ndarray) -> np.ndarray:
        lo = coords * chunks
        hi = np.minimum(lo + chunks, shape)
        ok = np.ones(len(coords), bool)
        for d, t in enumerate(touched):
            ok &= np.searchsorted(t, hi[:, d]) - np.searchsorted(t, lo[:, d]) == hi[:, d] - lo[:, d]
        return ok
    return tolerate


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
