# What the read and write batches share (batch.pyx), for read.pyx and write.pyx.

from cpython.ref cimport PyObject
from libc.stdint cimport int32_t, int64_t, uint8_t

from zarrc._kernels.blosc cimport zc_rows_share
from zarrc._kernels.chain cimport Chain, Scratch
from zarrc._kernels.chunk_files cimport ZC_FILE_MISSING
from zarrc._kernels.copy cimport DimPlan
from zarrc._kernels.errors cimport ZcError
from zarrc._kernels.plan cimport PLAN_MAX_DIMS, Plan

# relaxed atomic counters (a task counter, counts of calls, threads, blocks)
cdef extern from *:
    """
    #include "src/zc_platform.h"
    static inline Py_ssize_t zc_next_task(Py_ssize_t* counter) {
        return zc_fetch_add_relaxed(counter, 1);
    }
    static inline Py_ssize_t zc_add_count(Py_ssize_t* counter, Py_ssize_t delta) {
        return zc_fetch_add_relaxed(counter, delta) + delta;
    }
    static inline Py_ssize_t zc_load_count(const Py_ssize_t* counter) {
        return zc_load_ssize_relaxed(counter);
    }
    """
    # the counter's value before adding 1 (the next task, or spare buffer, to take)
    Py_ssize_t zc_next_task(Py_ssize_t* counter) noexcept nogil
    # the counter's value after adding delta
    Py_ssize_t zc_add_count(Py_ssize_t* counter, Py_ssize_t delta) noexcept nogil
    Py_ssize_t zc_load_count(const Py_ssize_t* counter) noexcept nogil

cdef enum:
    MISSING = ZC_FILE_MISSING   # chunk absent: read as the fill value
    NOT_TAKEN = -3              # a partial decode declined: decode the whole chunk
    STREAM_MIN = 32 << 20       # outputs this large are written with streaming stores


cdef class _Batch:
    cdef readonly Chain chain
    cdef int ndim
    cdef const int64_t* table    # nrows x PLAN_NCOLS projection rows
    cdef const int64_t* local    # flat index arrays of indexed rows
    cdef const int64_t* outidx
    cdef const int32_t* local32  # or, for a plan of points, 32-bit ones (see plan.pyx)
    cdef const int32_t* outidx32
    cdef const int64_t* tasks    # ntasks x ndim: each task's row of each dimension
    cdef Py_ssize_t nrows
    cdef readonly Py_ssize_t ntasks
    cdef object plan_arrays      # the arrays behind those pointers, or
    cdef Plan plan               # the native plan that owns them
    cdef Py_buffer arr
    cdef bint have_arr
    cdef bint stream             # scatter into arr with non-temporal stores (see setup_common)
    cdef Py_ssize_t arr_strides[PLAN_MAX_DIMS]
    cdef bytes fill              # the fill value, native byte order
    cdef const char* fill_ptr
    cdef object keep             # Python objects behind the pointers below
    cdef const uint8_t** src_data
    cdef size_t* src_len
    cdef const char** src_path
    cdef int64_t* src_offset     # byte offset of an fd source's range (-1: none)
    cdef int* src_fd             # an open file (a shard's version) to read a range of, or -1
    cdef int* fds                # the files this batch opened and closes (close_files)
    cdef Py_ssize_t nfds
    cdef char* path_buf          # the paths of set_paths
    cdef Py_ssize_t next_task
    cdef ZcError* errs
    cdef int* status
    cdef size_t offs_needed
    # chunks of several shapes (set_shapes): per shape class a view of this batch with
    # that shape's chain (its arrays this batch's), each task's class, the order tasks
    # are taken in (the largest chunks first); the arrays behind them
    cdef bint is_view
    cdef list views
    cdef PyObject** view_ptrs
    cdef const int64_t* view_of
    cdef const int64_t* task_order
    cdef object shape_arrays

    cdef setup(self, Chain chain, table, local, outidx, tasks, arr, tuple arr_strides,
               bytes fill, sources, bint writable)
    cdef setup_plan(self, Chain chain, Plan* plan, arr, tuple arr_strides, bytes fill,
                    bytes head, bytes separator, const int64_t* file_of_task=*,
                    const int64_t* ranges=*)
    cdef setup_common(self, Chain chain, arr, tuple arr_strides, bytes fill, sources,
                      bint writable)
    cdef share(self, _Batch parent, Chain chain)
    cdef set_shapes(self, view_of, list chains)
    cdef set_ranges(self, const int64_t[::1] owner, const int64_t[::1] offset,
                    const int64_t[::1] length, list holders)
    cdef set_coords_paths(self, bytes head, bytes separator, const int64_t[:, ::1] coords)
    cdef set_paths(self, bytes head, bytes separator, const int64_t* coords)
    cdef int build_dims(self, Py_ssize_t t, DimPlan* dims, Scratch* s, bint arr_is_src) noexcept nogil
    cdef void point_offsets(self, Py_ssize_t ix, Py_ssize_t n, Py_ssize_t* off) noexcept nogil
    cdef bint covers_chunk(self, Py_ssize_t t) noexcept nogil
    cdef Py_ssize_t fetch(self, Py_ssize_t t, const uint8_t** data, Scratch* s,
                          ZcError* err) noexcept nogil
    cdef void run_task(self, Py_ssize_t t, Scratch* s) noexcept nogil
    cdef Py_ssize_t take_task(self) noexcept nogil
    cdef void help_tasks(self, Scratch* s) noexcept nogil


# Raise a task's ZcError as TaskError (MemoryError for ZC_NOMEM), context first.
cdef object raise_task_error(ZcError* err, str context)
# head + chunk coordinates joined by the one-byte separator, NUL-terminated, to p
# (room for len(head) + 21 * max(1, ndim) bytes).
cdef write_path(char* p, bytes head, bytes separator, const int64_t* coords, Py_ssize_t ndim)
# Add delta to the count of array reads and writes in progress (count_calls).
cdef Py_ssize_t add_calls(Py_ssize_t delta) noexcept nogil
# The blosc chunk whose blocks threads share (one at a time, over all batches), and
# one of its blocks taken and decoded with scratch s: whether there was one.
cdef zc_rows_share* blocks_share() noexcept nogil
cdef bint help_block(Scratch* s) noexcept nogil
