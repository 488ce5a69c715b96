# cython: language_level=3, freethreading_compatible=True, boundscheck=False, wraparound=False, cdivision=True, initializedcheck=False
"""Batch orchestration: what the read and write batches (read.pyx, write.pyx) share.

A batch holds every chunk task of one call: the plan table (one row per touched
chunk of a dimension, columns: plan.pxd), the user's array, and each task's
source.  Each worker thread calls ``run()``, which takes tasks from a shared
atomic counter until none are left, so Python runs once per worker per call,
never per chunk.  Local files are read through chunk_files.pxd; other stores hand
over bytes fetched beforehand.
"""

from cpython.buffer cimport PyBUF_STRIDES, PyBUF_WRITABLE, PyBuffer_Release, PyObject_GetBuffer
from cpython.bytes cimport PyBytes_AS_STRING, PyBytes_GET_SIZE
from cpython.ref cimport PyObject
from libc.stdlib cimport free, malloc
from libc.string cimport memcpy, memset

from zarrc._kernels.blosc cimport (blosc_rows_share_do, blosc_rows_share_take, blosc_rows_share_wait,
                                   blosc_rows_tmp, zc_rows_frame, zc_rows_share)
from zarrc._kernels.chain cimport ensure, scratch_free, scratch_trim, thread_scratch
from zarrc._kernels.chunk_files cimport close_file, read_file, read_range
from zarrc._kernels.copy cimport stream_fence
from zarrc._kernels.errors cimport ZC_CHECKSUM, ZC_IO, ZC_NOMEM, describe
from zarrc._kernels.plan cimport (PLAN_COL_COUNT, PLAN_COL_FULL, PLAN_COL_IDX, PLAN_COL_OUT,
                                  PLAN_COL_START, PLAN_COL_STEP, PLAN_NCOLS, plan_free)

import sys

from numpy import argsort as _argsort, empty as _empty, int64 as _int64

cdef extern from *:
    """
    #include "src/zc_platform.h"
    static inline int64_t zc_clock_ns(void) { return zc_now_ns(); }
    """
    int64_t zc_clock_ns() noexcept nogil

cdef extern from "src/gil_handoff.h" nogil:
    void zc_gil_pool_thread() noexcept
    void zc_gil_disable() noexcept
    void zc_gil_taken() noexcept
    void zc_gil_released() noexcept
    void zc_gil_wait() noexcept



cdef inline Scratch* worker_begin(Scratch* local) noexcept nogil:
    """A worker's start in a batch's (or group's) run(), the GIL released: its
    thread's scratch buffers, or ``local`` (zeroed) on a thread without them."""
    zc_gil_released()
    cdef Scratch* s = thread_scratch()
    return local if s == NULL else s


cdef inline void worker_end(Scratch* s, Scratch* local, bint stream) noexcept nogil:
    """A worker's end in run(): streaming stores fenced, its scratch freed (``local``)
    or trimmed (the thread's), then the GIL hand-off (see src/gil_handoff.h)."""
    if stream:
        stream_fence()
    if s == local:
        scratch_free(s)
    else:
        scratch_trim(s)
    zc_gil_wait()


class TaskError(Exception):
    """A chunk task failed.  ``code`` is a ZC_* code (or ZC_IO), ``expected`` /
    ``actual`` the values involved; the engine adds the chunk key."""

    def __init__(self, message, code, expected, actual):
        super().__init__(message)
        self.code = code
        self.expected = expected
        self.actual = actual


CHECKSUM = ZC_CHECKSUM
IO = ZC_IO


def mark_pool_thread():
    """Call on each pool thread once: its returns from run() neither record that it
    holds the GIL nor spin for it (src/gil_handoff.h)."""
    zc_gil_pool_thread()


if not getattr(sys, "_is_gil_enabled", lambda: True)():
    zc_gil_disable()            # free-threaded Python: nothing to hand over

cdef Py_ssize_t calls_in_progress = 0


def count_calls(Py_ssize_t delta):
    """Add ``delta`` to the count of array reads and writes in progress (over all
    threads, atomically, without a lock) and return the new count."""
    return zc_add_count(&calls_in_progress, delta)


cdef Py_ssize_t add_calls(Py_ssize_t delta) noexcept nogil:
    return zc_add_count(&calls_in_progress, delta)


# ---------------------------------------------------------------- shared blocks

