# cython: language_level=3, boundscheck=False, wraparound=False, cdivision=True, initializedcheck=False
"""The fused per-chunk workers: fetch -> decode -> scatter (read) and
gather -> encode -> store (write), run over a batch of chunks without the GIL.

A :class:`Chain` is a codec chain prepared for one chunk shape and data type.
A :class:`ReadBatch` / :class:`WriteBatch` holds every chunk task of one call;
each worker thread calls ``run()``, which takes tasks from a shared atomic
counter until none are left, so Python runs once per worker per call, never
per chunk.  Local files are read and written here directly (pread; temporary
file + rename); other stores hand over bytes fetched beforehand.  A
:class:`BasicReader` serves int/slice reads of plain chunk (or shard) files in
one native call, from the selection to the filled output.
"""

from cpython.buffer cimport PyBUF_ANY_CONTIGUOUS, PyBUF_STRIDES, PyBUF_WRITABLE, PyBuffer_Release, PyObject_GetBuffer
from cpython.bytes cimport PyBytes_AS_STRING, PyBytes_FromStringAndSize, PyBytes_GET_SIZE
from libc.errno cimport EEXIST, EINTR, EINVAL, EIO, EISDIR, ENOENT, ENOMEM, ENOTDIR, EOPNOTSUPP, errno
from libc.stddef cimport ptrdiff_t
from libc.stdint cimport int64_t, uint8_t, uint32_t, uint64_t
from libc.stdio cimport rename, snprintf
from libc.stdlib cimport calloc, free, malloc, realloc
from libc.string cimport memcmp, memcpy, memset, strerror, strlen, strrchr
from posix.time cimport timespec

from zarrc._kernels.blosc cimport (ZC_PARTIAL_MAX, zc_blosc_compress, zc_blosc_decode_into,
                                   zc_blosc_decode_range, zc_blosc_decode_rows, zc_blosc_decoded_size,
                                   zc_blosc_file_range, zc_rows)
from zarrc._kernels.crc32c cimport zc_crc32c_update
from zarrc._kernels.deflate cimport (ZC_GZIP, ZC_ZLIB, Deflater, zc_deflate, zc_deflate_bound,
                                     zc_deflater_free, zc_inflate_into)
from zarrc._kernels.errors cimport (ZC_CHECKSUM, ZC_CORRUPT, ZC_IO, ZC_NOMEM, ZC_PARAM, ZC_SIZE,
                                    ZC_TRUNCATED, ZC_UNSUPPORTED, ZcError, describe, fail, load_le32)
from zarrc._kernels.zstd cimport (ZSTD_CCtx, ZSTD_DCtx, zc_zstd_bound, zc_zstd_cctx_free,
                                  zc_zstd_cctx_new, zc_zstd_compress, zc_zstd_dctx_free,
                                  zc_zstd_dctx_new, zc_zstd_decode_into, zc_zstd_decode_prefix,
                                  zc_zstd_decoded_size)
from zarrc._kernels.copy cimport (DimPlan, all_equal_pattern, byteswap, copy_nd, fill_nd,
                                  fill_pattern, gather_nd, next_position, prefault, stream_fence)
from zarrc._kernels.plan cimport PLAN_MAX_DIMS, PLAN_NCOLS, Plan, int64_array, plan_free, plan_selection
from zarrc._kernels.shard cimport build_shard, fill_index, part_pointer
from zarrc._kernels.slabs cimport output_array

import sys

import numpy as np

cdef extern from "<fcntl.h>" nogil:
    int c_open "open"(const char* path, int flags, ...)
    int O_RDONLY, O_WRONLY, O_CREAT, O_EXCL, O_CLOEXEC

cdef extern from "<unistd.h>" nogil:
    ssize_t pread(int fd, void* buf, size_t count, long offset)
    ssize_t c_write "write"(int fd, const void* buf, size_t count)
    int c_close "close"(int fd)
    int unlink(const char* path)

cdef extern from "<sys/uio.h>" nogil:
    struct iovec:
        void* iov_base
        size_t iov_len
    ssize_t writev(int fd, const iovec* iov, int iovcnt)

cdef extern from "<sys/stat.h>" nogil:
    struct stat:
        long st_size
        unsigned int st_mode
        unsigned long st_dev
        unsigned long st_ino
        timespec st_mtim
    int fstat(int fd, stat* buf)
    int mkdir(const char* path, unsigned int mode)

cdef extern from *:
    """
    static inline Py_ssize_t zc_next_task(Py_ssize_t* counter) {
        return __atomic_fetch_add(counter, 1, __ATOMIC_RELAXED);
    }
    static inline Py_ssize_t zc_add_count(Py_ssize_t* counter, Py_ssize_t delta) {
        return __atomic_add_fetch(counter, delta, __ATOMIC_RELAXED);
    }
    """
    Py_ssize_t zc_next_task(Py_ssize_t* counter) noexcept nogil
    Py_ssize_t zc_add_count(Py_ssize_t* counter, Py_ssize_t delta) noexcept nogil

cdef extern from "src/gil_handoff.h" nogil:
    void zc_gil_pool_thread() noexcept
    void zc_gil_disable() noexcept
    void zc_gil_taken() noexcept
    void zc_gil_released() noexcept
    void zc_gil_wait() noexcept


# ---------------------------------------------------------------- constants

cdef enum:
    MAX_STEPS = 8
    MAX_DIMS = 32

# shard files one BasicReader call may hold open (BasicReader's max_open is at
# most this); a file's identity: device, inode, size, mtime_ns (open_shard)
cdef enum:
    MAX_OPEN_LIMIT = 256
    IDENT_WORDS = 4

cdef enum StepKind:
    BLOSC = 1
    ZSTD = 2
    GZIP = 3
    ZLIB = 4
    CRC32C = 5

# projection table columns (see zarrc.indexing; FULL appended by the engine)
cdef enum:
    C_CHUNK = 0
    C_START = 1
    C_STEP = 2
    C_COUNT = 3
    C_OUT = 4
    C_IDX = 5
    C_FULL = 6

cdef enum:
    MISSING = -2        # chunk absent: read as the fill value
    NOT_TAKEN = -3      # a partial decode declined: decode the whole chunk

# parts written by one writev call (IOV_MAX is 1024 on Linux), and the shortest
# rows of a value worth writing straight from it (each costs the kernel a segment)
cdef enum:
    ROWS_PER_CALL = 256
    ROW_MIN_BYTES = 512

# an uncompressed chunk's file is read in slabs when that skips more than this many
# bytes per slab (about what a pread call costs beyond its copying)
cdef enum:
    SLAB_READ_COST = 16384

# a blosc chunk is decoded whole when the selection spans more than 3/4 of its
# blocks, a zstd chunk when it reaches past 3/4 of the chunk
cdef enum:
    SPAN_MAX_NUM = 3
    SPAN_MAX_DEN = 4

# write outcomes
cdef enum:
    OUT_STORED = 1
    OUT_DELETED = 2
STORED = OUT_STORED
DELETED = OUT_DELETED


cdef struct Step:
    int kind
    int clevel
    int shuffle
    size_t typesize
    size_t blocksize
    int level
    bint checksum
    char cname[16]
    bint ranges          # blosc: its frames are read a few bytes at a time (LZ4, no bit shuffle)


# ---------------------------------------------------------------- per-worker scratch

cdef struct Scratch:
    uint8_t* buf[4]      # 0: file bytes, 1-2: codec ping-pong, 3: chunk buffer
    size_t cap[4]
    ZSTD_DCtx* dctx
    ZSTD_CCtx* cctx
    Deflater deflater
    Py_ssize_t* offs
    size_t offs_cap


cdef int ensure(Scratch* s, int slot, size_t n) noexcept nogil:
    cdef uint8_t* p
    if s.cap[slot] >= n and s.buf[slot] != NULL:
        return 0
    p = <uint8_t*>realloc(s.buf[slot], n if n > 0 else 1)
    if p == NULL:
        return -1
    s.buf[slot] = p
    s.cap[slot] = n
    return 0


cdef extern from "<pthread.h>" nogil:
    ctypedef int pthread_key_t       # (opaque here: only passed by address)
    int pthread_key_create(pthread_key_t* key, void (*destructor)(void*))
    void* pthread_getspecific(pthread_key_t key)
    int pthread_setspecific(pthread_key_t key, const void* value)


