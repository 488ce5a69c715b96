# The zstd kernels: the one module that links libzstd.  Other kernels create and
# use zstd contexts only through these functions (no zstd.h outside zstd.pyx).
# They run without the GIL; each returns bytes produced or -1 with `err` (errors.pxd).

from libc.stdint cimport uint8_t

from zarrc._kernels.errors cimport ZcError


# zstd's context types, opaque here (the same typedefs as zstd.h's).
cdef extern from *:
    """
    typedef struct ZSTD_CCtx_s ZSTD_CCtx;
    typedef struct ZSTD_DCtx_s ZSTD_DCtx;
    """
    ctypedef struct ZSTD_CCtx:
        pass
    ctypedef struct ZSTD_DCtx:
        pass

# Contexts kept between calls (one per thread); NULL if out of memory.
cdef ZSTD_CCtx* zc_zstd_cctx_new() noexcept nogil
cdef void zc_zstd_cctx_free(ZSTD_CCtx* cctx) noexcept nogil
cdef ZSTD_DCtx* zc_zstd_dctx_new() noexcept nogil
cdef void zc_zstd_dctx_free(ZSTD_DCtx* dctx) noexcept nogil
# The zstd functions c-blosc calls (src/zstd_calls.h), for the blosc module.
cdef extern from "src/zstd_calls.h":
    ctypedef struct zc_zstd_calls:
        pass
cdef const zc_zstd_calls* zc_zstd_blosc_calls() noexcept nogil
# The output size zc_zstd_compress needs at most for n input bytes.
cdef size_t zc_zstd_bound(size_t n) noexcept nogil

# cctx / dctx NULL: a context for this call only.
cdef Py_ssize_t zc_zstd_compress(ZSTD_CCtx* cctx, const uint8_t* src, size_t n, uint8_t* dst,
                                 size_t cap, int level, bint checksum,
                                 ZcError* err) noexcept nogil
cdef Py_ssize_t zc_zstd_decoded_size(const uint8_t* src, size_t n, ZcError* err) noexcept nogil
cdef Py_ssize_t zc_zstd_decode_prefix(ZSTD_DCtx* dctx, const uint8_t* src, size_t n,
                                      uint8_t* dst, size_t want, ZcError* err) noexcept nogil
cdef Py_ssize_t zc_zstd_decode_into(ZSTD_DCtx* dctx, const uint8_t* src, size_t n, uint8_t* dst,
                                    size_t expected, ZcError* err) noexcept nogil
