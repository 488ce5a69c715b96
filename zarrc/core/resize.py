"""Resizing an array (``Array.resize``, ``Array.append``): the new shape checked,
the parts of the old data beyond it cleared or deleted, the metadata rewritten.

On a shrink (any dimension shorter), in this order:

- a store that cannot delete (zip) is checked first: if a stored chunk lies wholly
  outside the new shape, StoreError is raised and nothing has changed (zarr-python
  raises NotImplementedError there);
- every chunk of the (outer) grid that the new shape cuts (for a sharded array,
  every shard, nested sharding too) gets the fill value written over its part
  beyond the new shape, through the array's normal write path with the old shape
  still in force (``cut_regions``), as ``a[region] = fill_value`` does: a chunk
  left all fill is deleted, a shard rewritten without its inner chunks left all
  fill; with ``write_empty_chunks`` (and in a store that cannot delete) the cut
  chunks are all stored instead, those never stored too;
- the chunks (shards) wholly outside the new shape are deleted;
- the metadata document (``zarr.json``, or ``.zarray`` + ``.zattrs``) is replaced
  by one store ``set`` of each, and the array's entry in the consolidated metadata
  of the groups above it is updated (``consolidate.write_node``; zarr-python leaves
  it stale).

A grow only rewrites the metadata.

This differs from zarr-python 3, which deletes the chunks wholly outside but leaves
the cut ones as they are, so that a grow after a shrink shows the old values beyond
the shrunk edge again.  zarrc clears them because a grow must show the fill value
there (the array's values beyond its shape are gone once it is shrunk), and because
what is stored then holds exactly the values zarrc reads: zarr-python, tensorstore
or any other reader of the store, which read whatever is stored, see the fill value
after a grow too.  The cost is a read and rewrite of each stored chunk (shard) the new
shape cuts.
"""

from __future__ import annotations

import math
import operator
from collections.abc import Sequence
from dataclasses import replace
from typing import Any

import numpy as np

from zarrc.core import node_metadata
from zarrc.core.chunk_grid import Edges, RectilinearChunkGrid, RegularChunkGrid
from zarrc.core.chunk_key import ChunkKeyEncoding
from zarrc.errors import ArgumentError, ArgumentTypeError, StoreError, ZarrcError
from zarrc.metadata import rectilinear

# Up to this many chunks outside the new shape, their keys are computed and each
# deleted (absent ones cost a failed unlink); above it, the stored keys are listed
# and only those outside are deleted.
ENUMERATE_MAX = 1 << 16


def new_shape_of(value: Any, shape: tuple[int, ...], path: str) -> tuple[int, ...]:
    """``value`` (an int, or a sequence of ints) as a new shape for the array at
    ``path`` of ``shape``.  Raises ArgumentTypeError (a TypeError) for values that
    are not integers, ArgumentError (a ValueError) for a rank other than the
    array's or a negative length."""
    items: list[Any] = (list(value) if isinstance(value, (Sequence, np.ndarray))
                        and not isinstance(value, str) else [value])
    try:
        new = tuple(operator.index(n) for n in items)
    except TypeError:
        new = None
    if new is None or any(isinstance(n, (bool, np.bool_)) for n in items):
        raise ArgumentTypeError(f"new shape of array {path}: {value!r} is not a sequence of "
                                "integers")
    if len(new) != len(shape):
        raise ArgumentError(f"new shape {list(new)} of array {path} has {len(new)} dimensions, "
                            f"the array has {len(shape)} (shape {list(shape)})")
    if any(n < 0 for n in new):
        raise ArgumentError(f"new shape {list(new)} of array {path}: lengths must not be negative")
    return new


def resized_metadata(metadata: Any, new_shape: tuple[int, ...]) -> Any:
    """``metadata`` with shape ``new_shape`` (validated again, MetadataError if the
    chunk shape does not fit it); a rectilinear grid's edges as zarr-python 3.4
    changes them (``metadata.rectilinear.resized``: one edge added where a dimension
    grows past its edges, none removed)."""
    edges = getattr(metadata, "chunk_edges", None)
    if edges is not None:
        return replace(metadata, shape=new_shape, chunk_edges=rectilinear.resized(edges, new_shape))
    return replace(metadata, shape=new_shape)


