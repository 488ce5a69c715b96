# cython: language_level=3, freethreading_compatible=True, boundscheck=False, wraparound=False, cdivision=True
"""The zstd codec, and the one copy of libzstd in zarrc: the other kernels create,
use and free zstd contexts through the functions this module exports (zstd.pxd).

Every function releases the GIL while it compresses or decompresses, with a
context per call or per worker.  Decoders check every frame content size against
the caller's expected size before they write and report bad input as
:class:`KernelError`.
"""

from cpython.bytes cimport PyBytes_AS_STRING, PyBytes_FromStringAndSize
from libc.stdint cimport uint8_t, uint32_t
from libc.stdlib cimport free, malloc, realloc

from zarrc._kernels.buffers cimport View, new_bytes, shrink
from zarrc._kernels.errors cimport (ZC_CORRUPT, ZC_NOMEM, ZC_PARAM, ZC_SIZE, ZC_TOO_LARGE,
                                    ZC_TRUNCATED, ZcError, fail, load_le32, raise_error)

from zarrc._kernels.errors import KernelError  # (what the functions here raise)

# ZSTD_findDecompressedSize is declared only in zstd.h's static-linking section;
# without this the C compiler assumes it returns int and truncates every frame
# content size to 32 bits.  Must precede the include.
cdef extern from *:
    """
    #define ZSTD_STATIC_LINKING_ONLY
    """

cdef extern from "zstd.h" nogil:
    ctypedef enum ZSTD_cParameter:
        ZSTD_c_compressionLevel
        ZSTD_c_checksumFlag
    ctypedef enum ZSTD_ResetDirective:
        ZSTD_reset_session_only
        ZSTD_reset_session_and_parameters
    size_t ZSTD_DCtx_reset(ZSTD_DCtx* dctx, ZSTD_ResetDirective reset)
    size_t ZSTD_findFrameCompressedSize(const void* src, size_t srcSize)
    size_t ZSTD_frameHeaderSize(const void* src, size_t srcSize)
    unsigned long long ZSTD_getFrameContentSize(const void* src, size_t srcSize)
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


cdef ZSTD_CCtx* zc_zstd_cctx_new() noexcept nogil:
    return ZSTD_createCCtx()


cdef void zc_zstd_cctx_free(ZSTD_CCtx* cctx) noexcept nogil:
    ZSTD_freeCCtx(cctx)


cdef ZSTD_DCtx* zc_zstd_dctx_new() noexcept nogil:
    return ZSTD_createDCtx()


cdef void zc_zstd_dctx_free(ZSTD_DCtx* dctx) noexcept nogil:
    ZSTD_freeDCtx(dctx)


cdef size_t zc_zstd_bound(size_t n) noexcept nogil:
    return ZSTD_compressBound(n)


cdef extern from *:
    """
    static const zc_zstd_calls zc_blosc_calls = {
        ZSTD_compress, ZSTD_decompress, ZSTD_isError, ZSTD_maxCLevel};
    """
    const zc_zstd_calls zc_blosc_calls


cdef const zc_zstd_calls* zc_zstd_blosc_calls() noexcept nogil:
    return &zc_blosc_calls


cdef enum:
    ZSTD_CHECKSUM_FLAG = 0x04      # in a zstd frame header's descriptor byte

cdef uint32_t ZSTD_MAGIC = 0xFD2FB528

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