# Scratch buffers outlive a batch, one set per thread: small reads then reuse warm
# memory instead of mapping and faulting in fresh pages (and unmapping them, which
# stalls every other thread of the process) on each call.  Buffers larger than
# KEEP_BYTES are released when a batch ends; a thread's set is freed when it exits.
DEF KEEP_BYTES = 16 << 20
cdef pthread_key_t scratch_key
cdef bint scratch_key_ok = False


cdef void scratch_destroy(void* p) noexcept nogil:
    if p != NULL:
        scratch_free(<Scratch*>p)
        free(p)


cdef Scratch* thread_scratch() noexcept nogil:
    """This thread's scratch (NULL if out of memory or thread keys are unavailable)."""
    cdef Scratch* s
    if not scratch_key_ok:
        return NULL
    s = <Scratch*>pthread_getspecific(scratch_key)
    if s == NULL:
        s = <Scratch*>calloc(1, sizeof(Scratch))
        if s != NULL and pthread_setspecific(scratch_key, s) != 0:
            free(s)
            s = NULL
    return s


cdef void scratch_trim(Scratch* s) noexcept nogil:
    cdef int i
    for i in range(4):
        if s.cap[i] > KEEP_BYTES:
            free(s.buf[i])
            s.buf[i] = NULL
            s.cap[i] = 0


scratch_key_ok = pthread_key_create(&scratch_key, scratch_destroy) == 0


cdef void scratch_free(Scratch* s) noexcept nogil:
    cdef int i
    for i in range(4):
        free(s.buf[i])
        s.buf[i] = NULL
    free(s.offs)
    s.offs = NULL
    if s.dctx != NULL:
        zc_zstd_dctx_free(s.dctx)
        s.dctx = NULL
    if s.cctx != NULL:
        zc_zstd_cctx_free(s.cctx)
        s.cctx = NULL
    zc_deflater_free(&s.deflater)


# ---------------------------------------------------------------- files

cdef Py_ssize_t pread_all(int fd, uint8_t* dst, size_t n, int64_t offset, ZcError* err) noexcept nogil:
    """Read up to n bytes at ``offset`` into dst, retrying short reads; the number read
    (less than n only at the end of the file)."""
    cdef size_t done = 0
    cdef ssize_t r
    while done < n:
        r = pread(fd, dst + done, n - done, <long>(offset + done))
        if r < 0:
            if errno == EINTR:
                continue
            return fail(err, ZC_IO, 0, errno, "read")
        if r == 0:
            break
        done += <size_t>r
    return <Py_ssize_t>done


cdef Py_ssize_t read_file(const char* path, Scratch* s, ZcError* err) noexcept nogil:
    """Read a whole file into scratch slot 0.  MISSING if the file does not exist."""
    cdef int fd = c_open(path, O_RDONLY | O_CLOEXEC)
    cdef stat st
    cdef size_t size
    cdef Py_ssize_t r
    if fd < 0:
        if errno == ENOENT or errno == ENOTDIR:
            return MISSING
        return fail(err, ZC_IO, 0, errno, "open")
    if fstat(fd, &st) != 0:
        c_close(fd)
        return fail(err, ZC_IO, 0, errno, "fstat")
    size = <size_t>st.st_size
    if ensure(s, 0, size) != 0:
        c_close(fd)
        return fail(err, ZC_NOMEM, 0, 0, NULL)
    r = pread_all(fd, s.buf[0], size, 0, err)
    c_close(fd)
    return r


cdef Py_ssize_t read_range(int fd, int64_t offset, size_t length, Scratch* s,
                           ZcError* err) noexcept nogil:
    """``length`` bytes at ``offset`` of an open file (a shard's inner chunk) into
    scratch slot 0; a range that ends past the end of the file is an error."""
    cdef Py_ssize_t r
    if ensure(s, 0, length) != 0:
        return fail(err, ZC_NOMEM, 0, 0, NULL)
    r = pread_all(fd, s.buf[0], length, offset, err)
    if r >= 0 and <size_t>r != length:
        return fail(err, ZC_TRUNCATED, offset + <int64_t>length, offset + r,
                    "byte range past the end of the file")
    return r


cdef Py_ssize_t read_chunk_range(const char* path, size_t size, size_t lo, size_t hi,
                                 uint8_t* dst, ZcError* err) noexcept nogil:
    """Bytes [lo, hi) of an uncompressed chunk's file, which must hold exactly ``size``
    bytes, into ``dst``.  MISSING if there is no such file."""
    cdef Py_ssize_t start = <Py_ssize_t>lo
    return read_chunk_slabs(path, size, &start, 1, hi - lo, dst, err)


cdef int open_chunk_file(const char* path, size_t size, ZcError* err) noexcept nogil:
    """Open an uncompressed chunk's file, which must hold exactly ``size`` bytes: its
    descriptor, MISSING if there is no such file, or -1 with ``err`` set."""
    cdef int fd = c_open(path, O_RDONLY | O_CLOEXEC)
    cdef stat st
    if fd < 0:
        if errno == ENOENT or errno == ENOTDIR:
            return MISSING
        return fail(err, ZC_IO, 0, errno, "open")
    if fstat(fd, &st) != 0:
        c_close(fd)
        return fail(err, ZC_IO, 0, errno, "fstat")
    if (st.st_mode & 0o170000) == 0o040000:
        c_close(fd)
        return fail(err, ZC_IO, 0, EISDIR, "read")
    if <size_t>st.st_size != size:         # (a FIFO or device: st_size 0, as read_file sees it)
        c_close(fd)
        return fail(err, ZC_SIZE, size, st.st_size, "chunk holds")
    return fd


cdef Py_ssize_t read_chunk_slabs(const char* path, size_t size, const Py_ssize_t* starts,
                                 Py_ssize_t nslabs, size_t n, uint8_t* dst,
                                 ZcError* err) noexcept nogil:
    """``nslabs`` byte ranges [starts[k], starts[k] + n) of an uncompressed chunk's
    file, which must hold exactly ``size`` bytes, one after another into ``dst``.
    The bytes read, or MISSING if there is no such file."""
    cdef int fd = open_chunk_file(path, size, err)
    cdef Py_ssize_t k
    cdef ssize_t r = 0
    if fd < 0:
        return fd
    for k in range(nslabs):
        r = pread_all(fd, dst + k * n, n, <int64_t>starts[k], err)
        if r < 0:
            break
        if <size_t>r != n:
            r = fail(err, ZC_SIZE, size, starts[k] + r, "chunk holds")
            break
    c_close(fd)
    if r < 0:
        return r
    return nslabs * <Py_ssize_t>n


cdef int make_parents(char* path) noexcept nogil:
    """mkdir -p the directory part of path (path is modified and restored).  The
    deepest directory is tried first and its parents only if it cannot be made
    (ENOENT): a mkdir of a directory that exists takes its parent's lock all the
    same, which the other workers creating files there then wait for."""
    cdef char* slash = strrchr(path, b'/')
    cdef int r
    if slash == NULL or slash == path:
        return 0
    slash[0] = 0
    r = mkdir(path, 0o777)
    if r != 0 and errno == ENOENT:
        r = make_parents(path)
        if r == 0:
            r = mkdir(path, 0o777)
    if r != 0 and errno == EEXIST:
        r = 0
    slash[0] = b'/'
    return r


cdef extern from *:
    """
    #include <errno.h>
    #include <fcntl.h>
    #include <stdio.h>
    #include <unistd.h>
    /* A new file with no name in directory dir (Linux O_TMPFILE); -1 and errno
       EOPNOTSUPP where there are none. */
    static int zc_open_unnamed(const char* dir) {
    #if defined(__linux__) && defined(O_TMPFILE)
        return open(dir, O_WRONLY | O_TMPFILE | O_CLOEXEC, 0666);
    #else
        (void)dir; errno = EOPNOTSUPP; return -1;
    #endif
    }
    /* Give the unnamed file fd the name path (which must not exist). */
    static int zc_link_unnamed(int fd, const char* path) {
    #if defined(__linux__) && defined(O_TMPFILE)
        char proc[40];
        snprintf(proc, sizeof proc, "/proc/self/fd/%d", fd);
        return linkat(AT_FDCWD, proc, AT_FDCWD, path, AT_SYMLINK_FOLLOW);
    #else
        (void)fd; (void)path; errno = EOPNOTSUPP; return -1;
    #endif
    }
    static int zc_unnamed_files = 1;   /* cleared once the system has none */
    """
    int zc_open_unnamed(const char* dir) noexcept nogil
    int zc_link_unnamed(int fd, const char* path) noexcept nogil
    int zc_unnamed_files