def grid_shape(metadata: Any, shape: tuple[int, ...]) -> tuple[int, ...]:
    """The number of stored chunks (shards) along each dimension of the array of
    ``metadata`` at ``shape`` (its edges covering it)."""
    edges = getattr(metadata, "chunk_edges", None)
    if edges is not None:
        return RectilinearChunkGrid(shape, rectilinear.resized(edges, shape)).grid_shape
    return RegularChunkGrid(shape, metadata.chunk_shape).grid_shape


def stored_dims(metadata: Any) -> tuple[int | Edges, ...]:
    """The stored grid's dimensions (a length, or a rectilinear dimension's Edges)."""
    edges = getattr(metadata, "chunk_edges", None)
    if edges is not None:
        return RectilinearChunkGrid(metadata.shape, edges).dims
    return tuple(metadata.chunk_shape)


def outside_coords(old_grid: tuple[int, ...], new_grid: tuple[int, ...]) -> np.ndarray:
    """Grid coordinates (an (n, ndim) int64 array) of the chunks of ``old_grid``
    that are not in ``new_grid``: along each dimension d that shrank, the slab of
    chunks from ``new_grid[d]`` on, within the new grid along the dimensions
    before d (so no chunk comes twice) and the old grid along those after."""
    ndim = len(old_grid)
    parts = [np.empty((0, ndim), np.int64)]
    for d in range(ndim):
        if new_grid[d] >= old_grid[d]:
            continue
        lo = [0] * ndim
        hi = [min(o, n) for o, n in zip(old_grid[:d], new_grid[:d])] + list(old_grid[d:])
        lo[d] = new_grid[d]
        extent = [h - lo_ for h, lo_ in zip(hi, lo)]
        if math.prod(extent) == 0:
            continue
        grid = np.indices(extent, dtype=np.int64).reshape(ndim, -1).T
        parts.append(grid + np.asarray(lo, np.int64))
    return np.concatenate(parts)


def outside_keys(store: Any, prefix: str, encoding: ChunkKeyEncoding, old_grid: tuple[int, ...],
                 new_grid: tuple[int, ...]) -> list[str]:
    """Store keys of the chunks of ``old_grid`` outside ``new_grid``: all of them
    when they are few (ENUMERATE_MAX), else those of the stored keys under
    ``prefix`` (other keys, beyond the old grid or not chunk keys, are left)."""
    ndim = len(old_grid)
    count = math.prod(old_grid) - math.prod(min(o, n) for o, n in zip(old_grid, new_grid))
    if count == 0:
        return []
    if count <= ENUMERATE_MAX:
        return encoding.encode_many(outside_coords(old_grid, new_grid), prefix)
    keys = []
    for key in store.list_prefix(prefix):
        rest = key[len(prefix):]
        if rest in node_metadata.METADATA_NAMES:
            continue
        try:
            coords = encoding.decode(rest, ndim)
        except ZarrcError:
            continue
        if (all(c < g for c, g in zip(coords, old_grid))
                and any(c >= g for c, g in zip(coords, new_grid))):
            keys.append(key)
    return keys