cdef bint has_empty_compressed_block(const uint8_t* src, size_t n) noexcept nogil:
    """Whether a zstd frame in src[0..n) holds a compressed block of size 0: zstd's
    streaming decoder takes it as an empty block, its one-shot decoder (what an
    output of known size gets) refuses it as corrupt; zarrc refuses it on both paths
    (found by fuzzing: tests/kernels/test_fuzz_found.py).  Frames it cannot walk
    give False: decoding them says what is wrong."""
    cdef size_t pos = 0, fsize, hsize, h, end, bsize
    cdef uint32_t blk, btype
    while pos < n:
        fsize = ZSTD_findFrameCompressedSize(src + pos, n - pos)
        if ZSTD_isError(fsize) or fsize == 0:
            return False
        end = pos + fsize
        if n - pos >= 4 and (load_le32(src + pos) & 0xFFFFFFF0u) == 0x184D2A50u:
            pos = end                   # a skippable frame
            continue
        hsize = ZSTD_frameHeaderSize(src + pos, n - pos)
        if ZSTD_isError(hsize):
            return False
        h = pos + hsize
        while h + 3 <= end:
            blk = src[h] | (<uint32_t>src[h + 1] << 8) | (<uint32_t>src[h + 2] << 16)
            btype = (blk >> 1) & 3
            bsize = blk >> 3
            if btype == 2 and bsize == 0:
                return True
            h += 3 + (1 if btype == 1 else bsize)
            if blk & 1:
                break
        pos = end
    return False


cdef Py_ssize_t zstd_decode_grow(const uint8_t* src, size_t n, uint8_t** out, Py_ssize_t limit,
                                 ZcError* err) noexcept nogil:
    """Stream-decode frames whose size is not recorded, into a growing malloc buffer of
    at most ``limit`` bytes (-1: no limit; beyond it ZC_TOO_LARGE, once limit + 1
    bytes are held)."""
    if has_empty_compressed_block(src, n):
        return fail(err, ZC_CORRUPT, 0, 0, "zstd frame holds an empty compressed block")
    cdef ZSTD_DCtx* dctx = ZSTD_createDCtx()
    cdef ZSTD_inBuffer inb
    cdef ZSTD_outBuffer outb
    cdef size_t cap = n * 4 if n * 4 > 65536 else 65536
    cdef size_t stop = <size_t>limit + 1 if limit >= 0 else <size_t>-1    # (the most ever held)
    cdef size_t r = 1, before, first, fsize, pos = 0
    cdef unsigned long long claim
    if cap > stop:
        cap = stop
    cdef uint8_t* buf = <uint8_t*>malloc(cap)
    cdef uint8_t* grown
    if dctx == NULL or buf == NULL:
        ZSTD_freeDCtx(dctx)
        free(buf)
        return fail(err, ZC_NOMEM, 0, 0, NULL)
    outb.dst = buf
    outb.size = cap
    outb.pos = 0
    # frame by frame: zstd's streaming decoder does not check a frame's recorded size
    # when its last block is empty (its one-shot decoder does, zstd_decode_into's), so
    # each frame's output is checked against it here (found by fuzzing:
    # tests/kernels/test_fuzz_found.py)
    while pos < n:
        fsize = ZSTD_findFrameCompressedSize(src + pos, n - pos)
        if ZSTD_isError(fsize):
            fsize = n - pos                   # (cut short or corrupt: the stream says which)
        claim = ZSTD_getFrameContentSize(src + pos, fsize)
        first = outb.pos
        ZSTD_DCtx_reset(dctx, ZSTD_reset_session_only)
        inb.src = src + pos
        inb.size = fsize
        inb.pos = 0
        while True:
            if outb.pos == outb.size:
                if cap == stop:               # (limit + 1 bytes held: more than the limit)
                    ZSTD_freeDCtx(dctx)
                    free(buf)
                    return fail(err, ZC_TOO_LARGE, <size_t>limit, 0, NULL)
                cap = cap * 2 if cap * 2 < stop else stop
                grown = <uint8_t*>realloc(buf, cap)
                if grown == NULL:
                    ZSTD_freeDCtx(dctx)
                    free(buf)
                    return fail(err, ZC_NOMEM, 0, 0, NULL)
                buf = grown
                outb.dst = buf
                outb.size = cap
            before = outb.pos
            r = ZSTD_decompressStream(dctx, &outb, &inb)
            if ZSTD_isError(r):
                ZSTD_freeDCtx(dctx)
                free(buf)
                return zstd_fail(err, r, 0, n)
            # the frame is done when read and flushed (r == 0); with its input read and
            # room left, a call that gave nothing more means it is cut short (one that
            # did may still hold decoded bytes to flush: an RLE block is one byte of
            # input for up to 128 KiB of output)
            if inb.pos == inb.size and (r == 0 or (outb.pos < outb.size and outb.pos == before)):
                break
        if r != 0:
            ZSTD_freeDCtx(dctx)
            free(buf)
            return fail(err, ZC_TRUNCATED, n + 1, n, "zstd frame")
        if claim != ZSTD_CONTENTSIZE_UNKNOWN and claim != ZSTD_CONTENTSIZE_ERROR and outb.pos - first != claim:
            ZSTD_freeDCtx(dctx)
            free(buf)
            return fail(err, ZC_CORRUPT, 0, 0, "zstd frame decodes to other than the size its header records")
        pos += fsize
    ZSTD_freeDCtx(dctx)
    if limit >= 0 and outb.pos > <size_t>limit:
        free(buf)
        return fail(err, ZC_TOO_LARGE, <size_t>limit, 0, NULL)
    out[0] = buf
    return <Py_ssize_t>outb.pos


