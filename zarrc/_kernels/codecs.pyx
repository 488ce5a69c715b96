# cython: language_level=3, boundscheck=False, wraparound=False, cdivision=True
"""Native codec kernels: blosc, zstd, zlib/gzip/raw deflate and crc32c.

Every function here releases the GIL while it compresses, decompresses or
checksums, and uses only re-entrant C calls (a blosc context per call, a zstd
context per call or per worker, a zlib stream per call), so Python threads run
them in parallel.  Decoders check every size they are told (block headers, frame
content sizes, the caller's expected size) before they write, never read or write
outside the buffers they are given, and report bad input as :class:`KernelError`.
"""

from cpython.buffer cimport (PyBUF_ANY_CONTIGUOUS, PyBUF_WRITABLE, PyBuffer_Release,
                             PyObject_GetBuffer)
from cpython.bytes cimport PyBytes_AS_STRING, PyBytes_FromStringAndSize
from libc.stddef cimport ptrdiff_t
from libc.stdint cimport int64_t, uint8_t, uint32_t
from libc.stdlib cimport free, malloc, realloc
from libc.string cimport memcpy, memset

import numpy as np

# ---------------------------------------------------------------- C libraries

cdef extern from "blosc.h" nogil:
    int BLOSC_MAX_OVERHEAD
    int BLOSC_MAX_BUFFERSIZE
    int BLOSC_MAX_TYPESIZE
    int BLOSC_VERSION_FORMAT
    int blosc_compress_ctx(int clevel, int doshuffle, size_t typesize, size_t nbytes,
                           const void* src, void* dest, size_t destsize,
                           const char* compressor, size_t blocksize, int numinternalthreads)
    int blosc_decompress_ctx(const void* src, void* dest, size_t destsize,
                             int numinternalthreads)
    int blosc_getitem(const void* src, int start, int nitems, void* dest)
    void blosc_cbuffer_sizes(const void* cbuffer, size_t* nbytes, size_t* cbytes,
                             size_t* blocksize)
    int blosc_compname_to_compcode(const char* compname)
    const char* blosc_list_compressors()
    const char* blosc_get_version_string()

cdef extern from "zstd.h" nogil:
    ctypedef enum ZSTD_cParameter:
        ZSTD_c_compressionLevel
        ZSTD_c_checksumFlag
    ctypedef enum ZSTD_ResetDirective:
        ZSTD_reset_session_only
        ZSTD_reset_session_and_parameters
    size_t ZSTD_DCtx_reset(ZSTD_DCtx* dctx, ZSTD_ResetDirective reset)
    size_t ZSTD_findFrameCompressedSize(const void* src, size_t srcSize)
    unsigned long long ZSTD_CONTENTSIZE_UNKNOWN
    unsigned long long ZSTD_CONTENTSIZE_ERROR
    ZSTD_CCtx* ZSTD_createCCtx()
    size_t ZSTD_freeCCtx(ZSTD_CCtx* cctx)
    size_t ZSTD_CCtx_reset(ZSTD_CCtx* cctx, ZSTD_ResetDirective reset)
    size_t ZSTD_CCtx_setParameter(ZSTD_CCtx* cctx, ZSTD_cParameter param, int value)
    size_t ZSTD_compress2(ZSTD_CCtx* cctx, void* dst, size_t dstCapacity,
                          const void* src, size_t srcSize)
    ZSTD_DCtx* ZSTD_createDCtx()
    size_t ZSTD_freeDCtx(ZSTD_DCtx* dctx)
    size_t ZSTD_decompressDCtx(ZSTD_DCtx* dctx, void* dst, size_t dstCapacity,
                               const void* src, size_t srcSize)
    unsigned long long ZSTD_findDecompressedSize(const void* src, size_t srcSize)
    size_t ZSTD_compressBound(size_t srcSize)
    unsigned ZSTD_isError(size_t code)
    const char* ZSTD_getErrorName(size_t code)
    int ZSTD_minCLevel()
    int ZSTD_maxCLevel()
    unsigned ZSTD_versionNumber()
    ctypedef struct ZSTD_inBuffer:
        const void* src
        size_t size
        size_t pos
    ctypedef struct ZSTD_outBuffer:
        void* dst
        size_t size
        size_t pos
    size_t ZSTD_decompressStream(ZSTD_DCtx* zds, ZSTD_outBuffer* output, ZSTD_inBuffer* input)

cdef extern from "zstd_errors.h" nogil:
    ctypedef enum ZSTD_ErrorCode:
        ZSTD_error_dstSize_tooSmall
        ZSTD_error_srcSize_wrong
        ZSTD_error_memory_allocation
    ZSTD_ErrorCode ZSTD_getErrorCode(size_t functionResult)

cdef extern from "zlib.h" nogil:
    ctypedef struct z_stream:
        const uint8_t* next_in
        unsigned int avail_in
        uint8_t* next_out
        unsigned int avail_out
        const char* msg
    int Z_OK, Z_STREAM_END, Z_NEED_DICT, Z_DATA_ERROR, Z_MEM_ERROR, Z_BUF_ERROR
    int Z_NO_FLUSH
    int inflateInit2(z_stream* strm, int windowBits)
    int z_inflate "inflate"(z_stream* strm, int flush)
    int inflateReset(z_stream* strm)
    int inflateEnd(z_stream* strm)
    const char* zlibVersion()

