# cython: language_level=3, freethreading_compatible=True, boundscheck=False, wraparound=False, cdivision=True
"""Per-call planning of basic selections, and chunk keys, in one native pass.

``plan_basic`` does for a selection of integers and slices what zarrc.indexing.plan
followed by engine.assemble and engine.task_coords do in Python, producing the same
arrays; anything else (index arrays, errors) returns None, and the caller
takes the general path, which also words the errors.  ``format_keys`` builds the
store keys of many chunk coordinates.  A small read then spends a few microseconds
of Python, not tens, which also leaves the GIL free for other reading threads.
"""

from cpython.long cimport PyLong_AsSsize_t
from cpython.slice cimport PySlice_AdjustIndices, PySlice_Unpack
from libc.stdint cimport int64_t
from libc.stdlib cimport free, malloc
from libc.string cimport memcpy

import numpy as np

# The plan table's layout (plan.pxd), for Python: a dimension's projection
# (zarrc.indexing.DimProjection.table) holds the first PROJECTION_COLS columns, the
# per-task "full" flag is column COL_FULL of the native plan.
MAX_DIMS = PLAN_MAX_DIMS
COL_CHUNK = PLAN_COL_CHUNK
COL_START = PLAN_COL_START
COL_STEP = PLAN_COL_STEP
COL_COUNT = PLAN_COL_COUNT
COL_OUT = PLAN_COL_OUT
COL_IDX = PLAN_COL_IDX
COL_FULL = PLAN_COL_FULL
NCOLS = PLAN_NCOLS
PROJECTION_COLS = PLAN_COL_FULL

# More tasks than this are planned by the general path (numpy, not a Python loop).
MAX_TASKS = 1 << 20


cdef void plan_free(Plan* p) noexcept nogil:
    free(p.table)
    free(p.tasks)
    free(p.coords)
    p.table = p.tasks = p.coords = NULL


cdef int plan_selection(object selection, tuple shape, tuple chunks, Plan* p) except -1:
    """Plan ``selection`` (an int, a slice, or a tuple of them, at most one per
    dimension, and at most one Ellipsis; slices with positive steps) over an array of ``shape`` and ``chunks``
    into ``p`` (its buffers then belong to the caller: plan_free).  Returns 1, or 0
    (nothing allocated) if the selection is not of that form, an integer is out of
    bounds, or the array is 0-d."""
    cdef Py_ssize_t ndim = len(shape)
    cdef Py_ssize_t start[PLAN_MAX_DIMS]
    cdef Py_ssize_t step[PLAN_MAX_DIMS]
    cdef Py_ssize_t nrows[PLAN_MAX_DIMS]
    cdef Py_ssize_t row0[PLAN_MAX_DIMS]
    cdef Py_ssize_t idx[PLAN_MAX_DIMS]
    cdef Py_ssize_t size, chunk, i, d, n, stop, c, lo, hi, first, k, r, t, ntasks, total
    cdef Py_ssize_t first_chunk, last_chunk, out
    cdef int64_t* row
    p.table = p.tasks = p.coords = NULL
    if ndim == 0 or ndim > PLAN_MAX_DIMS or len(chunks) != ndim:
        return 0
    items = selection if type(selection) is tuple else (selection,)
    n = len(items)
    for d in range(n):
        if items[d] is Ellipsis:           # one Ellipsis: the dimensions it stands for
            rest = items[d + 1:]
            if any(x is Ellipsis for x in rest):
                return 0
            items = items[:d] + (slice(None),) * (ndim - n + 1) + rest
            n = len(items)
            break
    if n > ndim:
        return 0
    total = 0
    ntasks = 1
    for d in range(ndim):
        size = shape[d]
        chunk = chunks[d]
        if chunk < 1:
            return 0
        p.dropped[d] = False
        x = items[d] if d < n else slice(None)
        if type(x) is int:
            try:
                i = PyLong_AsSsize_t(x)
            except OverflowError:
                return 0
            if i < 0:
                i += size
            if not 0 <= i < size:
                return 0
            start[d], step[d], p.count[d] = i, 1, 1
            p.dropped[d] = True
        elif type(x) is slice:
            try:
                if PySlice_Unpack(x, &i, &stop, &k) < 0:
                    return 0
            except (TypeError, ValueError):
                return 0
            if k <= 0:
                return 0
            start[d], step[d] = i, k
            p.count[d] = PySlice_AdjustIndices(size, &start[d], &stop, k)
        else:
            return 0
        if p.count[d] == 0:
            nrows[d] = 0
        else:
            first_chunk = start[d] // chunk
            last_chunk = (start[d] + (p.count[d] - 1) * step[d]) // chunk
            if step[d] >= chunk:        # at most one element per chunk
                nrows[d] = p.count[d]
            else:                       # every chunk in between holds some
                nrows[d] = last_chunk - first_chunk + 1
        row0[d] = total
        total += nrows[d]
        ntasks *= nrows[d]
        if ntasks > MAX_TASKS:
            return 0
    p.ndim = <int>ndim
    p.nrows = total
    p.ntasks = ntasks
    p.table = <int64_t*>malloc(max(1, total) * PLAN_NCOLS * sizeof(int64_t))
    p.tasks = <int64_t*>malloc(max(1, ntasks * ndim) * sizeof(int64_t))
    p.coords = <int64_t*>malloc(max(1, ntasks * ndim) * sizeof(int64_t))
    if p.table == NULL or p.tasks == NULL or p.coords == NULL:
        plan_free(p)
        raise MemoryError()
    for d in range(ndim):
        size = shape[d]
        chunk = chunks[d]
        r = row0[d]
        if nrows[d] == 0:
            continue
        stop = start[d] + (p.count[d] - 1) * step[d] + 1        # past the last element
        first_chunk = start[d] // chunk
        last_chunk = (stop - 1) // chunk
        out = 0
        c = first_chunk
        while c <= last_chunk:
            lo = c * chunk
            hi = min(lo + chunk, stop)
            first = start[d] if lo <= start[d] else start[d] + (lo - start[d] + step[d] - 1) // step[d] * step[d]
            if first < hi:
                k = (hi - first + step[d] - 1) // step[d]
                row = p.table + r * PLAN_NCOLS
                row[PLAN_COL_CHUNK] = c
                row[PLAN_COL_START] = first - lo
                row[PLAN_COL_STEP] = step[d]
                row[PLAN_COL_COUNT] = k
                row[PLAN_COL_OUT] = out
                row[PLAN_COL_IDX] = -1
                row[PLAN_COL_FULL] = first == lo and k == min(chunk, size - lo)
                out += k
                r += 1
                if step[d] >= chunk:         # jump to the next element's chunk
                    c = (first + step[d]) // chunk
                    continue
            c += 1
    for d in range(ndim):
        idx[d] = 0
    for t in range(ntasks):               # C order: the last dimension varies fastest
        for d in range(ndim):
            p.tasks[t * ndim + d] = row0[d] + idx[d]
            p.coords[t * ndim + d] = p.table[(row0[d] + idx[d]) * PLAN_NCOLS]
        d = ndim - 1
        while d >= 0:
            idx[d] += 1
            if idx[d] < nrows[d]:
                break
            idx[d] = 0
            d -= 1
    return 1