# The blosc chunk whose blocks a read publishes for other threads to take (one at a
# time, over all batches: src/blosc_rows.h), and how many blocks were taken.
cdef zc_rows_share rows_share
cdef Py_ssize_t blocks_helped = 0
cdef Py_ssize_t threads_lingering = 0


cdef zc_rows_share* blocks_share() noexcept nogil:
    return &rows_share


cdef bint help_block(Scratch* s) noexcept nogil:
    cdef const zc_rows_frame* job
    cdef int64_t block
    cdef size_t need
    if not blosc_rows_share_take(&rows_share, &job, &block):
        return False
    zc_add_count(&blocks_helped, 1)
    need = blosc_rows_tmp(job)
    if need == 0 or ensure(s, 3, need) == 0:
        blosc_rows_share_do(&rows_share, job, block, s.buf[3], s.cap[3])
    else:
        blosc_rows_share_do(&rows_share, job, block, NULL, 0)     # (counts as amiss)
    return True


def shared_blocks():
    """How many blosc blocks threads have taken from chunks other threads read (a
    count for tests and measurements: ReadBatch.can_split)."""
    return zc_load_count(&blocks_helped)


cdef extern from * nogil:
    """
    #include "src/zc_platform.h"
    #include "src/blosc_rows.h"
    static inline void zc_share_steady(zc_rows_share* sh, int on) { zc_store_int_relaxed(&sh->steady, on); }
    static inline int zc_share_is_steady(zc_rows_share* sh) { return zc_load_int_relaxed(&sh->steady); }
    """
    void zc_share_steady(zc_rows_share* sh, int on)
    int zc_share_is_steady(zc_rows_share* sh)


def blocks_steady(enabled=None):
    """Whether reads share blocks even after sharing lost (for tests: normally it
    stops for a while, see src/blosc_rows.h); ``enabled`` sets that first."""
    if enabled is not None:
        zc_share_steady(&rows_share, 1 if enabled else 0)
    return bool(zc_share_is_steady(&rows_share))


def lingering():
    """How many pool threads are in ``linger`` now."""
    return zc_load_count(&threads_lingering)


def linger(double seconds):
    """A pool thread out of work: take the blocks of large chunks that reads on other
    threads publish until none has come for ``seconds`` (back-to-back reads of one
    chunk each then find a helper at once, not one woken through the pool)."""
    cdef Scratch* s
    cdef int64_t wait = <int64_t>(seconds * 1e9), until
    cdef int spins = 0
    if wait <= 0:
        return
    with nogil:
        s = thread_scratch()
        zc_add_count(&threads_lingering, 1)
        if s != NULL:
            until = zc_clock_ns() + wait
            while zc_clock_ns() < until:
                if help_block(s):
                    until = zc_clock_ns() + wait
                    spins = 0
                else:
                    blosc_rows_share_wait(&spins)
            scratch_trim(s)
        zc_add_count(&threads_lingering, -1)


cdef object raise_task_error(ZcError* err, str context):
    if err.code == ZC_NOMEM:
        raise MemoryError(f"{context}out of memory")
    raise TaskError(f"{context}{describe(err, -1)}", err.code, err.expected, err.actual)


# ---------------------------------------------------------------- batches

cdef write_path(char* p, bytes head, bytes separator, const int64_t* coords, Py_ssize_t ndim):
    """Write ``head`` + the chunk coordinates joined by the one-byte ``separator``,
    NUL-terminated, to ``p`` (room for len(head) + 21 * max(1, ndim) bytes)."""
    cdef Py_ssize_t d, k
    cdef char digits[24]
    cdef int64_t c
    memcpy(p, <const char*>head, len(head))
    p += len(head)
    for d in range(ndim):
        c = coords[d]
        if c < 0:
            raise ValueError(f"chunk coordinates {c} must not be negative")
        if d:
            p[0] = (<const char*>separator)[0]
            p += 1
        k = 0
        while True:
            digits[k] = <char>(48 + c % 10)
            k += 1
            c //= 10
            if c == 0:
                break
        while k:
            k -= 1
            p[0] = digits[k]
            p += 1
    p[0] = 0

