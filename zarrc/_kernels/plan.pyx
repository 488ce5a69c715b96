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
from libc.stdint cimport int32_t, int64_t, uint8_t, uint32_t, uint64_t
from libc.stdlib cimport calloc, free, malloc
from libc.string cimport memcpy, memset

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


cdef Py_ssize_t bound_search(const int64_t* b, Py_ssize_t nb, Py_ssize_t x) noexcept nogil:
    """The chunk of element ``x`` along a rectilinear dimension whose chunk k covers
    [b[k], b[k + 1]) (``nb`` boundaries, b[0] == 0): the last k < nb - 1 with
    b[k] <= x, by a binary search."""
    return bound_between(b, 0, nb - 2, x)


cdef inline Py_ssize_t bound_between(const int64_t* b, Py_ssize_t lo, Py_ssize_t hi,
                                     Py_ssize_t x) noexcept nogil:
    """The last k in [lo, hi] with b[k] <= x (b[lo] <= x), by a binary search."""
    cdef Py_ssize_t mid
    while lo < hi:
        mid = (lo + hi + 1) >> 1
        if b[mid] <= x:
            lo = mid
        else:
            hi = mid - 1
    return lo


cdef Py_ssize_t bound_rows(Py_ssize_t start, Py_ssize_t step, Py_ssize_t count, Py_ssize_t size,
                           const int64_t* b, Py_ssize_t nb, int64_t* table) noexcept nogil:
    """The plan rows of ``count`` elements from ``start`` by ``step`` along a
    rectilinear dimension (boundaries ``b``, see bound_search): one row per chunk
    holding some, written to ``table`` unless it is NULL.  Returns how many."""
    cdef Py_ssize_t e = start, stop = start + (count - 1) * step + 1, c, lo, hi, k, out = 0, rows = 0
    cdef int64_t* row
    while e < stop:
        c = bound_search(b, nb, e)
        lo = b[c]
        hi = min(<Py_ssize_t>b[c + 1], stop)
        k = (hi - e + step - 1) // step
        if table != NULL:
            row = table + rows * PLAN_NCOLS
            row[PLAN_COL_CHUNK] = c
            row[PLAN_COL_START] = e - lo
            row[PLAN_COL_STEP] = step
            row[PLAN_COL_COUNT] = k
            row[PLAN_COL_OUT] = out
            row[PLAN_COL_IDX] = -1
            row[PLAN_COL_FULL] = e == lo and k == min(<Py_ssize_t>b[c + 1], size) - lo
        out += k
        rows += 1
        e += k * step
    return rows


cdef int plan_selection(object selection, tuple shape, tuple chunks, Plan* p,
                        const int64_t** bounds=NULL, const Py_ssize_t* nbounds=NULL) except -1:
    """Plan ``selection`` (an int, a slice, or a tuple of them, at most one per
    dimension, and at most one Ellipsis; slices with positive steps) over an array of ``shape`` and ``chunks``
    into ``p`` (its buffers then belong to the caller: plan_free).  ``bounds``: per
    dimension NULL, or a rectilinear dimension's chunk boundaries (``nbounds[d]``
    cumulative edges from 0, covering the dimension), searched instead of dividing
    by ``chunks[d]``; its rows' FULL flags are of the chunk's own extent.  Returns 1,
    or 0 (nothing allocated) if the selection is not of that form, an integer is
    out of bounds, or the array is 0-d."""
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
        elif bounds != NULL and bounds[d] != NULL:
            nrows[d] = bound_rows(start[d], step[d], p.count[d], size, bounds[d], nbounds[d], NULL)
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
        if bounds != NULL and bounds[d] != NULL:
            bound_rows(start[d], step[d], p.count[d], size, bounds[d], nbounds[d], p.table + r * PLAN_NCOLS)
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


