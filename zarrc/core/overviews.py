"""Building a multiscale pyramid (overviews) of an array, as GDAL 3.13's Zarr driver
does in ``BuildOverviews``: each level a copy of the array downsampled along its
spatial dimensions only (the two named by ``spatial:dimensions``, else the last two;
a time or band dimension is kept whole), each from the previous level, in a group
``ovr_<factor>x`` beside the array holding an array of the same name (and the
downsampled 1-d coordinate arrays of the spatial dimensions, if the array's group
has them), with the array's codecs, chunks (shards) clipped to the level's shape,
data type, fill value and attributes (``spatial:`` / ``proj:`` shape and transform
adjusted).  The array's group gets the ``multiscales`` layout; existing overviews
are replaced.

Values: a level is computed in blocks of whole destination chunks (shards), each
read from the level below with one native read of the box it covers, reduced with
numpy and written with one native write, the blocks spread over zarrc's worker
threads: memory stays within a few blocks per thread whatever the array's size.
"""

from __future__ import annotations

import dataclasses
import itertools
import math
import re
from collections.abc import Iterator, Mapping, Sequence
from typing import Any

import numpy as np

from zarrc.core.array import Array
from zarrc.core.group import Group, new_array, open_node
from zarrc.core.multiscales import (
    RESAMPLING_NAMES,
    Multiscales,
    layout,
    layout_entries,
    multiscales,
    write_layout,
)
from zarrc.errors import ArgumentError, ArgumentTypeError
from zarrc.metadata.names import join_path
from zarrc.runtime.threads import item_threads, run_each

__all__ = ["BLOCK_BYTES", "build_overviews", "downsample", "spatial_axes"]

BLOCK_BYTES = 4 << 20           # target size of one block of a level (destination, uncompressed;
                                # its source is step x step times that)
OVERVIEW_GROUP = re.compile(r"ovr_\d+x")


def read_box(source: Array, box: tuple[slice, ...]) -> np.ndarray:
    """The values of ``box`` of ``source`` (one native read; the one place a build
    reads, so tests can count what it reads)."""
    return np.asarray(source[box])


# -------------------------------------------------------------- the reductions

def _valid(values: np.ndarray, fill: Any, skip_fill: bool) -> np.ndarray:
    valid = np.ones(values.shape, dtype=bool)
    if values.dtype.kind in "fc":
        valid &= ~np.isnan(values)
    if skip_fill and fill is not None:
        try:
            f = np.asarray(fill, dtype=values.dtype)
        except (TypeError, ValueError):
            return valid
        if not (f.dtype.kind in "fc" and np.isnan(f)):
            valid &= values != f
    return valid


