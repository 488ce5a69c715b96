# Native codec kernels: blosc, zstd, zlib/gzip (deflate), crc32c.
#
# The zc_* functions run without the GIL and use only re-entrant C calls.
# Each returns the number of bytes produced (>= 0) or -1 with `err` filled in;
# the caller turns `err` into a Python exception once it holds the GIL again.

from libc.stddef cimport ptrdiff_t
from libc.stdint cimport int64_t, uint8_t, uint32_t


# ZSTD_findDecompressedSize (used in codecs.pyx) is declared only in zstd.h's
# static-linking section; without this the C compiler assumes it returns int and
# truncates every frame content size to 32 bits.  Must precede the first include.
cdef extern from *:
    """
    #define ZSTD_STATIC_LINKING_ONLY
    """

cdef extern from "zstd.h":
    ctypedef struct ZSTD_CCtx:
        pass
    ctypedef struct ZSTD_DCtx:
        pass


cdef enum ZcCode:
    ZC_OK = 0
    ZC_CORRUPT = 1        # data does not decode; detail says how
    ZC_TRUNCATED = 2      # input ends early (expected = bytes needed, actual = held)
    ZC_SIZE = 3           # decodes to `actual` bytes, `expected` wanted
    ZC_TOO_LARGE = 4      # decodes to more than the `expected` bytes
    ZC_NOMEM = 5
    ZC_PARAM = 6          # a parameter is out of range; detail says which
    ZC_UNSUPPORTED = 7    # e.g. a blosc compressor this build lacks
    ZC_CHECKSUM = 8       # stored checksum `expected`, computed `actual`; detail names it
    ZC_IO = 9             # an I/O call failed: detail names it, actual = errno


cdef struct ZcError:
    int code
    int64_t expected
    int64_t actual
    const char* detail


cdef inline Py_ssize_t fail(ZcError* err, int code, int64_t expected, int64_t actual,
                            const char* detail) noexcept nogil:
    """Fill in err and return -1 (the kernels' error return)."""
    err.code = code
    err.expected = expected
    err.actual = actual
    err.detail = detail
    return -1


cdef inline uint32_t load_le32(const uint8_t* p) noexcept nogil:
    """The little-endian uint32 at p."""
    return <uint32_t>p[0] | (<uint32_t>p[1] << 8) | (<uint32_t>p[2] << 16) | (<uint32_t>p[3] << 24)


# deflate container formats
cdef enum ZcDeflateFormat:
    ZC_ZLIB = 0
    ZC_GZIP = 1
    ZC_RAW = 2


cdef Py_ssize_t zc_blosc_compress(const uint8_t* src, size_t n, uint8_t* dst, size_t cap,
                                  int clevel, int shuffle, size_t typesize,
                                  const char* cname, size_t blocksize, int nthreads,
                                  ZcError* err) noexcept nogil
cdef Py_ssize_t zc_blosc_decoded_size(const uint8_t* src, size_t n, ZcError* err) noexcept nogil
cdef Py_ssize_t zc_blosc_decode_into(const uint8_t* src, size_t n, uint8_t* dst, size_t expected,
                                     int nthreads, ZcError* err) noexcept nogil
cdef extern from "src/blosc_partial.h":
    enum:
        ZC_PARTIAL_MAX   # the longest byte range decoded without whole blocks

cdef Py_ssize_t zc_blosc_file_range(int fd, int64_t base, int64_t size, size_t expected, size_t start,
                                    size_t length, uint8_t* dst, ZcError* err) noexcept nogil
cdef Py_ssize_t zc_blosc_decode_range(const uint8_t* src, size_t n, size_t start, size_t length,
                                      uint8_t* dst, ZcError* err) noexcept nogil

# Where the rows of a decoded chunk go (see src/blosc_rows.h).
cdef extern from "src/blosc_rows.h":
    ctypedef struct zc_rows:
        int nlead
        const int64_t* shape
        const int64_t* count
        const ptrdiff_t* const* off
        size_t row_bytes
        size_t keep_bytes
        char* dst
        int stream

# A whole blosc frame decoded straight into rows: nbytes, or 0 when the frame is
# not one decoded that way (the caller then decodes it with zc_blosc_decode_into).
cdef Py_ssize_t zc_blosc_decode_rows(const uint8_t* src, size_t n, size_t nbytes, const zc_rows* rows,
                                     uint8_t* tmp, size_t tmp_cap) noexcept nogil

cdef Py_ssize_t zc_zstd_compress(ZSTD_CCtx* cctx, const uint8_t* src, size_t n, uint8_t* dst,
                                 size_t cap, int level, bint checksum,
                                 ZcError* err) noexcept nogil
cdef Py_ssize_t zc_zstd_decoded_size(const uint8_t* src, size_t n, ZcError* err) noexcept nogil
cdef Py_ssize_t zc_zstd_decode_prefix(ZSTD_DCtx* dctx, const uint8_t* src, size_t n,
                                      uint8_t* dst, size_t want, ZcError* err) noexcept nogil
cdef Py_ssize_t zc_zstd_decode_into(ZSTD_DCtx* dctx, const uint8_t* src, size_t n, uint8_t* dst,
                                    size_t expected, ZcError* err) noexcept nogil

# A deflate compressor kept between calls (one per thread; {NULL, 0} to start).
cdef struct Deflater:
    void* comp
    int level

cdef size_t zc_deflate_bound(size_t n, int fmt) noexcept nogil
cdef Py_ssize_t zc_deflate(Deflater* keep, const uint8_t* src, size_t n, uint8_t* dst, size_t cap,
                           int level, int fmt, ZcError* err) noexcept nogil
cdef void zc_deflater_free(Deflater* keep) noexcept nogil
cdef Py_ssize_t zc_inflate_into(const uint8_t* src, size_t n, uint8_t* dst, size_t expected,
                                int fmt, ZcError* err) noexcept nogil

# The message for a filled-in ZcError (nin >= 0: the input size, named for corrupt data).
cdef str describe(ZcError* err, Py_ssize_t nin)

cdef uint32_t zc_crc32c_update(uint32_t crc, const uint8_t* src, size_t n) noexcept nogil