def unnamed_files(enabled=None):
    """Whether atomic writes start as files with no name (write_unnamed); ``enabled``
    turns them on or off first (for tests; they go off by themselves where the system
    has none)."""
    global zc_unnamed_files
    if enabled is not None:
        zc_unnamed_files = 1 if enabled else 0
    return bool(zc_unnamed_files)


cdef bint blosc_rows_on = True


def blosc_rows(enabled=None):
    """Whether whole blosc chunks are decoded straight into their rows of the output
    (ReadBatch.read_blosc_rows); ``enabled`` turns that on or off first (for tests and
    measurements: off, they are decoded by c-blosc and then copied)."""
    global blosc_rows_on
    if enabled is not None:
        blosc_rows_on = bool(enabled)
    return blosc_rows_on


cdef int write_all(int fd, const uint8_t** parts, const size_t* lens, Py_ssize_t nparts,
                   size_t* total) noexcept nogil:
    """Write the parts (NULL ones skipped) one after another to fd: 0, or the errno of
    the failure.  Their length goes to ``total``."""
    cdef iovec iov[ROWS_PER_CALL]
    cdef Py_ssize_t i = 0
    cdef int n, k
    cdef ssize_t r
    total[0] = 0
    while i < nparts:                  # up to ROWS_PER_CALL parts per writev call
        n = 0
        while i < nparts and n < ROWS_PER_CALL:
            if parts[i] != NULL and lens[i] > 0:
                iov[n].iov_base = <void*>parts[i]
                iov[n].iov_len = lens[i]
                total[0] += lens[i]
                n += 1
            i += 1
        k = 0
        while k < n:
            r = writev(fd, iov + k, n - k)
            if r <= 0:
                if r < 0 and errno == EINTR:
                    continue
                return errno if r < 0 else EIO
            while k < n and <size_t>r >= iov[k].iov_len:      # skip the parts written
                r -= iov[k].iov_len
                k += 1
            if k < n:
                iov[k].iov_base = <char*>iov[k].iov_base + r
                iov[k].iov_len -= <size_t>r
    return 0


cdef int write_unnamed(const char* path, char* tmp, size_t dirlen, const uint8_t** parts,
                       const size_t* lens, Py_ssize_t nparts, size_t* total,
                       ZcError* err) noexcept nogil:
    """Write the parts to a new file with no name in path's directory, then name it
    path (if path exists: the temporary name tmp, then rename).  The kernel looks for
    a free inode without holding the directory's lock, which a named new file holds
    meanwhile (on ext4 that search takes long after many files were deleted, and the
    other workers creating files in the directory wait).  1: not done (no such files
    here; nothing was written), 0: done, -1: failed (err set)."""
    global zc_unnamed_files
    cdef int fd, saved
    if not zc_unnamed_files:
        return 1
    if dirlen == 0:
        fd = zc_open_unnamed(".")
    else:
        tmp[dirlen - 1] = 0                  # the directory (tmp's slash, for a moment)
        fd = zc_open_unnamed(tmp)
        tmp[dirlen - 1] = b'/'
        if fd < 0 and errno == ENOENT:
            if make_parents(tmp) != 0:
                return fail(err, ZC_IO, 0, errno, "mkdir")
            tmp[dirlen - 1] = 0
            fd = zc_open_unnamed(tmp)
            tmp[dirlen - 1] = b'/'
    if fd < 0:
        if errno == EOPNOTSUPP or errno == EISDIR or errno == EINVAL:
            zc_unnamed_files = 0
        return 1                             # (the named file reports other errors)
    saved = write_all(fd, parts, lens, nparts, total)
    if saved != 0:
        c_close(fd)
        return fail(err, ZC_IO, 0, saved, "write")
    if zc_link_unnamed(fd, path) != 0:
        saved = errno
        if saved != EEXIST:                  # (no /proc, or no links allowed here)
            c_close(fd)
            zc_unnamed_files = 0
            return 1
        if zc_link_unnamed(fd, tmp) != 0 or rename(tmp, path) != 0:
            saved = errno
            unlink(tmp)
            c_close(fd)
            return fail(err, ZC_IO, 0, saved, "rename")
    if c_close(fd) != 0:
        return fail(err, ZC_IO, 0, errno, "close")
    return 0


cdef Py_ssize_t write_parts(const char* path, const char* tmp_suffix, const uint8_t** parts,
                            const size_t* lens, Py_ssize_t nparts, ZcError* err) noexcept nogil:
    """Write the parts one after another to path atomically: readers see the old file
    or the new one, never a part.  A new file with no name is named path when written
    (write_unnamed); where there are no such files, a temporary '.name<suffix>' beside
    it is renamed.  NULL parts are skipped."""
    cdef size_t plen = strlen(path), slen = strlen(tmp_suffix)
    cdef char* tmp = <char*>malloc(plen + slen + 2)
    cdef const char* slash
    cdef size_t dirlen, total = 0
    cdef int fd, saved, done
    if tmp == NULL:
        return fail(err, ZC_NOMEM, 0, 0, NULL)
    slash = strrchr(path, b'/')
    dirlen = <size_t>(slash - path + 1) if slash != NULL else 0
    memcpy(tmp, path, dirlen)
    tmp[dirlen] = b'.'
    memcpy(tmp + dirlen + 1, path + dirlen, plen - dirlen)
    memcpy(tmp + plen + 1, tmp_suffix, slen + 1)
    done = write_unnamed(path, tmp, dirlen, parts, lens, nparts, &total, err)
    if done != 1:
        free(tmp)
        return -1 if done < 0 else <Py_ssize_t>total
    fd = c_open(tmp, O_WRONLY | O_CREAT | O_EXCL | O_CLOEXEC, 0o666)
    if fd < 0 and errno == ENOENT:
        if make_parents(tmp) != 0:
            saved = errno
            free(tmp)
            return fail(err, ZC_IO, 0, saved, "mkdir")
        fd = c_open(tmp, O_WRONLY | O_CREAT | O_EXCL | O_CLOEXEC, 0o666)
    if fd < 0:
        saved = errno
        free(tmp)
        return fail(err, ZC_IO, 0, saved, "open")
    saved = write_all(fd, parts, lens, nparts, &total)
    if saved != 0:
        c_close(fd)
        unlink(tmp)
        free(tmp)
        return fail(err, ZC_IO, 0, saved, "write")
    if c_close(fd) != 0:
        saved = errno
        unlink(tmp)
        free(tmp)
        return fail(err, ZC_IO, 0, saved, "close")
    if rename(tmp, path) != 0:
        saved = errno
        unlink(tmp)
        free(tmp)
        return fail(err, ZC_IO, 0, saved, "rename")
    free(tmp)
    return <Py_ssize_t>total


cdef Py_ssize_t write_file(const char* path, const char* tmp_suffix, const uint8_t* data,
                           size_t n, ZcError* err) noexcept nogil:
    """Write data to path atomically (see write_parts)."""
    return write_parts(path, tmp_suffix, &data, &n, 1, err)


cdef Py_ssize_t delete_file(const char* path, ZcError* err) noexcept nogil:
    if unlink(path) != 0 and errno != ENOENT and errno != ENOTDIR:
        return fail(err, ZC_IO, 0, errno, "unlink")
    return 0


# ---------------------------------------------------------------- the prepared codec chain

