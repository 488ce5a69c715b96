# Native planning of basic selections (see plan.pyx).

from libc.stdint cimport int64_t

cdef enum:
    PLAN_MAX_DIMS = 32
    PLAN_NCOLS = 7      # chunk, start, step, count, out start, idx (-1), full (zarrc.indexing)

cdef struct Plan:
    int ndim
    Py_ssize_t nrows             # rows of table
    Py_ssize_t ntasks
    int64_t* table               # nrows x PLAN_NCOLS: each dimension's touched chunks
    int64_t* tasks               # ntasks x ndim: each task's row of each dimension
    int64_t* coords              # ntasks x ndim: each task's chunk coordinates
    Py_ssize_t count[PLAN_MAX_DIMS]     # elements selected per dimension
    bint dropped[PLAN_MAX_DIMS]         # dimension indexed by an integer

cdef int plan_selection(object selection, tuple shape, tuple chunks, Plan* p) except -1
cdef void plan_free(Plan* p) noexcept nogil
cdef object int64_array(const int64_t* src, Py_ssize_t rows, Py_ssize_t cols)
