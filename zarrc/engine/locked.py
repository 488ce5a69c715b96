"""The locks of writes, above the strategies, whatever they are: engine.api.write
(every write of the engine) asks ``partial_hold`` which stored keys a write
covers only in part and holds their locks around the strategy's ``write_from``,
or hands them to a strategy that takes them late.  A write that covers only part of a stored chunk, or of a stored shard (the
outermost one, the store key, for nested shards), reads it, modifies it and
stores it back: such a write holds an exclusive lock on each of those keys
(zarrc.runtime.locks, setting ``write_locking``) from before it reads until it has
stored (or deleted) the new version.  Chunks and shards wholly written are not
locked; reads never lock.

Which stored keys a plan covers only in part is found per dimension from the
plan's projections (their chunks and "wholly selected" flags, the ones the
strategies use to decide whether to read the old chunk): a shard along a
dimension is whole when every inner chunk of it (within the array) is touched
and wholly selected; a key is partial when it is not whole along some
dimension.  numpy over the touched chunks, no loop per element; a loop per
partial key (to lock it).  The locks are held around the strategy's whole
``write_from``, or, for a strategy with ``locks_late`` (the sharded one), taken
by it as late as a consistent read-modify-write allows.
"""

from __future__ import annotations

import functools
import itertools
import math
from collections.abc import Callable, Iterator
from contextlib import AbstractContextManager, contextmanager
from typing import Any

import numpy as np

from zarrc.core import indexing
from zarrc.engine.batch import tasks_full
from zarrc.engine.state import ChunkedArray
from zarrc.runtime import locks
from zarrc.runtime.config import config
from zarrc.stores.memory import MemoryStore

SMALL = 256          # stored keys touched up to which plain Python finds the partial ones


def partial_hold(arr: ChunkedArray, dims: indexing.Plan) -> Callable[[], AbstractContextManager[Any]] | None:
    """The locks a write of ``dims`` needs: a callable returning a context manager
    that holds the locks of the stored keys the write covers only in part
    (``locks.hold``: taken when entered, released when left), or None when it needs
    none (``write_locking="none"``, or every stored key touched is written whole)."""
    mode = config.write_locking
    if mode == "none":
        return None
    coords = stored_coords(arr, dims, partial_only=True)
    if coords is None:
        return None
    return functools.partial(locks.hold, _targets(arr, coords), mode, arr.name)


@contextmanager
def hold_all(arr: ChunkedArray, dims: indexing.Plan) -> Iterator[None]:
    """Hold the locks of every stored key ``dims`` touches, wholly or in part (a
    read of the selection followed by a write of it, as ``Array._write_planned``
    with ``fields=`` does; the write inside takes no lock again)."""
    mode = config.write_locking
    coords = None if mode == "none" else stored_coords(arr, dims, partial_only=False)
    if coords is None:
        yield
        return
    with locks.hold(_targets(arr, coords), mode, arr.name):
        yield


def _targets(arr: ChunkedArray, coords: np.ndarray) -> list[tuple[Any, str, bytes | None]]:
    """(ident, key, file) of each stored key at ``coords`` (see zarrc.runtime.locks.hold)."""
    keys = arr.chunk_keys(coords)
    if arr.files is not None:
        return [(path, key, path) for key in keys for path in (arr.key_file(key),)]
    store = arr.store
    # (MemoryStores over one dict, e.g. made from one zarr-python store, lock alike)
    owner = id(store.data if isinstance(store, MemoryStore) else store)
    return [((owner, key), key, None) for key in keys]


def stored_shape(arr: ChunkedArray) -> tuple[int, ...]:
    """The shape of the array's stored values: its chunks, or its (outermost) shards."""
    return arr.levels[0].shard_shape if arr.levels else arr.chunks


