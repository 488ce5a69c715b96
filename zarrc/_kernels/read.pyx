# cython: language_level=3, freethreading_compatible=True, boundscheck=False, wraparound=False, cdivision=True, initializedcheck=False
"""Reads: the fused per-chunk read worker (fetch -> decode -> scatter), run over a
batch of chunks without the GIL (:class:`ReadBatch`), and :class:`BasicReader`,
which serves int/slice reads of plain chunk (or shard) files in one native call,
from the selection to the filled output.

A ReadBatch picks, per chunk, the cheapest way to its selected part: a whole
chunk decoded straight into the output, a few bytes of a blosc file, the byte
span of an uncompressed file, the blocks of a blosc frame or the prefix of a zstd
frame that hold the selection, a blosc frame decoded row by row, or a whole
decode into scratch and a scatter.
"""

from cpython.bytes cimport PyBytes_AS_STRING, PyBytes_FromStringAndSize, PyBytes_GET_SIZE
from libc.stddef cimport ptrdiff_t
from libc.stdint cimport int64_t, uint8_t, uint64_t
from libc.stdlib cimport free, malloc
from libc.string cimport memcmp, memcpy, memset, strerror

from zarrc._kernels.batch cimport (MISSING, NOT_TAKEN, STREAM_MIN, _Batch, add_calls, blocks_share,
                                   help_block, write_path, zc_add_count, zc_load_count)
from zarrc._kernels.blosc cimport (ZC_PARTIAL_MAX, zc_blosc_decode_range, zc_blosc_decoded_size,
                                   zc_blosc_file_range, blosc_rows_blocks, blosc_rows_open,
                                   blosc_rows_share_open, blosc_rows_share_run, blosc_rows_share_wait, zc_rows,
                                   zc_rows_frame)
from zarrc._kernels.chain cimport BLOSC, ZSTD, Chain, Scratch, ensure
from zarrc._kernels.chunk_files cimport close_file, open_regular, read_chunk_slabs
from zarrc._kernels.copy cimport DimPlan, byteswap, copy_nd, fill_nd, prefault, selected_span
from zarrc._kernels.errors cimport ZC_NOMEM, ZC_SIZE, ZcError, fail, load_le32
from zarrc._kernels.plan cimport (PLAN_COL_COUNT, PLAN_COL_IDX, PLAN_COL_OUT, PLAN_COL_STEP,
                                  PLAN_MAX_DIMS, PLAN_NCOLS, Plan, int64_array, plan_free,
                                  plan_selection)
from zarrc._kernels.shard cimport SHARD_DAMAGED, SHARD_EMPTY, SHARD_ENTRY_BYTES, shard_place
from zarrc._kernels.slabs cimport output_array
from zarrc._kernels.zstd cimport zc_zstd_dctx_new, zc_zstd_decode_prefix, zc_zstd_decoded_size

import numpy as np

cdef enum:
    # shard files one BasicReader call may hold open (BasicReader's max_open is at
    # most this); a file's identity: device, inode, size, mtime_ns (open_regular)
    MAX_OPEN_LIMIT = 256
    IDENT_WORDS = 4
    # an uncompressed chunk's file is read in slabs when that skips more than this
    # many bytes per slab (about what a pread call costs beyond its copying)
    SLAB_READ_COST = 16384
    # a blosc chunk is decoded whole when the selection spans more than 3/4 of its
    # blocks, a zstd chunk when it reaches past 3/4 of the chunk
    SPAN_MAX_NUM = 3
    SPAN_MAX_DEN = 4
    # points in a blosc chunk of at most this many blocks decode only the blocks
    # that hold them (read_blosc_blocks)
    BLOCKS_MAX = 4096

STREAM_MIN_BYTES = STREAM_MIN   # outputs this large are written with streaming stores
DEF PREFAULT_MIN_BYTES = 256 << 10  # one-thread reads this large map their output in one call
cdef object _empty = np.empty

cdef extern from *:
    """
    /* read by every worker, per chunk, set by blosc_rows(): a relaxed atomic flag
       (a plain load on x86 and arm64), so toggling it mid-read is no data race */
    #include "src/zc_platform.h"
    static int zc_blosc_rows_on = 1;
    static inline int zc_blosc_rows_get(void) { return zc_load_int_relaxed(&zc_blosc_rows_on); }
    static inline void zc_blosc_rows_set(int on) { zc_store_int_relaxed(&zc_blosc_rows_on, on); }
    """
    bint zc_blosc_rows_get() noexcept nogil
    void zc_blosc_rows_set(int on) noexcept nogil

# a read batch with fewer tasks than threads shares the blocks of each blosc chunk
# of at least this many bytes among its threads (block_split_min): c-blosc gives a
# smaller chunk one block (its own choice of blocksize for LZ4 at the usual levels)
cdef Py_ssize_t split_min_bytes = 1 << 20


def blosc_rows(enabled=None):
    """Whether whole blosc chunks are decoded straight into their rows of the output
    (ReadBatch.read_blosc_rows); ``enabled`` turns that on or off first (for tests and
    measurements: off, they are decoded by c-blosc and then copied)."""
    if enabled is not None:
        zc_blosc_rows_set(1 if enabled else 0)
    return bool(zc_blosc_rows_get())


def block_split_min(n=None):
    """The least decoded bytes of a blosc chunk whose blocks the threads of a read
    batch with fewer tasks than threads share (ReadBatch.can_split); ``n`` sets it
    first (for tests and measurements)."""
    global split_min_bytes
    if n is not None:
        split_min_bytes = max(0, n)
    return split_min_bytes


cdef Py_ssize_t max_output_bytes = 0     # (0: none) set by the engine: set_max_output


def set_max_output(Py_ssize_t nbytes):
    """Refuse (MemoryError) to allocate a read's output of more than ``nbytes`` (0:
    no limit); the engine sets this machine's memory (engine.batch.set_memory_limit)."""
    global max_output_bytes
    max_output_bytes = max(0, nbytes)