cdef class Chain:
    """A codec chain prepared for one chunk shape and data type.

    ``steps``: the bytes -> bytes codecs in encode order, as tuples
    ("blosc", cname, clevel, shuffle, typesize, blocksize), ("zstd", level,
    checksum), ("gzip", level), ("zlib", level), ("crc32c",).
    ``chunk_shape``, ``itemsize``: the chunk; ``swap_unit``: 0 if the stored byte
    order is the native one, else the size of the units whose bytes are reversed
    (the item size; for complex types, one component); ``order``: the transpose
    codec's permutation (the stored array is ``chunk.transpose(order)`` in C
    order) or None.
    """

    cdef int n
    cdef Step steps[MAX_STEPS]
    cdef readonly Py_ssize_t chunk_nbytes
    cdef readonly Py_ssize_t itemsize
    cdef readonly Py_ssize_t nitems
    cdef readonly Py_ssize_t swap_unit
    cdef readonly bint c_layout
    cdef int ndim
    cdef Py_ssize_t shape[MAX_DIMS]
    cdef Py_ssize_t strides[MAX_DIMS]   # byte strides of the logical chunk in the decoded buffer
    cdef int last_decompressor          # index of the step decoded last (-1: none)

    def __init__(self, list steps, tuple chunk_shape, Py_ssize_t itemsize,
                 Py_ssize_t swap_unit=0, order=None):
        cdef int i, d
        cdef Py_ssize_t stride
        cdef Step* st
        if len(steps) > MAX_STEPS:
            raise ValueError(f"at most {MAX_STEPS} bytes->bytes codecs are supported, got {len(steps)}")
        if len(chunk_shape) > MAX_DIMS:
            raise ValueError(f"at most {MAX_DIMS} dimensions are supported, got {len(chunk_shape)}")
        if itemsize < 1:
            raise ValueError(f"itemsize must be positive, got {itemsize}")
        self.ndim = len(chunk_shape)
        self.itemsize = itemsize
        if swap_unit < 0 or (swap_unit > 0 and itemsize % swap_unit):
            raise ValueError(f"swap_unit {swap_unit} does not divide itemsize {itemsize}")
        self.swap_unit = swap_unit if swap_unit > 1 else 0
        self.nitems = 1
        for d in range(self.ndim):
            self.shape[d] = chunk_shape[d]
            self.nitems *= chunk_shape[d]
        self.chunk_nbytes = self.nitems * itemsize
        perm = list(range(self.ndim)) if order is None else [int(o) for o in order]
        if sorted(perm) != list(range(self.ndim)):
            raise ValueError(f"transpose order {order!r} is not a permutation of {self.ndim} dimensions")
        self.c_layout = perm == list(range(self.ndim))
        # stored array B = A.transpose(perm) in C order: A's stride along perm[i] = B's stride i
        stride = itemsize
        for i in range(self.ndim - 1, -1, -1):
            self.strides[perm[i]] = stride
            stride *= chunk_shape[perm[i]]
        self.n = len(steps)
        self.last_decompressor = -1
        for i, spec in enumerate(steps):
            st = &self.steps[i]
            memset(st, 0, sizeof(Step))
            name = spec[0]
            if name == "blosc":
                st.kind = BLOSC
                cname = spec[1].encode("ascii")
                if len(cname) >= 16:
                    raise ValueError(f"blosc cname {spec[1]!r} is too long")
                memcpy(st.cname, <const char*>cname, len(cname) + 1)
                st.clevel, st.shuffle, st.typesize, st.blocksize = spec[2], spec[3], spec[4], spec[5]
                st.ranges = spec[1] == "lz4" and st.shuffle != 2
            elif name == "zstd":
                st.kind = ZSTD
                st.level, st.checksum = spec[1], spec[2]
            elif name == "gzip" or name == "zlib":
                st.kind = GZIP if name == "gzip" else ZLIB
                st.level = spec[1]
            elif name == "crc32c":
                st.kind = CRC32C
            else:
                raise ValueError(f"codec {name!r} has no native kernel")
            if st.kind != CRC32C:
                if self.last_decompressor < 0:
                    self.last_decompressor = i
                elif st.kind in (GZIP, ZLIB):
                    raise ValueError(f"{name} after another compressor has no native kernel")

    cdef const uint8_t* decode(self, const uint8_t* src, size_t n, uint8_t* dst, Scratch* s,
                               ZcError* err) noexcept nogil:
        """Undo the bytes->bytes codecs.  Returns a pointer to chunk_nbytes decoded
        bytes: ``dst`` if a decompressor ran, else a pointer into ``src`` (no copy)."""
        cdef const uint8_t* ptr = src
        cdef size_t length = n
        cdef uint32_t stored, computed
        cdef Py_ssize_t size, r
        cdef uint8_t* target
        cdef int i, slot = 1
        cdef Step* st
        for i in range(self.n - 1, -1, -1):
            st = &self.steps[i]
            if st.kind == CRC32C:
                if length < 4:
                    fail(err, ZC_TRUNCATED, 4, length, "crc32c checksum")
                    return NULL
                stored = load_le32(ptr + length - 4)
                computed = zc_crc32c_update(0, ptr, length - 4)
                if stored != computed:
                    fail(err, ZC_CHECKSUM, stored, computed, "crc32c")
                    return NULL
                length -= 4
                continue
            if i == self.last_decompressor:
                target = dst
                size = self.chunk_nbytes
            else:
                if st.kind == BLOSC:
                    size = zc_blosc_decoded_size(ptr, length, err)
                else:
                    size = zc_zstd_decoded_size(ptr, length, err)
                    if size == -2:
                        fail(err, ZC_UNSUPPORTED, 0, 0, "zstd frame without a content size inside the chain")
                        return NULL
                if size < 0:
                    return NULL
                if ensure(s, slot, <size_t>size) != 0:
                    fail(err, ZC_NOMEM, 0, 0, NULL)
                    return NULL
                target = s.buf[slot]
                slot = 3 - slot
            if st.kind == BLOSC:
                r = zc_blosc_decode_into(ptr, length, target, size, 1, err)
            elif st.kind == ZSTD:
                if s.dctx == NULL:
                    s.dctx = zc_zstd_dctx_new()
                r = zc_zstd_decode_into(s.dctx, ptr, length, target, size, err)
            elif st.kind == GZIP:
                r = zc_inflate_into(ptr, length, target, size, ZC_GZIP, err)
            else:
                r = zc_inflate_into(ptr, length, target, size, ZC_ZLIB, err)
            if r < 0:
                return NULL
            ptr = target
            length = <size_t>r
        if length != <size_t>self.chunk_nbytes:
            fail(err, ZC_SIZE, self.chunk_nbytes, length, "chunk holds")
            return NULL
        return ptr

    cdef Py_ssize_t encode(self, const uint8_t* src, const uint8_t** result, Scratch* s,
                           ZcError* err) noexcept nogil:
        """Apply the bytes->bytes codecs to chunk_nbytes bytes at src; result[0] is set
        to the encoded bytes (src itself when there are no codecs)."""
        cdef const uint8_t* ptr = src
        cdef size_t length = self.chunk_nbytes, cap
        cdef Py_ssize_t r
        cdef int i, slot = 1
        cdef uint32_t crc
        cdef uint8_t* out
        cdef Step* st
        for i in range(self.n):
            st = &self.steps[i]
            if st.kind == BLOSC:
                cap = length + 16
            elif st.kind == ZSTD:
                cap = zc_zstd_bound(length)
            elif st.kind == CRC32C:
                cap = length + 4
            else:
                cap = zc_deflate_bound(length, ZC_GZIP if st.kind == GZIP else ZC_ZLIB)
            if ensure(s, slot, cap) != 0:
                return fail(err, ZC_NOMEM, 0, 0, NULL)
            out = s.buf[slot]
            if st.kind == BLOSC:
                r = zc_blosc_compress(ptr, length, out, cap, st.clevel, st.shuffle, st.typesize,
                                      st.cname, st.blocksize, 1, err)
            elif st.kind == ZSTD:
                if s.cctx == NULL:
                    s.cctx = zc_zstd_cctx_new()
                r = zc_zstd_compress(s.cctx, ptr, length, out, cap, st.level, st.checksum, err)
            elif st.kind == GZIP:
                r = zc_deflate(&s.deflater, ptr, length, out, cap, st.level, ZC_GZIP, err)
            elif st.kind == ZLIB:
                r = zc_deflate(&s.deflater, ptr, length, out, cap, st.level, ZC_ZLIB, err)
            else:
                memcpy(out, ptr, length)
                crc = zc_crc32c_update(0, ptr, length)
                out[length] = crc & 0xff
                out[length + 1] = (crc >> 8) & 0xff
                out[length + 2] = (crc >> 16) & 0xff
                out[length + 3] = (crc >> 24) & 0xff
                r = <Py_ssize_t>(length + 4)
            if r < 0:
                return -1
            ptr = out
            length = <size_t>r
            slot = 3 - slot
        result[0] = ptr
        return <Py_ssize_t>length

    @property
    def ncodecs(self):
        """The number of bytes -> bytes codecs (0: chunks are stored uncompressed)."""
        return self.n

    def decode_chunk(self, data):
        """Decode one encoded chunk (bytes-like) into new bytes, in stored layout."""
        cdef Py_buffer view
        cdef Scratch s
        cdef ZcError err
        cdef bytes out = PyBytes_FromStringAndSize(NULL, self.chunk_nbytes)
        cdef uint8_t* dst = <uint8_t*>PyBytes_AS_STRING(out)
        cdef const uint8_t* p
        memset(&s, 0, sizeof(Scratch))
        PyObject_GetBuffer(data, &view, PyBUF_ANY_CONTIGUOUS)
        try:
            with nogil:
                p = self.decode(<const uint8_t*>view.buf, <size_t>view.len, dst, &s, &err)
                if p != NULL and p != dst:
                    memcpy(dst, p, self.chunk_nbytes)
                scratch_free(&s)
        finally:
            PyBuffer_Release(&view)
        if p == NULL:
            raise_task_error(&err, "")
        return out

    def encode_chunk(self, data):
        """Encode chunk_nbytes bytes (stored layout) into new bytes."""
        cdef Py_buffer view
        cdef Scratch s
        cdef ZcError err
        cdef const uint8_t* p
        cdef Py_ssize_t r
        memset(&s, 0, sizeof(Scratch))
        PyObject_GetBuffer(data, &view, PyBUF_ANY_CONTIGUOUS)
        try:
            if view.len != self.chunk_nbytes:
                raise ValueError(f"chunk holds {view.len} bytes, {self.chunk_nbytes} expected")
            with nogil:
                r = self.encode(<const uint8_t*>view.buf, &p, &s, &err)
            if r < 0:
                raise_task_error(&err, "")
            return PyBytes_FromStringAndSize(<const char*>p, r)
        finally:
            scratch_free(&s)
            PyBuffer_Release(&view)


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
STREAM_MIN_BYTES = 32 << 20     # outputs this large are written with streaming stores
DEF PREFAULT_MIN_BYTES = 256 << 10  # one-thread reads this large map their output in one call
cdef object _empty = np.empty


