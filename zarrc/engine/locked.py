"""Writes under locks: every write of the engine enters here (Strategy.write,
engine.api.write_from / write_selection), above the strategies, whatever they
are.  A write that covers only part of a stored chunk, or of a stored shard (the
outermost one, the store key, for nested shards), reads it, modifies it and
stores it back: such a write holds an exclusive lock on each of those keys
(zarrc.locks, setting ``write_locking``) from before it reads until it has
stored (or deleted) the new version.  Chunks and shards wholly written are not
locked; reads never lock.

Which stored keys a plan covers only in part is found per dimension from the
plan's projections (their chunks and "wholly selected" flags, the ones the
strategies use to decide whether to read the old chunk): a shard along a
dimension is whole when every inner chunk of it (within the array) is touched
and wholly selected; a key is partial when it is not whole along some
dimension.  numpy over the touched chunks, no loop per element; a loop per
partial key (to lock it).
"""

from __future__ import annotations

from collections.abc import Iterator
from contextlib import contextmanager
from typing import Any

import numpy as np

from zarrc import indexing, locks
from zarrc.config import config
from zarrc.engine.batch import tasks_full
from zarrc.engine.state import ChunkedArray


def write_from(strategy: Any, dims: indexing.Plan, value: np.ndarray) -> None:
    """``strategy.write_from(dims, value)`` holding the locks of the stored keys
    it writes in part (none with ``write_locking="none"``)."""
    mode = config.write_locking
    if mode == "none":
        strategy.write_from(dims, value)
        return
    arr = strategy.arr
    coords = stored_coords(arr, dims, partial_only=True)
    if coords is None:
        strategy.write_from(dims, value)
        return
    with locks.hold(_targets(arr, coords), mode, arr.name):
        strategy.write_from(dims, value)


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
    """(ident, key, file) of each stored key at ``coords`` (see zarrc.locks.hold)."""
    keys = arr.chunk_keys(coords)
    if arr.files is not None:
        return [(path, key, path) for key in keys for path in (arr.key_file(key),)]
    store = id(arr.store)
    return [((store, key), key, None) for key in keys]


def stored_shape(arr: ChunkedArray) -> tuple[int, ...]:
    """The shape of the array's stored values: its chunks, or its (outermost) shards."""
    return arr.levels[0].shard_shape if arr.levels else arr.chunks


def stored_coords(arr: ChunkedArray, dims: indexing.Plan, partial_only: bool) -> np.ndarray | None:
    """(n, ndim) grid coordinates of the stored chunks (shards) the plan writes
    only in part (``partial_only``) or touches at all; None for none."""
    if isinstance(dims, indexing.Points):
        return _points_coords(arr, dims, partial_only)
    if not dims:                       # (0-d: one chunk, always whole)
        return None
    stored = stored_shape(arr)
    per_dim = [_dim_cover(d, size, inner, outer)
                for d, size, inner, outer in zip(dims, arr.shape, arr.chunks, stored)]
    if partial_only and all(whole.all() for _, whole in per_dim):
        return None
    if any(len(t) == 0 for t, _ in per_dim):
        return None
    grids = np.meshgrid(*[t for t, _ in per_dim], indexing="ij")
    coords = np.stack([g.ravel() for g in grids], axis=1)
    if partial_only:
        wholes = np.meshgrid(*[w for _, w in per_dim], indexing="ij")
        partial = ~np.logical_and.reduce([w.ravel() for w in wholes])
        coords = coords[partial]
    return np.ascontiguousarray(coords) if len(coords) else None


def _dim_cover(proj: indexing.DimProjection, size: int, inner: int,
               outer: int) -> tuple[np.ndarray, np.ndarray]:
    """(stored chunk indices touched along one dimension, whether each is wholly
    written along it)."""
    table = proj.table
    if isinstance(table, list):
        chunks = np.fromiter((row[0] for row in table), np.int64, len(table))
    else:
        chunks = table[:, indexing.CHUNK]
    full = np.asarray(proj.full, bool)
    ratio = outer // inner
    if ratio == 1:
        return chunks, full
    touched, inverse = np.unique(chunks // ratio, return_inverse=True)
    nfull = np.bincount(inverse, weights=full, minlength=len(touched))
    ninner = np.minimum(ratio, -(-size // inner) - touched * ratio)    # inner chunks within the array
    return touched, nfull == ninner


def _points_coords(arr: ChunkedArray, points: indexing.Points, partial_only: bool) -> np.ndarray | None:
    """stored_coords of a coordinate or mask selection."""
    if points.nsel == 0:
        return None
    stored = stored_shape(arr)
    ratio = np.array([o // i for o, i in zip(stored, arr.chunks)], np.int64)
    outer = points.coords // ratio
    touched, inverse = np.unique(outer, axis=0, return_inverse=True)
    if not partial_only:
        return touched
    full = tasks_full(points.table, points.tasks)
    nfull = np.bincount(inverse.reshape(-1), weights=full, minlength=len(touched))
    grid = np.array([-(-s // c) for s, c in zip(arr.shape, arr.chunks)], np.int64)
    ninner = np.minimum(ratio, grid - touched * ratio).prod(axis=1)
    partial = touched[nfull != ninner]
    return np.ascontiguousarray(partial) if len(partial) else None
