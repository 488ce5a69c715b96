"""Shard indexes for the sharded strategy (``sharding_indexed``, nested too):
where each inner chunk of a sharded array is stored.

Each shard is read from one snapshot per call (``Store.snapshot``: a local file
held open, whose index and inner chunks the native workers ``pread``; a zip
member's span; an immutable bytes value; ranges merged into one request per
shard for stores that cannot name versions), so a read never mixes two versions
of a shard.  Indexes are cached per array with the token of the version they
were read from and used only for that version (see docs/consistency.md).
``locate`` finds the byte range of each innermost chunk through the indexes of
every level; ``native_index`` serves the native BasicReader.
"""

from __future__ import annotations

import functools
import math
import threading
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any

import numpy as np

from zarrc._kernels.crc32c import crc32c
from zarrc._kernels.shard import CRC_BYTES
from zarrc.codecs.sharding import EMPTY, ShardingIndexed, check_index
from zarrc.engine.state import ChunkedArray
from zarrc.errors import CodecError, MetadataError
from zarrc.stores.base import FileSnapshot, Snapshot

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

    def __init__(self, arr: ChunkedArray, pinned: dict | None = None) -> None:
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


def cached_index(arr: ChunkedArray, reads: ShardReads, depth: int, key: str, start: int,
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


def native_index(arr: ChunkedArray, shard: tuple[int, ...], fd: int, size: int) -> bytes:
    """For the native reader (pipeline.BasicReader) of a one-level sharded array:
    the index of the shard at grid position ``shard``, read from its file open as
    ``fd`` (``size`` bytes), as native-order uint64 (absolute offset, length) per
    inner chunk."""
    key = arr.chunk_keys(np.array([shard], np.int64))[0]
    where = f"shard {key} of {arr.name}"
    table = _read_index(arr.levels[0], FileSnapshot(fd, size, None, where, owned=False), 0, size, where)
    return np.ascontiguousarray(table, np.uint64).tobytes()


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
    for k, key in enumerate(keys):
        members = present[bounds[k]:bounds[k + 1]]
        if len(members):
            snap = reads.snapshot(key)
            assert snap is not None        # (locate found chunks in it)
            found = snap.sources(offset[members].tolist(), length[members].tolist())
            for t, src in zip(members.tolist(), found):
                sources[t] = src
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



def parse_shard(level: ShardLevel, blob: bytes, where: str) -> np.ndarray:
    """The checked index of a whole shard held in memory."""
    n = level.index_nbytes
    if len(blob) < n:
        raise CodecError(f"{where}: shard holds {len(blob)} bytes, less than its {n}-byte index")
    at_start = level.codec.index_location == "start"
    table = level.codec.decode_index(blob[:n] if at_start else blob[len(blob) - n:], level.nchunks, where)
    check_index(table, n if at_start else 0, len(blob) if at_start else len(blob) - n, where)
    return table



def empty_shard(level: ShardLevel) -> bytes:
    pairs = np.full(2 * level.nchunks, EMPTY, ">u8" if level.codec.index_big_endian else "<u8").tobytes()
    return pairs + (crc32c(pairs).to_bytes(CRC_BYTES, "little") if level.codec.index_crc else b"")