cdef class _Batch:
    """What read and write batches share: the plan, the user array, the sources."""

    def __cinit__(self):
        self.have_arr = False
        self.src_data = NULL
        self.src_len = NULL
        self.src_path = NULL
        self.src_offset = NULL
        self.src_fd = NULL
        self.fds = NULL
        self.nfds = 0
        self.path_buf = NULL
        self.errs = NULL
        self.status = NULL
        self.plan.table = self.plan.tasks = self.plan.coords = NULL
        self.local = self.outidx = NULL
        self.local32 = self.outidx32 = NULL
        self.view_ptrs = NULL
        self.view_of = self.task_order = NULL

    def __dealloc__(self):
        if self.is_view:                # (its arrays are its parent's)
            return
        free(self.view_ptrs)
        if self.have_arr:
            PyBuffer_Release(&self.arr)
        self.close_files()
        free(self.src_data)
        free(self.src_len)
        free(self.src_path)
        free(self.src_offset)
        free(self.src_fd)
        free(self.path_buf)
        free(self.errs)
        free(self.status)
        plan_free(&self.plan)

    def close_files(self):
        """Close the files the batch holds open (shards read by the BasicReader)."""
        cdef Py_ssize_t i
        for i in range(self.nfds):
            if self.fds[i] >= 0:
                close_file(self.fds[i])
        free(self.fds)
        self.fds = NULL
        self.nfds = 0

    cdef setup(self, Chain chain, table, local, outidx, tasks, arr, tuple arr_strides,
               bytes fill, sources, bint writable):
        cdef const int64_t[:, ::1] tv = table
        cdef const int64_t[:, ::1] kv = tasks
        cdef const int64_t[::1] lv
        cdef const int64_t[::1] ov
        cdef const int32_t[::1] lv32
        cdef const int32_t[::1] ov32
        if kv.shape[1] != chain.ndim or tv.shape[1] != PLAN_NCOLS:
            raise ValueError("plan does not match the chain's dimensions")
        self.plan_arrays = (table, local, outidx, tasks)
        self.table = &tv[0, 0] if tv.shape[0] else NULL
        self.nrows = tv.shape[0]
        self.tasks = &kv[0, 0] if kv.shape[0] * kv.shape[1] else NULL
        self.ntasks = kv.shape[0]
        self.local = self.outidx = NULL
        self.local32 = self.outidx32 = NULL
        if local.itemsize == 4:         # (32-bit: a plan of points)
            lv32 = local
            ov32 = outidx
            if lv32.shape[0] != ov32.shape[0]:
                raise ValueError("local and outidx differ in length")
            self.local32 = &lv32[0] if lv32.shape[0] else NULL
            self.outidx32 = &ov32[0] if ov32.shape[0] else NULL
        else:
            lv = local
            ov = outidx
            self.local = &lv[0] if lv.shape[0] else NULL
            self.outidx = &ov[0] if ov.shape[0] else NULL
        self.setup_common(chain, arr, arr_strides, fill, sources, writable)

    cdef setup_plan(self, Chain chain, Plan* plan, arr, tuple arr_strides, bytes fill,
                    bytes head, bytes separator, const int64_t* file_of_task=NULL,
                    const int64_t* ranges=NULL):
        """Set up from a native plan (its buffers now belong to the batch) with
        chunk files head + coordinates (see set_paths), or, given ``file_of_task``
        (an index into the batch's open ``fds``) and ``ranges`` (ntasks x 2: offset,
        length; offset -1: the chunk is missing), byte ranges of open shard files."""
        cdef Py_ssize_t t
        self.plan = plan[0]
        plan.table = plan.tasks = plan.coords = NULL
        if self.plan.ndim != chain.ndim:
            raise ValueError("plan does not match the chain's dimensions")
        self.table = self.plan.table
        self.nrows = self.plan.nrows
        self.tasks = self.plan.tasks
        self.ntasks = self.plan.ntasks
        self.local = self.outidx = NULL
        self.local32 = self.outidx32 = NULL
        self.setup_common(chain, arr, arr_strides, fill, None, True)
        if file_of_task == NULL:
            self.set_paths(head, separator, self.plan.coords)
            return
        for t in range(self.ntasks):
            self.src_path[t] = NULL
            self.src_data[t] = NULL
            self.status[t] = 0
            self.src_fd[t] = -1 if ranges[2 * t] < 0 else self.fds[file_of_task[t]]
            self.src_offset[t] = ranges[2 * t]
            self.src_len[t] = <size_t>ranges[2 * t + 1] if ranges[2 * t] >= 0 else 0

    cdef setup_common(self, Chain chain, arr, tuple arr_strides, bytes fill, sources,
                      bint writable):
        cdef Py_ssize_t t, d, flags, max_count
        self.chain = chain
        self.ndim = chain.ndim
        if len(fill) != chain.itemsize:
            raise ValueError(f"fill value has {len(fill)} bytes, itemsize is {chain.itemsize}")
        flags = PyBUF_STRIDES | (PyBUF_WRITABLE if writable else 0)
        PyObject_GetBuffer(arr, &self.arr, flags)
        self.have_arr = True
        # an output far larger than the caches: writing its lines without reading
        # them first saves a third of the scatter's memory traffic
        self.stream = writable and self.arr.len >= STREAM_MIN
        for d in range(self.ndim):
            self.arr_strides[d] = arr_strides[d]
        self.fill = fill
        self.fill_ptr = <const char*>self.fill
        if sources is None:             # setup_plan: set_paths follows
            pass
        elif type(sources) is tuple:
            if not ((len(sources) == 4 and sources[0] == "paths")
                    or (len(sources) == 5 and sources[0] == "ranges")):
                raise TypeError(f"unknown sources {sources!r}")
        elif type(sources) is not list:
            raise TypeError(f"sources must be a list or a tuple, not {type(sources).__name__}")
        elif len(sources) != self.ntasks:
            raise ValueError(f"{len(sources)} sources for {self.ntasks} tasks")
        self.keep = sources
        self.src_data = <const uint8_t**>malloc(max(1, self.ntasks) * sizeof(void*))
        self.src_len = <size_t*>malloc(max(1, self.ntasks) * sizeof(size_t))
        self.src_path = <const char**>malloc(max(1, self.ntasks) * sizeof(void*))
        self.src_offset = <int64_t*>malloc(max(1, self.ntasks) * sizeof(int64_t))
        self.src_fd = <int*>malloc(max(1, self.ntasks) * sizeof(int))
        self.errs = <ZcError*>malloc(max(1, self.ntasks) * sizeof(ZcError))
        self.status = <int*>malloc(max(1, self.ntasks) * sizeof(int))
        if not (self.src_data and self.src_len and self.src_path and self.src_offset and self.src_fd
                and self.errs and self.status):
            raise MemoryError()
        if type(sources) is tuple and sources[0] == "ranges":
            self.set_ranges(sources[1], sources[2], sources[3], sources[4])
        elif type(sources) is tuple:
            self.set_coords_paths(sources[1], sources[2], sources[3])
        for t in range(self.ntasks if type(sources) is list else 0):
            src = sources[t]
            self.src_data[t] = NULL
            self.src_path[t] = NULL
            self.src_offset[t] = -1
            self.src_fd[t] = -1
            self.src_len[t] = 0
            self.status[t] = 0
            if src is None:
                continue
            if type(src) is bytes:
                self.src_data[t] = <const uint8_t*>PyBytes_AS_STRING(src)
                self.src_len[t] = <size_t>PyBytes_GET_SIZE(src)
            elif src[0] == "path":       # ("path", b"/file"): the whole file
                if len(src) != 2:
                    raise ValueError(f"task {t}: a path source is (\"path\", file), not {src!r}")
                self.src_path[t] = <const char*>(<bytes>src[1])
            elif src[0] == "fd":         # ("fd", descriptor, offset, length): a range of an open file
                if src[1] < 0 or src[2] < 0 or src[3] < 0:
                    raise ValueError(f"task {t}: bad file range {src[1:]}")
                self.src_fd[t] = src[1]
                self.src_offset[t] = src[2]
                self.src_len[t] = src[3]
            elif src[0] == "bytes":      # ("bytes", b"...", offset, length)
                buf = <bytes>src[1]
                if src[2] < 0 or src[3] < 0 or src[2] + src[3] > len(buf):
                    raise ValueError(f"task {t}: byte range {src[2:]} outside {len(buf)} bytes")
                self.src_data[t] = <const uint8_t*>PyBytes_AS_STRING(buf) + <Py_ssize_t>src[2]
                self.src_len[t] = <size_t>src[3]
            else:
                raise TypeError(f"task {t}: unknown source {src!r}")
        max_count = 0
        for t in range(self.nrows):
            max_count = max(max_count, self.table[t * PLAN_NCOLS + PLAN_COL_COUNT])
        self.offs_needed = 2 * <size_t>self.ndim * <size_t>max_count
        self.next_task = 0

    cdef share(self, _Batch parent, Chain chain):
        """This batch as a view of ``parent``'s tasks run with ``chain``: another chunk
        shape's chain, of the same dimensions and item size.  Every array is the
        parent's (which frees them and holds the view: set_shapes); task t is the
        parent's task t."""
        if chain.ndim != parent.ndim or chain.itemsize != parent.chain.itemsize:
            raise ValueError("a chunk shape's chain differs in dimensions or item size")
        self.is_view = True
        self.chain = chain
        self.ndim = parent.ndim
        self.table, self.nrows, self.tasks, self.ntasks = parent.table, parent.nrows, parent.tasks, parent.ntasks
        self.local, self.outidx = parent.local, parent.outidx
        self.local32, self.outidx32 = parent.local32, parent.outidx32
        memcpy(&self.arr, &parent.arr, sizeof(Py_buffer))
        self.stream = parent.stream
        memcpy(self.arr_strides, parent.arr_strides, sizeof(self.arr_strides))
        self.fill = parent.fill
        self.fill_ptr = parent.fill_ptr
        self.src_data, self.src_len, self.src_path = parent.src_data, parent.src_len, parent.src_path
        self.src_offset, self.src_fd = parent.src_offset, parent.src_fd
        self.errs, self.status = parent.errs, parent.status
        self.offs_needed = parent.offs_needed

    cdef set_shapes(self, view_of, list chains):
        """Chunks of several shapes in one batch: task t's chunk is of class
        ``view_of[t]`` (int64) and is run with ``chains[view_of[t]]`` (through a view
        of this batch per class, made here: C per chunk shape, no Python per chunk);
        the tasks are taken largest chunks first."""
        cdef const int64_t[::1] vv = view_of
        cdef Py_ssize_t t, k, n = len(chains)
        cdef int64_t[::1] size_of
        cdef const int64_t[::1] ov
        cdef _Batch view
        if vv.shape[0] != self.ntasks or n == 0:
            raise ValueError(f"{vv.shape[0]} chunk shape classes for {self.ntasks} tasks")
        for t in range(self.ntasks):
            if not 0 <= vv[t] < n:
                raise ValueError(f"task {t}: chunk shape class {vv[t]} of {n}")
        self.views = []
        self.view_ptrs = <PyObject**>malloc(n * sizeof(PyObject*))
        if self.view_ptrs == NULL:
            raise MemoryError()
        sizes = _empty(n, _int64)
        size_of = sizes
        for k in range(n):
            view = type(self).__new__(type(self))
            view.share(self, <Chain?>chains[k])
            self.views.append(view)
            self.view_ptrs[k] = <PyObject*>view
            size_of[k] = -view.chain.chunk_nbytes
        order = _argsort(sizes[view_of], kind="stable").astype(_int64, copy=False)   # (the largest first)
        ov = order
        self.shape_arrays = (view_of, order)
        self.view_of = &vv[0] if self.ntasks else NULL
        self.task_order = &ov[0] if self.ntasks else NULL
        self.chain = <Chain>chains[0]

    def chunk_bytes(self):
        """The decoded bytes of the tasks' whole chunks (each of its own shape)."""
        cdef Py_ssize_t t, total = 0
        if self.view_ptrs == NULL:
            return self.ntasks * self.chain.chunk_nbytes
        for t in range(self.ntasks):
            total += (<_Batch>self.view_ptrs[self.view_of[t]]).chain.chunk_nbytes
        return total

    cdef set_ranges(self, const int64_t[::1] owner, const int64_t[::1] offset,
                    const int64_t[::1] length, list holders):
        """Task t reads ``length[t]`` bytes at ``offset[t]`` of holder ``owner[t]``
        (-1: the chunk is missing): an open file descriptor (an int) or a bytes
        object, whose bounds are checked here."""
        cdef Py_ssize_t t, h, n = len(holders)
        cdef int64_t o
        cdef const uint8_t** data = <const uint8_t**>malloc(max(1, n) * sizeof(void*))
        cdef int64_t* size = <int64_t*>malloc(max(1, n) * sizeof(int64_t))    # -1: a file
        cdef int* fd = <int*>malloc(max(1, n) * sizeof(int))
        if owner.shape[0] != self.ntasks or offset.shape[0] != self.ntasks or length.shape[0] != self.ntasks:
            raise ValueError("ranges do not match the tasks")
        try:
            if data == NULL or size == NULL or fd == NULL:
                raise MemoryError()
            for h, holder in enumerate(holders):
                if type(holder) is bytes:
                    data[h] = <const uint8_t*>PyBytes_AS_STRING(holder)
                    size[h] = PyBytes_GET_SIZE(holder)
                elif type(holder) is int and holder >= 0:
                    fd[h] = holder
                    size[h] = -1
                else:
                    raise TypeError(f"unknown range holder {holder!r}")
            for t in range(self.ntasks):
                self.src_path[t] = NULL
                self.src_data[t] = NULL
                self.src_offset[t] = -1
                self.src_fd[t] = -1
                self.src_len[t] = 0
                self.status[t] = 0
                h = owner[t]
                if h < 0:
                    continue
                o = offset[t]
                if h >= n or o < 0 or length[t] < 0 or (size[h] >= 0 and o + length[t] > size[h]):
                    raise ValueError(f"task {t}: range {o}, {length[t]} of holder {h} is not in it")
                if size[h] >= 0:
                    self.src_data[t] = data[h] + o
                else:
                    self.src_fd[t] = fd[h]
                    self.src_offset[t] = o
                self.src_len[t] = <size_t>length[t]
        finally:
            free(data)
            free(size)
            free(fd)

    cdef set_coords_paths(self, bytes head, bytes separator, const int64_t[:, ::1] coords):
        if coords.shape[0] != self.ntasks or coords.shape[1] != self.ndim:
            raise ValueError("paths do not match the tasks")
        self.set_paths(head, separator, &coords[0, 0] if coords.shape[0] * coords.shape[1] else NULL)

    cdef set_paths(self, bytes head, bytes separator, const int64_t* coords):
        """Task t reads the file ``head`` + its chunk coordinates (``coords``, ntasks x
        ndim) joined by ``separator`` (the local store's path of its chunk key): no
        key strings."""
        cdef Py_ssize_t t, width = len(head) + 21 * max(1, self.ndim)
        if len(separator) != 1:
            raise ValueError(f"chunk key separator {separator!r} is not one byte")
        self.path_buf = <char*>malloc(max(1, self.ntasks) * width)
        if self.path_buf == NULL:
            raise MemoryError()
        for t in range(self.ntasks):
            self.src_path[t] = self.path_buf + t * width
            self.src_data[t] = NULL
            self.src_offset[t] = -1
            self.src_fd[t] = -1
            self.src_len[t] = 0
            self.status[t] = 0
            write_path(self.path_buf + t * width, head, separator, coords + t * self.ndim, self.ndim)

    cdef int build_dims(self, Py_ssize_t t, DimPlan* dims, Scratch* s, bint arr_is_src) noexcept nogil:
        """Offsets of task t: chunk side from the chain's strides, array side from the
        user array's.  For reads the chunk is the source; for writes the array is."""
        cdef int d
        cdef Py_ssize_t k, row, cnt, start, step, out0, ix, cs, ars
        cdef Py_ssize_t* chunk_off
        cdef Py_ssize_t* arr_off
        cdef Py_ssize_t pos = 0
        if s.offs_cap < self.offs_needed:
            free(s.offs)
            s.offs = <Py_ssize_t*>malloc(max(<size_t>1, self.offs_needed) * sizeof(Py_ssize_t))
            if s.offs == NULL:
                s.offs_cap = 0
                return -1
            s.offs_cap = self.offs_needed
        for d in range(self.ndim):
            row = self.tasks[t * self.ndim + d]
            cnt = self.table[row * PLAN_NCOLS + PLAN_COL_COUNT]
            start = self.table[row * PLAN_NCOLS + PLAN_COL_START]
            step = self.table[row * PLAN_NCOLS + PLAN_COL_STEP]
            out0 = self.table[row * PLAN_NCOLS + PLAN_COL_OUT]
            ix = self.table[row * PLAN_NCOLS + PLAN_COL_IDX]
            cs = self.chain.strides[d]
            ars = self.arr_strides[d]
            chunk_off = s.offs + pos
            arr_off = s.offs + pos + cnt
            pos += 2 * cnt
            if ix < 0:
                for k in range(cnt):
                    chunk_off[k] = (start + k * step) * cs
                    arr_off[k] = (out0 + k) * ars
            elif step == 0:             # a point row: flat element indices in the chunk
                self.point_offsets(ix, cnt, chunk_off)
                if self.outidx32 != NULL:
                    for k in range(cnt):
                        arr_off[k] = self.outidx32[ix + k] * ars
                else:
                    for k in range(cnt):
                        arr_off[k] = self.outidx[ix + k] * ars
            else:
                for k in range(cnt):
                    chunk_off[k] = self.local[ix + k] * cs
                    arr_off[k] = self.outidx[ix + k] * ars
            dims[d].count = cnt
            dims[d].src_off = arr_off if arr_is_src else chunk_off
            dims[d].dst_off = chunk_off if arr_is_src else arr_off
            dims[d].contiguous = (ix < 0 and step == 1 and cs == self.chain.itemsize
                                  and ars == self.chain.itemsize)
        return 0

    cdef void point_offsets(self, Py_ssize_t ix, Py_ssize_t n, Py_ssize_t* off) noexcept nogil:
        """Byte offsets in the decoded chunk of the n flat C-order element indices at
        entry ``ix`` of the local indices (32- or 64-bit)."""
        cdef Py_ssize_t k, i, q, o
        cdef int d
        for k in range(n):
            off[k] = self.local32[ix + k] if self.local32 != NULL else self.local[ix + k]
        if self.chain.c_layout:
            for k in range(n):
                off[k] *= self.chain.itemsize
            return
        for k in range(n):              # (a transposed chunk: its strides per dimension)
            i = off[k]
            o = 0
            for d in range(self.ndim - 1, -1, -1):
                q = i // self.chain.shape[d]
                o += (i - q * self.chain.shape[d]) * self.chain.strides[d]
                i = q
            off[k] = o

    cdef bint covers_chunk(self, Py_ssize_t t) noexcept nogil:
        """Whether task t selects every in-bounds element of its chunk (FULL everywhere)."""
        cdef int d
        for d in range(self.ndim):
            if self.table[(self.tasks[t * self.ndim + d]) * PLAN_NCOLS + PLAN_COL_FULL] == 0:
                return False
        return True

    cdef Py_ssize_t fetch(self, Py_ssize_t t, const uint8_t** data, Scratch* s,
                          ZcError* err) noexcept nogil:
        """The encoded bytes of task t's chunk: MISSING, or their length (data[0] set)."""
        cdef Py_ssize_t r
        if self.src_data[t] != NULL:
            data[0] = self.src_data[t]
            return <Py_ssize_t>self.src_len[t]
        if self.src_fd[t] >= 0:
            r = read_range(self.src_fd[t], self.src_offset[t], self.src_len[t], &s.buf[0], &s.cap[0], err)
        elif self.src_path[t] != NULL:
            r = read_file(self.src_path[t], &s.buf[0], &s.cap[0], err)
        else:
            return MISSING
        if r >= 0:
            data[0] = s.buf[0]
        return r

    cdef void run_task(self, Py_ssize_t t, Scratch* s) noexcept nogil:
        pass

    cdef Py_ssize_t take_task(self) noexcept nogil:
        """The next task to run (ntasks or more: none left)."""
        return zc_next_task(&self.next_task)

    cdef void help_tasks(self, Scratch* s) noexcept nogil:
        """Once no task is left to take: help the tasks still running (a read's
        shared blosc blocks)."""
        pass

    def can_split(self, Py_ssize_t threads):
        """Whether the batch's tasks can be shared by more threads than it has tasks
        (a read's large blosc chunks, decoded a block range per thread) when up to
        ``threads`` run it."""
        return False

    def split_on(self):
        """Share each task's work among the threads that run the batch (see can_split)."""
        pass

    def run(self):
        """Work through the batch's tasks until none are left (call from each worker)."""
        cdef Scratch local
        cdef Scratch* s
        cdef Py_ssize_t t
        memset(&local, 0, sizeof(Scratch))
        with nogil:
            s = worker_begin(&local)
            while True:
                t = self.take_task()
                if t >= self.ntasks:
                    break
                self.run_task(t, s)
            self.help_tasks(s)
            worker_end(s, &local, self.stream)
        zc_gil_taken()

    def first_error(self):
        """(task index, TaskError) of the first failed task, or None."""
        cdef Py_ssize_t t
        for t in range(self.ntasks):
            if self.status[t] < 0:
                try:
                    raise_task_error(&self.errs[t], "")
                except (TaskError, MemoryError) as exc:
                    return t, exc
        return None
