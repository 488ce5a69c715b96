"""Shard indexes (``sharding_indexed``, nested too) read from the store: the
levels of sharding (``ShardLevel``), the index of a shard read from one snapshot
of it, and the per-array cache checked against each shard's version.  The index
format (where an index lies, its decoding, checksum and checks) is
zarrc.codecs.shard_index; this module does the I/O and the caching.

Each shard is read from one snapshot per call (``Store.snapshot``: a local file
held open, whose index and inner chunks the native workers ``pread``; a zip
member's span; an immutable bytes value; ranges merged into one request per
shard for stores that cannot name versions), so a read never mixes two versions
of a shard.  Indexes are cached per array with the token of the version they
were read from and used only for that version (see docs/consistency.md).
``native_index`` serves the native BasicReader; engine.sharding.reads locates
inner chunks through these indexes.
"""

from __future__ import annotations

import bisect
import functools
import math
import threading
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any

import numpy as np

from zarrc.codecs.shard_index import IndexFormat, check_index, damaged_error, offset_by
from zarrc.codecs.sharding import ShardingIndexed
from zarrc.engine.state import ChunkedArray
from zarrc.errors import MetadataError
from zarrc.stores.base import BytesSnapshot, FileSnapshot, Snapshot

if TYPE_CHECKING:
    from typing_extensions import Self