def zstd_compress(data, int level=3, bint checksum=False):
    """Compress ``data`` into one zstd frame (content size recorded); returns bytes."""
    cdef View src = View(data)
    cdef ZcError err
    cdef size_t n = src.size()
    cdef size_t cap = ZSTD_compressBound(n)
    cdef bytes out = new_bytes(cap)
    cdef uint8_t* dst = <uint8_t*>PyBytes_AS_STRING(out)
    cdef Py_ssize_t r
    with nogil:
        r = zc_zstd_compress(NULL, src.ptr(), n, dst, cap, level, checksum, &err)
    if r < 0:
        raise_error("zstd", &err, n)
    return shrink(out, r)


def zstd_decode_into(data, out):
    """Decode zstd frames into ``out``, whose size must equal the decoded size."""
    cdef View src = View(data)
    cdef View dst = View(out, True)
    cdef ZcError err
    cdef Py_ssize_t r
    with nogil:
        r = zc_zstd_decode_into(NULL, src.ptr(), src.size(), dst.ptr(), dst.size(), &err)
    if r < 0:
        raise_error("zstd", &err, src.size())
    return r


def zstd_decode(data, Py_ssize_t limit=-1):
    """Decode zstd frames into new bytes; with a ``limit`` >= 0, of at most that many
    (frames recording a larger total refused before anything is allocated, others
    once they have decoded to one byte more)."""
    cdef View src = View(data)
    cdef ZcError err
    cdef Py_ssize_t r, size = zc_zstd_decoded_size(src.ptr(), src.size(), &err)
    cdef uint8_t* grown = NULL
    cdef bytes out
    if size == -1:
        raise_error("zstd", &err, src.size())
    if limit >= 0 and size > limit:
        fail(&err, ZC_TOO_LARGE, <size_t>limit, 0, NULL)
        raise_error("zstd", &err, src.size())
    cdef uint8_t* dst
    if size >= 0:
        out = new_bytes(size)
        dst = <uint8_t*>PyBytes_AS_STRING(out)
        with nogil:
            r = zc_zstd_decode_into(NULL, src.ptr(), src.size(), dst, size, &err)
        if r < 0:
            raise_error("zstd", &err, src.size())
        return out
    with nogil:
        r = zstd_decode_grow(src.ptr(), src.size(), &grown, limit, &err)
    if r < 0:
        raise_error("zstd", &err, src.size())
    try:
        return PyBytes_FromStringAndSize(<char*>grown, r)
    finally:
        free(grown)


def zstd_levels():
    """(min, max) compression level of this zstd."""
    return ZSTD_minCLevel(), ZSTD_maxCLevel()


def library_version():
    """The version of libzstd this module is linked with."""
    cdef unsigned z = ZSTD_versionNumber()
    return f"{z // 10000}.{z // 100 % 100}.{z % 100}"
