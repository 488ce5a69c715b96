# The blosc kernels (c-blosc, and our src/blosc_partial.c, src/blosc_rows.c).
# They run without the GIL; each returns bytes produced or -1 with `err` (errors.pxd).

from libc.stddef cimport ptrdiff_t
from libc.stdint cimport int64_t, uint8_t

from zarrc._kernels.errors cimport ZcError


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
    ctypedef struct zc_rows_frame:
        int64_t nblocks
    ctypedef struct zc_rows_share:
        pass

# A whole blosc frame decoded straight into rows: nbytes, or 0 when the frame is
# not one decoded that way (the caller then decodes it with zc_blosc_decode_into).
cdef Py_ssize_t zc_blosc_decode_rows(const uint8_t* src, size_t n, size_t nbytes, const zc_rows* rows,
                                     uint8_t* tmp, size_t tmp_cap) noexcept nogil

# The same frame by blocks, on any threads (src/blosc_rows.h: zc_blosc_rows_*).
cdef int blosc_rows_open(zc_rows_frame* f, const uint8_t* src, size_t n, size_t nbytes,
                         const zc_rows* rows) noexcept nogil
cdef size_t blosc_rows_tmp(const zc_rows_frame* f) noexcept nogil
cdef int blosc_rows_blocks(const zc_rows_frame* f, int64_t b0, int64_t b1, uint8_t* tmp,
                           size_t tmp_cap) noexcept nogil
cdef int blosc_rows_share_run(zc_rows_share* sh, const zc_rows_frame* f, uint8_t* tmp,
                              size_t tmp_cap) noexcept nogil
cdef int blosc_rows_share_take(zc_rows_share* sh, const zc_rows_frame** job,
                               int64_t* block) noexcept nogil
cdef void blosc_rows_share_do(zc_rows_share* sh, const zc_rows_frame* job, int64_t block,
                              uint8_t* tmp, size_t tmp_cap) noexcept nogil
cdef void blosc_rows_share_wait(int* spins) noexcept nogil
cdef bint blosc_rows_share_open(zc_rows_share* sh) noexcept nogil