def _windows(values: np.ndarray, axes: Sequence[int], factors: Sequence[int]) -> tuple[np.ndarray, np.ndarray]:
    """``values`` with the spatial ``axes`` moved last, padded to whole windows and
    reshaped to (..., n0, n1, f0 * f1), with the mask of real (unpadded) elements."""
    moved = np.moveaxis(values, list(axes), list(range(-len(axes), 0)))
    lead = moved.shape[:-len(axes)]
    sizes = moved.shape[-len(axes):]
    counts = [-(-s // f) for s, f in zip(sizes, factors)]
    pad = [(0, 0)] * len(lead) + [(0, n * f - s) for n, f, s in zip(counts, factors, sizes)]
    inside = np.zeros(tuple(n * f for n, f in zip(counts, factors)), dtype=bool)
    inside[tuple(slice(0, s) for s in sizes)] = True
    padded = np.pad(moved, pad) if any(p[1] for p in pad) else moved
    shape = list(lead)
    for n, f in zip(counts, factors):
        shape += [n, f]
    k = len(lead)
    order = list(range(k)) + [k + 2 * i for i in range(len(axes))] + [k + 2 * i + 1 for i in range(len(axes))]
    win = padded.reshape(shape).transpose(order).reshape(tuple(lead) + tuple(counts) + (-1,))
    ishape: list[int] = []
    for n, f in zip(counts, factors):
        ishape += [n, f]
    iorder = [2 * i for i in range(len(axes))] + [2 * i + 1 for i in range(len(axes))]
    imask = inside.reshape(ishape).transpose(iorder).reshape(tuple(counts) + (-1,))
    return win, np.broadcast_to(imask, win.shape)


def _mean(win: np.ndarray, valid: np.ndarray, dtype: np.dtype, fill: Any) -> np.ndarray:
    acc = np.complex128 if dtype.kind == "c" else np.float64
    total = np.where(valid, win, 0).sum(axis=-1, dtype=acc)
    n = valid.sum(axis=-1)
    with np.errstate(invalid="ignore", divide="ignore"):
        mean = total / np.maximum(n, 1)
    if dtype.kind in "iub":
        info = np.iinfo(dtype) if dtype.kind != "b" else None
        mean = np.rint(mean)
        if info is not None:
            mean = np.clip(mean, info.min, info.max)
    out = mean.astype(dtype)
    empty = n == 0
    if empty.any():
        out[empty] = _fill_of(dtype, fill)
    return out


def _fill_of(dtype: np.dtype, fill: Any) -> Any:
    if fill is None:
        return np.nan if dtype.kind in "fc" else 0
    return fill


def _mode(win: np.ndarray, valid: np.ndarray, dtype: np.dtype, fill: Any) -> np.ndarray:
    """The most frequent valid value of each window (ties: the smallest), vectorised:
    each window sorted (invalid elements last), the length of the run of equal values
    ending at each position, the first longest run's value."""
    lead = win.shape[:-1]
    k = win.shape[-1]
    flat = win.reshape(-1, k)
    ok = valid.reshape(-1, k)
    by_value = np.argsort(flat, axis=-1, kind="stable")
    v1, ok1 = np.take_along_axis(flat, by_value, -1), np.take_along_axis(ok, by_value, -1)
    by_valid = np.argsort(~ok1, axis=-1, kind="stable")
    v, ok2 = np.take_along_axis(v1, by_valid, -1), np.take_along_axis(ok1, by_valid, -1)
    idx = np.broadcast_to(np.arange(k), v.shape)
    start = np.ones(v.shape, dtype=bool)
    start[:, 1:] = (v[:, 1:] != v[:, :-1]) | (ok2[:, 1:] != ok2[:, :-1])
    run_start = np.maximum.accumulate(np.where(start, idx, 0), axis=-1)
    run = np.where(ok2, idx - run_start + 1, 0)
    best = run.argmax(axis=-1)
    out = v[np.arange(v.shape[0]), best].astype(dtype)
    empty = ~ok2[:, 0]
    if empty.any():
        out[empty] = _fill_of(dtype, fill)
    return out.reshape(lead)


def _nearest(values: np.ndarray, axes: Sequence[int], factors: Sequence[int]) -> np.ndarray:
    """The element at the centre of each window (``f // 2`` along each axis, the
    window's last element where an edge window is shorter)."""
    index: list[Any] = [slice(None)] * values.ndim
    for a, f in zip(axes, factors):
        n = values.shape[a]
        index[a] = np.minimum(np.arange(-(-n // f)) * f + f // 2, n - 1)
    out = values
    for a in axes:
        sel: list[Any] = [slice(None)] * values.ndim
        sel[a] = index[a]
        out = out[tuple(sel)]
    return np.ascontiguousarray(out)


def downsample(values: np.ndarray, factors: Sequence[int], method: str = "mean", *,
               axes: Sequence[int] | None = None, fill_value: Any = None,
               skip_fill: bool = True) -> np.ndarray:
    """``values`` reduced by ``factors`` along ``axes`` (default: the last
    ``len(factors)``) with ``method``: "mean" ("average"; integers rounded to the
    nearest), "nearest" (each window's centre element) or "mode" (the most frequent
    value, the smallest of a tie).  Windows at the end may be shorter (the output's
    length is the ceiling of the input's over the factor).  NaNs and, with
    ``skip_fill``, elements equal to ``fill_value`` (the nodata value, as GDAL reads an
    array's fill value) do not count for "mean" and "mode"; a window with none left
    gets ``fill_value``."""
    values = np.asarray(values)
    factors = [int(f) for f in factors]
    axes = [a % values.ndim for a in (axes if axes is not None else range(-len(factors), 0))]
    kind = RESAMPLING_NAMES.get(method)
    if kind is None:
        raise ArgumentError(f"method {method!r}: use one of {', '.join(RESAMPLING_NAMES)}")
    if kind == "nearest":
        return _nearest(values, axes, factors)
    win, inside = _windows(values, axes, factors)
    padded_ok = _valid(win, fill_value, skip_fill) & inside
    reduce = _mean if kind == "average" else _mode
    out = reduce(win, padded_ok, values.dtype, fill_value)
    k = values.ndim - len(axes)
    return np.moveaxis(out, list(range(k, values.ndim)), list(axes))


# -------------------------------------------------------------- levels

def spatial_axes(array: Array, group: Group | None = None) -> tuple[int, int]:
    """The spatial dimensions of ``array``: those ``spatial:dimensions`` (on the array,
    else its group) names among its dimension names, else its last two."""
    if array.ndim < 2:
        raise ArgumentError(f"array {array.name} has {array.ndim} dimension(s): overviews need 2 or more")
    names = array.dimension_names
    for attrs in (array.attrs, group.attrs if group is not None else {}):
        named = attrs.get("spatial:dimensions")
        if isinstance(named, list) and len(named) == 2 and names is not None and all(n in names for n in named):
            found = (names.index(named[0]), names.index(named[1]))
            return (min(found), max(found))
    return (array.ndim - 2, array.ndim - 1)


def _factors(array: Array, axes: tuple[int, int], factors: Sequence[int] | None,
             levels: int | None) -> list[int]:
    if factors is not None and levels is not None:
        raise ArgumentError("give factors or levels, not both")
    if levels is not None:
        if int(levels) < 1:
            raise ArgumentError(f"levels must be 1 or more, got {levels}")
        return [2 ** i for i in range(1, int(levels) + 1)]
    if factors is None:             # halve until the level fits in one chunk
        out, f = [], 2
        chunks = [array.chunks[a] for a in axes]
        sizes = [array.shape[a] for a in axes]
        while any(-(-s // (f // 2)) > c for s, c in zip(sizes, chunks)) and f <= max(sizes):
            out.append(f)
            f *= 2
        return out
    out = [int(f) for f in factors]
    previous = 1
    for f in out:
        if f <= previous or f % previous:
            raise ArgumentError(f"factors {list(factors)} must increase, each a multiple of the one "
                                "before (each level is built from the previous one)")
        previous = f
    return out


def _level_shape(shape: tuple[int, ...], axes: Sequence[int], factor: int) -> tuple[int, ...]:
    return tuple(-(-s // factor) if i in axes else s for i, s in enumerate(shape))


def _scaled_attributes(attrs: Mapping[str, Any], axes: Sequence[int], factor: int,
                       shape: tuple[int, ...]) -> dict[str, Any]:
    """``attrs`` with the ``spatial:`` / ``proj:`` shape and affine transform of a level
    ``factor`` times coarser (pixel sizes times the factor, the origin kept)."""
    out = dict(attrs)
    rows, cols = (shape[axes[0]], shape[axes[1]])
    for prefix in ("spatial:", "proj:"):
        t = out.get(prefix + "transform")
        if isinstance(t, list) and len(t) in (6, 9) and all(isinstance(v, (int, float)) for v in t):
            t = list(t)
            t[0], t[1], t[3], t[4] = t[0] * factor, t[1] * factor, t[3] * factor, t[4] * factor
            out[prefix + "transform"] = t
        if isinstance(out.get(prefix + "shape"), list) and len(out[prefix + "shape"]) == 2:
            out[prefix + "shape"] = [rows, cols]
    return out


def _level_metadata(md: Any, shape: tuple[int, ...], attrs: Mapping[str, Any]) -> Any:
    """``md`` (the source's metadata) for a level: its shape, its chunks (shards) clipped
    to the level's shape (a shard to whole inner chunks), the codecs and the rest kept."""
    if md.zarr_format == 2:
        chunks = tuple(min(c, max(s, 1)) for c, s in zip(md.chunks, shape))
        return dataclasses.replace(md, shape=shape, chunks=chunks, attributes=attrs)
    if getattr(md, "chunk_edges", None) is not None:
        raise ArgumentError("overviews of arrays with a rectilinear chunk grid are not supported")
    codecs = md.to_json()["codecs"]
    outer = md.chunk_shape
    if codecs and codecs[0]["name"] == "sharding_indexed":
        inner = codecs[0]["configuration"]["chunk_shape"]
        grid = tuple(min(o, -(-max(s, 1) // i) * i) for o, i, s in zip(outer, inner, shape))
    else:
        grid = tuple(min(c, max(s, 1)) for c, s in zip(outer, shape))
    return dataclasses.replace(md, shape=shape, chunk_shape=grid, attributes=attrs)


def _blocks(dest: Array) -> Iterator[tuple[slice, ...]]:
    """``dest``'s boxes of whole chunks (shards), grown along the last dimensions to
    about BLOCK_BYTES."""
    shape = dest.shape
    block = list(dest.shards or dest.chunks)
    for d in reversed(range(len(shape))):
        factor = BLOCK_BYTES // max(math.prod(block) * dest.dtype.itemsize, 1)
        if factor < 2:
            break
        block[d] = min(shape[d], block[d] * factor)
        if block[d] < shape[d]:
            break
    for origin in itertools.product(*(range(0, s, b) for s, b in zip(shape, block))):
        yield tuple(slice(o, min(o + b, s)) for o, b, s in zip(origin, block, shape))


def _fill_level(source: Array, dest: Array, axes: Sequence[int], step: int, method: str,
                skip_fill: bool) -> None:
    fill = source.fill_value

    def one(box: tuple[slice, ...]) -> None:
        src = tuple(slice(b.start * step, min(b.stop * step, n)) if i in axes else b
                    for i, (b, n) in enumerate(zip(box, source.shape)))
        values = read_box(source, src)
        dest[box] = downsample(values, [step] * len(axes), method, axes=axes, fill_value=fill,
                               skip_fill=skip_fill)

    blocks = list(_blocks(dest)) if dest.size else []
    run_each(iter(blocks), one, item_threads(len(blocks)))


def _coordinates(group: Group, array: Array, axes: Sequence[int]) -> list[tuple[int, Array]]:
    names = array.dimension_names or ()
    out = []
    for a in axes:
        name = names[a] if a < len(names) else None
        if name and name != array.basename:
            found = group.get(name)
            if isinstance(found, Array) and found.ndim == 1 and found.shape[0] == array.shape[a]:
                out.append((a, found))
    return out


def _clear(group: Group, name: str) -> None:
    """Remove the overviews of ``name`` a former build left in ``group``: the groups the
    layout names (other than the base) and GDAL's ``ovr_<n>x`` groups holding ``name``."""
    doomed = set()
    for e in layout_entries(group.attrs) or ():
        asset = e["asset"].strip("/")
        if asset != name and "/" not in asset and isinstance(group.get(asset), Group):
            doomed.add(asset)
    for key, member in list(group.groups()):
        if OVERVIEW_GROUP.fullmatch(key) and name in member:
            doomed.add(key)
    for key in sorted(doomed):
        del group[key]


def build_overviews(node: Array | Group, factors: Sequence[int] | None = None, *, levels: int | None = None,
                    method: str = "mean", skip_fill: bool = True, coordinates: bool = True) -> Multiscales:
    """Build the overviews of an array (or of every array of 2 or more dimensions in
    a group) as GDAL's BuildOverviews does, replacing existing ones, and return the
    pyramid (``zarrc.multiscales``).

    factors : each level's reduction of the spatial dimensions relative to the array,
        increasing, each a multiple of the one before (2, 4, 8); ``levels=n`` is
        2, 4, ..., 2**n; neither: halve until a level fits in one chunk.
    method : "mean" (written as "average"), "nearest" or "mode".
    skip_fill : the fill value is nodata for "mean" and "mode" (as GDAL reads it).
    coordinates : also write the level's 1-d coordinate arrays of the spatial
        dimensions (means of the windows) where the array's group has them.

    Level ``f`` is the group ``ovr_<f>x`` beside the array, holding an array of the
    same name; the array's group gets the multiscales layout (for the first array, by
    name, of a group given).  The pyramid returned is read back from the store (a
    Group object the caller holds keeps the attributes it was opened with).
    ``factors=()`` removes the overviews and the layout."""
    if isinstance(node, Group):
        names = sorted(k for k, a in node.arrays() if a.ndim >= 2)
        if not names:
            raise ArgumentError(f"group {node.name} has no array of 2 or more dimensions")
        for k in names:
            _clear(node, k)
        results = [_build(_array(node, k), factors, levels, method, skip_fill, coordinates, False)
                   for k in reversed(names)]
        return results[-1]
    if not isinstance(node, Array):
        raise ArgumentTypeError(f"build_overviews: expected a zarrc Array or Group, got {type(node).__name__}")
    return _build(node, factors, levels, method, skip_fill, coordinates, True)


def _build(array: Array, factors: Sequence[int] | None, levels: int | None, method: str, skip_fill: bool,
           coordinates: bool, clear: bool) -> Multiscales:
    if RESAMPLING_NAMES.get(method) is None:
        raise ArgumentError(f"method {method!r}: use one of {', '.join(RESAMPLING_NAMES)}")
    parent_path = array.path.rpartition("/")[0]
    group = open_node(array.store, parent_path, read_only=array.read_only)
    if not isinstance(group, Group):
        raise ArgumentError(f"array {array.name} has no parent group to hold its overviews")
    group._check_writable()
    axes = spatial_axes(array, group)
    steps = _factors(array, axes, factors, levels)
    name = array.basename
    if clear:
        _clear(group, name)
    coords = _coordinates(group, array, axes) if coordinates else []
    written: list[tuple[str, tuple[int, ...]]] = []
    spatial: list[dict[str, Any] | None] = [_spatial_entry(array.attrs)]
    source, previous = array, 1
    for f in steps:
        shape = _level_shape(array.shape, axes, f)
        asset = f"ovr_{f}x"
        level_group = group.require_group(asset)
        attrs = _scaled_attributes(array.attrs.asdict(), axes, f, shape)
        dest = new_array(array.store, join_path(level_group._path, name),
                         _level_metadata(array.metadata, shape, attrs), overwrite=True)
        _fill_level(source, dest, axes, f // previous, method, skip_fill)
        for axis, coord in coords:
            values = read_box(coord, (slice(None),))
            kind = "mean" if values.dtype.kind in "fc" else "nearest"
            level_coord = downsample(values, [f], kind, skip_fill=False)
            meta = _level_metadata(coord.metadata, level_coord.shape, coord.attrs.asdict())
            new_array(array.store, join_path(level_group._path, coord.basename), meta,
                      overwrite=True)[...] = level_coord
        written.append((asset, shape))
        spatial.append(_spatial_entry(attrs))
        source, previous = dest, f
    if written:
        extra = spatial if any(s for s in spatial) else None
        write_layout(group, layout(name, written, array.shape, RESAMPLING_NAMES[method], extra))
    else:
        write_layout(group, None)
    found = multiscales(group, name)
    assert found is not None or not written
    return found if found is not None else Multiscales(group, (), None, name)


def _array(group: Group, name: str) -> Array:
    found = group[name]
    assert isinstance(found, Array)
    return found


def _spatial_entry(attrs: Mapping[str, Any]) -> dict[str, Any] | None:
    out = {k: attrs[k] for k in ("spatial:transform", "spatial:shape") if isinstance(attrs.get(k), list)}
    return out or None