cdef object new_output(tuple shape, object dtype, Py_ssize_t nbytes):
    """A new C-order array for a read.  One of SLAB_MIN_BYTES or more comes from
    slabs.pyx (a huge-page slab or mapping, reused from earlier outputs that died).
    Elsewhere, one of STREAM_MIN_BYTES or more starts on a 64-byte boundary (malloc's
    large blocks start 16 bytes into a page) so that rows of 64 or 128 bytes at
    multiples of 64 cover whole cache lines and are written with streaming stores too
    (copy_nd); the array is then a view of a slightly larger one.  MemoryError above
    ``max_output_bytes``."""
    if max_output_bytes and nbytes > max_output_bytes:
        raise MemoryError(f"the output of the read, {shape} of {dtype.str} ({nbytes} bytes), is more than "
                          f"this machine's memory ({max_output_bytes} bytes)")
    out = output_array(shape, dtype, nbytes)
    if out is not None:
        return out
    if nbytes < STREAM_MIN or dtype.hasobject:
        return _empty(shape, dtype)
    whole = _empty(nbytes + 64, np.uint8)
    skip = (-whole.ctypes.data) & 63
    return whole[skip:skip + nbytes].view(dtype).reshape(shape)


cdef Py_ssize_t read_chunk_range(const char* path, size_t size, size_t lo, size_t hi,
                                 uint8_t* dst, ZcError* err) noexcept nogil:
    """Bytes [lo, hi) of an uncompressed chunk's file, which must hold exactly ``size``
    bytes, into ``dst``.  MISSING if there is no such file."""
    cdef Py_ssize_t start = <Py_ssize_t>lo
    return read_chunk_slabs(path, size, &start, 1, hi - lo, dst, err)


