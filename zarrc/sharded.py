"""Reads and writes of sharded arrays (``sharding_indexed``, nested too).

The unit of work is the innermost chunk.  A selection is planned over the
innermost chunk grid; each touched chunk is located through the shard indexes,
and its bytes are then fetched on their own.  Each shard is read from one
snapshot per call (``Store.snapshot``: a local file held open, whose index and
inner chunks the native workers ``pread``; a zip member's span; an immutable
bytes value; ranges merged into one request per shard for stores that cannot
name versions), so a read never mixes two versions of a shard.  Indexes are
cached per array with the token of the version they were read from and used
only for that version (see docs/consistency.md).  The chunks are decoded and
scattered by the same native batch as unsharded chunks, so a shard's inner
chunks decode in parallel.

Writes encode the touched inner chunks in parallel (native), keep every
untouched inner chunk of a partly written shard byte for byte, and assemble each
shard natively before storing it once; a write covering whole shards never reads
them.  With nested sharding, each touched shard is rebuilt from its decoded
contents, untouched sub-shards and inner chunks copied from the old shard.
"""

from __future__ import annotations

import functools
import math
import os
import threading
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any

import numpy as np

from zarrc import engine, indexing
from zarrc._kernels.batch import TaskError
from zarrc._kernels.read import ReadBatch
from zarrc._kernels.shard import assemble_shard
from zarrc._kernels.write import STORED, WriteBatch
from zarrc.codecs.sharding import EMPTY, ShardingIndexed, check_index
from zarrc.config import config
from zarrc.errors import CodecError, StoreError
from zarrc.stores.base import BytesSnapshot, FileSnapshot, Snapshot
from zarrc.threads import run_each

if TYPE_CHECKING:
    from typing_extensions import Self