def plan_basic(selection, tuple shape, tuple chunks, tuple bounds=None):
    """plan_selection for Python callers (``bounds``: per dimension None, or a
    rectilinear dimension's cumulative edges from 0, a 1-d int64 array).

    Returns (table, tasks, coords, out_shape, dropped): table int64 (rows, 7), one
    row per touched chunk of each dimension (zarrc.indexing's columns plus FULL);
    tasks int64 (ntasks, ndim), each task's row of each dimension, in C order;
    coords int64 (ntasks, ndim), each task's chunk coordinates; the output shape;
    per dimension, whether an integer dropped it.  None if the selection is not
    of that form, an integer is out of bounds, or the array is 0-d."""
    cdef Plan p
    cdef Py_ssize_t d
    cdef const int64_t* bnd[PLAN_MAX_DIMS]
    cdef Py_ssize_t nbnd[PLAN_MAX_DIMS]
    cdef const int64_t[::1] view
    cdef const int64_t** bp = NULL
    if bounds is not None:
        bp = bnd
        if len(bounds) != len(shape) or len(shape) > PLAN_MAX_DIMS:
            raise ValueError(f"{len(bounds)} chunk boundaries for an array of shape {shape}")
        for d in range(len(shape)):
            bnd[d] = NULL
            if bounds[d] is not None:
                view = bounds[d]
                if view.shape[0] < 2 or view[0] != 0 or view[view.shape[0] - 1] < shape[d]:
                    raise ValueError(f"chunk boundaries of dimension {d} do not cover {shape[d]}")
                bnd[d] = &view[0]
                nbnd[d] = view.shape[0]
    if not plan_selection(selection, shape, chunks, &p, bp, nbnd):
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


# ---------------------------------------------------------------- points
# A coordinate or mask selection: points grouped by chunk, one task per touched
# chunk.  The task's row for the last dimension is a point row (STEP 0, see
# plan.pxd): its ``local`` entries are flat C-order element indices within the
# chunk, its ``outidx`` entries positions in the 1-d output; the other dimensions
# share one row selecting element 0 (their offsets are all in the point row).
# ``local`` and ``outidx`` are int32 when the points and a chunk's elements fit,
# else int64.  On a grid of few chunks (at most COUNT_GRID_MAX, or twice the
# points) the points are visited twice, counted per chunk and then placed: nothing
# per point but the plan.  On a larger grid a point is one int64 while it is
# sorted (chunk number << bits | local index), by a radix sort of chunk numbers.
# A rectilinear dimension's chunk of an index is found through its buckets when
# the selection has enough points to pay for them (bucket_table): the dimension cut
# into buckets of 2**shift elements, each knowing the chunk of its first element,
# so that a point's chunk is its bucket's first chunk or one of the few after it
# (the next when no chunk but the first and the last is shorter than a bucket); else by a binary
# search of the whole dimension's boundaries (bound_search), whose branches a
# random point mispredicts.

DEF COUNT_GRID_MAX = 1 << 16
DEF RADIX_BITS = 16
# buckets: only for at least TABLE_MIN_POINTS points, and at most TABLE_ROOM table
# entries (buckets, and chunks walked to fill them) per point
DEF TABLE_MIN_POINTS_ = 256
DEF TABLE_ROOM_ = 4
TABLE_MIN_POINTS = TABLE_MIN_POINTS_
TABLE_ROOM = TABLE_ROOM_

cdef enum:
    COUNT = 0       # walk modes: count the points of each chunk,
    PLACE = 1       # place each point at its chunk's next entry,
    PACK = 2        # or pack each point into one int64


cdef struct Points:
    int ndim
    Py_ssize_t n                        # points (a mask: its True items)
    const char* ptr[PLAN_MAX_DIMS]      # coordinates: point k's index along d at ptr[d] + k * stride[d]
    Py_ssize_t stride[PLAN_MAX_DIMS]
    const uint8_t* mask                 # or a C-order boolean mask (then ptr is unused)
    int64_t size[PLAN_MAX_DIMS]
    int64_t chunk[PLAN_MAX_DIMS]
    int64_t grid[PLAN_MAX_DIMS]
    int shift[PLAN_MAX_DIMS]            # log2 of a chunk length that is a power of 2, else -1
    bint narrow                         # every length fits 32 bits: 32-bit divisions
    int bits                            # bits of a chunk's element numbers (PACK)
    bint small                          # local and outidx are int32
    const int64_t* bnd[PLAN_MAX_DIMS]   # a rectilinear dimension's chunk boundaries (grid + 1), or NULL
    const int32_t* first[PLAN_MAX_DIMS] # its buckets' first chunks (bucket_table), or NULL
    int bshift[PLAN_MAX_DIMS]           # log2 of its buckets' length
    bint fine[PLAN_MAX_DIMS]            # no bucket holds a whole chunk but the last


