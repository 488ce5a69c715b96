# Native planning of basic selections (see plan.pyx).

from libc.stdint cimport int64_t

# The plan table's columns, one row per touched chunk of a dimension (the home of
# this layout: zarrc.indexing and the engine take the names from plan.pyx).
cdef enum:
    PLAN_MAX_DIMS = 32  # dimensions an array may have for the native paths
    PLAN_COL_CHUNK = 0  # chunk index along the dimension
    PLAN_COL_START = 1  # first selected element, local to the chunk
    PLAN_COL_STEP = 2   # local step; 0 on an indexed row: a point row (plan_points), whose
                        # local entries are flat C-order element indices within the chunk
    PLAN_COL_COUNT = 3  # elements selected in this chunk
    PLAN_COL_OUT = 4    # where they go in the output's dimension
    PLAN_COL_IDX = 5    # offset of this chunk's entries in local/out (-1: strided form)
    PLAN_COL_FULL = 6   # 1 if the chunk's in-bounds part is wholly selected
    PLAN_NCOLS = 7

cdef struct Plan:
    int ndim
    Py_ssize_t nrows             # rows of table
    Py_ssize_t ntasks
    int64_t* table               # nrows x PLAN_NCOLS: each dimension's touched chunks
    int64_t* tasks               # ntasks x ndim: each task's row of each dimension
    int64_t* coords              # ntasks x ndim: each task's chunk coordinates
    Py_ssize_t count[PLAN_MAX_DIMS]     # elements selected per dimension
    bint dropped[PLAN_MAX_DIMS]         # dimension indexed by an integer

# bounds (optional): per dimension NULL (regular: chunks[d]) or the cumulative chunk
# edges of a rectilinear dimension (nbounds[d] entries, from 0; see plan.pyx)
cdef int plan_selection(object selection, tuple shape, tuple chunks, Plan* p,
                        const int64_t** bounds=*, const Py_ssize_t* nbounds=*) except -1
cdef Py_ssize_t bound_search(const int64_t* b, Py_ssize_t nb, Py_ssize_t x) noexcept nogil
cdef void plan_free(Plan* p) noexcept nogil
cdef object int64_array(const int64_t* src, Py_ssize_t rows, Py_ssize_t cols)