@dataclass
class ShardLevel:
    """One sharding codec: its shards of ``shard_shape`` hold inner chunks of ``inner_shape``."""

    codec: ShardingIndexed
    shard_shape: tuple[int, ...]
    inner_shape: tuple[int, ...]

    @functools.cached_property
    def cps(self) -> tuple[int, ...]:
        return tuple(s // i for s, i in zip(self.shard_shape, self.inner_shape))

    @functools.cached_property
    def nchunks(self) -> int:
        return math.prod(self.cps)

    @property
    def index_nbytes(self) -> int:
        return self.codec.index_nbytes(self.nchunks)


@dataclass
class ShardIndexCache:
    """Decoded shard indexes of one open array.  Each shard's are kept with the token
    of the version they were read from (``Snapshot.token``: a file's device, inode,
    size and mtime) and used only while a read finds that same version."""

    entries: dict = field(default_factory=dict)  # shard key -> (token, anchor, {(depth, start): table})
    lock: threading.Lock = field(default_factory=threading.Lock)
    native: dict = field(default_factory=dict)   # the BasicReader's (see native_index)

    def tables(self, key: str, snapshot: Snapshot) -> dict:
        """The indexes cached for the version ``snapshot`` of shard ``key`` (a new,
        empty dict, replacing what was cached, if the shard changed)."""
        with self.lock:
            entry = self.entries.get(key)
            if entry is None or entry[0] != snapshot.token:
                entry = self.entries[key] = (snapshot.token, snapshot.anchor, {})
            return entry[2]

    def forget(self, shard_key: str) -> None:
        with self.lock:
            self.entries.pop(shard_key, None)


class ShardReads:
    """The shards one call reads: each from one snapshot (``Store.snapshot``),
    taken when the call first touches the shard and closed with the reads, so a
    shard's index and every inner chunk read with it come from one version of it.
    ``pinned``: snapshots to use for some keys (a write reading the shard it
    rebuilds)."""

    def __init__(self, arr: engine.ChunkedArray, pinned: dict | None = None) -> None:
        self.store = arr.store
        self.snapshots: dict = dict(pinned or {})
        self.opened: list = []
        self.unversioned: dict = {}   # indexes read from snapshots with no token, by key

    def snapshot(self, key: str) -> Snapshot | None:
        snap = self.snapshots.get(key, _MISSING)
        if snap is _MISSING:
            snap = self.snapshots[key] = self.store.snapshot(key)
            if snap is not None:
                self.opened.append(snap)
        return snap

    def close(self) -> None:
        for snap in self.opened:
            snap.close()
        self.opened.clear()

    def __enter__(self) -> Self:
        return self

    def __exit__(self, *exc: object) -> None:
        self.close()


_MISSING = object()
SMALL = 64      # locate() this many chunks or fewer in plain Python
# the most shards one batch reads at once (each a file held open, on a local store;
# a process may have as few as 1024 descriptors, shared by its reading threads)
MAX_OPEN_SHARDS = 64


def sharding_levels(chain: Any, chunk_shape: tuple[int, ...]) -> tuple[list[ShardLevel], Any, tuple[int, ...]]:
    """Unwrap nested sharding codecs: (levels, innermost codec chain, innermost chunk
    shape).  No levels for an unsharded chain."""
    from zarrc.errors import MetadataError

    levels = []
    while isinstance(chain.array_to_bytes, ShardingIndexed):
        codec = chain.array_to_bytes
        if chain.array_to_array or chain.bytes_to_bytes:
            raise MetadataError("codecs around sharding_indexed (before or after it) are not supported; "
                                "put them inside the sharding codec")
        codec.chunks_per_shard(chunk_shape)        # checks that the inner shape divides the shard
        levels.append(ShardLevel(codec, chunk_shape, codec.chunk_shape))
        chain, chunk_shape = codec.inner, codec.chunk_shape
    return levels, chain, chunk_shape


def _local_path(store: Any, key: str) -> str | None:
    """The file holding ``key`` for stores backed by plain files, else None (the base
    Store's ``local_path`` returns None: memory, zip and other stores)."""
    local_path = getattr(store, "local_path", None)
    if local_path is None:
        return None
    try:
        return local_path(key)
    except NotImplementedError:
        return None


def _read_index(level: ShardLevel, snap: Snapshot, start: int, size: int | None,
                where: str) -> np.ndarray | None:
    """The checked index of the (sub-)shard stored in bytes [start, start + size) of
    ``snap`` (size None: all of a value of unknown size), its offsets made absolute
    (offsets in ``snap``); None if the value turns out to be absent."""
    n = level.index_nbytes
    if size is not None and size < n:
        raise CodecError(f"{where}: shard holds {size} bytes, less than its {n}-byte index")
    if level.codec.index_location == "start":
        raw = snap.read(start, n)
        data_start, data_end = n, size
    elif size is None:
        raw = snap.read(-n, None)
        data_start, data_end = 0, None
    else:
        raw = snap.read(start + size - n, n)
        data_start, data_end = 0, size - n
    if raw is None:
        return None
    table = level.codec.decode_index(raw, level.nchunks, where)
    check_index(table, data_start, data_end, where)
    table = table.copy()
    used = table[:, 0] != EMPTY
    table[used, 0] += np.uint64(start)
    return table


def _index(arr: engine.ChunkedArray, reads: ShardReads, depth: int, key: str, start: int,
           length: int | None):
    """The absolute-offset index of the level-``depth`` shard stored at ``key``
    [start, start+length) (length None: the whole value) in the version ``reads``
    holds of it, or None if there is none."""
    snap = reads.snapshot(key)
    if snap is None:
        return None
    if snap.token is None:      # a store that cannot name versions: cached for this call only
        tables = reads.unversioned.setdefault(key, {})
    else:
        tables = arr.shard_cache.tables(key, snap)
    table = tables.get((depth, start), _MISSING)
    if table is _MISSING:
        where = f"shard {key} of {arr.name}"
        table = tables[(depth, start)] = _read_index(arr.levels[depth], snap, start,
                                                     snap.size if length is None else length, where)
    return table


def native_index(arr: engine.ChunkedArray, shard: tuple[int, ...], fd: int, size: int) -> bytes:
    """For the native reader (pipeline.BasicReader) of a one-level sharded array:
    the index of the shard at grid position ``shard``, read from its file open as
    ``fd`` (``size`` bytes), as native-order uint64 (absolute offset, length) per
    inner chunk."""
    key = arr.chunk_keys(np.array([shard], np.int64))[0]
    where = f"shard {key} of {arr.name}"
    table = _read_index(arr.levels[0], FileSnapshot(fd, size, None, where, owned=False), 0, size, where)
    return np.ascontiguousarray(table, np.uint64).tobytes()


def chunk_labels(arr: engine.ChunkedArray, coords: np.ndarray) -> list[str]:
    """Names of inner chunks (rows of ``coords``) for error messages."""
    shards = coords * np.asarray(arr.chunks, np.int64) // np.asarray(arr.levels[0].shard_shape, np.int64)
    return [_label(key, row) for key, row in zip(arr.chunk_keys(shards), coords)]


def _label(shard_key: str, coords: Any) -> str:
    """An inner chunk's name: its shard's key and its chunk grid coordinates."""
    return f"{shard_key} (inner chunk {tuple(int(c) for c in coords)})"


def locate(arr: engine.ChunkedArray, reads: ShardReads,
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
        shard_ids, which = np.unique(_shard_numbers(arr, coords), return_inverse=True)
        shards = np.stack(np.unravel_index(shard_ids, _shard_grid(arr)), axis=1)
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
        order = np.argsort(group.reshape(-1), kind="stable")
        bounds = np.searchsorted(group.reshape(-1)[order], np.arange(count + 1))
        for j in range(count):
            members = live[order[bounds[j]:bounds[j + 1]]]
            first = members[0]
            table = _index(arr, reads, depth, keys[which[first]], int(offset[first]),
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


def _locate_small(arr: engine.ChunkedArray, reads: ShardReads, coords: np.ndarray):
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
            table = _index(arr, reads, depth, keys[k], start, size)
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


def _sources(reads: ShardReads, keys: list[str], which: np.ndarray, offset: np.ndarray,
             length: np.ndarray) -> list:
    """Native batch sources of located chunks: their byte ranges in the shard
    versions ``reads`` holds (ranges of open files, or bytes in memory)."""
    sources: list = [None] * len(which)
    present = np.flatnonzero(offset >= 0)
    if not len(present):
        return sources
    present = present[np.argsort(which[present], kind="stable")]
    bounds = np.searchsorted(which[present], np.arange(len(keys) + 1)).tolist()
    for k, key in enumerate(keys):
        members = present[bounds[k]:bounds[k + 1]]
        if len(members):
            found = reads.snapshot(key).sources(offset[members].tolist(), length[members].tolist())
            for t, src in zip(members.tolist(), found):
                sources[t] = src
    return sources


def read_planned(arr: engine.ChunkedArray, table: np.ndarray, local: np.ndarray,
                 outidx: np.ndarray, tasks: np.ndarray, coords: np.ndarray, out: np.ndarray,
                 strides: tuple[int, ...], pinned: dict | None = None) -> None:
    """engine's native read of a planned selection, for a sharded array: each shard
    from one snapshot (``pinned``: snapshots to use for some shard keys), at most
    MAX_OPEN_SHARDS shards at a time (a local store's snapshot holds a file open)."""
    shard = _shard_numbers(arr, coords)
    first = np.unique(shard)
    if len(first) <= MAX_OPEN_SHARDS:
        _read_group(arr, table, local, outidx, tasks, coords, out, strides, pinned)
        return
    for lo in range(0, len(first), MAX_OPEN_SHARDS):
        group = first[lo:lo + MAX_OPEN_SHARDS]
        members = np.flatnonzero((shard >= group[0]) & (shard <= group[-1]))
        _read_group(arr, table, local, outidx, np.ascontiguousarray(tasks[members]),
                    coords[members], out, strides, pinned)


def _shard_grid(arr: engine.ChunkedArray) -> tuple[int, ...]:
    """The shape of the grid of top-level shards."""
    return tuple(-(-s // c) for s, c in zip(arr.shape, arr.levels[0].shard_shape))


def _shard_numbers(arr: engine.ChunkedArray, coords: np.ndarray) -> np.ndarray:
    """The top-level shard (C-order number in the shard grid) of each inner chunk."""
    if not coords.shape[1]:
        return np.zeros(len(coords), np.int64)
    shard_shape = np.asarray(arr.levels[0].shard_shape, np.int64)
    return np.ravel_multi_index(((coords * np.asarray(arr.chunks, np.int64)) // shard_shape).T,
                                _shard_grid(arr))


def _read_group(arr, table, local, outidx, tasks, coords, out, strides, pinned) -> None:
    with ShardReads(arr, pinned) as reads:
        keys, which, offset, length = locate(arr, reads, coords)
        sources = _sources(reads, keys, which, offset, length)
        batch = ReadBatch(arr.chain, table, local, outidx, tasks, out, strides, arr.fill, sources)
        engine.run_batch(batch, len(tasks))
    engine.raise_task_error(batch, arr, _LazyLabels(keys, which, coords))


def _read_region(arr: engine.ChunkedArray, region: tuple[slice, ...], pinned: dict) -> np.ndarray:
    """``arr[region]`` read with the snapshots ``pinned`` for their shard keys."""
    dims, shape = indexing.plan(region, arr.shape, arr.chunks)
    out = np.empty(shape, arr.dtype)
    table, local, outidx, tasks = engine.assemble(dims)
    read_planned(arr, table, local, outidx, tasks, engine.task_coords(table, tasks), out,
                 engine.array_strides(dims, out.strides), pinned)
    return out


class _LazyLabels:
    """Chunk names for error messages, made only when one is needed."""

    def __init__(self, keys, which, coords) -> None:
        self._keys, self._which, self._coords = keys, which, coords

    def __getitem__(self, t: int) -> str:
        return _label(self._keys[self._which[t]], self._coords[t])


# ---------------------------------------------------------------- writes

def encode_region(arr: engine.ChunkedArray, value: np.ndarray, shape: tuple[int, ...],
                  chunk_shape: tuple[int, ...]) -> list:
    """Encode every chunk of ``value`` (an array of ``shape``, a shard's contents) with
    the innermost chain: encoded bytes per chunk in C order, None where a chunk is
    all fill value (and empty chunks are not kept)."""
    dims, _ = indexing.plan(Ellipsis, shape, chunk_shape)
    table, local, outidx, tasks = engine.assemble(dims)
    batch = WriteBatch(arr.chain, table, local, outidx, tasks, value,
                       engine.array_strides(dims, value.strides), arr.fill, [None] * len(tasks),
                       b".tmp", arr.write_empty_chunks)
    engine.run_batch(batch, len(tasks))
    engine.raise_task_error(batch, arr, [f"inner chunk {i} of a shard" for i in range(len(tasks))])
    return [batch.encoded(t) if batch.outcome(t) == STORED else None for t in range(len(tasks))]


def _encode_shard(arr: engine.ChunkedArray, reads: ShardReads, depth: int, contents: np.ndarray,
                  origin: np.ndarray, touched: list, old: tuple | None) -> bytes | None:
    """Encode the level-``depth`` shard whose contents start at array index
    ``origin``.  Inner chunks / sub-shards the write does not touch (``touched``:
    per dimension, the sorted array indices written) are copied byte for byte from
    ``old`` = (key, start, length, bytes of the whole stored shard) of the old shard,
    if there is one (``reads`` holds those bytes as the shard's snapshot)."""
    level = arr.levels[depth]
    table = blob = None
    if old is not None:
        table = _index(arr, reads, depth, old[0], old[1], old[2] if depth else None)
        blob = old[3]
    kept = table is not None and blob is not None
    last = depth == len(arr.levels) - 1
    fresh = encode_region(arr, contents, level.shard_shape, level.inner_shape) if last else None
    parts = []
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
                         else (old[0], int(entry[0]), int(entry[1]), blob))
            parts.append(_encode_shard(arr, reads, depth + 1, np.ascontiguousarray(contents[sub]), lo,
                                       touched, inner_old))
    codec = level.codec
    return assemble_shard(parts, codec.index_location == "start", codec.index_big_endian, codec.index_crc)


def _store_shard(arr: engine.ChunkedArray, key: str, data: bytes | None, existed: bool) -> None:
    if data is not None:
        arr.store.set(key, data)
    elif existed:
        if getattr(arr.store, "supports_deletes", True):
            arr.store.delete(key)
        elif arr.store.exists(key):
            # a zip cannot delete: store a shard whose inner chunks are all empty (only
            # over an existing shard; a shard that was never stored stays absent)
            arr.store.set(key, _empty_shard(arr.levels[0]))
    arr.shard_cache.forget(key)


def _empty_shard(level: ShardLevel) -> bytes:
    from zarrc._kernels.crc32c import crc32c

    pairs = np.full(2 * level.nchunks, EMPTY, ">u8" if level.codec.index_big_endian else "<u8").tobytes()
    return pairs + (crc32c(pairs).to_bytes(4, "little") if level.codec.index_crc else b"")


def write_from(arr: engine.ChunkedArray, dims: list[indexing.DimProjection], value: np.ndarray) -> None:
    """engine.write_from for a sharded array (see the module docstring)."""
    top = arr.levels[0]
    shard_shape = np.asarray(top.shard_shape, np.int64)
    table, local, outidx, tasks = engine.assemble(dims)
    coords = engine.task_coords(table, tasks)
    pos = coords * np.asarray(arr.chunks, np.int64)
    shards, which = np.unique(pos // shard_shape, axis=0, return_inverse=True)
    which = which.reshape(-1)
    keys = arr.chunk_keys(shards)
    if len(arr.levels) > 1:
        _write_whole_shards(arr, dims, value, shards, keys)
        return
    full = table[tasks, 6].all(axis=1) if tasks.shape[1] else np.ones(len(tasks), bool)
    flat = (np.ravel_multi_index(((pos % shard_shape) // np.asarray(top.inner_shape)).T, top.cps)
            if len(top.cps) else np.zeros(len(tasks), np.int64))
    old, old_tables, sources = {}, {}, [None] * len(tasks)
    for k, key in enumerate(keys):
        members = np.flatnonzero(which == k)
        if full[members].sum() == _inner_chunks_in_bounds(arr, top, shards[k]):
            continue                                   # the whole shard is rewritten: no read
        blob = arr.store.get(key)
        if blob is None:
            continue
        blob = bytes(blob)
        index_table = _parse_shard(top, blob, f"shard {key} of {arr.name}")
        old[k], old_tables[k] = blob, index_table
        for t in members:
            off, nb = index_table[flat[t]]
            if not full[t] and off != EMPTY:
                sources[t] = ("bytes", blob, int(off), int(nb))
    batch = WriteBatch(arr.chain, table, local, outidx, tasks, value, engine.array_strides(dims, value.strides),
                       arr.fill, sources, b".tmp", arr.write_empty_chunks)
    engine.run_batch(batch, len(tasks))
    engine.raise_task_error(batch, arr, _LazyLabels(keys, which, coords))
    codec = top.codec
    layout = (codec.index_location == "start", codec.index_big_endian, codec.index_crc)
    order = np.argsort(which, kind="stable")
    bounds = np.searchsorted(which[order], np.arange(len(keys) + 1))

    def plan_shard(k: int) -> tuple[np.ndarray, list]:
        task_of_chunk = np.full(top.nchunks, -1, np.int64)
        members = order[bounds[k]:bounds[k + 1]]
        task_of_chunk[flat[members]] = members
        parts: list = [None] * top.nchunks
        if k in old_tables:
            for i, (off, nb) in enumerate(old_tables[k].tolist()):
                if off != EMPTY and task_of_chunk[i] < 0:
                    parts[i] = (old[k], off, nb)
        return task_of_chunk, parts

    paths = [_local_path(arr.store, key) for key in keys]
    if all(p is not None for p in paths):
        _write_shard_files(arr, batch, keys, paths, plan_shard, layout)
        return
    for k, key in enumerate(keys):
        _store_shard(arr, key, batch.shard(*plan_shard(k), *layout), existed=True)


def _write_shard_files(arr, batch, keys, paths, plan_shard, layout) -> None:
    """Write shards straight from the batch's encoded chunks to their files (no shard
    built in memory), several at once; shards left with no data are deleted."""
    suffix = engine.tmp_suffix()
    empty = []

    def work(k: int) -> None:
        try:
            written = batch.write_shard(os.fsencode(paths[k]), suffix, *plan_shard(k), *layout)
        except TaskError as exc:
            raise StoreError(f"shard {keys[k]} of {arr.name}: {exc}") from None
        if not written:
            empty.append(keys[k])
        arr.shard_cache.forget(keys[k])

    run_each(range(len(keys)), work, min(config.threads, len(keys)))
    for key in empty:
        _store_shard(arr, key, None, existed=arr.store.exists(key))


def _parse_shard(level: ShardLevel, blob: bytes, where: str) -> np.ndarray:
    """The checked index of a whole shard held in memory."""
    n = level.index_nbytes
    if len(blob) < n:
        raise CodecError(f"{where}: shard holds {len(blob)} bytes, less than its {n}-byte index")
    at_start = level.codec.index_location == "start"
    table = level.codec.decode_index(blob[:n] if at_start else blob[len(blob) - n:], level.nchunks, where)
    check_index(table, n if at_start else 0, len(blob) if at_start else len(blob) - n, where)
    return table


def _inner_chunks_in_bounds(arr: engine.ChunkedArray, level: ShardLevel, shard: np.ndarray) -> int:
    origin = shard * np.asarray(level.shard_shape)
    return math.prod(min(c, -(-(s - o) // i))
                     for c, s, o, i in zip(level.cps, arr.shape, origin, level.inner_shape))


def _write_whole_shards(arr, dims, value, shards, keys) -> None:
    """Nested sharding: rebuild each touched shard from its full contents, keeping the
    sub-shards and inner chunks the write does not touch byte for byte."""
    top = arr.levels[0]
    positions = [_dim_positions(d, c) for d, c in zip(dims, arr.chunks)]
    touched = [np.unique(absolute) for absolute, _ in positions]
    fill = np.frombuffer(arr.fill, arr.dtype)[0]
    encoded = []
    for shard, key in zip(shards, keys):
        origin = shard * np.asarray(top.shard_shape)
        region = tuple(slice(int(o), int(min(o + s, n))) for o, s, n in zip(origin, top.shard_shape, arr.shape))
        contents = np.full(top.shard_shape, fill, arr.dtype)
        # the selection is the product of its dimensions' indices: it covers the
        # shard if each dimension's indices cover the shard's extent
        covered = all(np.array_equal(t[(t >= r.start) & (t < r.stop)], np.arange(r.start, r.stop))
                      for t, r in zip(touched, region))
        # only a partly written shard needs its old contents: read once, they give
        # the old values and the parts kept byte for byte (one version of the shard)
        blob = None if covered else arr.store.get(key)
        pinned = {key: None}
        if blob is not None:
            blob = bytes(blob)
            pinned[key] = BytesSnapshot(blob, f"shard {key} of {arr.name}")
            contents[tuple(slice(0, r.stop - r.start) for r in region)] = _read_region(arr, region, pinned)
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


def _dim_positions(d: indexing.DimProjection, chunk: int) -> tuple[np.ndarray, np.ndarray]:
    """(array index, position in the value) of every element a dimension selects."""
    rows = np.asarray(d.table, np.int64).reshape(-1, 6)
    absolute, out = [], []
    for c, start, step, count, out0, ix in rows:
        if ix < 0:
            absolute.append(c * chunk + start + step * np.arange(count))
            out.append(out0 + np.arange(count))
        else:
            absolute.append(c * chunk + d.local[ix:ix + count])
            out.append(d.out[ix:ix + count])
    if not absolute:
        return np.zeros(0, np.int64), np.zeros(0, np.int64)
    return np.concatenate(absolute), np.concatenate(out)