cdef int32_t* bucket_table(const int64_t* b, int64_t nchunks, int64_t size, Py_ssize_t n,
                           int* shift, bint* fine) noexcept nogil:
    """The buckets of a rectilinear dimension (boundaries ``b``, ``nchunks`` chunks,
    ``size`` elements) for ``n`` points: entry j the chunk of element j << shift,
    then one more entry, the last chunk; buckets as long as the shortest chunk
    (but the first and the last) where the table then holds at most TABLE_ROOM
    entries per point, else longer.  NULL (search instead) for fewer than
    TABLE_MIN_POINTS points, more than TABLE_ROOM chunks per point, or no memory."""
    cdef int64_t shortest = size, k, j, nbuckets
    cdef int s = 0
    cdef int32_t* first
    if n < TABLE_MIN_POINTS_ or size < 1 or nchunks > TABLE_ROOM_ * <int64_t>n or nchunks >= (<int64_t>1 << 31):
        return NULL
    for k in range(1, nchunks - 1):
        shortest = min(shortest, b[k + 1] - b[k])
    while s < 62 and ((<int64_t>2) << s) <= shortest:
        s += 1
    fine[0] = True
    while s < 62 and ((size - 1) >> s) + 2 > TABLE_ROOM_ * <int64_t>n:
        s += 1
        fine[0] = False
    nbuckets = ((size - 1) >> s) + 1
    first = <int32_t*>malloc((nbuckets + 1) * sizeof(int32_t))
    if first == NULL:
        return NULL
    k = 0
    for j in range(nbuckets):
        while b[k + 1] <= (j << s):
            k += 1
        first[j] = <int32_t>k
    first[nbuckets] = <int32_t>(nchunks - 1)
    shift[0] = s
    return first


cdef inline int64_t chunk_at(const Points* p, Py_ssize_t d, int64_t v) noexcept nogil:
    """The chunk of index ``v`` (in bounds) along rectilinear dimension ``d``."""
    cdef int64_t j, c
    if p.first[d] != NULL:
        j = v >> p.bshift[d]
        c = p.first[d][j]
        if p.fine[d]:                   # (the bucket's first chunk or the next: no branch)
            return c + (p.bnd[d][c + 1] <= v)
        return bound_between(p.bnd[d], c, p.first[d][j + 1], v)
    return bound_search(p.bnd[d], p.grid[d] + 1, v)


cdef inline void put(void* dst, bint small, Py_ssize_t i, int64_t v) noexcept nogil:
    if small:
        (<int32_t*>dst)[i] = <int32_t>v
    else:
        (<int64_t*>dst)[i] = v


cdef inline void visit(Points* p, int mode, Py_ssize_t k, int64_t key, int64_t loc, int64_t* cnt,
                       int64_t* packed, void* sl, void* sp) noexcept nogil:
    cdef int64_t pos
    if mode == COUNT:
        cnt[key + 1] += 1
    elif mode == PLACE:
        pos = cnt[key]
        cnt[key] = pos + 1
        put(sl, p.small, pos, loc)
        put(sp, p.small, pos, k)
    else:
        packed[k] = (key << p.bits) | loc