cdef class ReadBatch(_Batch):
    """Decode chunks and scatter the selected parts into ``out``.

    ``table``: int64 (rows, 7) projection rows of all dimensions (see
    zarrc.indexing, plus the FULL column); ``local``/``outidx``: flat index
    arrays for indexed rows; ``tasks``: int64 (ntasks, ndim) rows per task;
    ``out``: the writable output array; ``out_strides``: its byte stride for each
    *array* dimension (0 for dimensions the selection drops); ``fill``: the fill
    value's bytes in native order; ``sources``: per task, bytes (encoded chunk),
    ("bytes", b"...", offset, length) (a part of them), ("path", b"/file") (read
    here), ("fd", descriptor, offset, length) (a byte range of a file the caller
    holds open, read here with pread: a shard's inner chunk), or None (missing).
    """

    # shared blocks (see can_split): whether tasks share them, the tasks taken that
    # may still publish a chunk's blocks (batch.pxd blocks_share: where they do)
    cdef bint split
    cdef Py_ssize_t pending

    def __init__(self, Chain chain, table, local, outidx, tasks, out, tuple out_strides,
                 bytes fill, sources, tuple shapes=None):
        self.setup(chain, table, local, outidx, tasks, out, out_strides, fill, sources, True)
        if shapes is not None:          # (chunks of several shapes: _Batch.set_shapes)
            self.set_shapes(shapes[0], shapes[1])

    def can_split(self, Py_ssize_t threads):
        """Whether threads with no task left can share the blocks of a task's chunk:
        fewer tasks than ``threads``, blosc chunks (LZ4, no bit shuffle: decoded row
        by row, blosc_rows()) of at least block_split_min() bytes and more than one
        block (a blocksize the codec names, if any); not for a while after sharing
        lost (src/blosc_rows.h: zc_blosc_rows_share_open)."""
        cdef size_t forced = self.chain.steps[0].blocksize
        return (self.view_ptrs == NULL and self.ntasks < threads and zc_blosc_rows_get() and self.chain.n == 1
                and self.chain.steps[0].kind == BLOSC and self.chain.steps[0].ranges
                and self.chain.swap_unit == 0 and self.chain.c_layout and self.ndim > 0
                and self.chain.chunk_nbytes >= split_min_bytes
                and (forced == 0 or forced < <size_t>self.chain.chunk_nbytes)
                and blosc_rows_share_open(blocks_share()))

    def split_on(self):
        """Share the chunks' blocks (run() of each thread: the thread that fetched a
        chunk publishes its blocks, threads with no task left take them)."""
        self.split = True

    cdef Py_ssize_t take_task(self) noexcept nogil:
        cdef Py_ssize_t t
        if not self.split:
            return _Batch.take_task(self)
        zc_add_count(&self.pending, 1)          # (before the task is taken: see help_tasks)
        t = _Batch.take_task(self)
        if t >= self.ntasks:
            zc_add_count(&self.pending, -1)
        return t

    cdef void help_tasks(self, Scratch* s) noexcept nogil:
        """Take blocks of the chunks other threads publish until every task is taken
        and none can publish any more (a thread that arrives while a task fetches
        its chunk waits for its blocks)."""
        cdef int spins = 0
        if not self.split:
            return
        while True:
            if help_block(s):
                spins = 0
            elif (zc_load_count(&self.next_task) >= self.ntasks
                  and zc_load_count(&self.pending) == 0):
                return
            else:
                blosc_rows_share_wait(&spins)

    cdef void decided(self, bint* undecided) noexcept nogil:
        """The task will publish no (more) blocks."""
        if undecided[0]:
            undecided[0] = False
            zc_add_count(&self.pending, -1)

    cdef void run_task(self, Py_ssize_t t, Scratch* s) noexcept nogil:
        cdef bint undecided = self.split
        if self.view_ptrs != NULL:      # (its chunk shape's view: never split)
            t = self.task_order[t]
            (<ReadBatch>self.view_ptrs[self.view_of[t]]).read_task(t, s, &undecided)
            return
        self.read_task(t, s, &undecided)
        self.decided(&undecided)

    cdef void read_task(self, Py_ssize_t t, Scratch* s, bint* undecided) noexcept nogil:
        cdef DimPlan dims[PLAN_MAX_DIMS]
        cdef ZcError* err = &self.errs[t]
        cdef const uint8_t* data = NULL
        cdef const uint8_t* p
        cdef Py_ssize_t n, r, row, base = 0
        cdef int d
        cdef bint direct
        cdef char* out = <char*>self.arr.buf
        if self.build_dims(t, dims, s, False) != 0:
            fail(err, ZC_NOMEM, 0, 0, NULL)
            self.status[t] = -1
            return
        # whole chunk selected, chunk layout = output layout: decode straight into out
        direct = self.chain.c_layout
        for d in range(self.ndim):
            if not direct:
                break
            row = self.tasks[t * self.ndim + d]
            direct = (self.table[row * PLAN_NCOLS + PLAN_COL_IDX] < 0 and self.table[row * PLAN_NCOLS + PLAN_COL_STEP] == 1
                      and self.table[row * PLAN_NCOLS + PLAN_COL_COUNT] == self.chain.shape[d]
                      and (self.chain.shape[d] == 1 or self.arr_strides[d] == self.chain.strides[d]))
            base += self.table[row * PLAN_NCOLS + PLAN_COL_OUT] * self.arr_strides[d]
        if self.chain.n == 0 and self.src_path[t] != NULL:
            # an uncompressed chunk file: a whole chunk is read straight into out (one
            # copy, not two), a part of one reads only the byte span that holds it
            if direct:
                n = read_chunk_range(self.src_path[t], self.chain.chunk_nbytes, 0,
                                     self.chain.chunk_nbytes, <uint8_t*>(out + base), err)
                if n >= 0 and self.chain.swap_unit:
                    byteswap(out + base, self.chain.chunk_nbytes // self.chain.swap_unit,
                             self.chain.swap_unit)
            else:
                n = self.read_uncompressed(t, dims, out, s, err)
            if n == MISSING:
                fill_nd(out, self.ndim, dims, self.fill_ptr, self.chain.itemsize)
            elif n < 0:
                self.status[t] = -1
            return
        if (self.chain.n == 1 and self.chain.steps[0].kind == BLOSC and self.chain.steps[0].ranges
                and (self.src_path[t] != NULL or self.src_fd[t] >= 0) and not direct):
            n = self.read_blosc_file(t, dims, out, s, err)   # a few bytes of a blosc file
            if n == MISSING:
                fill_nd(out, self.ndim, dims, self.fill_ptr, self.chain.itemsize)
            if n != NOT_TAKEN:
                if n == -1:
                    self.status[t] = -1
                return
        n = self.fetch(t, &data, s, err)
        if n == MISSING:
            fill_nd(out, self.ndim, dims, self.fill_ptr, self.chain.itemsize)
            return
        if n < 0:
            self.status[t] = -1
            return
        if (zc_blosc_rows_get() and self.chain.n == 1 and self.chain.steps[0].kind == BLOSC
                and self.chain.swap_unit == 0 and self.chain.c_layout and self.ndim > 0
                and dims[self.ndim - 1].contiguous and self.covers_chunk(t)
                and self.read_blosc_rows(dims, data, n, out, s, undecided) > 0):
            return
        self.decided(undecided)
        if direct:
            p = self.chain.decode(data, <size_t>n, <uint8_t*>(out + base), s, err)
            if p == NULL:
                self.status[t] = -1
                return
            if p != <const uint8_t*>(out + base):
                memcpy(out + base, p, self.chain.chunk_nbytes)
            if self.chain.swap_unit:
                byteswap(out + base, self.chain.chunk_nbytes // self.chain.swap_unit,
                         self.chain.swap_unit)
            return
        r = NOT_TAKEN                   # a part of a large chunk: decode only what it needs
        if self.chain.n == 1 and not self.covers_chunk(t):
            if self.chain.steps[0].kind == BLOSC:
                r = self.read_blosc_span(dims, data, n, out, s, err)
                if r == NOT_TAKEN and self.point_task(t):
                    r = self.read_blosc_blocks(dims, data, n, out, s, err)
            elif self.chain.steps[0].kind == ZSTD:
                r = self.read_zstd_prefix(dims, data, n, out, s, err)
        if r != NOT_TAKEN:
            if r < 0:
                self.status[t] = -1
            return
        if ensure(s, 3, self.chain.chunk_nbytes) != 0:
            fail(err, ZC_NOMEM, 0, 0, NULL)
            self.status[t] = -1
            return
        p = self.chain.decode(data, <size_t>n, s.buf[3], s, err)
        if p == NULL:
            self.status[t] = -1
            return
        if self.chain.swap_unit:
            if p != s.buf[3]:
                memcpy(s.buf[3], p, self.chain.chunk_nbytes)
            byteswap(<char*>s.buf[3], self.chain.chunk_nbytes // self.chain.swap_unit,
                     self.chain.swap_unit)
            p = s.buf[3]
        copy_nd(<const char*>p, out, self.ndim, dims, self.chain.itemsize, self.stream)

    cdef Py_ssize_t read_blosc_rows(self, DimPlan* dims, const uint8_t* data, Py_ssize_t n, char* out,
                                    Scratch* s, bint* undecided) noexcept nogil:
        """A whole blosc chunk (every in-bounds element selected, rows contiguous in
        out) decoded straight into its rows of out: no chunk-sized buffer, no second
        copy (zc_blosc_decode_rows); its blocks shared with the batch's idle threads
        if the batch splits (``undecided``: this task may still publish them).
        Returns its bytes, or 0 when the frame is not one decoded that way: the
        caller decodes it as usual, wording any error."""
        cdef zc_rows rows
        cdef zc_rows_frame frame
        cdef int ok
        cdef int64_t shape[PLAN_MAX_DIMS]
        cdef int64_t count[PLAN_MAX_DIMS]
        cdef const ptrdiff_t* offs[PLAN_MAX_DIMS]
        cdef int d, last = self.ndim - 1
        if ensure(s, 3, self.chain.chunk_nbytes) != 0:
            return 0
        for d in range(last):
            shape[d] = self.chain.shape[d]
            count[d] = dims[d].count
            offs[d] = <const ptrdiff_t*>dims[d].dst_off
        rows.nlead = last
        rows.shape = shape
        rows.count = count
        rows.off = offs
        rows.row_bytes = <size_t>(self.chain.shape[last] * self.chain.itemsize)
        rows.keep_bytes = <size_t>(dims[last].count * self.chain.itemsize)
        rows.dst = out + dims[last].dst_off[0]
        rows.stream = self.stream
        if not blosc_rows_open(&frame, data, <size_t>n, <size_t>self.chain.chunk_nbytes, &rows):
            return 0
        if undecided[0]:                # (split: can_split checked the chunk's size)
            ok = blosc_rows_share_run(blocks_share(), &frame, s.buf[3], s.cap[3])
        else:
            ok = blosc_rows_blocks(&frame, 0, frame.nblocks, s.buf[3], s.cap[3])
        return self.chain.chunk_nbytes if ok else 0

    cdef Py_ssize_t read_uncompressed(self, Py_ssize_t t, DimPlan* dims, char* out, Scratch* s,
                                      ZcError* err) noexcept nogil:
        """Part of an uncompressed chunk file: read only the byte span from the first
        to the last selected element, or, when the first dimension's positions are
        far apart (a small box in a large chunk), the span of the other dimensions at
        each of them; copy the selection out.  Returns what read_chunk_slabs returns.
        Changes the dims' source offsets (their destination offsets stay)."""
        cdef Py_ssize_t lo, hi, n, inner_lo, inner_hi, k, nslabs = 1
        cdef Py_ssize_t lo_d[PLAN_MAX_DIMS]
        cdef Py_ssize_t* starts = &lo
        selected_span(dims, self.ndim, self.chain.itemsize, lo_d, &lo, &hi)
        if self.ndim > 1 and dims[0].count > 1:
            selected_span(dims + 1, self.ndim - 1, self.chain.itemsize, lo_d + 1,
                          &inner_lo, &inner_hi)
            if dims[0].count * (inner_hi - inner_lo + SLAB_READ_COST) < hi - lo:
                nslabs = dims[0].count
                starts = dims[0].src_off       # becomes each slab's file offset, then
                for k in range(nslabs):        # its offset in the slabs read
                    starts[k] += inner_lo
                lo, hi = 0, inner_hi - inner_lo
                lo_d[0] = 0
        if ensure(s, 0, <size_t>(nslabs * (hi - lo))) != 0:
            return fail(err, ZC_NOMEM, 0, 0, NULL)
        n = read_chunk_slabs(self.src_path[t], self.chain.chunk_nbytes, starts, nslabs, hi - lo,
                             s.buf[0], err)
        if n < 0:
            return n
        if nslabs > 1:
            for k in range(nslabs):
                starts[k] = k * (hi - lo)
        self.copy_span(dims, lo_d, <char*>s.buf[0], n, out)
        return n

    cdef Py_ssize_t blosc_blocks(self, const uint8_t* data, Py_ssize_t n, Py_ssize_t* typesize,
                                 Py_ssize_t* blocksize, ZcError* err) noexcept nogil:
        """A blosc chunk's decoded size, its typesize and blocksize, for the partial
        decodes: -1 with ``err`` set (a bad header, or not the chunk's size), or
        NOT_TAKEN where blosc cannot decode a part (no items, a size that is not whole
        items)."""
        cdef Py_ssize_t nbytes = zc_blosc_decoded_size(data, <size_t>n, err)
        if nbytes < 0:
            return -1
        if nbytes != self.chain.chunk_nbytes:
            return fail(err, ZC_SIZE, self.chain.chunk_nbytes, nbytes, "chunk holds")
        typesize[0] = data[3]              # >= 1 if nbytes > 0 (checked with the header)
        if nbytes == 0 or nbytes % typesize[0]:    # (blosc reads ranges of whole items)
            return NOT_TAKEN
        blocksize[0] = load_le32(data + 8)     # 1 .. nbytes (checked with the header)
        return nbytes

    cdef Py_ssize_t read_blosc_span(self, DimPlan* dims, const uint8_t* data, Py_ssize_t n,
                                    char* out, Scratch* s, ZcError* err) noexcept nogil:
        """Part of a blosc chunk: decode only the blocks that hold the byte span from
        the first to the last selected element (a small read of a chunk of many
        blocks).  Returns the span's length, NOT_TAKEN when the span needs most of
        the blocks (the caller decodes the chunk whole), or -1 with ``err`` set."""
        cdef Py_ssize_t lo, hi, nbytes, typesize, blocksize, nblocks, r
        cdef Py_ssize_t lo_d[PLAN_MAX_DIMS]
        nbytes = self.blosc_blocks(data, n, &typesize, &blocksize, err)
        if nbytes < 0:
            return nbytes
        selected_span(dims, self.ndim, self.chain.itemsize, lo_d, &lo, &hi)
        lo_d[0] -= lo % typesize           # the span, widened to whole blosc items
        lo -= lo % typesize
        hi = min(nbytes, hi + (typesize - hi % typesize) % typesize)
        nblocks = (nbytes - 1) // blocksize + 1
        if ((hi - 1) // blocksize - lo // blocksize + 1) * SPAN_MAX_DEN > nblocks * SPAN_MAX_NUM:
            return NOT_TAKEN
        if ensure(s, 3, <size_t>(hi - lo)) != 0:
            return fail(err, ZC_NOMEM, 0, 0, NULL)
        r = zc_blosc_decode_range(data, <size_t>n, <size_t>lo, <size_t>(hi - lo), s.buf[3], err)
        if r < 0:
            return -1
        self.copy_span(dims, lo_d, <char*>s.buf[3], r, out)
        return r

    cdef bint point_task(self, Py_ssize_t t) noexcept nogil:
        """Whether task t lists points (its last dimension's row is a point row)."""
        cdef Py_ssize_t row = self.tasks[t * self.ndim + self.ndim - 1]
        return (self.ndim > 0 and self.table[row * PLAN_NCOLS + PLAN_COL_IDX] >= 0
                and self.table[row * PLAN_NCOLS + PLAN_COL_STEP] == 0)

    cdef Py_ssize_t read_blosc_blocks(self, DimPlan* dims, const uint8_t* data, Py_ssize_t n,
                                      char* out, Scratch* s, ZcError* err) noexcept nogil:
        """Points in a blosc chunk: decode only the blocks that hold them (each run of
        consecutive ones in one call) into their place in a chunk-sized buffer, and
        copy the points out of it.  NOT_TAKEN when they lie in most of the blocks
        (the caller decodes the chunk whole), or -1 with ``err`` set."""
        cdef Py_ssize_t nbytes, typesize, blocksize, nblocks, k, b, first, off, r, base = 0
        cdef Py_ssize_t touched = 0, last = self.ndim - 1, itemsize = self.chain.itemsize
        cdef uint8_t marks[BLOCKS_MAX]
        cdef int d
        nbytes = self.blosc_blocks(data, n, &typesize, &blocksize, err)
        if nbytes < 0:
            return nbytes
        nblocks = (nbytes - 1) // blocksize + 1
        if nblocks < 2 or nblocks > BLOCKS_MAX or dims[last].count * 4 > nblocks * 3 * 8:
            return NOT_TAKEN            # (many points per block: most blocks are hit)
        for d in range(last):           # (the other dimensions select element 0)
            base += dims[d].src_off[0]
        memset(marks, 0, nblocks)
        for k in range(dims[last].count):
            off = base + dims[last].src_off[k]
            for b in range(off // blocksize, (off + itemsize - 1) // blocksize + 1):
                touched += marks[b] == 0
                marks[b] = 1
        if touched * SPAN_MAX_DEN > nblocks * SPAN_MAX_NUM:
            return NOT_TAKEN
        if ensure(s, 3, <size_t>nbytes) != 0:
            return fail(err, ZC_NOMEM, 0, 0, NULL)
        b = 0
        while b < nblocks:
            if not marks[b]:
                b += 1
                continue
            first = b
            while b < nblocks and marks[b]:
                b += 1
            off = first * blocksize
            r = zc_blosc_decode_range(data, <size_t>n, <size_t>off,
                                      <size_t>(min(nbytes, b * blocksize) - off), s.buf[3] + off, err)
            if r < 0:
                return -1
            if self.chain.swap_unit:
                byteswap(<char*>s.buf[3] + off, r // self.chain.swap_unit, self.chain.swap_unit)
        copy_nd(<const char*>s.buf[3], out, self.ndim, dims, itemsize, self.stream)
        return nbytes

    cdef Py_ssize_t read_blosc_file(self, Py_ssize_t t, DimPlan* dims, char* out, Scratch* s,
                                    ZcError* err) noexcept nogil:
        """A few bytes (at most ZC_PARTIAL_MAX from the first to the last selected
        element) of a blosc chunk in a file, or in a byte range of one: only the
        frame's header, the block's offset and the parts of its streams that hold
        them are read (zc_blosc_file_range).  Returns the bytes decoded, MISSING
        (no file), -1 (header wrong: ``err`` set) or NOT_TAKEN: the caller reads
        and decodes the whole chunk, which also words any error in its streams."""
        cdef Py_ssize_t lo, hi, r
        cdef Py_ssize_t lo_d[PLAN_MAX_DIMS]
        cdef int64_t base = 0, size
        cdef bint kept = self.src_fd[t] >= 0     # a shard's inner chunk, in a file held open
        cdef int64_t ident[IDENT_WORDS]
        cdef int fd, error
        selected_span(dims, self.ndim, self.chain.itemsize, lo_d, &lo, &hi)
        if hi - lo > ZC_PARTIAL_MAX:
            return NOT_TAKEN
        if kept:
            fd = self.src_fd[t]
            base = self.src_offset[t]
            size = <int64_t>self.src_len[t]
        else:
            # (the size: a truncated file is an error)
            fd = open_regular(self.src_path[t], ident, &error)
            if fd < 0:
                return MISSING if fd == -1 else NOT_TAKEN
            size = ident[2]
        r = NOT_TAKEN
        if ensure(s, 3, <size_t>(hi - lo)) == 0:
            r = zc_blosc_file_range(fd, base, size, <size_t>self.chain.chunk_nbytes, <size_t>lo,
                                    <size_t>(hi - lo), s.buf[3], err)
            if r == 0:
                r = NOT_TAKEN
        if not kept:
            close_file(fd)
        if r == hi - lo:
            self.copy_span(dims, lo_d, <char*>s.buf[3], r, out)
        return r

    cdef Py_ssize_t read_zstd_prefix(self, DimPlan* dims, const uint8_t* data, Py_ssize_t n,
                                     char* out, Scratch* s, ZcError* err) noexcept nogil:
        """Part of a zstd chunk: decode only up to the last selected element (a
        small read near the start of a large chunk stops early).  Returns the bytes
        decoded, NOT_TAKEN when the selection reaches far into the chunk or the
        frame is not one that can stop early, or -1 with ``err`` set."""
        cdef Py_ssize_t lo, hi, r
        cdef Py_ssize_t lo_d[PLAN_MAX_DIMS]
        selected_span(dims, self.ndim, self.chain.itemsize, lo_d, &lo, &hi)
        if hi * SPAN_MAX_DEN > self.chain.chunk_nbytes * SPAN_MAX_NUM:
            return NOT_TAKEN
        r = zc_zstd_decoded_size(data, <size_t>n, err)
        if r == -1:
            return -1
        if r != self.chain.chunk_nbytes:
            return NOT_TAKEN             # (the whole decode names a wrong size)
        if ensure(s, 3, <size_t>hi) != 0:
            return fail(err, ZC_NOMEM, 0, 0, NULL)
        if s.dctx == NULL:
            s.dctx = zc_zstd_dctx_new()
            if s.dctx == NULL:
                return fail(err, ZC_NOMEM, 0, 0, NULL)
        r = zc_zstd_decode_prefix(s.dctx, data, <size_t>n, s.buf[3], <size_t>hi, err)
        if r == -2:
            return NOT_TAKEN
        if r < 0:
            return -1
        memset(lo_d, 0, sizeof(lo_d))    # the decoded bytes start at the chunk's start
        self.copy_span(dims, lo_d, <char*>s.buf[3], r, out)
        return r

    cdef void copy_span(self, DimPlan* dims, const Py_ssize_t* lo_d, char* span, Py_ssize_t n,
                        char* out) noexcept nogil:
        """Copy the selection out of the decoded bytes starting at the chunk's byte
        sum(lo_d) (see selected_span)."""
        cdef int d
        cdef Py_ssize_t k
        for d in range(self.ndim):      # offsets into the span
            for k in range(dims[d].count):
                dims[d].src_off[k] -= lo_d[d]
        if self.chain.swap_unit:
            byteswap(span, n // self.chain.swap_unit, self.chain.swap_unit)
        copy_nd(<const char*>span, out, self.ndim, dims, self.chain.itemsize, self.stream)


cdef class BasicReader:
    """Reads basic selections (integers and slices) of an array stored as plain chunk
    files in one native call: plan, output, chunk paths and the batch are built
    here, and a read small enough for one thread runs here too, so a call holds
    the GIL for a few microseconds (other Python threads read meanwhile).

    ``head``/``separator``: chunk (i, j, ...) is the file head + b"i" + separator +
    b"j" ...; ``run_batch(batch, ntasks, work_bytes)`` runs a batch worth more
    threads (zarrc.engine.run_batch); ``raise_error(batch, coords)`` raises the
    error of a failed batch, naming the chunk.

    Shards of a rectilinear grid: ``shard_starts`` per dimension None (``shard_shape``
    along it) or the inner chunk each shard starts at, then the end (int64).

    A rectilinear grid (unsharded): ``bounds`` per dimension None (regular: the
    length in ``chunks``) or the cumulative chunk edges from 0 (int64), searched by
    the planner; ``classes`` each chunk's edge as a class number (equal edges, equal
    numbers); ``chain_of(coords)`` the Chain of chunk ``coords``' shape, asked once
    per shape.  One ReadBatch runs every shape's tasks (_Batch.set_shapes).
    """

    cdef Chain chain
    cdef tuple shape
    cdef tuple chunks
    cdef object dtype
    cdef bytes fill, head, separator
    cdef Py_ssize_t parallel_min_bytes
    cdef object run_batch, raise_error
    # sharded (one level): inner chunks per shard, per dimension; the shard grid's
    # shape; decoded indexes by linear shard number, each after the identity of the
    # file it was read from (bytes: int64 st_dev, st_ino, st_size, mtime_ns, then
    # uint64 offset, length per inner chunk); index_of(shard coords, fd, size) reads
    # one from an open shard file (see setup_sharded); damaged(shard coords, entry,
    # fd, size) raises the error of a damaged index entry an inner chunk read needs
    cdef bint sharded
    cdef Py_ssize_t cps[PLAN_MAX_DIMS], grid[PLAN_MAX_DIMS]
    # a rectilinear grid's shards: per dimension the inner chunk each shard starts
    # at, then the end (NULL: cps), their count; the arrays behind them
    cdef const int64_t* sst[PLAN_MAX_DIMS]
    cdef Py_ssize_t nsst[PLAN_MAX_DIMS]
    cdef tuple shard_arrays
    cdef dict indexes
    cdef object index_of, damaged
    cdef Py_ssize_t max_open     # the most shard files one read holds open
    # a rectilinear grid: per dimension its boundaries (NULL: regular) and each
    # chunk's class, the classes' count; the arrays behind them; chains by shape key
    cdef bint rect
    cdef const int64_t* bnd[PLAN_MAX_DIMS]
    cdef Py_ssize_t nbnd[PLAN_MAX_DIMS]
    cdef const int64_t* cls[PLAN_MAX_DIMS]
    cdef Py_ssize_t ncls[PLAN_MAX_DIMS]
    cdef tuple grid_arrays
    cdef dict chains
    cdef object chain_of

    def __init__(self, Chain chain, tuple shape, tuple chunks, dtype, bytes fill, bytes head,
                 bytes separator, Py_ssize_t parallel_min_bytes, run_batch, raise_error,
                 tuple shard_shape=None, dict indexes=None, index_of=None, Py_ssize_t max_open=64,
                 damaged=None, tuple bounds=None, tuple classes=None, chain_of=None, tuple shard_starts=None):
        cdef Py_ssize_t d
        cdef const int64_t[::1] bv
        cdef const int64_t[::1] cv
        self.rect = bounds is not None
        if self.rect:
            if (shard_shape is not None or len(bounds) != len(shape) or classes is None
                    or len(classes) != len(shape) or chain_of is None or len(shape) > PLAN_MAX_DIMS):
                raise ValueError("a rectilinear reader needs bounds, classes, chain_of; no shards")
            self.grid_arrays = (bounds, classes)
            self.chains = {}
            self.chain_of = chain_of
            for d in range(len(shape)):
                self.bnd[d] = self.cls[d] = NULL
                self.ncls[d] = 1
                if bounds[d] is None:
                    continue
                bv = bounds[d]
                cv = classes[d]
                if bv.shape[0] < 2 or bv[0] != 0 or bv[bv.shape[0] - 1] < shape[d] or cv.shape[0] != bv.shape[0] - 1:
                    raise ValueError(f"chunk boundaries of dimension {d} do not cover {shape[d]}")
                self.bnd[d] = &bv[0]
                self.nbnd[d] = bv.shape[0]
                self.cls[d] = &cv[0]
                self.ncls[d] = int(np.max(classes[d])) + 1 if cv.shape[0] else 1
        self.sharded = shard_shape is not None
        if self.sharded:
            if len(shard_shape) != len(shape) or indexes is None or index_of is None:
                raise ValueError("a sharded reader needs the shard shape, the indexes, index_of")
            self.shard_arrays = shard_starts
            for d in range(len(shape)):
                self.cps[d] = shard_shape[d] // chunks[d]
                self.grid[d] = -(-shape[d] // shard_shape[d])
                self.sst[d] = NULL
                if shard_starts is not None and shard_starts[d] is not None:
                    bv = shard_starts[d]
                    if bv.shape[0] < 2 or bv[0] != 0 or bv[bv.shape[0] - 1] * chunks[d] < shape[d]:
                        raise ValueError(f"shard starts of dimension {d} do not cover {shape[d]}")
                    self.sst[d] = &bv[0]
                    self.nsst[d] = bv.shape[0]
                    self.grid[d] = bv.shape[0] - 1
            self.indexes = indexes
            self.index_of = index_of
            self.damaged = damaged
            if not 1 <= max_open <= MAX_OPEN_LIMIT:
                raise ValueError(f"max_open must be 1 to {MAX_OPEN_LIMIT}, not {max_open}")
            self.max_open = max_open
        self.chain = chain
        self.shape = shape
        self.chunks = chunks
        self.dtype = dtype
        self.fill = fill
        self.head = head
        self.separator = separator
        self.parallel_min_bytes = parallel_min_bytes
        self.run_batch = run_batch
        self.raise_error = raise_error

    def read(self, selection, out=None):
        """``array[selection]`` as a new numpy array, or into ``out`` (a writable numpy
        array of the selection's shape and the array's dtype, any strides; returned);
        None if ``selection`` is not made of integers and slices with positive steps
        (or an integer is out of bounds: the general path words the error), if it
        touches more than ``max_open`` shards (the general path reads them a group at
        a time), or if ``out`` is not of the selection's shape and dtype."""
        cdef Plan plan
        cdef ReadBatch batch
        cdef Py_ssize_t d, t, ntasks, work, nbytes = self.chain.itemsize
        cdef bint fresh = out is None
        cdef bint split
        if not plan_selection(selection, self.shape, self.chunks, &plan,
                              <const int64_t**>self.bnd if self.rect else NULL, self.nbnd):
            return None
        try:
            out_shape = []
            for d in range(plan.ndim):
                if not plan.dropped[d]:
                    out_shape.append(plan.count[d])
                    nbytes *= plan.count[d]
            if fresh:
                out = new_output(tuple(out_shape), self.dtype, nbytes)
            elif out.shape != tuple(out_shape) or out.dtype != self.dtype:
                return None
            if nbytes == 0:
                return out
            ntasks = plan.ntasks
            out_strides = iter(out.strides)
            strides = tuple([0 if plan.dropped[d] else next(out_strides) for d in range(plan.ndim)])
            if self.rect:
                batch = runner = self.setup_rect(&plan, out, strides)
            else:
                batch = runner = ReadBatch.__new__(ReadBatch)
                if self.sharded:
                    if not self.setup_sharded(batch, &plan, out, strides):
                        return None        # more shards than files to hold open at once
                else:
                    batch.setup_plan(self.chain, &plan, out, strides, self.fill, self.head,
                                     self.separator)
        finally:
            plan_free(&plan)           # (nothing left to free once the batch owns it)
        # uncompressed chunks: only the selected bytes are read and copied
        work = batch.chunk_bytes() if self.chain.n else nbytes
        add_calls(1)
        try:
            # (one large blosc chunk: its blocks may be shared, see ReadBatch.can_split)
            split = ntasks == 1 and runner.can_split(2)
            if fresh and ntasks == 1 and nbytes >= PREFAULT_MIN_BYTES and nbytes < STREAM_MIN:
                batch = runner         # (one task: one batch, whose faults would all be in a row)
                with nogil:
                    prefault(<char*>batch.arr.buf, <size_t>nbytes)
            if not split and (ntasks == 1 or work < 2 * self.parallel_min_bytes):
                runner.run()           # (run_batch would give it one thread too)
            else:
                self.run_batch(runner, ntasks, work)
        finally:
            add_calls(-1)
            runner.close_files()
        for t in range(batch.ntasks):
            if batch.status[t] < 0:       # (coords: of the inner chunks when sharded)
                self.raise_error(batch, int64_array(batch.plan.coords, batch.ntasks, batch.ndim))
        return out

    cdef ReadBatch setup_rect(self, Plan* plan, out, tuple strides):
        """The batch of a rectilinear grid's plan (its buffers then belong to the
        batch), each task's chunk run with its shape's chain (chain_of, once per
        shape): one ReadBatch whatever the shapes (set_shapes)."""
        cdef Py_ssize_t t, d, ndim = plan.ndim, ntasks = plan.ntasks
        cdef int64_t k
        cdef bint uniform = True
        cdef int64_t[::1] kv
        cdef ReadBatch batch = ReadBatch.__new__(ReadBatch)
        keys = np.empty(ntasks, np.int64)
        kv = keys
        for t in range(ntasks):
            k = 0
            for d in range(ndim):
                if self.cls[d] != NULL:
                    k = k * self.ncls[d] + self.cls[d][plan.coords[t * ndim + d]]
            kv[t] = k
            uniform = uniform and k == kv[0]
        batch.setup_plan(self.shape_chain(plan.coords, ndim), plan, out, strides, self.fill, self.head,
                         self.separator)
        if not uniform:
            _, first, view_of = np.unique(keys, return_index=True, return_inverse=True)
            chains = []
            for t in first.tolist():
                chains.append(self.shape_chain(batch.plan.coords + t * ndim, ndim))
            batch.set_shapes(view_of.astype(np.int64, copy=False).reshape(-1), chains)
        return batch

    cdef Chain shape_chain(self, const int64_t* coords, Py_ssize_t ndim):
        """The chain of the chunk at ``coords``: of its shape (chain_of, once)."""
        cdef Py_ssize_t d
        cdef int64_t k = 0
        for d in range(ndim):
            if self.cls[d] != NULL:
                k = k * self.ncls[d] + self.cls[d][coords[d]]
        chain = self.chains.get(k)
        if chain is None:
            chain = self.chain_of(tuple([coords[d] for d in range(ndim)]))
            self.chains[k] = chain
        return <Chain?>chain

    cdef bint setup_sharded(self, ReadBatch batch, Plan* plan, out, tuple strides) except -1:
        """Open each shard the plan touches once, locate its inner chunks through the
        shard's index and set the batch up to read their byte ranges from that open
        file, so that the index and every inner chunk come from one version of the
        shard (shards are replaced whole, by rename).  A cached index is used only
        while the open file is the one it was read from (device, inode, size,
        mtime: one fstat per shard); else ``index_of(shard coords, fd, size)`` reads
        it from the descriptor.  False, with nothing set up, if the plan touches
        more than ``max_open`` shards.  An inner chunk whose index entry is damaged
        (SHARD_DAMAGED) is not read: ``damaged(shard coords, entry, fd, size)``
        raises its error before anything is read."""
        cdef Py_ssize_t t, d, i, ndim = plan.ndim, ntasks = plan.ntasks, sid, prev = -1
        cdef Py_ssize_t nslots = 0, flat, nchunks, width
        cdef const uint64_t* entry
        cdef bytes index
        cdef list indexes = []
        # per shard touched (at most max_open): its number in the shard grid, its
        # first task, the errno of its open, its file's identity (see open_regular)
        cdef Py_ssize_t slot_sid[MAX_OPEN_LIMIT + 1]
        cdef Py_ssize_t first[MAX_OPEN_LIMIT + 1]
        cdef Py_ssize_t slot_n[MAX_OPEN_LIMIT + 1]     # (its index entries)
        cdef int errnos[MAX_OPEN_LIMIT + 1]
        cdef int64_t ident[MAX_OPEN_LIMIT + 1][IDENT_WORDS]
        # per task: its shard's grid coordinates, (offset, length), its shard's slot
        cdef int64_t* block = <int64_t*>malloc(max(1, ntasks * (ndim + 3)) * sizeof(int64_t))
        cdef int64_t* shards = block
        cdef int64_t* ranges = block + ntasks * ndim
        cdef int64_t* slot_of = ranges + 2 * ntasks
        cdef char* paths = NULL
        try:
            if block == NULL:
                raise MemoryError()
            # each task's shard, its slot among the shards touched, its chunk in it
            for t in range(ntasks):
                sid = shard_place(plan.coords + t * ndim, ndim, self.cps, self.grid, self.sst, self.nsst,
                                  shards + t * ndim, &flat, &nchunks)
                ranges[2 * t + 1] = flat
                if sid != prev:
                    prev = sid
                    i = 0
                    while i < nslots and slot_sid[i] != sid:
                        i += 1
                    if i == nslots:
                        if nslots == self.max_open:
                            return False
                        slot_sid[i] = sid
                        slot_n[i] = nchunks
                        first[i] = t
                        nslots += 1
                slot_of[t] = i
            # open and fstat every shard once, without the GIL
            width = len(self.head) + 21 * max(1, ndim)
            paths = <char*>malloc(nslots * width)
            batch.fds = <int*>malloc(nslots * sizeof(int))   # the batch closes them (close_files)
            if paths == NULL or batch.fds == NULL:
                raise MemoryError()
            for i in range(nslots):
                batch.fds[i] = -1
                write_path(paths + i * width, self.head, self.separator, shards + first[i] * ndim, ndim)
            batch.nfds = nslots
            with nogil:
                for i in range(nslots):
                    # (-1: no shard, or it failed: errnos[i] set; see open_regular)
                    batch.fds[i] = max(-1, open_regular(paths + i * width, ident[i], &errnos[i]))
            for i in range(nslots):
                if batch.fds[i] < 0:
                    if errnos[i] != 0:
                        raise OSError(errnos[i], strerror(errnos[i]).decode(errors="replace"),
                                      (paths + i * width).decode(errors="replace"))
                    indexes.append(b"")        # no shard: its inner chunks are missing
                    continue
                # a cached index: the identity of the file it was read from, then the index
                known = self.indexes.get(slot_sid[i])
                if known is not None and memcmp(PyBytes_AS_STRING(known), ident[i], sizeof(ident[i])) == 0:
                    indexes.append(known)
                    continue
                index = self.index_of(tuple([shards[first[i] * ndim + d] for d in range(ndim)]),
                                      batch.fds[i], ident[i][2])
                if PyBytes_GET_SIZE(index) != SHARD_ENTRY_BYTES * slot_n[i]:
                    raise ValueError(f"shard index of {len(index)} bytes for {slot_n[i]} chunks")
                known = PyBytes_FromStringAndSize(<const char*>ident[i], sizeof(ident[i])) + index
                self.indexes[slot_sid[i]] = known
                indexes.append(known)
            for t in range(ntasks):
                index = <bytes>indexes[slot_of[t]]
                ranges[2 * t] = -1
                if PyBytes_GET_SIZE(index):
                    entry = <const uint64_t*>(PyBytes_AS_STRING(index) + sizeof(ident[0])) + 2 * ranges[2 * t + 1]
                    if entry[0] == SHARD_DAMAGED:
                        i = slot_of[t]
                        if self.damaged is not None:
                            self.damaged(tuple([shards[t * ndim + d] for d in range(ndim)]),
                                         ranges[2 * t + 1], batch.fds[i], ident[i][2])
                        raise ValueError(f"inner chunk {ranges[2 * t + 1]} of a shard: damaged index entry")
                    if entry[0] != SHARD_EMPTY:       # the chunk is missing
                        ranges[2 * t] = <int64_t>entry[0]
                        ranges[2 * t + 1] = <int64_t>entry[1]
            batch.setup_plan(self.chain, plan, out, strides, self.fill, self.head, self.separator,
                             slot_of, ranges)
            return True
        finally:
            free(block)
            free(paths)
