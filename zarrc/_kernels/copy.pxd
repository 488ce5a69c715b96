# N-d strided copy and fill between a chunk buffer and an array region.
#
# A copy is described per dimension by a DimPlan: `count` positions, and for each
# position the byte offset along that dimension in the source and in the
# destination.  Offsets of all dimensions add up to the element's address, so one
# description covers slices with steps, integer-array (orthogonal) selections,
# transposed chunk layouts, broadcast sources (offset 0) and dropped dimensions.

cdef struct DimPlan:
    Py_ssize_t count
    Py_ssize_t* src_off
    Py_ssize_t* dst_off
    bint contiguous   # src_off and dst_off both step by itemsize (used on the last dimension)

cdef void copy_nd(const char* src, char* dst, int ndim, DimPlan* dims,
                  Py_ssize_t itemsize, bint stream=*) noexcept nogil
cdef void gather_nd(const char* src, char* dst, int ndim, DimPlan* dims,
                    Py_ssize_t itemsize) noexcept nogil
cdef void stream_fence() noexcept nogil
cdef void prefault(char* p, size_t n) noexcept nogil
cdef void fill_nd(char* dst, int ndim, DimPlan* dims, const char* pattern,
                  Py_ssize_t itemsize) noexcept nogil
cdef void fill_pattern(char* dst, Py_ssize_t n_items, const char* pattern,
                       Py_ssize_t itemsize) noexcept nogil
cdef void byteswap(char* buf, Py_ssize_t n_items, Py_ssize_t itemsize) noexcept nogil
cdef void selected_span(DimPlan* dims, int ndim, Py_ssize_t itemsize, Py_ssize_t* lo_d,
                        Py_ssize_t* lo, Py_ssize_t* hi) noexcept nogil
cdef bint all_equal_pattern(const char* buf, Py_ssize_t nbytes, const char* pattern,
                            Py_ssize_t itemsize) noexcept nogil


cdef inline bint next_position(Py_ssize_t* idx, DimPlan* dims, int n) noexcept nogil:
    """Step idx (positions in dims[0 .. n-1]) to the next one in C order; False once
    every position has been visited (idx is then back at all zeros)."""
    cdef int d = n - 1
    while d >= 0:
        idx[d] += 1
        if idx[d] < dims[d].count:
            return True
        idx[d] = 0
        d -= 1
    return False