cdef Py_ssize_t walk(Points* points, int mode, int64_t* cnt, int64_t* packed, void* sl,
                     void* sp) noexcept nogil:
    """Visit every point in order (see the modes).  Returns -1, or for an index out
    of bounds the point's number; points.ndim is then set to the dimension."""
    cdef Points q = points[0]           # (a local copy: stores through cnt, sl, sp
    cdef Points* p = &q                 # cannot change it, so it stays in registers)
    cdef Py_ssize_t k, d, r, j, nrows = 1, width, last = p.ndim - 1
    cdef const int64_t* last_bnd = p.bnd[last]
    cdef int64_t v, c, key, loc, lead_key, lead_loc
    cdef int64_t lead[PLAN_MAX_DIMS]
    cdef uint64_t word
    cdef const uint8_t* row
    if p.mask == NULL:
        for k in range(p.n):
            key = 0
            loc = 0
            for d in range(p.ndim):
                v = (<const int64_t*>(p.ptr[d] + k * p.stride[d]))[0]
                if v < 0:
                    v += p.size[d]
                if v < 0 or v >= p.size[d]:
                    points.ndim = <int>d
                    return k
                if p.bnd[d] != NULL:    # a rectilinear dimension: the chunk's own extent
                    c = chunk_at(p, d, v)
                    key = key * p.grid[d] + c
                    loc = loc * (p.bnd[d][c + 1] - p.bnd[d][c]) + (v - p.bnd[d][c])
                    continue
                if p.shift[d] >= 0:
                    c = v >> p.shift[d]
                elif p.narrow:
                    c = <uint32_t>v // <uint32_t>p.chunk[d]
                else:
                    c = v // p.chunk[d]
                key = key * p.grid[d] + c
                loc = loc * p.chunk[d] + (v - c * p.chunk[d])
            visit(p, mode, k, key, loc, cnt, packed, sl, sp)
        return -1
    for d in range(p.ndim - 1):
        lead[d] = 0
        nrows *= p.size[d]
    width = p.size[p.ndim - 1]
    k = 0
    for r in range(nrows if width else 0):
        # chunk number and local index of the row's element 0 (its leading dims)
        lead_key = 0
        lead_loc = 0
        for d in range(p.ndim - 1):
            if p.bnd[d] != NULL:
                c = chunk_at(p, d, lead[d])
                lead_key = lead_key * p.grid[d] + c
                lead_loc = lead_loc * (p.bnd[d][c + 1] - p.bnd[d][c]) + (lead[d] - p.bnd[d][c])
                continue
            c = lead[d] // p.chunk[d]
            lead_key = lead_key * p.grid[d] + c
            lead_loc = lead_loc * p.chunk[d] + (lead[d] - c * p.chunk[d])
        lead_key *= p.grid[last]
        if last_bnd == NULL:            # (else times the point's own chunk's extent)
            lead_loc *= p.chunk[last]
        row = p.mask + r * width
        j = 0
        while j < width:
            if j + 8 <= width:          # a sparse mask: skip 8 False items at a time
                memcpy(&word, row + j, 8)
                if word == 0:
                    j += 8
                    continue
            if row[j]:
                if last_bnd != NULL:
                    c = chunk_at(p, last, j)
                    visit(p, mode, k, lead_key + c,
                          lead_loc * (last_bnd[c + 1] - last_bnd[c]) + (j - last_bnd[c]),
                          cnt, packed, sl, sp)
                else:
                    c = j // p.chunk[last]
                    visit(p, mode, k, lead_key + c, lead_loc + (j - c * p.chunk[last]),
                          cnt, packed, sl, sp)
                k += 1
            j += 1
        d = p.ndim - 2                  # the next row's leading index
        while d >= 0:
            lead[d] += 1
            if lead[d] < p.size[d]:
                break
            lead[d] = 0
            d -= 1
    return -1