cdef object new_output(tuple shape, object dtype, Py_ssize_t nbytes):
    """A new C-order array for a read.  One of SLAB_MIN_BYTES or more comes from
    slabs.pyx (a huge-page slab or mapping, reused from earlier outputs that died).
    Elsewhere, one of STREAM_MIN_BYTES or more starts on a 64-byte boundary (malloc's
    large blocks start 16 bytes into a page) so that rows of 64 or 128 bytes at
    multiples of 64 cover whole cache lines and are written with streaming stores too
    (copy_nd); the array is then a view of a slightly larger one."""
    out = output_array(shape, dtype, nbytes)
    if out is not None:
        return out
    if nbytes < STREAM_MIN_BYTES or dtype.hasobject:
        return _empty(shape, dtype)
    whole = _empty(nbytes + 64, np.uint8)
    skip = (-whole.ctypes.data) & 63
    return whole[skip:skip + nbytes].view(dtype).reshape(shape)


def count_calls(Py_ssize_t delta):
    """Add ``delta`` to the count of array reads and writes in progress (over all
    threads, atomically, without a lock) and return the new count."""
    return zc_add_count(&calls_in_progress, delta)


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

    cdef readonly Chain chain
    cdef int ndim
    cdef const int64_t* table    # nrows x PLAN_NCOLS projection rows
    cdef const int64_t* local    # flat index arrays of indexed rows
    cdef const int64_t* outidx
    cdef const int64_t* tasks    # ntasks x ndim: each task's row of each dimension
    cdef Py_ssize_t nrows
    cdef readonly Py_ssize_t ntasks
    cdef object plan_arrays      # the arrays behind those pointers, or
    cdef Plan plan               # the native plan that owns them
    cdef Py_buffer arr
    cdef bint have_arr
    cdef bint stream             # scatter into arr with non-temporal stores (see setup_common)
    cdef Py_ssize_t arr_strides[MAX_DIMS]
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

    def __dealloc__(self):
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
                c_close(self.fds[i])
        free(self.fds)
        self.fds = NULL
        self.nfds = 0

    cdef setup(self, Chain chain, table, local, outidx, tasks, arr, tuple arr_strides,
               bytes fill, sources, bint writable):
        cdef const int64_t[:, ::1] tv = table
        cdef const int64_t[:, ::1] kv = tasks
        cdef const int64_t[::1] lv = local
        cdef const int64_t[::1] ov = outidx
        if kv.shape[1] != chain.ndim or tv.shape[1] != PLAN_NCOLS:
            raise ValueError("plan does not match the chain's dimensions")
        self.plan_arrays = (table, local, outidx, tasks)
        self.table = &tv[0, 0] if tv.shape[0] else NULL
        self.nrows = tv.shape[0]
        self.tasks = &kv[0, 0] if kv.shape[0] * kv.shape[1] else NULL
        self.ntasks = kv.shape[0]
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
        self.stream = writable and self.arr.len >= STREAM_MIN_BYTES
        for d in range(self.ndim):
            self.arr_strides[d] = arr_strides[d]
        self.fill = fill
        self.fill_ptr = <const char*>self.fill
        if sources is None:             # setup_plan: set_paths follows
            pass
        elif type(sources) is tuple:
            if len(sources) != 4 or sources[0] != "paths":
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
        if type(sources) is tuple:
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
            max_count = max(max_count, self.table[t * PLAN_NCOLS + C_COUNT])
        self.offs_needed = 2 * <size_t>self.ndim * <size_t>max_count
        self.next_task = 0

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
            cnt = self.table[row * PLAN_NCOLS + C_COUNT]
            start = self.table[row * PLAN_NCOLS + C_START]
            step = self.table[row * PLAN_NCOLS + C_STEP]
            out0 = self.table[row * PLAN_NCOLS + C_OUT]
            ix = self.table[row * PLAN_NCOLS + C_IDX]
            cs = self.chain.strides[d]
            ars = self.arr_strides[d]
            chunk_off = s.offs + pos
            arr_off = s.offs + pos + cnt
            pos += 2 * cnt
            if ix < 0:
                for k in range(cnt):
                    chunk_off[k] = (start + k * step) * cs
                    arr_off[k] = (out0 + k) * ars
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

    cdef bint covers_chunk(self, Py_ssize_t t) noexcept nogil:
        """Whether task t selects every in-bounds element of its chunk (FULL everywhere)."""
        cdef int d
        for d in range(self.ndim):
            if self.table[(self.tasks[t * self.ndim + d]) * PLAN_NCOLS + C_FULL] == 0:
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
            r = read_range(self.src_fd[t], self.src_offset[t], self.src_len[t], s, err)
        elif self.src_path[t] != NULL:
            r = read_file(self.src_path[t], s, err)
        else:
            return MISSING
        if r >= 0:
            data[0] = s.buf[0]
        return r

    cdef void run_task(self, Py_ssize_t t, Scratch* s) noexcept nogil:
        pass

    def run(self):
        """Work through the batch's tasks until none are left (call from each worker)."""
        cdef Scratch local
        cdef Scratch* s
        cdef Py_ssize_t t
        memset(&local, 0, sizeof(Scratch))
        with nogil:
            zc_gil_released()
            s = thread_scratch()
            if s == NULL:
                s = &local
            while True:
                t = zc_next_task(&self.next_task)
                if t >= self.ntasks:
                    break
                self.run_task(t, s)
            if self.stream:
                stream_fence()
            if s == &local:
                scratch_free(s)
            else:
                scratch_trim(s)
            zc_gil_wait()       # see src/gil_handoff.h
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

    def __init__(self, Chain chain, table, local, outidx, tasks, out, tuple out_strides,
                 bytes fill, sources):
        self.setup(chain, table, local, outidx, tasks, out, out_strides, fill, sources, True)

    cdef void run_task(self, Py_ssize_t t, Scratch* s) noexcept nogil:
        cdef DimPlan dims[MAX_DIMS]
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
            direct = (self.table[row * PLAN_NCOLS + C_IDX] < 0 and self.table[row * PLAN_NCOLS + C_STEP] == 1
                      and self.table[row * PLAN_NCOLS + C_COUNT] == self.chain.shape[d]
                      and (self.chain.shape[d] == 1 or self.arr_strides[d] == self.chain.strides[d]))
            base += self.table[row * PLAN_NCOLS + C_OUT] * self.arr_strides[d]
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
        if (blosc_rows_on and self.chain.n == 1 and self.chain.steps[0].kind == BLOSC
                and self.chain.swap_unit == 0 and self.chain.c_layout and self.ndim > 0
                and dims[self.ndim - 1].contiguous and self.covers_chunk(t)
                and self.read_blosc_rows(dims, data, n, out, s) > 0):
            return
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
                                    Scratch* s) noexcept nogil:
        """A whole blosc chunk (every in-bounds element selected, rows contiguous in
        out) decoded straight into its rows of out: no chunk-sized buffer, no second
        copy (zc_blosc_decode_rows).  Returns its bytes, or 0 when the frame is not
        one decoded that way: the caller decodes it as usual, wording any error."""
        cdef zc_rows rows
        cdef int64_t shape[MAX_DIMS]
        cdef int64_t count[MAX_DIMS]
        cdef const ptrdiff_t* offs[MAX_DIMS]
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
        return zc_blosc_decode_rows(data, <size_t>n, <size_t>self.chain.chunk_nbytes, &rows, s.buf[3],
                                    s.cap[3])

    cdef Py_ssize_t read_uncompressed(self, Py_ssize_t t, DimPlan* dims, char* out, Scratch* s,
                                      ZcError* err) noexcept nogil:
        """Part of an uncompressed chunk file: read only the byte span from the first
        to the last selected element, or, when the first dimension's positions are
        far apart (a small box in a large chunk), the span of the other dimensions at
        each of them; copy the selection out.  Returns what read_chunk_slabs returns.
        Changes the dims' source offsets (their destination offsets stay)."""
        cdef Py_ssize_t lo, hi, n, inner_lo, inner_hi, k, nslabs = 1
        cdef Py_ssize_t lo_d[MAX_DIMS]
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

    cdef Py_ssize_t read_blosc_span(self, DimPlan* dims, const uint8_t* data, Py_ssize_t n,
                                    char* out, Scratch* s, ZcError* err) noexcept nogil:
        """Part of a blosc chunk: decode only the blocks that hold the byte span from
        the first to the last selected element (a small read of a chunk of many
        blocks).  Returns the span's length, NOT_TAKEN when the span needs most of
        the blocks (the caller decodes the chunk whole), or -1 with ``err`` set."""
        cdef Py_ssize_t lo, hi, nbytes, typesize, blocksize, nblocks, r
        cdef Py_ssize_t lo_d[MAX_DIMS]
        nbytes = zc_blosc_decoded_size(data, <size_t>n, err)
        if nbytes < 0:
            return -1
        if nbytes != self.chain.chunk_nbytes:
            return fail(err, ZC_SIZE, self.chain.chunk_nbytes, nbytes, "chunk holds")
        typesize = data[3]                 # >= 1 if nbytes > 0 (checked with the header)
        if nbytes == 0 or nbytes % typesize:   # (blosc reads ranges of whole items)
            return NOT_TAKEN
        selected_span(dims, self.ndim, self.chain.itemsize, lo_d, &lo, &hi)
        lo_d[0] -= lo % typesize           # the span, widened to whole blosc items
        lo -= lo % typesize
        hi = min(nbytes, hi + (typesize - hi % typesize) % typesize)
        blocksize = load_le32(data + 8)    # 1 .. nbytes (checked with the header)
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

    cdef Py_ssize_t read_blosc_file(self, Py_ssize_t t, DimPlan* dims, char* out, Scratch* s,
                                    ZcError* err) noexcept nogil:
        """A few bytes (at most ZC_PARTIAL_MAX from the first to the last selected
        element) of a blosc chunk in a file, or in a byte range of one: only the
        frame's header, the block's offset and the parts of its streams that hold
        them are read (zc_blosc_file_range).  Returns the bytes decoded, MISSING
        (no file), -1 (header wrong: ``err`` set) or NOT_TAKEN: the caller reads
        and decodes the whole chunk, which also words any error in its streams."""
        cdef Py_ssize_t lo, hi, r
        cdef Py_ssize_t lo_d[MAX_DIMS]
        cdef int64_t base = 0, size
        cdef bint kept = self.src_fd[t] >= 0     # a shard's inner chunk, in a file held open
        cdef stat st
        cdef int fd
        selected_span(dims, self.ndim, self.chain.itemsize, lo_d, &lo, &hi)
        if hi - lo > ZC_PARTIAL_MAX:
            return NOT_TAKEN
        if kept:
            fd = self.src_fd[t]
            base = self.src_offset[t]
            size = <int64_t>self.src_len[t]
        else:
            fd = c_open(self.src_path[t], O_RDONLY | O_CLOEXEC)
            if fd < 0:
                return MISSING if errno == ENOENT or errno == ENOTDIR else NOT_TAKEN
            # (the size: a truncated file is an error)
            if fstat(fd, &st) != 0 or (st.st_mode & 0o170000) != 0o100000:
                c_close(fd)
                return NOT_TAKEN
            size = st.st_size
        r = NOT_TAKEN
        if ensure(s, 3, <size_t>(hi - lo)) == 0:
            r = zc_blosc_file_range(fd, base, size, <size_t>self.chain.chunk_nbytes, <size_t>lo,
                                    <size_t>(hi - lo), s.buf[3], err)
            if r == 0:
                r = NOT_TAKEN
        if not kept:
            c_close(fd)
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
        cdef Py_ssize_t lo_d[MAX_DIMS]
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