cdef extern from "libdeflate.h" nogil:
    struct libdeflate_decompressor:
        pass
    struct libdeflate_compressor:
        pass
    libdeflate_compressor* libdeflate_alloc_compressor(int level)
    void libdeflate_free_compressor(libdeflate_compressor* c)
    size_t libdeflate_gzip_compress(libdeflate_compressor* c, const void* src, size_t n,
                                    void* dst, size_t avail)
    size_t libdeflate_zlib_compress(libdeflate_compressor* c, const void* src, size_t n,
                                    void* dst, size_t avail)
    size_t libdeflate_deflate_compress(libdeflate_compressor* c, const void* src, size_t n,
                                       void* dst, size_t avail)
    size_t libdeflate_gzip_compress_bound(libdeflate_compressor* c, size_t n)
    size_t libdeflate_zlib_compress_bound(libdeflate_compressor* c, size_t n)
    size_t libdeflate_deflate_compress_bound(libdeflate_compressor* c, size_t n)
    enum libdeflate_result:
        LIBDEFLATE_SUCCESS
        LIBDEFLATE_BAD_DATA
        LIBDEFLATE_SHORT_OUTPUT
        LIBDEFLATE_INSUFFICIENT_SPACE
    libdeflate_decompressor* libdeflate_alloc_decompressor()
    void libdeflate_free_decompressor(libdeflate_decompressor* d)
    libdeflate_result libdeflate_gzip_decompress_ex(libdeflate_decompressor* d, const void* src,
                                                    size_t n, void* dst, size_t avail,
                                                    size_t* in_used, size_t* out_made)
    libdeflate_result libdeflate_zlib_decompress_ex(libdeflate_decompressor* d, const void* src,
                                                    size_t n, void* dst, size_t avail,
                                                    size_t* in_used, size_t* out_made)
    libdeflate_result libdeflate_deflate_decompress_ex(libdeflate_decompressor* d, const void* src,
                                                       size_t n, void* dst, size_t avail,
                                                       size_t* in_used, size_t* out_made)


cdef extern from "src/blosc_rows.h" nogil:
    int64_t zc_blosc_rows_c "zc_blosc_decode_rows" (const uint8_t* src, size_t n, size_t nbytes,
                                                     const zc_rows* rows, uint8_t* tmp, size_t tmp_cap)


cdef extern from "src/blosc_partial.h" nogil:
    ctypedef struct zc_frame:
        int io_errno
    void zc_frame_file(zc_frame* f, int fd, int64_t base, int64_t size)
    void zc_frame_release(zc_frame* f)
    const uint8_t* zc_frame_get(zc_frame* f, int64_t pos, size_t n)
    int64_t zc_blosc_partial_frame(zc_frame* f, size_t start, size_t len, uint8_t* dst)
    int64_t zc_blosc_partial(const uint8_t* src, size_t n, size_t start, size_t length, uint8_t* dst)


cdef extern from "src/crc32c.h" nogil:
    uint32_t zc_crc32c(uint32_t crc, const void* buf, size_t len)
    uint32_t zc_crc32c_software(uint32_t crc, const void* buf, size_t len)
    int zc_crc32c_hardware_available()


# ---------------------------------------------------------------- errors

class KernelError(Exception):
    """A codec kernel refused its input.

    ``code`` is one of the ZC_* codes (see ``codecs.pxd``); ``expected`` and
    ``actual`` carry the sizes or checksums involved, ``codec`` the codec name.
    The Python codec layer turns it into a :class:`zarrc.errors.CodecError`.
    """

    def __init__(self, message, codec, code, expected, actual):
        super().__init__(message)
        self.codec = codec
        self.code = code
        self.expected = expected
        self.actual = actual


CORRUPT = ZC_CORRUPT
TRUNCATED = ZC_TRUNCATED
SIZE = ZC_SIZE
TOO_LARGE = ZC_TOO_LARGE
PARAM = ZC_PARAM
UNSUPPORTED = ZC_UNSUPPORTED
CHECKSUM = ZC_CHECKSUM

cdef enum:
    GZIP_MAGIC_0 = 0x1f
    GZIP_MAGIC_1 = 0x8b
    ZSTD_CHECKSUM_FLAG = 0x04      # in a zstd frame header's descriptor byte

cdef uint32_t ZSTD_MAGIC = 0xFD2FB528


cdef str describe(ZcError* err, Py_ssize_t nin):
    detail = err.detail.decode("utf-8", "replace") if err.detail != NULL else ""
    code, exp, act = err.code, err.expected, err.actual
    if code == ZC_IO:
        import os
        return f"{detail} failed: {os.strerror(act)}"
    if code == ZC_TRUNCATED:
        what = f" ({detail})" if detail else ""
        return f"input truncated{what}: needs {exp} bytes, holds {act}"
    if code == ZC_SIZE:
        return f"{detail or 'data decodes to'} {act} bytes, {exp} expected"
    if code == ZC_TOO_LARGE:
        return f"data decodes to more than the {exp} bytes expected"
    if code == ZC_CHECKSUM:
        what = f"{detail} " if detail else ""
        return f"{what}checksum mismatch: stored 0x{exp:08x}, computed 0x{act:08x}"
    if code == ZC_CORRUPT:
        where = f" in {nin} bytes of input" if nin >= 0 else ""
        return f"corrupt data ({detail}){where}"
    return detail or f"error {code}"


cdef object raise_error(str codec, ZcError* err, Py_ssize_t nin):
    if err.code == ZC_NOMEM:
        raise MemoryError(f"{codec}: out of memory")
    raise KernelError(f"{codec}: {describe(err, nin)}", codec, err.code, err.expected, err.actual)


# ---------------------------------------------------------------- buffers

cdef class _View:
    """A contiguous buffer held for the duration of a kernel call."""
    cdef Py_buffer buf
    cdef bint held

    def __cinit__(self, obj, bint writable=False):
        cdef int flags = PyBUF_ANY_CONTIGUOUS
        if writable:
            flags |= PyBUF_WRITABLE
        PyObject_GetBuffer(obj, &self.buf, flags)
        self.held = True

    def __dealloc__(self):
        if self.held:
            PyBuffer_Release(&self.buf)

    cdef inline uint8_t* ptr(self) noexcept nogil:
        return <uint8_t*>self.buf.buf

    cdef inline size_t size(self) noexcept nogil:
        return <size_t>self.buf.len


cdef bytes _new_bytes(size_t n):
    return PyBytes_FromStringAndSize(NULL, <Py_ssize_t>n)


cdef bytes _shrink(bytes out, Py_ssize_t n):
    # A copy of the compressed bytes: small next to the compression itself.
    return out if n == len(out) else out[:n]


cdef extern from "Python.h":
    int PyBuffer_FillInfo(Py_buffer* view, object exporter, void* buf, Py_ssize_t len,
                          int readonly, int flags) except -1