cdef Py_ssize_t radix_group(Points* p, const int64_t* packed, void* sl, void* sp,
                            int64_t** task_key, int64_t** task_start) noexcept nogil:
    """Group the packed points by chunk with a stable radix sort of their chunk
    numbers: ``sl`` / ``sp`` receive each point's local index and position, chunk
    by chunk; ``task_key`` / ``task_start`` (allocated here) each touched chunk's
    number and first entry.  Returns the number of chunks touched, or -1 when
    memory runs out."""
    cdef Py_ssize_t n = p.n, k, t, ntasks = 0
    cdef int bits = p.bits
    cdef int64_t b, pos, maxkey = 0, shift, low = ((<int64_t>1) << bits) - 1
    cdef int64_t* cnt = <int64_t*>malloc(((1 << RADIX_BITS) + 1) * sizeof(int64_t))
    cdef int64_t* perm = <int64_t*>malloc(max(1, n) * sizeof(int64_t))
    cdef int64_t* tmp = <int64_t*>malloc(max(1, n) * sizeof(int64_t) * 3)
    cdef const int64_t* cur_key
    cdef int64_t* cur_perm
    cdef int64_t* nxt_key
    cdef int64_t* nxt_perm
    task_key[0] = task_start[0] = NULL
    if cnt == NULL or perm == NULL or tmp == NULL:
        free(cnt); free(perm); free(tmp)
        return -1
    for k in range(n):
        perm[k] = k
        if packed[k] > maxkey:
            maxkey = packed[k]
    cur_key, cur_perm = packed, perm
    shift = bits
    while shift == bits or (shift < 63 and (maxkey >> shift) > 0):
        # (the first pass reads packed and perm; then passes alternate between the
        # two halves of tmp's key room, and between perm and tmp's perm room)
        nxt_key = tmp if cur_key != tmp else tmp + n
        nxt_perm = tmp + 2 * n if cur_perm == perm else perm
        memset(cnt, 0, ((1 << RADIX_BITS) + 1) * sizeof(int64_t))
        for k in range(n):
            cnt[((cur_key[k] >> shift) & ((1 << RADIX_BITS) - 1)) + 1] += 1
        for b in range(1 << RADIX_BITS):
            cnt[b + 1] += cnt[b]
        for k in range(n):
            b = (cur_key[k] >> shift) & ((1 << RADIX_BITS) - 1)
            pos = cnt[b]
            cnt[b] = pos + 1
            nxt_key[pos] = cur_key[k]
            nxt_perm[pos] = cur_perm[k]
        cur_key, cur_perm = nxt_key, nxt_perm
        shift += RADIX_BITS
    for k in range(n):
        if k == 0 or (cur_key[k] >> bits) != (cur_key[k - 1] >> bits):
            ntasks += 1
    task_key[0] = <int64_t*>malloc(max(1, ntasks) * sizeof(int64_t))
    task_start[0] = <int64_t*>malloc(max(1, ntasks) * sizeof(int64_t))
    if task_key[0] != NULL and task_start[0] != NULL:
        t = 0
        for k in range(n):
            if k == 0 or (cur_key[k] >> bits) != (cur_key[k - 1] >> bits):
                task_key[0][t] = cur_key[k] >> bits
                task_start[0][t] = k
                t += 1
            put(sl, p.small, k, cur_key[k] & low)
            put(sp, p.small, k, cur_perm[k])
    else:
        ntasks = -1
    free(cnt); free(perm); free(tmp)
    return ntasks


cdef Py_ssize_t count_group(Points* p, int64_t total, void* sl, void* sp, int64_t** task_key,
                            int64_t** task_start, Py_ssize_t* bad) noexcept nogil:
    """Group the points by chunk in two walks (count, place) with a count per chunk of
    the grid (``total`` chunks): as radix_group, without a packed copy.  ``bad``:
    the first point out of bounds (p.ndim then names its dimension), or -1."""
    cdef int64_t* cnt = <int64_t*>calloc(<size_t>total + 1, sizeof(int64_t))
    cdef int64_t b
    cdef Py_ssize_t t = 0, ntasks = 0
    task_key[0] = task_start[0] = NULL
    if cnt == NULL:
        return -1
    bad[0] = walk(p, COUNT, cnt, NULL, NULL, NULL)
    if bad[0] >= 0:
        free(cnt)
        return 0
    for b in range(total):
        if cnt[b + 1]:
            ntasks += 1
    task_key[0] = <int64_t*>malloc(max(1, ntasks) * sizeof(int64_t))
    task_start[0] = <int64_t*>malloc(max(1, ntasks) * sizeof(int64_t))
    if task_key[0] == NULL or task_start[0] == NULL:
        free(cnt)
        return -1
    for b in range(total):              # cnt[b] becomes the first entry of chunk b
        if cnt[b + 1]:
            task_key[0][t] = b
            task_start[0][t] = cnt[b]
            t += 1
        cnt[b + 1] += cnt[b]
    walk(p, PLACE, cnt, NULL, sl, sp)
    free(cnt)
    return ntasks


