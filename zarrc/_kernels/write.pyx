# cython: language_level=3, freethreading_compatible=True, boundscheck=False, wraparound=False, cdivision=True, initializedcheck=False
"""Writes: the fused per-chunk write worker (gather -> encode -> store), run over a
batch of chunks without the GIL (:class:`WriteBatch`), and shards assembled or
written straight from a batch's encoded chunks.  Local files are written
atomically through chunk_files.pxd (a file with no name, or a temporary file,
then its name).
"""

from cpython.bytes cimport PyBytes_AS_STRING, PyBytes_FromStringAndSize, PyBytes_GET_SIZE
from libc.stdint cimport int64_t, uint8_t
from libc.stdlib cimport free, malloc, realloc
from libc.string cimport memcpy

from zarrc._kernels.batch cimport MISSING, _Batch, raise_task_error, zc_next_task
from zarrc._kernels.chain cimport Chain, Scratch, ensure
from zarrc._kernels.chunk_files cimport delete_file, finish_staged, stage_parts, stage_spliced, write_parts
from zarrc._kernels.copy cimport (DimPlan, all_equal_pattern, byteswap, fill_pattern, gather_nd,
                                  next_position)
from zarrc._kernels.errors cimport ZC_NOMEM, ZcError, fail
from zarrc._kernels.plan cimport PLAN_COL_COUNT, PLAN_COL_IDX, PLAN_COL_STEP, PLAN_MAX_DIMS, PLAN_NCOLS
from zarrc._kernels.shard cimport build_shard, fill_index, part_pointer, shard_index_nbytes

from zarrc._kernels import chunk_files

# the shortest rows of a value worth writing straight from it (each costs the
# kernel a segment of a writev call)
cdef enum:
    ROW_MIN_BYTES = 512

# write outcomes
cdef enum:
    OUT_STORED = 1
    OUT_DELETED = 2
STORED = OUT_STORED
DELETED = OUT_DELETED


cdef inline Py_ssize_t write_file(const char* path, const char* tag, const uint8_t* data,
                                  size_t n, ZcError* err) noexcept nogil:
    """Write data to path atomically (see write_parts)."""
    return write_parts(path, tag, &data, &n, 1, err)