@dataclass
class ShardLevel:
    """One sharding codec: its shards of ``shard_shape`` hold inner chunks of ``inner_shape``."""

    codec: ShardingIndexed
    shard_shape: tuple[int, ...]
    inner_shape: tuple[int, ...]
    # the top level of a rectilinear grid: per dimension the shards' cumulative edges
    # (elements, from 0; None for a regular dimension); shard_shape is then the
    # largest shard's, cps and nchunks the most a shard holds, and each shard's own
    # are ``cps_of`` / ``nchunks_of``
    offsets: tuple[np.ndarray | None, ...] | None = None

    @functools.cached_property
    def cps(self) -> tuple[int, ...]:
        return tuple(s // i for s, i in zip(self.shard_shape, self.inner_shape))

    @functools.cached_property
    def nchunks(self) -> int:
        return math.prod(self.cps)

    def shards_at(self, pos: np.ndarray) -> np.ndarray:
        """The shard (grid coordinates) holding each element position (rows of ``pos``)."""
        if self.offsets is None:
            return pos // np.asarray(self.shard_shape, np.int64)
        return np.stack([pos[:, d] // s if o is None else np.searchsorted(o, pos[:, d], side="right") - 1
                         for d, (o, s) in enumerate(zip(self.offsets, self.shard_shape))], axis=1) \
            if pos.shape[1] else np.zeros(pos.shape, np.int64)

    def origins(self, shards: np.ndarray) -> np.ndarray:
        """Each shard's first element (rows of ``shards``: grid coordinates)."""
        if self.offsets is None:
            return shards * np.asarray(self.shard_shape, np.int64)
        return np.stack([shards[:, d] * s if o is None else o[shards[:, d]]
                         for d, (o, s) in enumerate(zip(self.offsets, self.shard_shape))], axis=1) \
            if shards.shape[1] else np.zeros(shards.shape, np.int64)

    def shard_cps(self, shards: np.ndarray) -> np.ndarray:
        """The inner chunks along each dimension of each shard (rows of ``shards``)."""
        if self.offsets is None:
            return np.broadcast_to(np.asarray(self.cps, np.int64), shards.shape)
        return np.stack([np.full(len(shards), c, np.int64) if o is None else
                         (o[shards[:, d] + 1] - o[shards[:, d]]) // i
                         for d, (o, c, i) in enumerate(zip(self.offsets, self.cps, self.inner_shape))], axis=1) \
            if shards.shape[1] else np.zeros(shards.shape, np.int64)

    def entries_at(self, pos: np.ndarray, shards: np.ndarray | None) -> np.ndarray:
        """The index entry (C-order number in its shard) of the inner chunk at each
        element position (rows of ``pos``), in its shard (rows of ``shards``; needed
        with ``offsets`` only)."""
        if not pos.shape[1]:
            return np.zeros(len(pos), np.int64)
        if self.offsets is None:
            within = (pos % np.asarray(self.shard_shape, np.int64)) // np.asarray(self.inner_shape, np.int64)
            return np.ravel_multi_index(within.T, self.cps)
        assert shards is not None
        within = (pos - self.origins(shards)) // np.asarray(self.inner_shape, np.int64)
        cps = self.shard_cps(shards)
        flat = within[:, 0].copy()
        for d in range(1, pos.shape[1]):
            flat = flat * cps[:, d] + within[:, d]
        return flat

    @functools.cached_property
    def _offset_lists(self) -> tuple[list[int] | None, ...]:
        assert self.offsets is not None
        return tuple(None if o is None else o.tolist() for o in self.offsets)

    def shard_of(self, pos: Any) -> tuple[int, ...]:
        """The shard holding element position ``pos`` (ints), in plain Python."""
        if self.offsets is None:
            return tuple(p // s for p, s in zip(pos, self.shard_shape))
        return tuple(p // s if o is None else bisect.bisect_right(o, p) - 1
                     for p, s, o in zip(pos, self.shard_shape, self._offset_lists))

    def entry_in(self, pos: Any, shard: tuple[int, ...]) -> tuple[int, tuple[int, ...]]:
        """(index entry, the shard's inner chunks per dimension) of the inner chunk at
        element position ``pos`` in ``shard`` (shard_of), in plain Python."""
        if self.offsets is None:
            flat = 0
            for p, s, i, c in zip(pos, self.shard_shape, self.inner_shape, self.cps):
                flat = flat * c + (p % s) // i
            return flat, self.cps
        flat, cps = 0, []
        for p, k, s, i, c, o in zip(pos, shard, self.shard_shape, self.inner_shape, self.cps, self._offset_lists):
            origin, n = (k * s, c) if o is None else (o[k], (o[k + 1] - o[k]) // i)
            flat = flat * n + (p - origin) // i
            cps.append(n)
        return flat, tuple(cps)

    def cps_of(self, shard: Any) -> tuple[int, ...]:
        """The inner chunks along each dimension of the shard at grid position ``shard``."""
        if self.offsets is None:
            return self.cps
        return tuple(c if o is None else int(o[k + 1] - o[k]) // i
                     for o, c, i, k in zip(self.offsets, self.cps, self.inner_shape, shard))

    def nchunks_of(self, shard: Any) -> int:
        """The inner chunks (index entries) of the shard at grid position ``shard``."""
        return self.nchunks if self.offsets is None else math.prod(self.cps_of(shard))

    def grid(self, shape: tuple[int, ...]) -> tuple[int, ...]:
        """The shape of the grid of these shards over an array of ``shape``."""
        if self.offsets is None:
            return tuple(-(-s // c) for s, c in zip(shape, self.shard_shape))
        return tuple(-(-n // c) if o is None else int(np.searchsorted(o, n, side="left"))
                     for o, n, c in zip(self.offsets, shape, self.shard_shape))

    @property
    def index_format(self) -> IndexFormat:
        """The format of this level's shard indexes (its codec's)."""
        return self.codec.index_format


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
        # (what of a shard is read first: its index, asked for with the version check)
        top = arr.levels[0]
        at = top.index_format.span(top.nchunks, None, "")[0]
        self.first = (at, None) if at < 0 else (at, top.index_format.nbytes(top.nchunks))
        self.snapshots: dict = dict(pinned or {})
        self.opened: list = []
        self.unversioned: dict = {}   # indexes read from snapshots with no token, by key

    def snapshot(self, key: str) -> Snapshot | None:
        snap = self.snapshots.get(key, _MISSING)
        if snap is _MISSING:
            snap = self.snapshots[key] = self.store.snapshot_for(key, *self.first)
            if snap is not None:
                self.opened.append(snap)
        return snap

    def load_whole(self, key: str, name: str) -> None:
        """Take the shard at ``key`` whole, in one request, as this call's snapshot
        of it (for a store whose reads wait on a network, when the call reads most
        of the shard: one GET instead of a version check, an index and ranges)."""
        if key not in self.snapshots:
            value = self.store.get(key)
            self.snapshots[key] = None if value is None else BytesSnapshot(bytes(value), name)

    def close(self) -> None:
        for snap in self.opened:
            snap.close()
        self.opened.clear()

    def __enter__(self) -> Self:
        return self

    def __exit__(self, *exc: object) -> None:
        self.close()


_MISSING = object()
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
                where: str, nchunks: int | None = None) -> tuple[np.ndarray, dict[int, str]] | None:
    """The checked index of the (sub-)shard stored in bytes [start, start + size) of
    ``snap`` (size None: all of a value of unknown size), its offsets made absolute
    (offsets in ``snap``), and its damaged entries (entry -> what is wrong; marked
    DAMAGED in the table); None if the value turns out to be absent.  Raises
    CodecError, ChecksumError for the whole shard (shard_index.IndexFormat.span,
    decode).  ``nchunks``: the shard's entries (default the level's)."""
    fmt = level.index_format
    n = level.nchunks if nchunks is None else nchunks
    at, data_start, data_end = fmt.span(n, size, where)
    raw = snap.read(start + at, fmt.nbytes(n)) if at >= 0 else snap.read(at, None)
    if raw is None:
        return None
    table = fmt.decode(raw, n, where)
    problems = check_index(table, data_start, data_end)
    return offset_by(table, start), problems


def cached_index(arr: ChunkedArray, reads: ShardReads, depth: int, key: str, start: int,
           length: int | None, nchunks: int | None = None):
    """The absolute-offset index of the level-``depth`` shard stored at ``key``
    [start, start+length) (length None: the whole value) in the version ``reads``
    holds of it, or None if there is none.  ``nchunks``: the shard's entries, where
    its shards differ (a rectilinear grid's top level: ``ShardLevel.nchunks_of``)."""
    snap = reads.snapshot(key)
    if snap is None:
        return None
    if snap.token is None:      # a store that cannot name versions: cached for this call only
        tables = reads.unversioned.setdefault(key, {})
    else:
        tables = arr.shard_cache.tables(key, snap)
    table = tables.get((depth, start), _MISSING)
    if table is _MISSING:
        found = _read_index(arr.levels[depth], snap, start, snap.size if length is None else length,
                            shard_name(arr, key, depth, start, length), nchunks)
        if found is not None and found[1]:
            tables[("damaged", depth, start)] = found[1]
        table = tables[(depth, start)] = None if found is None else found[0]
    return table


def shard_name(arr: ChunkedArray, key: str, depth: int, start: int, length: int | None) -> str:
    """A (sub-)shard's name for errors: its key, the array, where a sub-shard lies."""
    where = f"shard {key} of {arr.name}"
    if depth:
        where += f", sub-shard at bytes [{start}, {start + (length or 0)}) (level {depth + 1} of sharding)"
    return where


def damaged(arr: ChunkedArray, reads: ShardReads, depth: int, key: str, start: int, length: int | None,
            entry: int, chunk: tuple[int, ...] | None = None, cps: tuple[int, ...] | None = None) -> Exception:
    """The CodecError of a read of the inner chunk (or sub-shard) ``entry`` of the
    level-``depth`` shard at ``key`` [start, start + length), whose index entry
    (cached_index's, marked DAMAGED) is damaged; ``chunk``: the innermost chunk read,
    in the array's chunk grid; ``cps``: the shard's inner chunks per dimension
    (default the level's)."""
    snap = reads.snapshot(key)
    tables = reads.unversioned.get(key, {}) if snap is None or snap.token is None else \
        arr.shard_cache.tables(key, snap)
    problem = tables.get(("damaged", depth, start), {}).get(entry, "damaged")
    return damaged_error(shard_name(arr, key, depth, start, length), entry,
                         arr.levels[depth].cps if cps is None else cps, problem, chunk)


def native_index(arr: ChunkedArray, shard: tuple[int, ...], fd: int, size: int) -> bytes:
    """For the native reader (pipeline.BasicReader) of a one-level sharded array:
    the index of the shard at grid position ``shard``, read from its file open as
    ``fd`` (``size`` bytes), as native-order uint64 (absolute offset, length) per
    inner chunk."""
    _, found = _read_open_shard(arr, shard, fd, size)
    assert found is not None       # (a file's bytes)
    return np.ascontiguousarray(found[0], np.uint64).tobytes()


def native_damaged(arr: ChunkedArray, shard: tuple[int, ...], entry: int, fd: int, size: int) -> None:
    """For the native reader: raise the CodecError of a read of inner chunk ``entry``
    of the shard at grid position ``shard`` (open as ``fd``, ``size`` bytes), whose
    index entry native_index marked damaged (its index read again to word it)."""
    where, found = _read_open_shard(arr, shard, fd, size)
    problem = "damaged" if found is None else found[1].get(entry, "damaged")
    top = arr.levels[0]
    cps = top.cps_of(shard)
    corner = np.unravel_index(entry, cps) if cps else ()
    first = top.origins(np.asarray(shard, np.int64).reshape(1, -1))[0] // np.asarray(top.inner_shape, np.int64)
    chunk = tuple(int(f) + int(i) for f, i in zip(first, corner))
    raise damaged_error(where, entry, cps, problem, chunk)


def _read_open_shard(arr: ChunkedArray, shard: tuple[int, ...], fd: int,
                     size: int) -> tuple[str, tuple[np.ndarray, dict[int, str]] | None]:
    """The name and the checked index (``_read_index``) of the one-level shard at
    grid position ``shard``, read from its file open as ``fd`` (``size`` bytes)."""
    where = shard_name(arr, arr.chunk_keys(np.array([shard], np.int64))[0], 0, 0, None)
    top = arr.levels[0]
    return where, _read_index(top, FileSnapshot(fd, size, None, where, owned=False), 0, size, where,
                              top.nchunks_of(shard))
