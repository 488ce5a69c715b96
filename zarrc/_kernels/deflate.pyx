# cython: language_level=3, freethreading_compatible=True, boundscheck=False, wraparound=False, cdivision=True
"""The deflate codecs: gzip, zlib and raw deflate, compressed with libdeflate and
decoded with libdeflate (whole buffers) or zlib (what libdeflate does not take,
and the wording of errors).

Every function releases the GIL while it runs and uses a compressor or a zlib
stream per call (or per worker), so Python threads run them in parallel.  Decoders
never write past the caller's expected size and report bad input as
:class:`KernelError`.
"""

from cpython.bytes cimport PyBytes_AS_STRING, PyBytes_FromStringAndSize
from libc.stdint cimport uint8_t
from libc.stdlib cimport free, malloc, realloc
from libc.string cimport memset

from zarrc._kernels.buffers cimport View, new_bytes, shrink
from zarrc._kernels.errors cimport (ZC_CORRUPT, ZC_NOMEM, ZC_PARAM, ZC_SIZE, ZC_TOO_LARGE,
                                    ZC_TRUNCATED, ZcError, fail, raise_error)

from zarrc._kernels.errors import KernelError  # (what the functions here raise)

cdef extern from "zlib.h" nogil:
    ctypedef struct z_stream:
        uint8_t* next_in                 # (z_const: const only with ZLIB_CONST)
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


cdef enum:
    GZIP_MAGIC_0 = 0x1f
    GZIP_MAGIC_1 = 0x8b

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
        s.next_in = <uint8_t*>ip
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
    cdef View src = View(data)
    cdef ZcError err
    cdef size_t n = src.size()
    cdef size_t cap
    cdef bytes out
    cdef uint8_t* dst
    cdef Py_ssize_t r
    if fmt < 0 or fmt > 2:
        raise ValueError(f"unknown deflate format {fmt}")
    cap = zc_deflate_bound(n, fmt)
    out = new_bytes(cap)
    dst = <uint8_t*>PyBytes_AS_STRING(out)
    with nogil:
        r = zc_deflate(NULL, src.ptr(), n, dst, cap, level, fmt, &err)
    if r < 0:
        raise_error(_deflate_name(fmt), &err, n)
    return shrink(out, r)


def inflate_into(data, out, int fmt=ZC_ZLIB):
    """Decode zlib (0), gzip (1) or raw deflate (2) data into ``out``, whose size must
    equal the decoded size."""
    cdef View src = View(data)
    cdef View dst = View(out, True)
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
    cdef View src = View(data)
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


def library_version():
    """The version of zlib this module is linked with."""
    return zlibVersion().decode()
