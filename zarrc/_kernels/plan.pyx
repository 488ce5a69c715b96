# cython: language_level=3, boundscheck=False, wraparound=False, cdivision=True
"""Per-call planning of basic selections, and chunk keys, in one native pass.

``plan_basic`` does for a selection of integers and slices what zarrc.indexing.plan
followed by engine.assemble and engine.task_coords do in Python, producing the same
arrays; anything else (Ellipsis, index arrays, errors) returns None, and the caller
takes the general path, which also words the errors.  ``format_keys`` builds the
store keys of many chunk coordinates.  A small read then spends a few microseconds
of Python, not tens, which also leaves the GIL free for other reading threads.
"""

from cpython.long cimport PyLong_AsSsize_t
from cpython.slice cimport PySlice_AdjustIndices, PySlice_Unpack
from libc.stdint cimport int64_t

import numpy as np

cdef enum:
    MAX_DIMS = 32
    NCOLS = 7           # chunk, start, step, count, out start, idx (-1), full (see zarrc.indexing)

# More tasks than this are planned by the general path (numpy, not a Python loop).
MAX_TASKS = 1 << 20


def plan_basic(selection, tuple shape, tuple chunks):
    """Plan ``selection`` (an int, a slice, or a tuple of them, at most one per
    dimension; slices with positive steps) over an array of ``shape`` and ``chunks``.

    Returns (table, tasks, coords, out_shape, dropped): table int64 (rows, 7), one
    row per touched chunk of each dimension (zarrc.indexing's columns plus FULL);
    tasks int64 (ntasks, ndim), each task's row of each dimension, in C order;
    coords int64 (ntasks, ndim), each task's chunk coordinates; the output shape;
    per dimension, whether an integer dropped it.  None if the selection is not
    of that form, an integer is out of bounds, or the array is 0-d."""
    cdef Py_ssize_t ndim = len(shape)
    cdef Py_ssize_t start[MAX_DIMS]
    cdef Py_ssize_t step[MAX_DIMS]
    cdef Py_ssize_t count[MAX_DIMS]
    cdef Py_ssize_t nrows[MAX_DIMS]
    cdef Py_ssize_t row0[MAX_DIMS]
    cdef Py_ssize_t size, chunk, i, d, n, stop, c, lo, hi, first, k, r, t, ntasks, total
    cdef Py_ssize_t first_chunk, last_chunk, out
    cdef bint dropped[MAX_DIMS]
    if ndim == 0 or ndim > MAX_DIMS or len(chunks) != ndim:
        return None
    items = selection if type(selection) is tuple else (selection,)
    n = len(items)
    if n > ndim:
        return None
    total = 0
    ntasks = 1
    for d in range(ndim):
        size = shape[d]
        chunk = chunks[d]
        if chunk < 1:
            return None
        dropped[d] = False
        x = items[d] if d < n else slice(None)
        if type(x) is int:
            try:
                i = PyLong_AsSsize_t(x)
            except OverflowError:
                return None
            if i < 0:
                i += size
            if not 0 <= i < size:
                return None
            start[d], step[d], count[d] = i, 1, 1
            dropped[d] = True
        elif type(x) is slice:
            try:
                if PySlice_Unpack(x, &i, &stop, &k) < 0:
                    return None
            except (TypeError, ValueError):
                return None
            if k <= 0:
                return None
            start[d], step[d] = i, k
            count[d] = PySlice_AdjustIndices(size, &start[d], &stop, k)
        else:
            return None
        if count[d] == 0:
            nrows[d] = 0
        else:
            first_chunk = start[d] // chunk
            last_chunk = (start[d] + (count[d] - 1) * step[d]) // chunk
            if step[d] >= chunk:        # at most one element per chunk
                nrows[d] = count[d]
            else:                       # every chunk in between holds some
                nrows[d] = last_chunk - first_chunk + 1
        row0[d] = total
        total += nrows[d]
        ntasks *= nrows[d]
        if ntasks > MAX_TASKS:
            return None
    table = np.empty((total, NCOLS), np.int64)
    cdef int64_t[:, ::1] tv = table
    for d in range(ndim):
        size = shape[d]
        chunk = chunks[d]
        r = row0[d]
        if nrows[d] == 0:
            continue
        stop = start[d] + (count[d] - 1) * step[d] + 1        # past the last element
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
                tv[r, 0] = c
                tv[r, 1] = first - lo
                tv[r, 2] = step[d]
                tv[r, 3] = k
                tv[r, 4] = out
                tv[r, 5] = -1
                tv[r, 6] = first == lo and k == min(chunk, size - lo)
                out += k
                r += 1
                if step[d] >= chunk:         # jump to the next element's chunk
                    c = (first + step[d]) // chunk
                    continue
            c += 1
    tasks = np.empty((ntasks, ndim), np.int64)
    coords = np.empty((ntasks, ndim), np.int64)
    cdef int64_t[:, ::1] kv = tasks
    cdef int64_t[:, ::1] cv = coords
    cdef Py_ssize_t idx[MAX_DIMS]
    for d in range(ndim):
        idx[d] = 0
    for t in range(ntasks):               # C order: the last dimension varies fastest
        for d in range(ndim):
            kv[t, d] = row0[d] + idx[d]
            cv[t, d] = tv[row0[d] + idx[d], 0]
        d = ndim - 1
        while d >= 0:
            idx[d] += 1
            if idx[d] < nrows[d]:
                break
            idx[d] = 0
            d -= 1
    out_shape = tuple([count[d] for d in range(ndim) if not dropped[d]])
    return table, tasks, coords, out_shape, tuple([dropped[d] for d in range(ndim)])


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
