"""User selections -> per-dimension chunk projections (the read/write plan).

A selection is resolved one dimension at a time into a :class:`DimProjection`:
the chunks it touches along that dimension and, for each, which elements of the
chunk are selected and where they land in the output.  Slices are kept in
strided form (start, step, count), so no per-element arrays are built for them;
integer arrays (orthogonal indexing) use the indexed form, with flat arrays of
chunk-local indices and output positions.  The engine takes the cartesian
product of the dimensions' projections: one task per touched chunk.

Nothing here does I/O or touches chunk data.
"""

from __future__ import annotations

import functools
import math
import numbers
import operator
from dataclasses import dataclass

import numpy as np

from zarrc._kernels import plan as layout
from zarrc.core.chunk_grid import Edges
from zarrc.errors import (
    ArgumentError,
    BoundsCheckError,
    NegativeStepError,
    SelectionError,
    SelectionTooLargeError,
    VindexInvalidSelectionError,
)


def _selected(selection, shape: tuple[int, ...]) -> str:
    """How many elements ``selection`` picks of an array of ``shape``, for messages
    (best effort: its slices, ints and index arrays counted per dimension)."""
    items = selection if isinstance(selection, tuple) else (selection,)
    counts = []
    try:
        for item, size in zip(items, shape):
            if isinstance(item, slice):
                counts.append(len(range(*item.indices(size))))
            elif isinstance(item, np.ndarray) and item.dtype == bool:
                counts.append(int(np.count_nonzero(item)))
            elif isinstance(item, (np.ndarray, list)):
                counts.append(int(np.size(item)))
            elif item is Ellipsis:
                return f"a selection of {shape}"
            else:
                counts.append(1)
        counts.extend(shape[len(counts):])
        return f"a selection of {math.prod(counts)} elements ({' x '.join(map(str, counts))})"
    except (TypeError, ValueError, OverflowError):
        return f"the selection {selection!r}"[:200]


def bounded_planning(plan_fn):
    """``plan_fn(selection, shape, chunks, ...)``, whose tables or 64-bit sizes a huge
    selection overflows: its MemoryError / OverflowError as SelectionTooLargeError,
    naming the selection's size and the array's shape and chunks (the array layer
    adds the array's name: ``names_selection_errors``)."""
    @functools.wraps(plan_fn)
    def planned(selection, shape, chunks, *args, **kwargs):
        try:
            return plan_fn(selection, shape, chunks, *args, **kwargs)
        except (MemoryError, OverflowError) as exc:
            if isinstance(exc, SelectionTooLargeError):
                raise
            what = (f"the block selection {selection!r}"[:200] if plan_fn.__name__ == "plan_blocks"
                    else _selected(selection, shape))
            raise SelectionTooLargeError(
                f"{what} of an array of shape {shape} in chunks "
                f"{tuple(c if isinstance(c, int) else 'rectilinear' for c in chunks)} is too large to plan: "
                f"{type(exc).__name__}: {exc}") from None
    return planned


def names_selection_errors(*methods: str):
    """A class decorator: each of ``methods`` names the array in the
    SelectionTooLargeError it raises (the array: ``self``, or ``self._array``)."""
    def wrap(method):
        @functools.wraps(method)
        def named(self, *args, **kwargs):
            try:
                return method(self, *args, **kwargs)
            except SelectionTooLargeError as exc:
                if str(exc).startswith("array "):         # (named by the array's own method)
                    raise
                path = getattr(getattr(self, "_array", self), "path", None)
                raise SelectionTooLargeError(f"array {path or '/'}: {exc}") from None
        return named

    def decorate(cls):
        for name in methods:
            setattr(cls, name, wrap(getattr(cls, name)))
        return cls
    return decorate


# Columns of DimProjection.table: the first PROJECTION_COLS columns of the plan
# table (its layout's home: zarrc/_kernels/plan.pxd)
CHUNK, START, STEP, COUNT, OUT_START, IDX = (layout.COL_CHUNK, layout.COL_START, layout.COL_STEP,
                                             layout.COL_COUNT, layout.COL_OUT, layout.COL_IDX)