cdef object plan_of(Points* p, tuple shape, tuple chunks, tuple bounds=None):
    """The plan of the points (see plan_points)."""
    cdef Py_ssize_t ndim = len(shape), t, d, ntasks, n = p.n, bad = -1
    cdef int64_t total = 1, key, items = 1
    cdef int64_t* task_key = NULL
    cdef int64_t* task_start = NULL
    cdef int64_t* packed = NULL
    cdef object grid_total = 1
    cdef const int64_t[::1] bv
    p.ndim = <int>ndim
    p.bits = 0
    p.narrow = True
    for d in range(ndim):
        p.size[d] = shape[d]
        p.chunk[d] = chunks[d]
        p.grid[d] = (p.size[d] + p.chunk[d] - 1) // p.chunk[d]
        p.bnd[d] = NULL
        p.first[d] = NULL
        if bounds is not None and bounds[d] is not None:
            bv = bounds[d]              # (checked by plan_points; the caller keeps it)
            p.bnd[d] = &bv[0]
            p.grid[d] = bv.shape[0] - 1
            p.chunk[d] = 1              # (the largest edge: the bits of a chunk's elements)
            for t in range(p.grid[d]):
                p.chunk[d] = max(p.chunk[d], bv[t + 1] - bv[t])
        p.narrow = p.narrow and p.size[d] < (<int64_t>1 << 32)
        p.shift[d] = -1
        for t in range(63):
            if p.chunk[d] == (<int64_t>1) << t:
                p.shift[d] = <int>t
        grid_total *= p.grid[d]
        items *= p.chunk[d]
    while ((<int64_t>1) << p.bits) < items:
        p.bits += 1
    if grid_total << p.bits >= (1 << 63):
        raise ValueError(f"an array of shape {shape} in chunks {chunks} has too many elements "
                         "for a coordinate or mask selection")
    total = grid_total
    p.small = n < (1 << 31) and p.bits < 31
    sorted_local = np.empty(n, np.int32 if p.small else np.int64)
    sorted_pos = np.empty(n, np.int32 if p.small else np.int64)
    cdef void* sl = <void*><Py_ssize_t>sorted_local.ctypes.data
    cdef void* sp = <void*><Py_ssize_t>sorted_pos.ctypes.data
    with nogil:
        for d in range(ndim):
            if p.bnd[d] != NULL:
                p.first[d] = bucket_table(p.bnd[d], p.grid[d], p.size[d], n, &p.bshift[d], &p.fine[d])
        if total <= COUNT_GRID_MAX or total <= 2 * <int64_t>n:
            ntasks = count_group(p, total, sl, sp, &task_key, &task_start, &bad)
        else:
            packed = <int64_t*>malloc(max(1, n) * sizeof(int64_t))
            if packed == NULL:
                ntasks = -1
            else:
                bad = walk(p, PACK, NULL, packed, NULL, NULL)
                ntasks = 0 if bad >= 0 else radix_group(p, packed, sl, sp, &task_key, &task_start)
                free(packed)
        for d in range(ndim):
            free(<void*>p.first[d])
            p.first[d] = NULL
    if ntasks < 0 or bad >= 0:
        free(task_key)
        free(task_start)
        if bad >= 0:
            return p.ndim, bad
        raise MemoryError()
    table = np.zeros((ntasks + 1, PLAN_NCOLS), np.int64)
    tasks = np.full((ntasks, ndim), ntasks, np.int64)
    coords = np.empty((ntasks, ndim), np.int64)
    cdef int64_t[:, ::1] tv = table
    cdef int64_t[:, ::1] kv = tasks
    cdef int64_t[:, ::1] cv = coords
    for t in range(ntasks):
        key = task_key[t]
        for d in range(ndim - 1, -1, -1):
            cv[t, d] = key % p.grid[d]
            key //= p.grid[d]
        tv[t, PLAN_COL_CHUNK] = cv[t, ndim - 1]
        tv[t, PLAN_COL_COUNT] = (task_start[t + 1] if t + 1 < ntasks else n) - task_start[t]
        tv[t, PLAN_COL_IDX] = task_start[t]            # (STEP 0: a point row)
        kv[t, ndim - 1] = t
    tv[ntasks, PLAN_COL_STEP] = 1                       # the shared row: element 0
    tv[ntasks, PLAN_COL_COUNT] = 1
    tv[ntasks, PLAN_COL_IDX] = -1
    free(task_key)
    free(task_start)
    return table, sorted_local, sorted_pos, tasks, coords