def _chunk_end(n: int, chunk: int | Edges) -> int:
    """The end of the chunk holding element n - 1 (0 for n = 0)."""
    if isinstance(chunk, Edges):
        return int(chunk.offsets[chunk.chunk_of(n - 1) + 1]) if n else 0
    return -(-n // chunk) * chunk


def cut_regions(old: tuple[int, ...], chunks: tuple[int | Edges, ...],
                new: tuple[int, ...]) -> list[tuple[slice, ...]]:
    """The regions of an array of shape ``old`` and (outer) chunk shape ``chunks``
    that lie in a chunk the new shape ``new`` keeps but outside ``new``: per
    dimension d that shrinks, the slab ``[new[d], min(old[d], ceil(new[d] / C) * C))``
    along d (empty when the new edge falls on a chunk boundary), within ``new``
    along the dimensions before d (so no element comes twice) and within the kept
    chunks along those after.  Writing the fill value there clears the cut chunks;
    the regions stay inside ``old`` and touch no chunk wholly outside ``new``."""
    inside = [min(n, o) for n, o in zip(new, old)]
    kept = [min(o, _chunk_end(n, c)) if n < o else o for n, o, c in zip(new, old, chunks)]
    regions = []
    for d in range(len(old)):
        if new[d] >= old[d] or kept[d] <= inside[d]:
            continue
        bounds = inside[:d] + [(inside[d], kept[d])] + kept[d + 1:]
        region = tuple(slice(*b) if isinstance(b, tuple) else slice(0, b) for b in bounds)
        if all(s.stop > s.start for s in region):
            regions.append(region)
    return regions


def check_deletable(store: Any, prefix: str, encoding: ChunkKeyEncoding, metadata: Any,
                    new_shape: tuple[int, ...]) -> None:
    """StoreError if ``store`` cannot delete and holds a chunk of the array
    (``metadata``, keys under ``prefix``) wholly outside ``new_shape``: called
    before a resize changes anything, so that a resize that cannot be done leaves
    the array as it was."""
    if store.supports_deletes or all(n >= o for n, o in zip(new_shape, metadata.shape)):
        return
    old_grid, new_grid = grid_shape(metadata, metadata.shape), grid_shape(metadata, new_shape)
    for key in outside_keys(store, prefix, encoding, old_grid, new_grid):
        if store.exists(key):
            raise StoreError(f"cannot delete key {key!r} of {store!r}, which lies wholly outside "
                             f"the new shape {list(new_shape)}: the store cannot delete (shrink "
                             "a copy of the array in another store)")


def delete_outside(store: Any, prefix: str, encoding: ChunkKeyEncoding, metadata: Any,
                   new_shape: tuple[int, ...]) -> None:
    """Delete the chunks of the array (``metadata``, keys under ``prefix``) that lie
    wholly outside ``new_shape``; nothing if no dimension shrinks (zarr-python's
    rule too).  StoreError from a store that cannot delete a stored one."""
    old = metadata.shape
    if all(n >= o for n, o in zip(new_shape, old)):
        return
    old_grid, new_grid = grid_shape(metadata, old), grid_shape(metadata, new_shape)
    for key in outside_keys(store, prefix, encoding, old_grid, new_grid):
        store.delete(key)


def append_plan(shape: tuple[int, ...], data_shape: tuple[int, ...], axis: Any,
                path: str) -> tuple[tuple[int, ...], tuple[slice, ...]]:
    """(new shape, region the data goes to) for appending data of ``data_shape`` to
    the array at ``path`` of ``shape`` along ``axis`` (negative counts from the
    end).  ArgumentError (a ValueError) if the data's rank differs, or its length
    along another dimension, or ``axis`` is out of range."""
    ndim = len(shape)
    try:
        axis = operator.index(axis)
    except TypeError:
        raise ArgumentTypeError(f"append to array {path}: axis {axis!r} is not an integer") from None
    if not -ndim <= axis < ndim:
        raise ArgumentError(f"append to array {path}: axis {axis} is out of range for "
                            f"{ndim} dimensions")
    axis %= ndim
    kept = tuple(s for i, s in enumerate(shape) if i != axis)
    given = tuple(s for i, s in enumerate(data_shape) if i != axis)
    if len(data_shape) != ndim or kept != given:
        raise ArgumentError(
            f"shape of data to append is not compatible with the array {path}: the data has "
            f"shape {tuple(data_shape)}, the array {shape}; all dimensions but axis {axis} "
            "must match")
    new_shape = tuple(s + data_shape[axis] if i == axis else s for i, s in enumerate(shape))
    region = tuple(slice(shape[i], new_shape[i]) if i == axis else slice(None)
                   for i in range(ndim))
    return new_shape, region