cdef class NewBytes:
    """A new, uninitialised bytes object of ``n`` bytes, writable through the buffer
    protocol so that parallel decoders can fill it; ``take()`` hands it out."""
    cdef bytes obj

    def __cinit__(self, Py_ssize_t n):
        self.obj = PyBytes_FromStringAndSize(NULL, n)

    def __getbuffer__(self, Py_buffer* view, int flags):
        PyBuffer_FillInfo(view, self, PyBytes_AS_STRING(self.obj), len(self.obj), 0, flags)

    def __releasebuffer__(self, Py_buffer* view):
        pass

    def take(self):
        return self.obj


# ---------------------------------------------------------------- blosc

cdef Py_ssize_t zc_blosc_compress(const uint8_t* src, size_t n, uint8_t* dst, size_t cap,
                                  int clevel, int shuffle, size_t typesize,
                                  const char* cname, size_t blocksize, int nthreads,
                                  ZcError* err) noexcept nogil:
    cdef int r
    if n > <size_t>(BLOSC_MAX_BUFFERSIZE):
        return fail(err, ZC_PARAM, BLOSC_MAX_BUFFERSIZE, n, "input exceeds blosc's 2 GiB limit")
    if clevel < 0 or clevel > 9:
        return fail(err, ZC_PARAM, 9, clevel, "clevel must be in 0..9")
    if shuffle < 0 or shuffle > 2:
        return fail(err, ZC_PARAM, 2, shuffle, "shuffle must be 0, 1 or 2")
    if blosc_compname_to_compcode(cname) < 0:
        return fail(err, ZC_UNSUPPORTED, 0, 0, "compressor is not built into this blosc")
    if typesize < 1:
        typesize = 1
    if cap < n + BLOSC_MAX_OVERHEAD:
        return fail(err, ZC_PARAM, n + BLOSC_MAX_OVERHEAD, cap, "output buffer too small")
    r = blosc_compress_ctx(clevel, shuffle, typesize, n, src, dst, cap, cname, blocksize,
                           nthreads if nthreads > 0 else 1)
    if r <= 0:
        return fail(err, ZC_CORRUPT, 0, r, "blosc_compress_ctx failed")
    return r


cdef inline void header_sizes(const uint8_t* src, size_t* nbytes, size_t* cbytes,
                              size_t* blocksize) noexcept nogil:
    # blosc_cbuffer_sizes reads the fields as int32 and sign-extends values of 2**31
    # and more; they are unsigned 32-bit sizes (so messages never show negative sizes)
    blosc_cbuffer_sizes(src, nbytes, cbytes, blocksize)
    nbytes[0] &= 0xFFFFFFFFu
    cbytes[0] &= 0xFFFFFFFFu
    blocksize[0] &= 0xFFFFFFFFu


cdef Py_ssize_t zc_blosc_decoded_size(const uint8_t* src, size_t n, ZcError* err) noexcept nogil:
    cdef size_t nbytes, cbytes, blocksize, nblocks
    if n < 16:
        return fail(err, ZC_TRUNCATED, 16, n, "blosc header")
    if src[0] != BLOSC_VERSION_FORMAT:
        return fail(err, ZC_CORRUPT, BLOSC_VERSION_FORMAT, src[0], "unknown blosc format version")
    header_sizes(src, &nbytes, &cbytes, &blocksize)
    if cbytes > n:
        return fail(err, ZC_TRUNCATED, cbytes, n, "header's compressed size")
    if cbytes < 16:
        return fail(err, ZC_CORRUPT, 16, cbytes, "header claims fewer bytes than a header")
    if nbytes > <size_t>BLOSC_MAX_BUFFERSIZE:
        return fail(err, ZC_CORRUPT, BLOSC_MAX_BUFFERSIZE, nbytes, "header claims over 2 GiB")
    if nbytes > 0 and src[3] == 0:
        return fail(err, ZC_CORRUPT, 1, 0, "header has typesize 0")
    if (src[2] & 0x02) and cbytes != nbytes + 16:
        return fail(err, ZC_CORRUPT, nbytes + 16, cbytes, "memcpyed buffer has the wrong size")
    if nbytes > 0:
        # c-blosc refuses these frames too, but only once the caller has allocated the
        # nbytes the header claims: check them first
        if blocksize == 0 or blocksize > nbytes:
            return fail(err, ZC_CORRUPT, nbytes, blocksize, "header's block size does not fit its data")
        nblocks = (nbytes - 1) // blocksize + 1
        if not (src[2] & 0x02) and nblocks > (cbytes - 16) // 4:
            return fail(err, ZC_CORRUPT, (cbytes - 16) // 4, nblocks,
                        "header claims more blocks than the frame has offsets for")
    return <Py_ssize_t>nbytes


cdef Py_ssize_t zc_blosc_decode_into(const uint8_t* src, size_t n, uint8_t* dst, size_t expected,
                                     int nthreads, ZcError* err) noexcept nogil:
    cdef Py_ssize_t nbytes = zc_blosc_decoded_size(src, n, err)
    cdef int r
    if nbytes < 0:
        return -1
    if <size_t>nbytes != expected:
        return fail(err, ZC_SIZE, expected, nbytes, "header claims")
    if nbytes == 0:
        return 0
    r = blosc_decompress_ctx(src, dst, expected, nthreads if nthreads > 0 else 1)
    if r < 0:
        return fail(err, ZC_CORRUPT, 0, r, "blosc_decompress_ctx failed")
    if r != nbytes:
        return fail(err, ZC_SIZE, nbytes, r, "decoded")
    return nbytes


cdef Py_ssize_t zc_blosc_decode_rows(const uint8_t* src, size_t n, size_t nbytes, const zc_rows* rows,
                                     uint8_t* tmp, size_t tmp_cap) noexcept nogil:
    return <Py_ssize_t>zc_blosc_rows_c(src, n, nbytes, rows, tmp, tmp_cap)