def plan_points(list idx, tuple shape, tuple chunks, tuple bounds=None):
    """Plan a coordinate selection: ``idx`` holds per dimension a 1-d int64 array
    (any strides), all of one length n; point k is (idx[0][k], idx[1][k], ...),
    negative indices counting from the end.  ``bounds``: as plan_basic's (a
    rectilinear dimension's boundaries, searched; local indices are then in the
    chunk's own shape).

    Returns (table, local, outidx, tasks, coords): the plan table (a point row per
    touched chunk, then the shared row; see above), each point's local index and
    output position (int32 or int64), chunk by chunk (points of a chunk in their
    given order), each task's row per dimension, each task's chunk coordinates.  Or
    (d, k): the dimension and point of the first index out of bounds."""
    cdef Points p
    cdef Py_ssize_t ndim = len(shape), d
    cdef const int64_t[:] view
    if ndim == 0 or ndim > PLAN_MAX_DIMS or len(idx) != ndim or len(chunks) != ndim:
        raise ValueError(f"{len(idx)} index arrays for an array of shape {shape}")
    p.n = len(idx[0])
    p.mask = NULL
    for d in range(ndim):
        view = idx[d]
        if view.shape[0] != p.n:
            raise ValueError("index arrays of different lengths")
        p.ptr[d] = <const char*>&view[0] if p.n else NULL
        p.stride[d] = view.strides[0]
    check_bounds(bounds, shape)
    return plan_of(&p, shape, chunks, bounds)


cdef check_bounds(tuple bounds, tuple shape):
    """Raise ValueError unless ``bounds`` (None, or per dimension None or a
    rectilinear dimension's boundaries) covers ``shape``."""
    cdef const int64_t[:] view
    if bounds is None:
        return
    if len(bounds) != len(shape):
        raise ValueError(f"{len(bounds)} chunk boundaries for an array of shape {shape}")
    for d in range(len(shape)):
        if bounds[d] is not None:
            view = bounds[d]
            if view.shape[0] < 2 or view[0] != 0 or view[view.shape[0] - 1] < shape[d]:
                raise ValueError(f"chunk boundaries of dimension {d} do not cover {shape[d]}")


def plan_mask(mask, tuple shape, tuple chunks, tuple bounds=None):
    """Plan a mask selection: ``mask`` is a C-contiguous bool array of ``shape``;
    the points are its True elements in C order (the output's order).  ``bounds``:
    as plan_points'.  Returns what plan_points returns."""
    cdef Points p
    cdef const uint8_t[::1] m = mask.reshape(-1).view(np.uint8)
    cdef Py_ssize_t ndim = len(shape), j, n = 0, items = 1
    for j in range(ndim):
        items *= shape[j]
    if ndim == 0 or ndim > PLAN_MAX_DIMS or m.shape[0] != items:
        raise ValueError(f"mask of {m.shape[0]} items for an array of shape {shape}")
    with nogil:
        for j in range(m.shape[0]):
            n += m[j] != 0
    p.n = n
    p.mask = &m[0] if m.shape[0] else NULL
    if p.mask == NULL:                  # (no items: no points)
        p.n = 0
        p.mask = <const uint8_t*>""
    check_bounds(bounds, shape)
    return plan_of(&p, shape, chunks, bounds)