def stored_coords(arr: ChunkedArray, dims: indexing.Plan, partial_only: bool) -> np.ndarray | None:
    """(n, ndim) grid coordinates of the stored chunks (shards) the plan writes
    only in part (``partial_only``) or touches at all; None for none."""
    if isinstance(dims, indexing.Points):
        return _points_coords(arr, dims, partial_only)
    if not dims or any(d.nsel == 0 for d in dims):    # (0-d: one chunk, always whole)
        return None
    stored = stored_shape(arr)
    if partial_only and stored == arr.chunks and all(_all(d.full) for d in dims):
        return None                    # (unsharded, every chunk whole: the common case, fast)
    # (ratio 1: unsharded, whose chunks may be a rectilinear grid's Edges)
    per_dim = [_dim_cover(d, size, inner, outer // inner if arr.levels else 1, starts)
               for d, size, inner, outer, starts in zip(dims, arr.shape, arr.chunks, stored, _shard_starts(arr))]
    if partial_only and all(_all(whole) for _, whole in per_dim):
        return None
    if math.prod(len(t) for t, _ in per_dim) <= SMALL:     # plain Python beats numpy's call costs
        rows = [tuple(t for t, _ in cell) for cell in itertools.product(*[list(zip(*d)) for d in per_dim])
                if not partial_only or not all(w for _, w in cell)]
        return np.array(rows, np.int64).reshape(-1, len(dims)) if rows else None
    grids = np.meshgrid(*[np.asarray(t, np.int64) for t, _ in per_dim], indexing="ij")
    coords = np.stack([g.ravel() for g in grids], axis=1)
    if partial_only:
        wholes = np.meshgrid(*[np.asarray(w, bool) for _, w in per_dim], indexing="ij")
        coords = coords[~np.logical_and.reduce([w.ravel() for w in wholes])]
    return np.ascontiguousarray(coords) if len(coords) else None


def _all(flags: Any) -> bool:
    return all(flags) if isinstance(flags, list) else bool(flags.all())


def _shard_starts(arr: ChunkedArray) -> list[np.ndarray | None]:
    """Per dimension, the first inner chunk of each shard and the end, where the
    shards are a rectilinear grid's (``ShardLevel.offsets``), else None."""
    offsets = arr.levels[0].offsets if arr.levels else None
    if offsets is None:
        return [None] * len(arr.shape)
    return [None if o is None else o // inner for o, inner in zip(offsets, arr.chunks)]


def _dim_cover(proj: indexing.DimProjection, size: int, inner: int, ratio: int,
               starts: np.ndarray | None = None) -> tuple[Any, Any]:
    """(stored chunk indices touched along one dimension, whether each is wholly
    written along it): lists for a projection in list form, else arrays.  ``ratio``:
    the inner chunks of a shard; ``starts``: instead, each shard's first inner chunk
    and the end (a rectilinear grid's shards)."""
    table, full = proj.table, proj.full
    if starts is not None:
        chunks = np.asarray(table, np.int64).reshape(-1, indexing.PROJECTION_COLS)[:, indexing.CHUNK]
        outer = np.searchsorted(starts, chunks, side="right") - 1
        cuts = np.flatnonzero(np.r_[True, outer[1:] != outer[:-1]])
        touched = outer[cuts]
        nfull = np.add.reduceat(np.asarray(full, np.int64), cuts)
        return touched, nfull == np.minimum(starts[touched + 1], -(-size // inner)) - starts[touched]
    if isinstance(table, list):
        if ratio == 1:
            return [row[0] for row in table], list(full)
        ngrid = -(-size // inner)              # inner chunks along the dimension
        counts: dict[int, int] = {}
        for row, f in zip(table, full):
            u = row[0] // ratio
            counts[u] = counts.get(u, 0) + bool(f)
        return list(counts), [n == min(ratio, ngrid - u * ratio) for u, n in counts.items()]
    chunks = table[:, indexing.CHUNK]
    if ratio == 1:
        return chunks, np.asarray(full, bool)
    ngrid = -(-size // inner)
    outer = chunks // ratio                  # (non-decreasing: projections list chunks in order)
    starts = np.flatnonzero(np.r_[True, outer[1:] != outer[:-1]])
    touched = outer[starts]
    nfull = np.add.reduceat(np.asarray(full, np.int64), starts)
    return touched, nfull == np.minimum(ratio, ngrid - touched * ratio)


def _points_coords(arr: ChunkedArray, points: indexing.Points, partial_only: bool) -> np.ndarray | None:
    """stored_coords of a coordinate or mask selection."""
    if points.nsel == 0:
        return None
    if not arr.levels:                 # (unsharded: a point's chunk is stored whole)
        touched, inverse = np.unique(points.coords, axis=0, return_inverse=True)
        ninner: Any = 1
    elif arr.levels[0].offsets is not None:     # (a rectilinear grid's shards, nested too)
        top, inner = arr.levels[0], np.asarray(arr.chunks, np.int64)
        touched, inverse = np.unique(top.shards_at(points.coords * inner), axis=0, return_inverse=True)
        grid = np.array([-(-s // c) for s, c in zip(arr.shape, arr.chunks)], np.int64)
        ninner = np.minimum(top.shard_cps(touched), grid - top.origins(touched) // inner).prod(axis=1)
    else:
        stored = stored_shape(arr)
        ratio = np.array([o // i for o, i in zip(stored, arr.chunks)], np.int64)
        touched, inverse = np.unique(points.coords // ratio, axis=0, return_inverse=True)
        grid = np.array([-(-s // c) for s, c in zip(arr.shape, arr.chunks)], np.int64)
        ninner = np.minimum(ratio, grid - touched * ratio).prod(axis=1)
    if not partial_only:
        return touched
    full = tasks_full(points.table, points.tasks)
    nfull = np.bincount(inverse.reshape(-1), weights=full, minlength=len(touched))
    partial = touched[nfull != ninner]
    return np.ascontiguousarray(partial) if len(partial) else None