cdef Py_ssize_t zc_blosc_decode_range(const uint8_t* src, size_t n, size_t start, size_t length,
                                      uint8_t* dst, ZcError* err) noexcept nogil:
    cdef Py_ssize_t nbytes = zc_blosc_decoded_size(src, n, err)
    cdef size_t typesize
    cdef int r
    if nbytes < 0:
        return -1
    if start > <size_t>nbytes or length > <size_t>nbytes - start:
        return fail(err, ZC_PARAM, nbytes, start + length, "byte range ends past the decoded size")
    if length == 0:
        return 0
    typesize = src[3]
    if start % typesize or length % typesize:
        return fail(err, ZC_PARAM, typesize, start, "byte range is not aligned to the typesize")
    cdef int64_t done = zc_blosc_partial(src, n, start, length, dst)
    if done == <int64_t>length:
        return <Py_ssize_t>length
    if done < 0:
        return fail(err, ZC_CORRUPT, 0, 0, "blosc block is corrupt")
    r = blosc_getitem(src, <int>(start // typesize), <int>(length // typesize), dst)
    if r < 0:
        return fail(err, ZC_CORRUPT, 0, r, "blosc_getitem failed")
    if <size_t>r != length:
        return fail(err, ZC_SIZE, length, r, "decoded")
    return r


cdef Py_ssize_t zc_blosc_file_range(int fd, int64_t base, int64_t size, size_t expected, size_t start,
                                    size_t length, uint8_t* dst, ZcError* err) noexcept nogil:
    """Decoded bytes [start, start + length) of the blosc frame at bytes [base, base +
    size) of the open file ``fd``, reading only the parts of the frame that hold
    them (see src/blosc_partial.c).  ``length``, -1 with ``err`` set if the header is
    wrong (as zc_blosc_decode_into would say), or 0: not done here (a layout that
    needs whole blocks, a range past ZC_PARTIAL_MAX, a corrupt stream or a failed
    read; decoding the whole frame gives the data or words the error)."""
    cdef zc_frame f
    cdef const uint8_t* header
    cdef Py_ssize_t nbytes, r = 0
    if length == 0 or length > ZC_PARTIAL_MAX:
        return 0
    zc_frame_file(&f, fd, base, size)
    header = zc_frame_get(&f, 0, 16)
    if header != NULL:
        nbytes = zc_blosc_decoded_size(header, <size_t>size, err)
        if nbytes < 0:
            r = -1
        elif <size_t>nbytes != expected:
            r = fail(err, ZC_SIZE, expected, nbytes, "header claims")
        elif zc_blosc_partial_frame(&f, start, length, dst) == <int64_t>length:
            r = <Py_ssize_t>length
    zc_frame_release(&f)
    return r


def blosc_compress(data, int clevel, int shuffle, size_t typesize, str cname,
                   size_t blocksize=0, int nthreads=1):
    """Compress ``data`` (any contiguous buffer) into a blosc frame; returns bytes."""
    cdef _View src = _View(data)
    cdef bytes cn = cname.encode("ascii")
    cdef const char* cnp = cn
    cdef ZcError err
    cdef size_t n = src.size()
    cdef size_t cap = n + BLOSC_MAX_OVERHEAD
    cdef bytes out
    cdef uint8_t* dst
    cdef Py_ssize_t r
    if blosc_compname_to_compcode(cnp) < 0:
        raise KernelError(
            f"blosc: compressor {cname!r} is not available in this build "
            f"(available: {blosc_list_compressors().decode()})",
            "blosc", ZC_UNSUPPORTED, 0, 0)
    out = _new_bytes(cap)
    dst = <uint8_t*>PyBytes_AS_STRING(out)
    with nogil:
        r = zc_blosc_compress(src.ptr(), n, dst, cap, clevel, shuffle, typesize, cnp,
                              blocksize, nthreads, &err)
    if r < 0:
        raise_error("blosc", &err, n)
    return _shrink(out, r)


def blosc_decoded_size(data):
    """Decoded size claimed by a blosc frame's header, after validating the header."""
    cdef _View src = _View(data)
    cdef ZcError err
    cdef Py_ssize_t r = zc_blosc_decoded_size(src.ptr(), src.size(), &err)
    if r < 0:
        raise_error("blosc", &err, src.size())
    return r


def blosc_header(data):
    """(nbytes, cbytes, blocksize, typesize, flags) of a valid blosc frame."""
    cdef _View src = _View(data)
    cdef ZcError err
    cdef size_t nbytes, cbytes, blocksize
    if zc_blosc_decoded_size(src.ptr(), src.size(), &err) < 0:
        raise_error("blosc", &err, src.size())
    header_sizes(src.ptr(), &nbytes, &cbytes, &blocksize)
    return nbytes, cbytes, blocksize, src.ptr()[3], src.ptr()[2]


def blosc_decode_into(data, out, int nthreads=1):
    """Decode a blosc frame into ``out``, whose size must equal the decoded size."""
    cdef _View src = _View(data)
    cdef _View dst = _View(out, True)
    cdef ZcError err
    cdef Py_ssize_t r
    with nogil:
        r = zc_blosc_decode_into(src.ptr(), src.size(), dst.ptr(), dst.size(), nthreads, &err)
    if r < 0:
        raise_error("blosc", &err, src.size())
    return r


def blosc_decode(data, int nthreads=1):
    """Decode a blosc frame into new bytes (size taken from the validated header)."""
    cdef _View src = _View(data)
    cdef ZcError err
    cdef Py_ssize_t r, nbytes = zc_blosc_decoded_size(src.ptr(), src.size(), &err)
    if nbytes < 0:
        raise_error("blosc", &err, src.size())
    cdef bytes out = _new_bytes(nbytes)
    cdef uint8_t* dst = <uint8_t*>PyBytes_AS_STRING(out)
    with nogil:
        r = zc_blosc_decode_into(src.ptr(), src.size(), dst, nbytes, nthreads, &err)
    if r < 0:
        raise_error("blosc", &err, src.size())
    return out


def blosc_decode_rows(data, out, count=None):
    """Decode a whole blosc frame into ``out`` row by row, the way a chunk's frame is
    decoded into its place in a larger output (no chunk-sized buffer).

    ``out``: a writable numpy array of the chunk's shape (the frame decodes to its
    size, in C order) whose last axis is contiguous; other axes may have any
    strides (a region of a larger array).  ``count``: per axis, how many leading
    positions to write (rows and items past an array's edge are skipped; default:
    all).  Returns True, or False when the frame is not one decoded this way
    (byte-shuffled LZ4 of typesize 2, 4 or 8, or stored as is): ``out`` may then
    be partly written.
    """
    cdef _View src = _View(data)
    cdef zc_rows rows
    cdef Py_ssize_t nd = out.ndim, itemsize = out.itemsize
    cdef Py_ssize_t r = -1, nbytes = out.nbytes
    cdef uint8_t* tmp
    if nd < 1 or out.strides[nd - 1] != itemsize or not out.flags.writeable:
        raise ValueError("out must be writable, at least 1-d, its last axis contiguous")
    count = tuple(out.shape) if count is None else tuple(count)
    if len(count) != nd or any(not 0 < c <= n for c, n in zip(count, out.shape)):
        raise ValueError(f"count {count} does not fit shape {out.shape}")
    row_items = out.shape[nd - 1]
    if count == tuple(out.shape) and out.flags.c_contiguous:
        nd = 1                          # one row: the whole chunk
        row_items = out.size
        count = (row_items,)
    shape = np.array(out.shape[:nd - 1], np.int64)
    counts = np.array(count[:nd - 1], np.int64)
    offs = [np.arange(n, dtype=np.intp) * out.strides[d] for d, n in enumerate(out.shape[:nd - 1])]
    ptrs = np.array([o.ctypes.data for o in offs] or [0], np.uintp)
    cdef const int64_t[::1] shape_v = shape
    cdef const int64_t[::1] count_v = counts
    cdef const size_t[::1] ptr_v = ptrs
    rows.nlead = <int>(nd - 1)
    rows.shape = &shape_v[0] if nd > 1 else NULL
    rows.count = &count_v[0] if nd > 1 else NULL
    rows.off = <const ptrdiff_t* const*>&ptr_v[0]
    rows.row_bytes = <size_t>(row_items * itemsize)
    rows.keep_bytes = <size_t>(count[nd - 1] * itemsize)
    rows.dst = <char*><size_t>out.ctypes.data
    rows.stream = 0
    with nogil:
        tmp = <uint8_t*>malloc(max(1, nbytes))
        if tmp != NULL:
            r = zc_blosc_decode_rows(src.ptr(), src.size(), <size_t>nbytes, &rows, tmp, <size_t>nbytes)
            free(tmp)
    if tmp == NULL:
        raise MemoryError()
    return r > 0


def blosc_decode_range(data, size_t start, out):
    """Decode decoded bytes [start, start + len(out)) of a blosc frame into ``out``.

    Only the blocks that hold the range are decompressed.  ``start`` and
    ``len(out)`` must be multiples of the frame's typesize.
    """
    cdef _View src = _View(data)
    cdef _View dst = _View(out, True)
    cdef ZcError err
    cdef Py_ssize_t r
    with nogil:
        r = zc_blosc_decode_range(src.ptr(), src.size(), start, dst.size(), dst.ptr(), &err)
    if r < 0 and err.code == ZC_PARAM:
        # the header is valid here (it was checked first): name the range and the frame
        nbytes, _, _, typesize, _ = blosc_header(data)
        raise KernelError(
            f"blosc: {err.detail.decode()}: bytes [{start}, {start + dst.size()}) requested, "
            f"frame decodes to {nbytes} bytes with typesize {typesize}",
            "blosc", ZC_PARAM, err.expected, err.actual)
    if r < 0:
        raise_error("blosc", &err, src.size())
    return r


def blosc_compressors():
    """Names of the compressors this blosc build supports."""
    return blosc_list_compressors().decode().split(",")


# ---------------------------------------------------------------- zstd

cdef Py_ssize_t zstd_fail(ZcError* err, size_t code, size_t expected, size_t n) noexcept nogil:
    cdef ZSTD_ErrorCode e = ZSTD_getErrorCode(code)
    if e == ZSTD_error_dstSize_tooSmall:
        return fail(err, ZC_TOO_LARGE, expected, 0, NULL)
    if e == ZSTD_error_srcSize_wrong:
        return fail(err, ZC_TRUNCATED, n + 1, n, "zstd frame")
    if e == ZSTD_error_memory_allocation:
        return fail(err, ZC_NOMEM, 0, 0, NULL)
    return fail(err, ZC_CORRUPT, 0, 0, ZSTD_getErrorName(code))


cdef Py_ssize_t zc_zstd_compress(ZSTD_CCtx* cctx, const uint8_t* src, size_t n, uint8_t* dst,
                                 size_t cap, int level, bint checksum,
                                 ZcError* err) noexcept nogil:
    cdef bint own = cctx == NULL
    cdef size_t r
    if level < ZSTD_minCLevel() or level > ZSTD_maxCLevel():
        return fail(err, ZC_PARAM, ZSTD_maxCLevel(), level, "level out of zstd's range")
    if own:
        cctx = ZSTD_createCCtx()
        if cctx == NULL:
            return fail(err, ZC_NOMEM, 0, 0, NULL)
    else:
        ZSTD_CCtx_reset(cctx, ZSTD_reset_session_and_parameters)
    ZSTD_CCtx_setParameter(cctx, ZSTD_c_compressionLevel, level)
    ZSTD_CCtx_setParameter(cctx, ZSTD_c_checksumFlag, 1 if checksum else 0)
    r = ZSTD_compress2(cctx, dst, cap, src, n)
    if own:
        ZSTD_freeCCtx(cctx)
    if ZSTD_isError(r):
        return zstd_fail(err, r, cap, n)
    return <Py_ssize_t>r


cdef Py_ssize_t zc_zstd_decoded_size(const uint8_t* src, size_t n, ZcError* err) noexcept nogil:
    """Total decoded size of the frames in src, -2 if a frame does not record it."""
    cdef unsigned long long size
    if n == 0:
        return fail(err, ZC_TRUNCATED, 4, 0, "zstd frame")
    size = ZSTD_findDecompressedSize(src, n)
    if size == ZSTD_CONTENTSIZE_ERROR:
        return fail(err, ZC_CORRUPT, 0, 0, "not a valid sequence of zstd frames")
    if size == ZSTD_CONTENTSIZE_UNKNOWN:
        return -2
    if size > <unsigned long long>(<size_t>-1 >> 1):
        return fail(err, ZC_CORRUPT, 0, 0, "frame claims an impossible size")
    # Each block has a 3-byte header and decodes to at most 128 KiB, so n bytes of
    # frames decode to at most n // 3 * 128 KiB: refuse larger claims before a
    # caller allocates what a corrupt header asks for.
    if size // 131072 > n // 3:
        return fail(err, ZC_CORRUPT, 0, 0, "frame header claims more than its blocks can hold")
    return <Py_ssize_t>size


cdef Py_ssize_t zc_zstd_decode_into(ZSTD_DCtx* dctx, const uint8_t* src, size_t n, uint8_t* dst,
                                    size_t expected, ZcError* err) noexcept nogil:
    cdef Py_ssize_t claimed = zc_zstd_decoded_size(src, n, err)
    cdef bint own = dctx == NULL
    cdef size_t r
    if claimed == -1:
        return -1
    if claimed >= 0 and <size_t>claimed != expected:
        return fail(err, ZC_SIZE, expected, claimed, "frame header claims")
    if own:
        dctx = ZSTD_createDCtx()
        if dctx == NULL:
            return fail(err, ZC_NOMEM, 0, 0, NULL)
    r = ZSTD_decompressDCtx(dctx, dst, expected, src, n)
    if own:
        ZSTD_freeDCtx(dctx)
    if ZSTD_isError(r):
        return zstd_fail(err, r, expected, n)
    if r != expected:
        return fail(err, ZC_SIZE, expected, r, NULL)
    return <Py_ssize_t>r


cdef Py_ssize_t zc_zstd_decode_prefix(ZSTD_DCtx* dctx, const uint8_t* src, size_t n,
                                      uint8_t* dst, size_t want, ZcError* err) noexcept nogil:
    """Decode only the first ``want`` bytes of the single zstd frame src[0..n) into
    dst (a small read of a large chunk stops there).  Returns want; -2 if src is not
    one frame without a content checksum (only a whole decode can verify one), or
    -1 with ``err``.  The caller checks the frame's content size first."""
    cdef ZSTD_inBuffer inb
    cdef ZSTD_outBuffer outb
    cdef size_t r, last_in, last_out
    if n < 5 or load_le32(src) != ZSTD_MAGIC or (src[4] & ZSTD_CHECKSUM_FLAG):
        return -2
    if ZSTD_findFrameCompressedSize(src, n) != n:
        return -2
    ZSTD_DCtx_reset(dctx, ZSTD_reset_session_only)
    inb.src, inb.size, inb.pos = src, n, 0
    outb.dst, outb.size, outb.pos = dst, want, 0
    while outb.pos < want:
        last_in, last_out = inb.pos, outb.pos
        r = ZSTD_decompressStream(dctx, &outb, &inb)
        if ZSTD_isError(r):
            return zstd_fail(err, r, want, n)
        if inb.pos == last_in and outb.pos == last_out:      # no input left to go on
            return fail(err, ZC_TRUNCATED, n + 1, n, "zstd frame")
    return <Py_ssize_t>want


cdef Py_ssize_t zstd_decode_grow(const uint8_t* src, size_t n, uint8_t** out,
                                 ZcError* err) noexcept nogil:
    """Stream-decode frames whose size is not recorded, into a growing malloc buffer."""
    cdef ZSTD_DCtx* dctx = ZSTD_createDCtx()
    cdef ZSTD_inBuffer inb
    cdef ZSTD_outBuffer outb
    cdef size_t cap = n * 4 if n * 4 > 65536 else 65536
    cdef size_t r = 1
    cdef uint8_t* buf = <uint8_t*>malloc(cap)
    cdef uint8_t* grown
    if dctx == NULL or buf == NULL:
        ZSTD_freeDCtx(dctx)
        free(buf)
        return fail(err, ZC_NOMEM, 0, 0, NULL)
    inb.src = src
    inb.size = n
    inb.pos = 0
    outb.dst = buf
    outb.size = cap
    outb.pos = 0
    while True:
        if outb.pos == outb.size:
            cap *= 2
            grown = <uint8_t*>realloc(buf, cap)
            if grown == NULL:
                ZSTD_freeDCtx(dctx)
                free(buf)
                return fail(err, ZC_NOMEM, 0, 0, NULL)
            buf = grown
            outb.dst = buf
            outb.size = cap
        r = ZSTD_decompressStream(dctx, &outb, &inb)
        if ZSTD_isError(r):
            ZSTD_freeDCtx(dctx)
            free(buf)
            return zstd_fail(err, r, 0, n)
        if inb.pos == inb.size and outb.pos < outb.size:
            break
    ZSTD_freeDCtx(dctx)
    if r != 0:
        free(buf)
        return fail(err, ZC_TRUNCATED, n + 1, n, "zstd frame")
    out[0] = buf
    return <Py_ssize_t>outb.pos


def zstd_compress(data, int level=3, bint checksum=False):
    """Compress ``data`` into one zstd frame (content size recorded); returns bytes."""
    cdef _View src = _View(data)
    cdef ZcError err
    cdef size_t n = src.size()
    cdef size_t cap = ZSTD_compressBound(n)
    cdef bytes out = _new_bytes(cap)
    cdef uint8_t* dst = <uint8_t*>PyBytes_AS_STRING(out)
    cdef Py_ssize_t r
    with nogil:
        r = zc_zstd_compress(NULL, src.ptr(), n, dst, cap, level, checksum, &err)
    if r < 0:
        raise_error("zstd", &err, n)
    return _shrink(out, r)


def zstd_decode_into(data, out):
    """Decode zstd frames into ``out``, whose size must equal the decoded size."""
    cdef _View src = _View(data)
    cdef _View dst = _View(out, True)
    cdef ZcError err
    cdef Py_ssize_t r
    with nogil:
        r = zc_zstd_decode_into(NULL, src.ptr(), src.size(), dst.ptr(), dst.size(), &err)
    if r < 0:
        raise_error("zstd", &err, src.size())
    return r


def zstd_decode(data):
    """Decode zstd frames into new bytes."""
    cdef _View src = _View(data)
    cdef ZcError err
    cdef Py_ssize_t r, size = zc_zstd_decoded_size(src.ptr(), src.size(), &err)
    cdef uint8_t* grown = NULL
    cdef bytes out
    if size == -1:
        raise_error("zstd", &err, src.size())
    cdef uint8_t* dst
    if size >= 0:
        out = _new_bytes(size)
        dst = <uint8_t*>PyBytes_AS_STRING(out)
        with nogil:
            r = zc_zstd_decode_into(NULL, src.ptr(), src.size(), dst, size, &err)
        if r < 0:
            raise_error("zstd", &err, src.size())
        return out
    with nogil:
        r = zstd_decode_grow(src.ptr(), src.size(), &grown, &err)
    if r < 0:
        raise_error("zstd", &err, src.size())
    try:
        return PyBytes_FromStringAndSize(<char*>grown, r)
    finally:
        free(grown)


def zstd_levels():
    """(min, max) compression level of this zstd."""
    return ZSTD_minCLevel(), ZSTD_maxCLevel()


# ---------------------------------------------------------------- deflate (zlib, gzip, raw)

cdef size_t CHUNK = 1 << 30   # zlib counts in unsigned int; feed it at most this much at once


cdef size_t zc_deflate_bound(size_t n, int fmt) noexcept nogil:
    """The output size zc_deflate needs at most for n input bytes."""
    if fmt == ZC_GZIP:
        return libdeflate_gzip_compress_bound(NULL, n)
    if fmt == ZC_ZLIB:
        return libdeflate_zlib_compress_bound(NULL, n)
    return libdeflate_deflate_compress_bound(NULL, n)


cdef void zc_deflater_free(Deflater* keep) noexcept nogil:
    if keep.comp != NULL:
        libdeflate_free_compressor(<libdeflate_compressor*>keep.comp)
        keep.comp = NULL


cdef Py_ssize_t zc_deflate(Deflater* keep, const uint8_t* src, size_t n, uint8_t* dst, size_t cap,
                           int level, int fmt, ZcError* err) noexcept nogil:
    """Deflate src with libdeflate (2-3x zlib's speed; any inflater reads it): a zlib
    stream (ZC_ZLIB), a gzip member with mtime 0 (ZC_GZIP) or raw deflate.  Level -1
    is zlib's default, 6.  ``keep`` (NULL: none) holds the compressor between calls;
    cap must be at least zc_deflate_bound(n, fmt)."""
    cdef libdeflate_compressor* c
    cdef size_t r, bound = zc_deflate_bound(n, fmt)
    if level < -1 or level > 9:
        return fail(err, ZC_PARAM, 9, level, "level must be in -1..9")
    if level == -1:
        level = 6
    if cap < bound:
        return fail(err, ZC_PARAM, bound, cap, "output buffer too small")
    if keep != NULL and keep.comp != NULL and keep.level == level:
        c = <libdeflate_compressor*>keep.comp
    else:
        c = libdeflate_alloc_compressor(level)
        if c == NULL:
            return fail(err, ZC_NOMEM, 0, 0, NULL)
        if keep != NULL:
            zc_deflater_free(keep)
            keep.comp = c
            keep.level = level
    if fmt == ZC_GZIP:
        r = libdeflate_gzip_compress(c, src, n, dst, cap)
    elif fmt == ZC_ZLIB:
        r = libdeflate_zlib_compress(c, src, n, dst, cap)
    else:
        r = libdeflate_deflate_compress(c, src, n, dst, cap)
    if keep == NULL:
        libdeflate_free_compressor(c)
    if r == 0:
        return fail(err, ZC_PARAM, bound, cap, "output buffer too small")
    return <Py_ssize_t>r


cdef bint all_zero(const uint8_t* p, size_t n) noexcept nogil:
    cdef size_t i
    for i in range(n):
        if p[i]:
            return False
    return True


cdef Py_ssize_t inflate_core(const uint8_t* src, size_t n, uint8_t** dstp, size_t* capp,
                             bint grow, int fmt, ZcError* err) noexcept nogil:
    """Inflate src into dstp[0] (capacity capp[0]); if grow, realloc as needed.
    gzip input may hold several members, and trailing zero bytes."""
    cdef z_stream s
    cdef int ret, wbits = 15 if fmt == ZC_ZLIB else (31 if fmt == ZC_GZIP else -15)
    cdef size_t in_left = n, out_left = capp[0], produced = 0, used, made
    cdef const uint8_t* ip = src
    cdef const char* msg
    cdef uint8_t* grown
    if n == 0:
        return fail(err, ZC_TRUNCATED, 1, 0, "empty input")
    memset(&s, 0, sizeof(z_stream))
    ret = inflateInit2(&s, wbits)
    if ret != Z_OK:
        return fail(err, ZC_NOMEM, 0, 0, NULL)
    while True:
        if grow and out_left == 0:
            grown = <uint8_t*>realloc(dstp[0], capp[0] * 2)
            if grown == NULL:
                inflateEnd(&s)
                return fail(err, ZC_NOMEM, 0, 0, NULL)
            dstp[0] = grown
            out_left = capp[0]
            capp[0] *= 2
        s.next_in = ip
        s.avail_in = <unsigned int>(in_left if in_left < CHUNK else CHUNK)
        s.next_out = dstp[0] + produced
        s.avail_out = <unsigned int>(out_left if out_left < CHUNK else CHUNK)
        ret = z_inflate(&s, Z_NO_FLUSH)
        used = <size_t>(s.next_in - ip)
        made = <size_t>(s.next_out - (dstp[0] + produced))
        ip = s.next_in
        in_left -= used
        produced += made
        out_left -= made
        if ret == Z_STREAM_END:
            if fmt != ZC_GZIP or in_left == 0 or all_zero(ip, in_left):
                break
            if in_left >= 2 and ip[0] == GZIP_MAGIC_0 and ip[1] == GZIP_MAGIC_1:
                inflateReset(&s)
                continue
            inflateEnd(&s)
            return fail(err, ZC_CORRUPT, 0, 0, "trailing data after the last gzip member")
        if ret == Z_NEED_DICT or ret == Z_DATA_ERROR or ret == Z_MEM_ERROR:
            msg = s.msg   # zlib's messages are static strings
            if msg == NULL:
                msg = "invalid stream"
            inflateEnd(&s)
            if ret == Z_MEM_ERROR:
                return fail(err, ZC_NOMEM, 0, 0, NULL)
            return fail(err, ZC_CORRUPT, 0, 0, msg)
        if used == 0 and made == 0:
            inflateEnd(&s)
            if in_left == 0:
                return fail(err, ZC_TRUNCATED, n + 1, n, "stream ends early")
            if out_left == 0:
                return fail(err, ZC_TOO_LARGE, capp[0], 0, NULL)
            return fail(err, ZC_CORRUPT, 0, 0, "no progress")
    inflateEnd(&s)
    return <Py_ssize_t>produced


cdef Py_ssize_t libdeflate_into(const uint8_t* src, size_t n, uint8_t* dst, size_t expected,
                                int fmt) noexcept nogil:
    """libdeflate's whole-buffer decoder (about twice zlib's speed): the decoded size,
    or -1 for anything it does not accept (the caller then asks zlib, which also says
    precisely what is wrong).  gzip: several members, trailing zero bytes."""
    cdef libdeflate_decompressor* d = libdeflate_alloc_decompressor()
    cdef libdeflate_result r
    cdef size_t produced = 0, in_used = 0, made = 0
    if d == NULL:
        return -1
    while True:
        if fmt == ZC_GZIP:
            r = libdeflate_gzip_decompress_ex(d, src, n, dst + produced, expected - produced,
                                              &in_used, &made)
        elif fmt == ZC_ZLIB:
            r = libdeflate_zlib_decompress_ex(d, src, n, dst, expected, &in_used, &made)
        else:
            r = libdeflate_deflate_decompress_ex(d, src, n, dst, expected, &in_used, &made)
        if r != LIBDEFLATE_SUCCESS:
            libdeflate_free_decompressor(d)
            return -1
        produced += made
        src += in_used
        n -= in_used
        if fmt != ZC_GZIP or n == 0 or all_zero(src, n):
            break
        if n < 2 or src[0] != GZIP_MAGIC_0 or src[1] != GZIP_MAGIC_1:
            libdeflate_free_decompressor(d)
            return -1
    libdeflate_free_decompressor(d)
    return <Py_ssize_t>produced


cdef Py_ssize_t zc_inflate_into(const uint8_t* src, size_t n, uint8_t* dst, size_t expected,
                                int fmt, ZcError* err) noexcept nogil:
    cdef size_t cap = expected
    cdef Py_ssize_t r = libdeflate_into(src, n, dst, expected, fmt) if n > 0 else -1
    if r >= 0:
        if <size_t>r != expected:
            return fail(err, ZC_SIZE, expected, r, NULL)
        return r
    r = inflate_core(src, n, &dst, &cap, False, fmt, err)
    if r >= 0 and <size_t>r != expected:
        return fail(err, ZC_SIZE, expected, r, NULL)
    return r


cdef str _deflate_name(int fmt):
    return "zlib" if fmt == ZC_ZLIB else ("gzip" if fmt == ZC_GZIP else "deflate")


def deflate_compress(data, int level, int fmt=ZC_ZLIB):
    """Compress ``data`` as a zlib stream (fmt 0), a gzip member (1) or raw deflate (2)."""
    cdef _View src = _View(data)
    cdef ZcError err
    cdef size_t n = src.size()
    cdef size_t cap
    cdef bytes out
    cdef uint8_t* dst
    cdef Py_ssize_t r
    if fmt < 0 or fmt > 2:
        raise ValueError(f"unknown deflate format {fmt}")
    cap = zc_deflate_bound(n, fmt)
    out = _new_bytes(cap)
    dst = <uint8_t*>PyBytes_AS_STRING(out)
    with nogil:
        r = zc_deflate(NULL, src.ptr(), n, dst, cap, level, fmt, &err)
    if r < 0:
        raise_error(_deflate_name(fmt), &err, n)
    return _shrink(out, r)


def inflate_into(data, out, int fmt=ZC_ZLIB):
    """Decode zlib (0), gzip (1) or raw deflate (2) data into ``out``, whose size must
    equal the decoded size."""
    cdef _View src = _View(data)
    cdef _View dst = _View(out, True)
    cdef ZcError err
    cdef Py_ssize_t r
    if fmt < 0 or fmt > 2:
        raise ValueError(f"unknown deflate format {fmt}")
    with nogil:
        r = zc_inflate_into(src.ptr(), src.size(), dst.ptr(), dst.size(), fmt, &err)
    if r < 0:
        raise_error(_deflate_name(fmt), &err, src.size())
    return r


def inflate(data, int fmt=ZC_ZLIB):
    """Decode zlib (0), gzip (1) or raw deflate (2) data into new bytes."""
    cdef _View src = _View(data)
    cdef ZcError err
    cdef size_t n = src.size()
    cdef size_t cap = n * 4 if n * 4 > 65536 else 65536
    cdef uint8_t* buf
    cdef Py_ssize_t r
    if fmt < 0 or fmt > 2:
        raise ValueError(f"unknown deflate format {fmt}")
    buf = <uint8_t*>malloc(cap)
    if buf == NULL:
        raise MemoryError()
    with nogil:
        r = inflate_core(src.ptr(), n, &buf, &cap, True, fmt, &err)
    try:
        if r < 0:
            raise_error(_deflate_name(fmt), &err, n)
        return PyBytes_FromStringAndSize(<char*>buf, r)
    finally:
        free(buf)


ZLIB = ZC_ZLIB
GZIP = ZC_GZIP
RAW = ZC_RAW


# ---------------------------------------------------------------- crc32c

cdef uint32_t zc_crc32c_update(uint32_t crc, const uint8_t* src, size_t n) noexcept nogil:
    return zc_crc32c(crc, src, n)


def crc32c(data, uint32_t crc=0):
    """CRC-32C of ``data`` (continuing from ``crc``)."""
    cdef _View src = _View(data)
    cdef uint32_t r
    with nogil:
        r = zc_crc32c(crc, src.ptr(), src.size())
    return r


def crc32c_software(data, uint32_t crc=0):
    """CRC-32C computed without the CPU's crc32 instruction (for tests)."""
    cdef _View src = _View(data)
    cdef uint32_t r
    with nogil:
        r = zc_crc32c_software(crc, src.ptr(), src.size())
    return r


def crc32c_hardware():
    """True if CRC-32C runs on the CPU's crc32 instruction."""
    return bool(zc_crc32c_hardware_available())


def library_versions():
    """Versions of the C libraries this module is linked with."""
    cdef unsigned z = ZSTD_versionNumber()
    return {
        "blosc": blosc_get_version_string().decode(),
        "zstd": f"{z // 10000}.{z // 100 % 100}.{z % 100}",
        "zlib": zlibVersion().decode(),
    }