cdef void selected_span(DimPlan* dims, int ndim, Py_ssize_t itemsize, Py_ssize_t* lo_d,
                        Py_ssize_t* lo, Py_ssize_t* hi) noexcept nogil:
    """The chunk's bytes [lo, hi) from the first to the last selected element (dims'
    source offsets); lo_d: each dimension's smallest offset (they add up to lo)."""
    cdef Py_ssize_t k, hi_d
    cdef int d
    lo[0] = 0
    hi[0] = itemsize
    for d in range(ndim):
        lo_d[d] = dims[d].src_off[0]
        hi_d = lo_d[d]
        for k in range(1, dims[d].count):
            if dims[d].src_off[k] < lo_d[d]:
                lo_d[d] = dims[d].src_off[k]
            elif dims[d].src_off[k] > hi_d:
                hi_d = dims[d].src_off[k]
        lo[0] += lo_d[d]
        hi[0] += hi_d


cdef class BasicReader:
    """Reads basic selections (integers and slices) of an array stored as plain chunk
    files in one native call: plan, output, chunk paths and the batch are built
    here, and a read small enough for one thread runs here too, so a call holds
    the GIL for a few microseconds (other Python threads read meanwhile).

    ``head``/``separator``: chunk (i, j, ...) is the file head + b"i" + separator +
    b"j" ...; ``run_batch(batch, ntasks, work_bytes)`` runs a batch worth more
    threads (zarrc.engine.run_batch); ``raise_error(batch, coords)`` raises the
    error of a failed batch, naming the chunk.
    """

    cdef Chain chain
    cdef tuple shape
    cdef tuple chunks
    cdef object dtype
    cdef bytes fill
    cdef bytes head
    cdef bytes separator
    cdef Py_ssize_t parallel_min_bytes
    cdef object run_batch
    cdef object raise_error
    # sharded (one level): inner chunks per shard, per dimension; the shard grid's
    # shape; decoded indexes by linear shard number, each after the identity of the
    # file it was read from (bytes: int64 st_dev, st_ino, st_size, mtime_ns, then
    # uint64 offset, length per inner chunk); index_of(shard coords, fd, size) reads
    # one from an open shard file (see setup_sharded)
    cdef bint sharded
    cdef Py_ssize_t cps[PLAN_MAX_DIMS]
    cdef Py_ssize_t grid[PLAN_MAX_DIMS]
    cdef dict indexes
    cdef object index_of
    cdef Py_ssize_t max_open     # the most shard files one read holds open

    def __init__(self, Chain chain, tuple shape, tuple chunks, dtype, bytes fill, bytes head,
                 bytes separator, Py_ssize_t parallel_min_bytes, run_batch, raise_error,
                 tuple shard_shape=None, dict indexes=None, index_of=None, Py_ssize_t max_open=64):
        cdef Py_ssize_t d
        self.sharded = shard_shape is not None
        if self.sharded:
            if len(shard_shape) != len(shape) or indexes is None or index_of is None:
                raise ValueError("a sharded reader needs the shard shape, the indexes, index_of")
            for d in range(len(shape)):
                self.cps[d] = shard_shape[d] // chunks[d]
                self.grid[d] = -(-shape[d] // shard_shape[d])
            self.indexes = indexes
            self.index_of = index_of
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

    def read(self, selection):
        """``array[selection]`` as a new numpy array, or None if ``selection`` is not
        made of integers and slices with positive steps (or an integer is out of
        bounds: the general path words the error), or it touches more than
        ``max_open`` shards (the general path reads them a group at a time)."""
        cdef Plan plan
        cdef ReadBatch batch
        cdef Py_ssize_t d, t, ntasks, work, nbytes = self.chain.itemsize
        if not plan_selection(selection, self.shape, self.chunks, &plan):
            return None
        try:
            out_shape = []
            for d in range(plan.ndim):
                if not plan.dropped[d]:
                    out_shape.append(plan.count[d])
                    nbytes *= plan.count[d]
            out = new_output(tuple(out_shape), self.dtype, nbytes)
            if nbytes == 0:
                return out
            ntasks = plan.ntasks
            out_strides = iter(out.strides)
            strides = tuple([0 if plan.dropped[d] else next(out_strides) for d in range(plan.ndim)])
            batch = ReadBatch.__new__(ReadBatch)
            if self.sharded:
                if not self.setup_sharded(batch, &plan, out, strides):
                    return None        # more shards than files to hold open at once
            else:
                batch.setup_plan(self.chain, &plan, out, strides, self.fill, self.head,
                                 self.separator)
        finally:
            plan_free(&plan)           # (nothing left to free once the batch owns it)
        # uncompressed chunks: only the selected bytes are read and copied
        work = nbytes if self.chain.n == 0 else ntasks * self.chain.chunk_nbytes
        zc_add_count(&calls_in_progress, 1)
        try:
            if ntasks == 1 or work < 2 * self.parallel_min_bytes:
                if nbytes >= PREFAULT_MIN_BYTES and nbytes < STREAM_MIN_BYTES:
                    with nogil:        # (one thread: its faults would all be in a row)
                        prefault(<char*>batch.arr.buf, <size_t>nbytes)
                batch.run()            # (run_batch would give it one thread too)
            else:
                self.run_batch(batch, ntasks, work)
        finally:
            zc_add_count(&calls_in_progress, -1)
            batch.close_files()
        for t in range(ntasks):
            if batch.status[t] < 0:       # (coords: of the inner chunks when sharded)
                self.raise_error(batch, int64_array(batch.plan.coords, ntasks, batch.ndim))
        return out

    cdef bint setup_sharded(self, ReadBatch batch, Plan* plan, out, tuple strides) except -1:
        """Open each shard the plan touches once, locate its inner chunks through the
        shard's index and set the batch up to read their byte ranges from that open
        file, so that the index and every inner chunk come from one version of the
        shard (shards are replaced whole, by rename).  A cached index is used only
        while the open file is the one it was read from (device, inode, size,
        mtime: one fstat per shard); else ``index_of(shard coords, fd, size)`` reads
        it from the descriptor.  False, with nothing set up, if the plan touches
        more than ``max_open`` shards."""
        cdef Py_ssize_t t, d, i, ndim = plan.ndim, ntasks = plan.ntasks, sid, prev = -1
        cdef Py_ssize_t nslots = 0, flat, nchunks = 1, width
        cdef int64_t c
        cdef const uint64_t* entry
        cdef bytes index
        cdef list indexes = []
        # per shard touched (at most max_open): its number in the shard grid, its
        # first task, the errno of its open, its file's identity (see open_shard)
        cdef Py_ssize_t slot_sid[MAX_OPEN_LIMIT + 1]
        cdef Py_ssize_t first[MAX_OPEN_LIMIT + 1]
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
            for d in range(ndim):
                nchunks *= self.cps[d]
            # each task's shard, its slot among the shards touched, its chunk in it
            for t in range(ntasks):
                sid = 0
                flat = 0
                for d in range(ndim):
                    c = plan.coords[t * ndim + d]
                    shards[t * ndim + d] = c // self.cps[d]
                    sid = sid * self.grid[d] + c // self.cps[d]
                    flat = flat * self.cps[d] + c % self.cps[d]
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
                    batch.fds[i] = open_shard(paths + i * width, ident[i], &errnos[i])
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
                if PyBytes_GET_SIZE(index) != 16 * nchunks:
                    raise ValueError(f"shard index of {len(index)} bytes for {nchunks} chunks")
                known = PyBytes_FromStringAndSize(<const char*>ident[i], sizeof(ident[i])) + index
                self.indexes[slot_sid[i]] = known
                indexes.append(known)
            for t in range(ntasks):
                index = <bytes>indexes[slot_of[t]]
                ranges[2 * t] = -1
                if PyBytes_GET_SIZE(index):
                    entry = <const uint64_t*>(PyBytes_AS_STRING(index) + sizeof(ident[0])) + 2 * ranges[2 * t + 1]
                    if entry[0] != <uint64_t>-1:       # EMPTY: the chunk is missing
                        ranges[2 * t] = <int64_t>entry[0]
                        ranges[2 * t + 1] = <int64_t>entry[1]
            batch.setup_plan(self.chain, plan, out, strides, self.fill, self.head, self.separator,
                             slot_of, ranges)
            return True
        finally:
            free(block)
            free(paths)


cdef int open_shard(const char* path, int64_t* ident, int* error) noexcept nogil:
    """Open a shard file and fstat it: the descriptor, with ``ident`` set to the
    file's device, inode, size and mtime in ns; or -1 with ``error`` 0 when there
    is no shard (no such file, or not a regular file) or the errno."""
    cdef stat st
    cdef int fd = c_open(path, O_RDONLY | O_CLOEXEC)
    error[0] = 0
    if fd < 0:
        if errno != ENOENT and errno != ENOTDIR:
            error[0] = errno
        return -1
    if fstat(fd, &st) != 0:
        error[0] = errno
        c_close(fd)
        return -1
    if (st.st_mode & 0o170000) != 0o100000:
        c_close(fd)
        return -1
    ident[0] = <int64_t>st.st_dev
    ident[1] = <int64_t>st.st_ino
    ident[2] = <int64_t>st.st_size
    ident[3] = <int64_t>st.st_mtim.tv_sec * 1000000000 + st.st_mtim.tv_nsec
    return fd


cdef class WriteBatch(_Batch):
    """Gather values into chunks, encode, and store them (or drop chunks that are
    all fill value).

    Arguments as for ReadBatch, with ``value`` (the values to write, any strides,
    0 for broadcast dimensions) in place of ``out``, and ``sources`` giving the
    old chunk for tasks that only partly cover their chunk (bytes, None for
    missing) or, for a local store, ("path", b"/file") for every task: the old
    chunk is read from it when needed and the new one written to it.
    ``tmp_suffix``: appended to ".<name>" for the temporary file of an atomic
    write.  ``write_empty``: store chunks even if they are all fill value.
    Two phases, so that an error (e.g. a corrupt old chunk) changes nothing:
    run() encodes every chunk into memory; if no task failed, start_commit() and
    run() again write the files of path tasks.  ``outcome(t)`` is STORED or
    DELETED and, for tasks without a path, ``encoded(t)`` the bytes to store.
    ``commit_now``: when every task overwrites its whole chunk (no old chunk is
    read, so no input can fail), path tasks write their file as soon as they are
    encoded, straight from the encoder's buffer: one phase, no copy kept.
    """

    cdef bytes tmp_suffix
    cdef const char* tmp_suffix_ptr
    cdef bint write_empty
    cdef bint committing
    cdef bint commit_now
    cdef int* outcomes
    cdef uint8_t** results
    cdef size_t* result_len

    def __cinit__(self):
        self.outcomes = NULL
        self.results = NULL
        self.result_len = NULL

    def __dealloc__(self):
        cdef Py_ssize_t t
        if self.results != NULL:
            for t in range(self.ntasks):
                free(self.results[t])
        free(self.results)
        free(self.result_len)
        free(self.outcomes)

    def __init__(self, Chain chain, table, local, outidx, tasks, value, tuple value_strides,
                 bytes fill, sources, bytes tmp_suffix=b".tmp", bint write_empty=False,
                 bint commit_now=False):
        cdef Py_ssize_t t
        self.setup(chain, table, local, outidx, tasks, value, value_strides, fill, sources, False)
        self.tmp_suffix = tmp_suffix
        self.tmp_suffix_ptr = <const char*>self.tmp_suffix
        self.write_empty = write_empty
        self.committing = False
        self.commit_now = commit_now
        self.outcomes = <int*>malloc(max(1, self.ntasks) * sizeof(int))
        self.results = <uint8_t**>malloc(max(1, self.ntasks) * sizeof(void*))
        self.result_len = <size_t*>malloc(max(1, self.ntasks) * sizeof(size_t))
        if not (self.outcomes and self.results and self.result_len):
            raise MemoryError()
        for t in range(self.ntasks):
            self.outcomes[t] = 0
            self.results[t] = NULL
            self.result_len[t] = 0

    cdef void run_task(self, Py_ssize_t t, Scratch* s) noexcept nogil:
        if self.committing:
            self.commit_task(t)
        else:
            self.encode_task(t, s)

    cdef void commit_task(self, Py_ssize_t t) noexcept nogil:
        cdef ZcError* err = &self.errs[t]
        if self.src_path[t] == NULL:
            return
        if self.outcomes[t] == OUT_STORED:
            if write_file(self.src_path[t], self.tmp_suffix_ptr, self.results[t],
                          self.result_len[t], err) < 0:
                self.status[t] = -1
            free(self.results[t])
            self.results[t] = NULL
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
        writev per ROWS_PER_CALL rows: no gathered copy), or delete it if every row
        is the fill value (unless write_empty)."""
        cdef Py_ssize_t nrows = 1, k, row_bytes = self.chain.shape[self.ndim - 1] * self.chain.itemsize
        cdef Py_ssize_t idx[MAX_DIMS]
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
            if write_parts(self.src_path[t], self.tmp_suffix_ptr, rows, lens, nrows, err) < 0:
                self.status[t] = -1
        free(rows)
        free(lens)

    def start_commit(self):
        """Second phase: write (or delete) the encoded chunks of tasks that have a path.
        Call once every task has been encoded without error, then run() again."""
        self.committing = True
        self.next_task = 0

    cdef void encode_task(self, Py_ssize_t t, Scratch* s) noexcept nogil:
        cdef DimPlan dims[MAX_DIMS]
        cdef ZcError* err = &self.errs[t]
        cdef const uint8_t* data = NULL
        cdef const uint8_t* p
        cdef const uint8_t* encoded
        cdef Py_ssize_t n, r
        cdef int d
        cdef bint full = self.covers_chunk(t), edge = False
        cdef uint8_t* chunk
        cdef const char* fill = self.fill_ptr
        if self.build_dims(t, dims, s, True) != 0 or ensure(s, 3, self.chain.chunk_nbytes) != 0:
            fail(err, ZC_NOMEM, 0, 0, NULL)
            self.status[t] = -1
            return
        chunk = s.buf[3]
        for d in range(self.ndim):
            edge = edge or self.table[(self.tasks[t * self.ndim + d]) * PLAN_NCOLS + C_COUNT] < self.chain.shape[d]
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
        gather_nd(<const char*>self.arr.buf, <char*>chunk, self.ndim, dims, self.chain.itemsize)
        if not self.write_empty and all_equal_pattern(<const char*>chunk, self.chain.chunk_nbytes,
                                                      fill, self.chain.itemsize):
            self.outcomes[t] = OUT_DELETED
            if self.commit_now and self.src_path[t] != NULL:
                if delete_file(self.src_path[t], err) < 0:
                    self.status[t] = -1
            return
        if self.chain.swap_unit:
            byteswap(<char*>chunk, self.chain.chunk_nbytes // self.chain.swap_unit,
                     self.chain.swap_unit)
        r = self.chain.encode(chunk, &encoded, s, err)
        if r < 0:
            self.status[t] = -1
            return
        self.outcomes[t] = OUT_STORED
        if self.commit_now and self.src_path[t] != NULL:
            if write_file(self.src_path[t], self.tmp_suffix_ptr, encoded, <size_t>r, err) < 0:
                self.status[t] = -1
            return
        self.results[t] = <uint8_t*>malloc(r if r > 0 else 1)
        if self.results[t] == NULL:
            fail(err, ZC_NOMEM, 0, 0, NULL)
            self.status[t] = -1
            return
        memcpy(self.results[t], encoded, r)
        self.result_len[t] = <size_t>r

    def outcome(self, Py_ssize_t t):
        """STORED, DELETED, or 0 (task failed or not run)."""
        return self.outcomes[t]

    cdef int shard_parts(self, const int64_t[::1] task_of_chunk, list old_parts,
                         const uint8_t** ptrs, Py_ssize_t* lens) except -1:
        """Inner chunk i of a shard: task ``task_of_chunk[i]``'s result (NULL if that
        chunk was all fill value) or, where it is -1, ``old_parts[i]``."""
        cdef Py_ssize_t n = task_of_chunk.shape[0], i, t
        if len(old_parts) != n:
            raise ValueError(f"{len(old_parts)} old parts for {n} inner chunks")
        for i in range(n):
            t = task_of_chunk[i]
            if t < 0:
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

    def shard(self, const int64_t[::1] task_of_chunk, list old_parts, bint index_at_start,
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

    def write_shard(self, bytes path, bytes tmp_suffix, const int64_t[::1] task_of_chunk,
                    list old_parts, bint index_at_start, bint index_big_endian, bint index_crc):
        """Like shard(), but write the shard straight to the file ``path`` (atomically:
        temporary file, then rename) without building it in memory.  Returns False,
        writing nothing, if every inner chunk is empty."""
        cdef Py_ssize_t n = task_of_chunk.shape[0], i, r
        cdef Py_ssize_t index_nbytes = 16 * n + (4 if index_crc else 0)
        cdef const uint8_t** ptrs = <const uint8_t**>malloc((n + 1) * sizeof(void*))
        cdef Py_ssize_t* lens = <Py_ssize_t*>malloc((n + 1) * sizeof(Py_ssize_t))
        cdef size_t* sizes = <size_t*>malloc((n + 1) * sizeof(size_t))
        cdef uint8_t* index = <uint8_t*>malloc(index_nbytes)
        cdef const char* cpath = path
        cdef const char* csuffix = tmp_suffix
        cdef ZcError err
        cdef bint any_data = False
        try:
            if ptrs == NULL or lens == NULL or sizes == NULL or index == NULL:
                raise MemoryError()
            # the index goes first or last: chunks in ptrs[1..n] or ptrs[0..n-1]
            self.shard_parts(task_of_chunk, old_parts, ptrs + (1 if index_at_start else 0),
                             lens + (1 if index_at_start else 0))
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
                r = write_parts(cpath, csuffix, ptrs, sizes, n + 1, &err)
            if r < 0:
                raise_task_error(&err, f"shard {path.decode(errors='replace')}: ")
            return True
        finally:
            free(ptrs)
            free(lens)
            free(sizes)
            free(index)

    def encoded(self, Py_ssize_t t):
        """The encoded chunk of a STORED task that had no path (bytes), else None."""
        if self.results[t] == NULL:
            return None
        return PyBytes_FromStringAndSize(<const char*>self.results[t], self.result_len[t])
