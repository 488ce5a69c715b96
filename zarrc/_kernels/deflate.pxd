# The deflate kernels: gzip, zlib and raw deflate (libdeflate, and zlib for the
# inputs libdeflate does not take).  They run without the GIL; each returns bytes
# produced or -1 with `err` (errors.pxd).

from libc.stdint cimport uint8_t

from zarrc._kernels.errors cimport ZcError


# deflate container formats
cdef enum ZcDeflateFormat:
    ZC_ZLIB = 0
    ZC_GZIP = 1
    ZC_RAW = 2

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