cdef object int64_array(const int64_t* src, Py_ssize_t rows, Py_ssize_t cols):
    """A new (rows, cols) int64 array holding the C buffer ``src``."""
    a = np.empty((rows, cols), np.int64)
    cdef int64_t[:, ::1] v = a
    if rows * cols:
        memcpy(&v[0, 0], src, rows * cols * sizeof(int64_t))
    return a


def plan_basic(selection, tuple shape, tuple chunks):
    """plan_selection for Python callers.

    Returns (table, tasks, coords, out_shape, dropped): table int64 (rows, 7), one
    row per touched chunk of each dimension (zarrc.indexing's columns plus FULL);
    tasks int64 (ntasks, ndim), each task's row of each dimension, in C order;
    coords int64 (ntasks, ndim), each task's chunk coordinates; the output shape;
    per dimension, whether an integer dropped it.  None if the selection is not
    of that form, an integer is out of bounds, or the array is 0-d."""
    cdef Plan p
    cdef Py_ssize_t d
    if not plan_selection(selection, shape, chunks, &p):
        return None
    try:
        table = int64_array(p.table, p.nrows, PLAN_NCOLS)
        tasks = int64_array(p.tasks, p.ntasks, p.ndim)
        coords = int64_array(p.coords, p.ntasks, p.ndim)
    finally:
        plan_free(&p)
    out_shape = tuple([p.count[d] for d in range(p.ndim) if not p.dropped[d]])
    return table, tasks, coords, out_shape, tuple([p.dropped[d] for d in range(p.ndim)])


def format_keys(const int64_t[:, ::1] coords, str head, str separator):
    """``head`` + the coordinates of each row joined by ``separator``.  Raises
    ValueError for a negative coordinate."""
    cdef Py_ssize_t t, d, n = coords.shape[0], ndim = coords.shape[1]
    keys = []
    for t in range(n):
        for d in range(ndim):
            if coords[t, d] < 0:
                raise ValueError(f"chunk coordinates {list(coords[t])} must not be negative")
        parts = [str(coords[t, d]) for d in range(ndim)]
        keys.append(head + separator.join(parts))
    return keys