PROJECTION_COLS = layout.PROJECTION_COLS
# Selections touching fewer chunks than this along a dimension are projected in plain Python.
SMALL = 64


@dataclass(frozen=True)
class DimProjection:
    """The projection of one dimension's selection onto its chunks.

    ``table`` has one row per touched chunk (an int64 array of shape (n,
    PROJECTION_COLS), or a list of tuples for small projections) with columns chunk index, local
    start, local step, count, output start, and the offset of this chunk's
    entries in ``local``/``out`` (-1 for strided form).  ``full`` is True for each
    touched chunk whose in-bounds part is wholly selected, in order.
    ``nsel`` is the number of selected elements (the output length, or 1 for an
    integer index, whose dimension is ``dropped`` from the output).
    """

    table: np.ndarray | list
    full: np.ndarray | list
    nsel: int
    dropped: bool
    local: np.ndarray | None = None
    out: np.ndarray | None = None


def _empty(dropped: bool = False) -> DimProjection:
    return DimProjection(np.zeros((0, PROJECTION_COLS), np.int64), np.zeros(0, bool), 0, dropped)


def project_slice(start: int, stop: int, step: int, size: int, chunk: int | Edges) -> DimProjection:
    """Project ``range(start, stop, step)`` (already clipped to ``[0, size]``, step > 0)
    onto chunks of length ``chunk``, or a rectilinear dimension's ``Edges``."""
    count = len(range(start, stop, step))
    if count == 0:
        return _empty()
    if isinstance(chunk, Edges):
        return _slice_on_edges(start, stop, step, size, chunk, count)
    last = start + (count - 1) * step
    first_chunk, last_chunk = start // chunk, last // chunk
    if last_chunk - first_chunk < SMALL:
        return _project_slice_small(start, stop, step, size, chunk, count, first_chunk, last_chunk)
    if step >= chunk:
        # at most one element per chunk: enumerate the elements (count <= size / chunk)
        idx = np.arange(start, last + 1, step, dtype=np.int64)
        chunks = idx // chunk
        table = np.zeros((count, PROJECTION_COLS), np.int64)
        table[:, CHUNK] = chunks
        table[:, START] = idx - chunks * chunk
        table[:, STEP] = 1
        table[:, COUNT] = 1
        table[:, OUT_START] = np.arange(count)
        table[:, IDX] = -1
        full = np.minimum(chunk, size - chunks * chunk) == 1   # the chunk holds just this element
        return DimProjection(table, full, count, False)
    chunks = np.arange(first_chunk, last_chunk + 1, dtype=np.int64)
    lo = chunks * chunk                                  # first element of each chunk
    hi = np.minimum(lo + chunk, stop)                    # end (exclusive) of the selection there
    # first selected element in each chunk: start + ceil((lo - start) / step) * step
    first = np.where(lo <= start, start, start + -(-(lo - start) // step) * step)
    counts = np.where(first < hi, (hi - first + step - 1) // step, 0)
    table = np.zeros((len(chunks), PROJECTION_COLS), np.int64)
    table[:, CHUNK] = chunks
    table[:, START] = first - lo
    table[:, STEP] = step
    table[:, COUNT] = counts
    table[:, OUT_START] = np.concatenate(([0], np.cumsum(counts)[:-1]))
    table[:, IDX] = -1
    keep = counts > 0
    extent = np.minimum(lo + chunk, size) - lo           # in-bounds length of each chunk
    full = (first == lo) & (counts == extent)       # (with step > 1: chunks of one element)
    return DimProjection(table[keep], full[keep], count, False)


def _project_slice_small(start, stop, step, size, chunk, count, first_chunk, last_chunk) -> DimProjection:
    """project_slice for a few chunks, in plain Python (numpy's per-call cost would dominate)."""
    rows, full = [], []
    out = 0
    for c in range(first_chunk, last_chunk + 1):
        lo = c * chunk
        hi = min(lo + chunk, stop)
        first = start if lo <= start else start + -(-(lo - start) // step) * step
        if first >= hi:
            continue
        n = (hi - first + step - 1) // step
        rows.append((c, first - lo, step, n, out, -1))
        full.append(first == lo and n == min(chunk, size - lo))
        out += n
    return DimProjection(rows, full, count, False)


def _slice_on_edges(start: int, stop: int, step: int, size: int, edges: Edges, count: int) -> DimProjection:
    """project_slice over a rectilinear dimension: the first and last chunks by a
    boundary search, then the touched chunks' rows (or, when the slice selects fewer
    elements than it spans chunks, its elements' chunks by one search each)."""
    offsets = edges.offsets
    last = start + (count - 1) * step
    first_chunk, last_chunk = int(edges.chunk_of(start)), int(edges.chunk_of(last))
    if count <= last_chunk - first_chunk:           # at most a few elements per chunk
        idx = np.arange(start, last + 1, step, dtype=np.int64)
        per = edges.chunk_of(idx)
        at = np.flatnonzero(np.r_[True, per[1:] != per[:-1]])
        chunks = per[at]
        n = np.diff(np.r_[at, count])
        lo = offsets[chunks]
        first = idx[at]
    else:
        chunks = np.arange(first_chunk, last_chunk + 1, dtype=np.int64)
        lo = offsets[chunks]
        hi = np.minimum(offsets[chunks + 1], stop)
        first = np.where(lo <= start, start, start + -(-(lo - start) // step) * step)
        n = np.where(first < hi, (hi - first + step - 1) // step, 0)
        keep = n > 0
        chunks, lo, first, n = chunks[keep], lo[keep], first[keep], n[keep]
    table = np.empty((len(chunks), PROJECTION_COLS), np.int64)
    table[:, CHUNK] = chunks
    table[:, START] = first - lo
    table[:, STEP] = step
    table[:, COUNT] = n
    table[:, OUT_START] = np.r_[0, np.cumsum(n)[:-1]]
    table[:, IDX] = -1
    full = (first == lo) & (n == np.minimum(offsets[chunks + 1], size) - lo)
    return DimProjection(table, full, count, False)


def project_int(index: int, size: int, chunk: int | Edges) -> DimProjection:
    """Project a single integer index (already normalised to ``[0, size)``)."""
    if isinstance(chunk, Edges):
        c = int(chunk.chunk_of(index))
        lo = int(chunk.offsets[c])
        return DimProjection([(c, index - lo, 1, 1, 0, -1)], [min(int(chunk.offsets[c + 1]), size) - lo == 1],
                             1, True)
    c = index // chunk
    return DimProjection([(c, index - c * chunk, 1, 1, 0, -1)], [min(chunk, size - c * chunk) == 1], 1, True)


def project_indices(indices: np.ndarray, size: int, chunk: int | Edges) -> DimProjection:
    """Project an integer array (orthogonal indexing): any order, repeats allowed."""
    idx = np.asarray(indices, dtype=np.int64).ravel()
    if idx.size == 0:
        return _empty()
    if isinstance(chunk, Edges):
        chunks = chunk.chunk_of(idx)
    else:
        chunks = idx // chunk
    order = np.argsort(chunks, kind="stable")
    sorted_chunks = chunks[order]
    starts = np.flatnonzero(np.r_[True, sorted_chunks[1:] != sorted_chunks[:-1]])
    counts = np.diff(np.r_[starts, idx.size])
    touched = sorted_chunks[starts]
    table = np.zeros((len(touched), PROJECTION_COLS), np.int64)
    table[:, CHUNK] = touched
    table[:, STEP] = 1
    table[:, COUNT] = counts
    table[:, IDX] = starts
    local = idx[order] - (chunk.offsets[sorted_chunks] if isinstance(chunk, Edges) else sorted_chunks * chunk)
    out = order.astype(np.int64)
    full = np.zeros(len(touched), bool)      # a later refinement may detect full coverage
    return DimProjection(table, full, idx.size, False, local, out)


def normalize_selection(selection, shape: tuple[int, ...]) -> list:
    """Expand Ellipsis and missing trailing dimensions; one entry per dimension.

    Each entry is an int (normalised, in bounds) or a slice with concrete,
    clipped start/stop and a positive step.  Raises SelectionError (an
    IndexError) for out-of-bounds integers, zero or negative steps, too many
    indices, and unsupported types.
    """
    result: list[int | slice] = []
    for dim, (s, size) in enumerate(zip(expand_ellipsis(selection, len(shape)), shape)):
        if isinstance(s, slice):
            result.append(slice(*_slice_indices(s, dim, size)))
            continue
        if isinstance(s, (bool, np.bool_)):
            raise SelectionError(f"boolean index {s!r} in dimension {dim} is not supported")
        try:
            i = operator.index(s)
        except TypeError:
            raise SelectionError(f"unsupported index {s!r} in dimension {dim}; "
                                 "expected an integer, a slice or '...'") from None
        result.append(_in_bounds(i, dim, size))
    return result


def _in_bounds(i: int, dim: int, size: int) -> int:
    """An integer index of a dimension, negative ones counted from the end; SelectionError
    if it is out of bounds."""
    if not -size <= i < size:
        raise BoundsCheckError(f"index {i} is out of bounds for dimension {dim} with size {size}")
    return i + size if i < 0 else i


@bounded_planning
def plan(selection, shape: tuple[int, ...], chunks: tuple[int | Edges, ...]) -> tuple[list[DimProjection], tuple[int, ...]]:
    """Resolve a basic selection into per-dimension projections and the output shape."""
    dims = []
    for s, size, chunk in zip(normalize_selection(selection, shape), shape, chunks):
        if isinstance(s, slice):
            dims.append(project_slice(s.start, s.stop, s.step, size, chunk))
        else:
            dims.append(project_int(s, size, chunk))
    return dims, dims_shape(dims)


# ---------------------------------------------------------------- other selection kinds
# (the selection kinds of zarr-python 3 and its dispatch of ``a[...]``; the plans
# are the same projections, so every kind runs in the same native batches)

def _is_integer(x) -> bool:
    return isinstance(x, numbers.Integral) and not isinstance(x, bool)


def _is_int_array(x) -> bool:
    return (not np.isscalar(x) and hasattr(x, "shape") and hasattr(x, "dtype")
            and getattr(x.dtype, "kind", None) in ("u", "i"))


def _is_bool_array(x) -> bool:
    return hasattr(x, "shape") and hasattr(x, "dtype") and x.dtype == bool


def _is_int_list(x) -> bool:
    return type(x) is list and len(x) > 0 and all(_is_integer(i) for i in x)


def _is_bool_list(x) -> bool:
    return type(x) is list and len(x) > 0 and all(type(i) in (bool, np.bool_) for i in x)


def _is_index_array(x) -> bool:
    """An integer or boolean list or array (one dimension's orthogonal index)."""
    return _is_int_list(x) or _is_int_array(x) or _is_bool_array(x) or _is_bool_list(x)


def expand_ellipsis(selection, ndim: int) -> tuple:
    """One item per dimension: ``...`` replaced by slices, missing trailing
    dimensions added (zarr-python's rules)."""
    items = selection if isinstance(selection, tuple) else (selection,)
    n_ellipsis = sum(1 for s in items if s is Ellipsis)
    if n_ellipsis > 1:
        raise SelectionError("an index can only have a single ellipsis ('...')")
    if n_ellipsis:
        at = next(i for i, s in enumerate(items) if s is Ellipsis)
        rest = len(items) - 1
        items = items[:at] + (slice(None),) * max(0, ndim - rest) + items[at + 1:]
    if len(items) > ndim:
        raise SelectionError(f"too many indices for array: array is {ndim}-dimensional, "
                             f"but {len(items)} were indexed")
    return items + (slice(None),) * (ndim - len(items))


def _checked_indices(s: np.ndarray, dim: int, size: int) -> np.ndarray:
    """An integer index array as int64, negative indices wrapped, bounds checked."""
    if s.ndim != 1:
        raise SelectionError(f"integer arrays in an orthogonal selection must be 1-dimensional; "
                             f"got shape {s.shape} in dimension {dim}")
    idx = s.astype(np.int64)         # (a copy: the caller's array is left alone)
    if idx.size:
        idx[idx < 0] += size
        if idx.min() < 0 or idx.max() >= size:
            bad = s[(idx < 0) | (idx >= size)][0]
            raise BoundsCheckError(f"index {bad} is out of bounds for dimension {dim} with size {size}")
    return idx


@bounded_planning
def plan_orthogonal(selection, shape: tuple[int, ...], chunks: tuple[int | Edges, ...]) -> tuple[list[DimProjection], tuple[int, ...]]:
    """Resolve an orthogonal selection (``a.oindex[...]``): per dimension an int, a
    slice (positive step), an integer list or array (any order, repeats, negative
    indices counted from the end) or a boolean array of the dimension's length.
    Ints drop their dimension; arrays give as many elements as they select."""
    dims = []
    for dim, (s, size, chunk) in enumerate(zip(expand_ellipsis(selection, len(shape)), shape, chunks)):
        if type(s) is list:
            s = np.asarray(s)
        if _is_integer(s):
            dims.append(project_int(_in_bounds(int(s), dim, size), size, chunk))
        elif isinstance(s, slice):
            start, stop, step = _slice_indices(s, dim, size)
            dims.append(project_slice(start, stop, step, size, chunk))
        elif _is_int_array(s):
            dims.append(project_indices(_checked_indices(np.asarray(s), dim, size), size, chunk))
        elif _is_bool_array(s):
            s = np.asarray(s)
            if s.ndim != 1 or s.shape[0] != size:
                raise SelectionError(f"boolean array of shape {s.shape} in dimension {dim} does not fit "
                                     f"the dimension's length {size}")
            dims.append(project_indices(np.flatnonzero(s), size, chunk))
        else:
            raise SelectionError(f"unsupported index {s!r} in dimension {dim} of an orthogonal selection; "
                                 "expected an integer, a slice, an integer array or a boolean array")
    return dims, dims_shape(dims)


def _slice_indices(s: slice, dim: int, size: int) -> tuple[int, int, int]:
    try:
        if s.step is not None and operator.index(s.step) <= 0:
            raise NegativeStepError(f"slice step must be positive, got {s.step} in dimension {dim}")
        return s.indices(size)
    except TypeError:
        raise SelectionError(f"unsupported slice {s!r} in dimension {dim}; its start, stop "
                             "and step must be integers or None") from None


@bounded_planning
def plan_blocks(selection, shape: tuple[int, ...], chunks: tuple[int | Edges, ...],
                blocks: tuple[int | Edges, ...]) -> tuple[list[DimProjection], tuple[int, ...]]:
    """Resolve a block selection (``a.blocks[...]``): per dimension a block number
    or a slice of block numbers (step 1; negative numbers counted from the end),
    over blocks of shape ``blocks`` (the array's chunk grid; for a sharded array,
    the shards, as zarr-python), planned over ``chunks``.  No dimension is dropped."""
    dims = []
    for dim, (s, size, chunk, block) in enumerate(zip(expand_ellipsis(selection, len(shape)),
                                                      shape, chunks, blocks)):
        nblocks = block.nchunks if isinstance(block, Edges) else -(-size // block)
        bound = functools.partial(_block_start, block=block)
        if _is_integer(s):
            b = int(s) + nblocks if s < 0 else int(s)
            start, stop = bound(b), bound(b + 1)
        elif isinstance(s, slice):
            if s.step not in (1, None):
                raise SelectionError(f"slice {s!r} in dimension {dim} of a block selection: "
                                     "the step must be 1")
            try:
                lo = 0 if s.start is None else operator.index(s.start)
                hi = nblocks if s.stop is None else operator.index(s.stop)
            except TypeError:
                raise SelectionError(f"unsupported slice {s!r} in dimension {dim} of a block "
                                     "selection") from None
            start, stop = bound(lo + nblocks if lo < 0 else lo), bound(hi + nblocks if hi < 0 else hi)
        else:
            raise SelectionError(f"unsupported index {s!r} in dimension {dim} of a block selection; "
                                 "expected a block number or a slice of them")
        if not 0 <= start < size:
            raise BoundsCheckError(f"block {s!r} is out of bounds for dimension {dim} with "
                                   f"{nblocks} blocks")
        # (the element slice, clipped as a slice is: zarr-python's reading of it)
        dims.append(project_slice(*slice(start, stop).indices(size), size, chunk))
    return dims, tuple(d.nsel for d in dims)


def _block_start(b: int, block: int | Edges) -> int:
    """The first element of block ``b`` (blocks of length ``block``, or a rectilinear
    dimension's; a negative ``b`` gives a negative start, past the end the end)."""
    if isinstance(block, Edges):
        return int(block.offsets[min(max(b, 0), len(block.offsets) - 1)]) + min(b, 0)
    return b * block


@bounded_planning
def plan_item(selection, shape: tuple[int, ...], chunks: tuple[int | Edges, ...]
              ) -> tuple[list[DimProjection] | Points, tuple[int, ...]]:
    """Resolve ``a[selection]`` as zarr-python 3 interprets it: a pure fancy index
    (integer arrays / lists and ints, one per dimension, or a boolean mask) is a
    coordinate or mask selection (``a.vindex``), a selection with one index array
    (or one per dimension) is an orthogonal selection, anything else a basic one.

    Returns the plan and the result's shape (for a coordinate selection, the
    broadcast shape of its index arrays)."""
    ndim = len(shape)
    if _is_pure_fancy(selection, ndim):
        return _plan_fancy(selection, shape, chunks)
    if _is_pure_orthogonal(selection, ndim):
        return plan_orthogonal(selection, shape, chunks)
    return plan(selection, shape, chunks)


def _is_pure_fancy(selection, ndim: int) -> bool:
    if _is_bool_array(selection):
        return True
    if ndim == 1 and (_is_int_list(selection) or _is_int_array(selection) or _is_bool_list(selection)):
        return True
    return (isinstance(selection, tuple) and len(selection) == ndim
            and not any(isinstance(s, slice) or s is Ellipsis for s in selection)
            and all(_is_integer(s) or _is_int_list(s) or _is_int_array(s) for s in selection)
            and any(_is_int_list(s) or _is_int_array(s) for s in selection))


def _is_pure_orthogonal(selection, ndim: int) -> bool:
    if not ndim:
        return False
    items = selection if isinstance(selection, tuple) else (selection,)
    arrays = sum(_is_index_array(s) for s in items)
    if len(items) == ndim and arrays == ndim:
        return True
    return (len(items) <= ndim and arrays <= 1
            and all(_is_index_array(s) or isinstance(s, (int, slice)) for s in items))


def _plan_fancy(selection, shape, chunks):
    """``a[...]`` with a pure fancy index: zarr-python's ``a.vindex[...]``.  A
    single index array among ints (or a 1-d mask) is also an orthogonal selection,
    planned as one (strided dimensions for the ints)."""
    items = selection if isinstance(selection, tuple) else (selection,)
    arrays = [s for s in items if not _is_integer(s)]
    if len(items) == len(shape) and len(arrays) == 1 and (_is_int_list(arrays[0]) or _is_int_array(arrays[0])):
        at = next(i for i, s in enumerate(items) if not _is_integer(s))
        index = np.asarray(items[at])
        flat = list(items)
        flat[at] = index.reshape(-1)
        dims, _ = plan_orthogonal(tuple(flat), shape, chunks)
        # the result takes the broadcast shape of the index array and the ints
        out_shape = index.shape if len(shape) == 1 else np.broadcast_shapes(index.shape, (1,))
        return dims, tuple(out_shape)
    plan = plan_vindex(selection, shape, chunks)
    return plan, plan.shape


# ---------------------------------------------------------------- points
# (coordinate and mask selections: no cartesian product of dimensions, but points,
# grouped by chunk natively: zarrc._kernels.plan.plan_points / plan_mask)

@dataclass(frozen=True)
class Points:
    """A coordinate or mask selection planned: one task per touched chunk, whose
    points are listed (``local``: flat C-order index within the chunk, ``out``:
    position in the 1-d result).  ``table`` / ``tasks`` are in the form of
    engine.batch.assemble's (the last dimension's row of a task is its point row),
    ``coords`` each task's chunk coordinates; ``nsel`` points, the result shaped
    ``shape`` (the broadcast shape of the index arrays; (nsel,) for a mask)."""

    table: np.ndarray
    local: np.ndarray
    out: np.ndarray
    tasks: np.ndarray
    coords: np.ndarray
    nsel: int
    shape: tuple[int, ...]
    ndim: int


@bounded_planning
def plan_vindex(selection, shape: tuple[int, ...], chunks: tuple[int | Edges, ...]) -> Points:
    """Resolve ``a.vindex[selection]``: a coordinate selection (one integer array or
    int per dimension, broadcast together) or a mask selection (one boolean array
    of the array's shape), as zarr-python decides between them."""
    items = selection if isinstance(selection, tuple) else (selection,)
    items = tuple(np.asarray(s) if type(s) is list else s for s in items)
    if len(items) == 1 and _is_bool_array(items[0]) and np.shape(items[0]) == shape and shape:
        return plan_mask_selection(items[0], shape, chunks)
    if len(items) == len(shape) and shape and all(_is_integer(s) or _is_int_array(s) for s in items):
        return plan_coordinate(items, shape, chunks)
    raise VindexInvalidSelectionError("unsupported selection type for vectorized indexing; only "
                                      "coordinate selection (tuple of integer arrays) and mask "
                                      "selection (single Boolean array) are supported; got "
                                      f"{selection!r}")


@bounded_planning
def plan_coordinate(selection, shape: tuple[int, ...], chunks: tuple[int | Edges, ...]) -> Points:
    """Resolve a coordinate selection (``get_coordinate_selection``): per dimension
    an integer array (any shape; all broadcast together) or an int; the result has
    the broadcast shape.  Negative indices count from the end; points may repeat
    and come in any order."""
    items = selection if isinstance(selection, tuple) else (selection,)
    items = tuple(np.asarray(s) if type(s) is list else s for s in items)
    if not shape or len(items) != len(shape) or not all(_is_integer(s) or _is_int_array(s) for s in items):
        raise SelectionError("invalid coordinate selection; expected one integer (coordinate) "
                             f"array per dimension of the array of shape {shape}, got {selection!r}")
    arrays = [np.asarray([s]) if _is_integer(s) else np.asarray(s) for s in items]
    for dim, (a, size) in enumerate(zip(arrays, shape)):
        if a.dtype.kind == "u" and a.size and int(a.max()) >= 1 << 63:
            raise BoundsCheckError(f"index {int(a.max())} is out of bounds for dimension {dim} "
                                   f"with size {size}")
    try:
        broadcast = np.broadcast_arrays(*arrays)
    except ValueError:
        raise ArgumentError("coordinate arrays of shapes "
                             f"{[np.shape(s) for s in items]} do not broadcast together") from None
    sel_shape = broadcast[0].shape or (1,)
    flat = [a.reshape(-1).astype(np.int64, copy=False) for a in broadcast]
    if any(isinstance(c, Edges) for c in chunks):
        return _grid_points(flat, shape, sel_shape, chunks)
    try:
        planned = layout.plan_points(flat, shape, chunks)  # type: ignore[arg-type]  # (ints: see above)
    except ValueError as exc:       # (an array of 2**63 elements or more: no flat index)
        raise SelectionTooLargeError(f"{len(flat[0])} points of an array of shape {shape}: {exc}") from None
    if len(planned) == 2:
        dim, k = planned
        raise BoundsCheckError(f"index {int(flat[dim][k])} is out of bounds for dimension {dim} "
                               f"with size {shape[dim]}")
    return Points(*planned, nsel=len(flat[0]), shape=sel_shape, ndim=len(shape))


@bounded_planning
def plan_mask_selection(mask, shape: tuple[int, ...], chunks: tuple[int | Edges, ...]) -> Points:
    """Resolve a mask selection (``get_mask_selection``): a boolean array of the
    array's shape; the result is 1-d, its True elements in C order."""
    if isinstance(mask, tuple) and len(mask) == 1:
        mask = mask[0]
    if type(mask) is list:
        mask = np.asarray(mask)
    if not _is_bool_array(mask) or mask.shape != shape or not shape:
        raise SelectionError("invalid mask selection; expected one Boolean (mask) array with the "
                             f"same shape as the array {shape}, got {mask!r}")
    mask = np.ascontiguousarray(mask)
    try:
        planned = layout.plan_mask(mask, shape, _lengths(chunks), _bounds(chunks))
    except ValueError as exc:
        raise SelectionTooLargeError(f"a mask of an array of shape {shape}: {exc}") from None
    n = len(planned[1])
    return Points(*planned, nsel=n, shape=(n,), ndim=len(shape))


def _lengths(chunks: tuple[int | Edges, ...]) -> tuple[int, ...]:
    """The planners' chunk lengths (1 for a rectilinear dimension: see _bounds)."""
    return tuple(1 if isinstance(c, Edges) else c for c in chunks)


def _bounds(chunks: tuple[int | Edges, ...]) -> tuple[np.ndarray | None, ...] | None:
    """The planners' ``bounds``: each rectilinear dimension's boundaries, or None
    for a regular grid."""
    if not any(isinstance(c, Edges) for c in chunks):
        return None
    return tuple(c.offsets if isinstance(c, Edges) else None for c in chunks)


def _grid_points(flat: list[np.ndarray], shape: tuple[int, ...], sel_shape: tuple[int, ...],
                 chunks: tuple[int | Edges, ...]) -> Points:
    """Points of coordinates ``flat`` (negative ones counted from the end; bounds
    checked) on the rectilinear grid ``chunks``, grouped by chunk in the kernels
    (``plan_points`` searching each rectilinear dimension's boundaries: local
    indices in each chunk's own shape)."""
    planned = layout.plan_points(flat, shape, _lengths(chunks), _bounds(chunks))
    if len(planned) == 2:                   # (the kernels check the bounds)
        dim, k = planned
        raise BoundsCheckError(f"index {int(flat[dim][k])} is out of bounds for dimension {dim} "
                               f"with size {shape[dim]}")
    return Points(*planned, nsel=len(flat[0]) if flat else 0, shape=sel_shape, ndim=len(shape))


def dims_shape(dims: Plan) -> tuple[int, ...]:
    """The shape the projections fill: ``nsel`` of each dimension not dropped (a
    planned coordinate or mask selection fills a 1-d array of its points)."""
    if isinstance(dims, Points):
        return (dims.nsel,)
    return tuple(d.nsel for d in dims if not d.dropped)


# What the engine runs: a dimension's projection each, or points.
Plan = list[DimProjection] | Points