cdef class WriteBatch(_Batch):
    """Gather values into chunks, encode, and store them (or drop chunks that are
    all fill value).

    Arguments as for ReadBatch, with ``value`` (the values to write, any strides,
    0 for broadcast dimensions) in place of ``out``, and ``sources`` giving the
    old chunk for tasks that only partly cover their chunk (bytes, None for
    missing) or, for a local store, ("path", b"/file") for every task: the old
    chunk is read from it when needed and the new one written to it.
    ``temp_tag``: the writer's tag in the names of temporary files (see
    chunk_files.temp_path; default: a new chunk_files.temp_tag()).  ``write_empty``: store chunks even if they are all fill value.
    Two phases, so that an error (e.g. a corrupt old chunk) changes nothing:
    run() encodes every chunk, into memory or, for path tasks, into its file's
    temporary file (one chunk per worker in memory); if no task failed,
    start_commit() and run() again give path tasks' files their names (or delete
    them), else discard() deletes the temporary files.  ``outcome(t)`` is STORED or
    DELETED and, for tasks without a path, ``encoded(t)`` the bytes to store.
    ``commit_now``: when every task overwrites its whole chunk (no old chunk is
    read, so no input can fail), path tasks write their file as soon as they are
    encoded, straight from the encoder's buffer: one phase, no copy kept.
    """

    cdef bytes temp_tag
    cdef const char* temp_tag_ptr
    cdef bint write_empty
    cdef bint committing
    cdef bint commit_now
    cdef int* outcomes
    cdef uint8_t** results
    cdef size_t* result_len
    cdef size_t* result_cap
    cdef uint8_t** spare           # buffers of a spent batch (adopt), taken by the workers
    cdef size_t* spare_cap
    cdef Py_ssize_t nspare
    cdef Py_ssize_t next_spare
    cdef bint spent

    def __cinit__(self):
        self.outcomes = NULL
        self.results = NULL
        self.result_len = NULL
        self.result_cap = NULL
        self.spare = NULL
        self.spare_cap = NULL
        self.nspare = 0
        self.next_spare = 0
        self.spent = False

    def __dealloc__(self):
        cdef Py_ssize_t t
        if self.is_view:                # (its arrays are its parent's)
            return
        if self.results != NULL:
            for t in range(self.ntasks):
                free(self.results[t])
        free(self.results)
        free(self.result_len)
        free(self.result_cap)
        self.free_spare()
        free(self.outcomes)

    cdef void free_spare(self) noexcept:
        cdef Py_ssize_t i
        if self.spare != NULL:
            for i in range(self.nspare):
                free(self.spare[i])
        free(self.spare)
        free(self.spare_cap)
        self.spare = NULL
        self.spare_cap = NULL
        self.nspare = 0

    def __init__(self, Chain chain, table, local, outidx, tasks, value, tuple value_strides,
                 bytes fill, sources, bytes temp_tag=None, bint write_empty=False,
                 bint commit_now=False, tuple shapes=None):
        cdef Py_ssize_t t
        self.setup(chain, table, local, outidx, tasks, value, value_strides, fill, sources, False)
        self.temp_tag = chunk_files.temp_tag() if temp_tag is None else temp_tag
        self.temp_tag_ptr = <const char*>self.temp_tag
        self.write_empty = write_empty
        self.committing = False
        self.commit_now = commit_now
        self.outcomes = <int*>malloc(max(1, self.ntasks) * sizeof(int))
        self.results = <uint8_t**>malloc(max(1, self.ntasks) * sizeof(void*))
        self.result_len = <size_t*>malloc(max(1, self.ntasks) * sizeof(size_t))
        self.result_cap = <size_t*>malloc(max(1, self.ntasks) * sizeof(size_t))
        if not (self.outcomes and self.results and self.result_len and self.result_cap):
            raise MemoryError()
        for t in range(self.ntasks):
            self.outcomes[t] = 0
            self.results[t] = NULL
            self.result_len[t] = 0
            self.result_cap[t] = 0
        if shapes is not None:          # (chunks of several shapes: _Batch.set_shapes)
            self.set_shapes(shapes[0], shapes[1])

    cdef share(self, _Batch parent, Chain chain):
        """A view of ``parent`` (a WriteBatch) with another chunk shape's chain: its
        outcomes and results are the parent's too."""
        cdef WriteBatch p = <WriteBatch?>parent
        _Batch.share(self, parent, chain)
        self.temp_tag, self.temp_tag_ptr = p.temp_tag, p.temp_tag_ptr
        self.write_empty, self.commit_now = p.write_empty, p.commit_now
        self.outcomes, self.results, self.result_len, self.result_cap = (p.outcomes, p.results, p.result_len,
                                                                         p.result_cap)

    def adopt(self, WriteBatch spent):
        """Take the encoded chunks' buffers of ``spent``, a batch whose results are no
        longer needed (its shards written), for this batch's encoder outputs: they are
        reused, not allocated and faulted in again.  ``spent`` can be used no more.
        Call before run()."""
        cdef Py_ssize_t t, n = 0
        if self.view_ptrs != NULL or spent.view_ptrs != NULL:
            raise ValueError("a batch of several chunk shapes adopts no buffers")
        if self.next_spare or self.nspare:
            raise ValueError("this batch has adopted buffers already")
        for t in range(spent.ntasks):
            n += spent.results[t] != NULL
        self.spare = <uint8_t**>malloc(max(1, n) * sizeof(void*))
        self.spare_cap = <size_t*>malloc(max(1, n) * sizeof(size_t))
        if self.spare == NULL or self.spare_cap == NULL:
            self.free_spare()
            raise MemoryError()
        for t in range(spent.ntasks):
            if spent.results[t] != NULL:
                self.spare[self.nspare] = spent.results[t]
                self.spare_cap[self.nspare] = spent.result_cap[t]
                self.nspare += 1
                spent.results[t] = NULL
        spent.spent = True

    cdef void run_task(self, Py_ssize_t t, Scratch* s) noexcept nogil:
        if self.committing:
            self.commit_task(t)
        elif self.view_ptrs != NULL:    # (its chunk shape's view)
            t = self.task_order[t]
            (<WriteBatch>self.view_ptrs[self.view_of[t]]).encode_task(t, s)
        else:
            self.encode_task(t, s)

    cdef void commit_task(self, Py_ssize_t t) noexcept nogil:
        cdef ZcError* err = &self.errs[t]
        if self.src_path[t] == NULL:
            return
        if self.outcomes[t] == OUT_STORED:
            if finish_staged(self.src_path[t], self.temp_tag_ptr, True, err) < 0:
                self.status[t] = -1
        elif self.outcomes[t] == OUT_DELETED:
            if delete_file(self.src_path[t], err) < 0:
                self.status[t] = -1

    cdef bint rows_in_value_order(self, DimPlan* dims) noexcept nogil:
        """Whether a whole (C-order, native byte order) chunk's rows lie in the value as
        contiguous runs of at least ROW_MIN_BYTES (see write_rows)."""
        return (self.chain.c_layout and not self.chain.swap_unit and self.ndim >= 2
                and dims[self.ndim - 1].contiguous
                and self.chain.shape[self.ndim - 1] * self.chain.itemsize >= ROW_MIN_BYTES)

    cdef void write_rows(self, Py_ssize_t t, DimPlan* dims, ZcError* err) noexcept nogil:
        """Store task t's whole uncompressed chunk straight from the value's rows (one
        writev call per 256 rows: no gathered copy), or delete it if every row
        is the fill value (unless write_empty)."""
        cdef Py_ssize_t nrows = 1, k, row_bytes = self.chain.shape[self.ndim - 1] * self.chain.itemsize
        cdef Py_ssize_t idx[PLAN_MAX_DIMS]
        cdef const char* value = <const char*>self.arr.buf + dims[self.ndim - 1].src_off[0]
        cdef const uint8_t** rows
        cdef size_t* lens
        cdef bint empty = not self.write_empty
        cdef int d
        for d in range(self.ndim - 1):
            nrows *= dims[d].count
            idx[d] = 0
        rows = <const uint8_t**>malloc(nrows * sizeof(void*))
        lens = <size_t*>malloc(nrows * sizeof(size_t))
        if rows == NULL or lens == NULL:
            free(rows)
            free(lens)
            fail(err, ZC_NOMEM, 0, 0, NULL)
            self.status[t] = -1
            return
        for k in range(nrows):           # C order over all but the last dimension
            rows[k] = <const uint8_t*>value
            for d in range(self.ndim - 1):
                rows[k] += dims[d].src_off[idx[d]]
            lens[k] = <size_t>row_bytes
            if empty:
                empty = all_equal_pattern(<const char*>rows[k], row_bytes, self.fill_ptr,
                                          self.chain.itemsize)
            next_position(idx, dims, self.ndim - 1)
        if empty:
            self.outcomes[t] = OUT_DELETED
            if delete_file(self.src_path[t], err) < 0:
                self.status[t] = -1
        else:
            self.outcomes[t] = OUT_STORED
            if write_parts(self.src_path[t], self.temp_tag_ptr, rows, lens, nrows, err) < 0:
                self.status[t] = -1
        free(rows)
        free(lens)

    def discard(self):
        """Delete the temporary files of the chunks encoded for a commit that will not
        come (another task failed)."""
        cdef Py_ssize_t t
        cdef ZcError err
        with nogil:
            for t in range(self.ntasks):
                if self.src_path[t] != NULL and self.outcomes[t] == OUT_STORED and not self.commit_now:
                    finish_staged(self.src_path[t], self.temp_tag_ptr, False, &err)
                    self.outcomes[t] = 0

    def start_commit(self):
        """Second phase: write (or delete) the encoded chunks of tasks that have a path.
        Call once every task has been encoded without error, then run() again."""
        self.committing = True
        self.next_task = 0

    cdef const uint8_t* value_run(self, Py_ssize_t t, DimPlan* dims) noexcept nogil:
        """Where the whole (C-layout, not edge) chunk of task t lies in the value as one
        run of bytes, in the chunk's own order: the value's strides are the chunk's in
        every dimension the chunk spans more than once (a 1-d chunk of a contiguous
        value, or chunks that span every later dimension whole); else NULL."""
        cdef Py_ssize_t base = 0, row
        cdef int d
        if not self.chain.c_layout:
            return NULL
        for d in range(self.ndim):
            row = self.tasks[t * self.ndim + d]
            if (self.table[row * PLAN_NCOLS + PLAN_COL_IDX] >= 0
                    or self.table[row * PLAN_NCOLS + PLAN_COL_STEP] != 1
                    or (dims[d].count > 1 and self.chain.strides[d] != self.arr_strides[d])):
                return NULL
            base += dims[d].src_off[0]
        return <const uint8_t*>self.arr.buf + base

    cdef void encode_task(self, Py_ssize_t t, Scratch* s) noexcept nogil:
        cdef DimPlan dims[PLAN_MAX_DIMS]
        cdef ZcError* err = &self.errs[t]
        cdef const uint8_t* data = NULL
        cdef const uint8_t* src = NULL
        cdef const uint8_t* p
        cdef const uint8_t* encoded
        cdef Py_ssize_t n, r, i
        cdef int d, slot
        cdef bint full = self.covers_chunk(t), edge = False
        cdef size_t nbytes
        cdef uint8_t* chunk
        cdef uint8_t* kept
        cdef const char* fill = self.fill_ptr
        if self.build_dims(t, dims, s, True) != 0 or ensure(s, 3, self.chain.chunk_nbytes) != 0:
            fail(err, ZC_NOMEM, 0, 0, NULL)
            self.status[t] = -1
            return
        chunk = s.buf[3]
        for d in range(self.ndim):
            edge = edge or self.table[(self.tasks[t * self.ndim + d]) * PLAN_NCOLS + PLAN_COL_COUNT] < self.chain.shape[d]
        if (full and not edge and self.commit_now and self.src_path[t] != NULL
                and self.chain.n == 0 and self.rows_in_value_order(dims)):
            self.write_rows(t, dims, err)     # uncompressed: from the value's rows to the file
            return
        if full:
            if edge:   # the part of an edge chunk outside the array holds the fill value
                fill_pattern(<char*>chunk, self.chain.nitems, fill, self.chain.itemsize)
        else:
            n = self.fetch(t, &data, s, err)
            if n == MISSING:
                fill_pattern(<char*>chunk, self.chain.nitems, fill, self.chain.itemsize)
            elif n < 0:
                self.status[t] = -1
                return
            else:
                p = self.chain.decode(data, <size_t>n, chunk, s, err)
                if p == NULL:
                    self.status[t] = -1
                    return
                if p != chunk:
                    memcpy(chunk, p, self.chain.chunk_nbytes)
                if self.chain.swap_unit:   # to native order while values are scattered in
                    byteswap(<char*>chunk, self.chain.chunk_nbytes // self.chain.swap_unit,
                             self.chain.swap_unit)
        if full and not edge and not self.chain.swap_unit:
            src = self.value_run(t, dims)     # the chunk as it lies in the value: no gather
        if src == NULL:
            gather_nd(<const char*>self.arr.buf, <char*>chunk, self.ndim, dims, self.chain.itemsize)
            src = chunk
        if not self.write_empty and all_equal_pattern(<const char*>src, self.chain.chunk_nbytes,
                                                      fill, self.chain.itemsize):
            self.outcomes[t] = OUT_DELETED
            if self.commit_now and self.src_path[t] != NULL:
                if delete_file(self.src_path[t], err) < 0:
                    self.status[t] = -1
            return
        if self.chain.swap_unit:
            byteswap(<char*>chunk, self.chain.chunk_nbytes // self.chain.swap_unit,
                     self.chain.swap_unit)
        r = self.chain.encode(src, &encoded, s, err)
        if r < 0:
            self.status[t] = -1
            return
        self.outcomes[t] = OUT_STORED
        if self.commit_now and self.src_path[t] != NULL:
            if write_file(self.src_path[t], self.temp_tag_ptr, encoded, <size_t>r, err) < 0:
                self.status[t] = -1
            return
        if self.src_path[t] != NULL:      # its temporary file now, its name at the commit
            nbytes = <size_t>r
            if stage_parts(self.src_path[t], self.temp_tag_ptr, &encoded, &nbytes, 1, err) < 0:
                self.outcomes[t] = 0
                self.status[t] = -1
            return
        for slot in range(1, 3):
            if encoded == s.buf[slot] and s.buf[slot] != NULL:
                # the encoder's output buffer becomes the result (no copy); the
                # worker's next output goes to a spare buffer, else a new one
                self.results[t] = s.buf[slot]
                self.result_cap[t] = s.cap[slot]
                self.result_len[t] = <size_t>r
                if <size_t>r < s.cap[slot] // 2:     # (well compressed: hold what it needs)
                    kept = <uint8_t*>realloc(s.buf[slot], r if r > 0 else 1)
                    if kept != NULL:
                        self.results[t] = kept
                        self.result_cap[t] = <size_t>(r if r > 0 else 1)
                s.buf[slot] = NULL
                s.cap[slot] = 0
                i = zc_next_task(&self.next_spare)
                if i < self.nspare:
                    s.buf[slot] = self.spare[i]
                    s.cap[slot] = self.spare_cap[i]
                    self.spare[i] = NULL
                return
        self.results[t] = <uint8_t*>malloc(r if r > 0 else 1)
        if self.results[t] == NULL:
            fail(err, ZC_NOMEM, 0, 0, NULL)
            self.status[t] = -1
            return
        memcpy(self.results[t], encoded, r)
        self.result_len[t] = <size_t>r
        self.result_cap[t] = <size_t>(r if r > 0 else 1)

    def outcome(self, Py_ssize_t t):
        """STORED, DELETED, or 0 (task failed or not run)."""
        return self.outcomes[t]

    cdef int shard_parts(self, const int64_t[::1] task_of_chunk, object old_parts,
                         const uint8_t** ptrs, Py_ssize_t* lens, int64_t* src_offs=NULL) except -1:
        """Inner chunk i of a shard: task ``task_of_chunk[i]``'s result (NULL if that
        chunk was all fill value) or, where it is -1, its old part: ``old_parts[i]``
        of a list, or of ``old_parts`` = (old shard bytes, offsets, lengths) (offset
        -1: none), or none at all (None).  With ``src_offs`` (else -1 each),
        ``old_parts`` may be (file descriptor, offsets, lengths, file size): an old
        part is then left in the file, ``src_offs[i]`` its offset there (``ptrs[i]``
        a marker, not to be read)."""
        cdef Py_ssize_t n = task_of_chunk.shape[0], i, t, blob_len = 0
        cdef const int64_t[::1] offs = None
        cdef const int64_t[::1] sizes = None
        cdef const uint8_t* blob = NULL
        cdef bint in_file = False
        if self.spent:
            raise ValueError("this batch's buffers were adopted by another")
        if src_offs != NULL:
            for i in range(n):
                src_offs[i] = -1
        if type(old_parts) is tuple and type(old_parts[0]) is int:
            if src_offs == NULL:
                raise ValueError("old parts in a file: only for a staged shard")
            in_file = True
            blob = <const uint8_t*>&self.commit_now     # (a marker: the parts stay in the file)
            blob_len = old_parts[3]
            offs = old_parts[1]
            sizes = old_parts[2]
            if offs.shape[0] != n or sizes.shape[0] != n:
                raise ValueError(f"old parts of {offs.shape[0]} inner chunks for {n}")
        elif type(old_parts) is tuple:
            blob = <const uint8_t*>PyBytes_AS_STRING(<bytes>old_parts[0])
            blob_len = PyBytes_GET_SIZE(<bytes>old_parts[0])
            offs = old_parts[1]
            sizes = old_parts[2]
            if offs.shape[0] != n or sizes.shape[0] != n:
                raise ValueError(f"old parts of {offs.shape[0]} inner chunks for {n}")
        elif old_parts is not None and len(old_parts) != n:
            raise ValueError(f"{len(old_parts)} old parts for {n} inner chunks")
        for i in range(n):
            t = task_of_chunk[i]
            if t < 0 and blob != NULL:
                if offs[i] < 0:
                    ptrs[i] = NULL
                    lens[i] = 0
                elif sizes[i] < 0 or offs[i] + sizes[i] > blob_len:
                    raise ValueError(f"inner chunk {i}: range ({offs[i]}, {sizes[i]}) outside "
                                     f"{blob_len} bytes")
                elif in_file:
                    ptrs[i] = blob
                    lens[i] = sizes[i]
                    src_offs[i] = offs[i]
                else:
                    ptrs[i] = blob + offs[i]
                    lens[i] = sizes[i]
            elif t < 0 and old_parts is None:
                ptrs[i] = NULL
                lens[i] = 0
            elif t < 0:
                part_pointer(old_parts[i], i, &ptrs[i], &lens[i])
            elif t >= self.ntasks:
                raise ValueError(f"inner chunk {i}: task {t} out of range")
            elif self.outcomes[t] == OUT_STORED:
                ptrs[i] = self.results[t]
                lens[i] = <Py_ssize_t>self.result_len[t]
            else:
                ptrs[i] = NULL
                lens[i] = 0
        return 0

    def shard(self, const int64_t[::1] task_of_chunk, object old_parts, bint index_at_start,
              bint index_big_endian, bint index_crc):
        """Assemble a shard (see shard.assemble_shard) straight from this batch's
        encoded chunks: inner chunk i is task ``task_of_chunk[i]``'s result (empty if
        that task's chunk was all fill value) or, where it is -1, ``old_parts[i]``
        (None, or (bytes, offset, length) of the old shard)."""
        cdef Py_ssize_t n = task_of_chunk.shape[0]
        cdef const uint8_t** ptrs = <const uint8_t**>malloc(max(n, 1) * sizeof(void*))
        cdef Py_ssize_t* lens = <Py_ssize_t*>malloc(max(n, 1) * sizeof(Py_ssize_t))
        try:
            if ptrs == NULL or lens == NULL:
                raise MemoryError()
            self.shard_parts(task_of_chunk, old_parts, ptrs, lens)
            return build_shard(ptrs, lens, n, index_at_start, index_big_endian, index_crc)
        finally:
            free(ptrs)
            free(lens)

    def write_shard(self, bytes path, bytes temp_tag, const int64_t[::1] task_of_chunk,
                    object old_parts, bint index_at_start, bint index_big_endian, bint index_crc,
                    bint stage=False):
        """Like shard(), but write the shard straight to the file ``path`` (atomically:
        temporary file, then rename) without building it in memory.  Returns False,
        writing nothing, if every inner chunk is empty.  ``stage``: only its temporary
        file is written (chunk_files.finish then names or deletes it); staged, the old
        parts may be (file descriptor, offsets, lengths, file size) of the old shard
        file: those inner chunks are copied file to file (copy_file_range, else in
        blocks of a few MiB), never read into memory whole."""
        cdef Py_ssize_t n = task_of_chunk.shape[0], i, r
        cdef Py_ssize_t index_nbytes = shard_index_nbytes(n, index_crc)
        cdef const uint8_t** ptrs = <const uint8_t**>malloc((n + 1) * sizeof(void*))
        cdef Py_ssize_t* lens = <Py_ssize_t*>malloc((n + 1) * sizeof(Py_ssize_t))
        cdef size_t* sizes = <size_t*>malloc((n + 1) * sizeof(size_t))
        cdef uint8_t* index = <uint8_t*>malloc(index_nbytes)
        cdef int64_t* src_offs = <int64_t*>malloc((n + 1) * sizeof(int64_t))
        cdef bint spliced = stage and type(old_parts) is tuple and type(old_parts[0]) is int
        cdef int src_fd = old_parts[0] if spliced else -1
        cdef const char* cpath = path
        cdef const char* ctag = temp_tag
        cdef ZcError err
        cdef bint any_data = False
        try:
            if ptrs == NULL or lens == NULL or sizes == NULL or index == NULL or src_offs == NULL:
                raise MemoryError()
            # the index goes first or last: chunks in ptrs[1..n] or ptrs[0..n-1]
            self.shard_parts(task_of_chunk, old_parts, ptrs + (1 if index_at_start else 0),
                             lens + (1 if index_at_start else 0),
                             (src_offs + (1 if index_at_start else 0)) if spliced else NULL)
            for i in range(n):
                any_data = any_data or ptrs[i + (1 if index_at_start else 0)] != NULL
            if not any_data:
                return False
            with nogil:
                if index_at_start:
                    fill_index(ptrs + 1, lens + 1, n, index_nbytes, index_big_endian, index_crc, index)
                    ptrs[0] = index
                    lens[0] = index_nbytes
                else:
                    fill_index(ptrs, lens, n, 0, index_big_endian, index_crc, index)
                    ptrs[n] = index
                    lens[n] = index_nbytes
                for i in range(n + 1):
                    sizes[i] = <size_t>lens[i]
                if spliced:
                    src_offs[0 if index_at_start else n] = -1
                    r = stage_spliced(cpath, ctag, ptrs, sizes, src_offs, n + 1, src_fd, &err)
                elif stage:
                    r = stage_parts(cpath, ctag, ptrs, sizes, n + 1, &err)
                else:
                    r = write_parts(cpath, ctag, ptrs, sizes, n + 1, &err)
            if r < 0:
                raise_task_error(&err, f"shard {path.decode(errors='replace')}: ")
            return True
        finally:
            free(ptrs)
            free(lens)
            free(sizes)
            free(index)
            free(src_offs)

    def encoded(self, Py_ssize_t t):
        """The encoded chunk of a STORED task that had no path (bytes), else None."""
        if self.spent:
            raise ValueError("this batch's buffers were adopted by another")
        if self.results[t] == NULL:
            return None
        return PyBytes_FromStringAndSize(<const char*>self.results[t], self.result_len[t])
