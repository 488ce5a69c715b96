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

import operator
from dataclasses import dataclass

import numpy as np

from zarrc._kernels import plan as layout
from zarrc.errors import SelectionError

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


def project_slice(start: int, stop: int, step: int, size: int, chunk: int) -> DimProjection:
    """Project ``range(start, stop, step)`` (already clipped to ``[0, size]``, step > 0)."""
    count = len(range(start, stop, step))
    if count == 0:
        return _empty()
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


def project_int(index: int, size: int, chunk: int) -> DimProjection:
    """Project a single integer index (already normalised to ``[0, size)``)."""
    c = index // chunk
    return DimProjection([(c, index - c * chunk, 1, 1, 0, -1)], [min(chunk, size - c * chunk) == 1], 1, True)


def project_indices(indices: np.ndarray, size: int, chunk: int) -> DimProjection:
    """Project an integer array (orthogonal indexing): any order, repeats allowed."""
    idx = np.asarray(indices, dtype=np.int64).ravel()
    if idx.size == 0:
        return _empty()
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
    local = idx[order] - sorted_chunks * chunk
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
    if not isinstance(selection, tuple):
        selection = (selection,)
    if sum(s is Ellipsis for s in selection) > 1:
        raise SelectionError("an index can only have a single ellipsis ('...')")
    ndim = len(shape)
    n_real = sum(s is not Ellipsis for s in selection)
    if n_real > ndim:
        raise SelectionError(f"too many indices for array: array is {ndim}-dimensional, "
                             f"but {n_real} were indexed")
    expanded = []
    for s in selection:
        if s is Ellipsis:
            expanded.extend([slice(None)] * (ndim - n_real))
        else:
            expanded.append(s)
    expanded.extend([slice(None)] * (ndim - len(expanded)))
    result = []
    for dim, (s, size) in enumerate(zip(expanded, shape)):
        if isinstance(s, slice):
            try:
                if s.step is not None and operator.index(s.step) <= 0:
                    raise SelectionError(f"slice step must be positive, got {s.step} in dimension {dim}")
                result.append(slice(*s.indices(size)))
            except TypeError:
                raise SelectionError(f"unsupported slice {s!r} in dimension {dim}; its start, stop "
                                     "and step must be integers or None") from None
            continue
        if isinstance(s, (bool, np.bool_)):
            raise SelectionError(f"boolean index {s!r} in dimension {dim} is not supported")
        try:
            i = operator.index(s)
        except TypeError:
            raise SelectionError(f"unsupported index {s!r} in dimension {dim}; "
                                 "expected an integer, a slice or '...'") from None
        if not -size <= i < size:
            raise SelectionError(f"index {i} is out of bounds for dimension {dim} with size {size}")
        result.append(i + size if i < 0 else i)
    return result


def plan(selection, shape: tuple[int, ...], chunks: tuple[int, ...]) -> tuple[list[DimProjection], tuple[int, ...]]:
    """Resolve a basic selection into per-dimension projections and the output shape."""
    dims = []
    for s, size, chunk in zip(normalize_selection(selection, shape), shape, chunks):
        if isinstance(s, slice):
            dims.append(project_slice(s.start, s.stop, s.step, size, chunk))
        else:
            dims.append(project_int(s, size, chunk))
    out_shape = tuple(d.nsel for d in dims if not d.dropped)
    return dims, out_shape
