# cython: language_level=3, freethreading_compatible=True, boundscheck=False, wraparound=False, cdivision=True
"""The blosc codec: c-blosc, and our partial and row-wise decoders
(src/blosc_partial.c, src/blosc_rows.c).

Every function releases the GIL while it compresses or decompresses and uses a
blosc context per call, so Python threads run them in parallel.  Decoders check
every size a header claims before they write, never write outside the buffers
they are given, and report bad input as :class:`KernelError`.  Other kernels
cimport the zc_blosc_* functions (blosc.pxd).
"""

from cpython.bytes cimport PyBytes_AS_STRING
from libc.stddef cimport ptrdiff_t
from libc.stdint cimport int64_t, uint8_t
from libc.stdlib cimport free, malloc

from zarrc._kernels.buffers cimport View, new_bytes, shrink
from zarrc._kernels.errors cimport (ZC_CORRUPT, ZC_PARAM, ZC_SIZE, ZC_TRUNCATED, ZC_UNSUPPORTED,
                                    ZcError, fail, raise_error)
from zarrc._kernels.zstd cimport zc_zstd_blosc_calls, zc_zstd_calls

import numpy as np

from zarrc._kernels.buffers import NewBytes  # (parallel decoders fill one: zarrc.codecs.blosc)
from zarrc._kernels.errors import KernelError

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


# c-blosc's zstd compressor runs on the zstd module's libzstd (src/blosc_zstd.c)
cdef extern from "src/zstd_calls.h":
    void zc_blosc_use_zstd(const zc_zstd_calls* table) noexcept nogil

zc_blosc_use_zstd(zc_zstd_blosc_calls())


cdef extern from "src/blosc_lz4.h" nogil:
    int zc_blosc_lz4_no_zero_offset(const uint8_t* src, size_t n, size_t start, size_t len)


cdef extern from "src/blosc_rows.h" nogil:
    int64_t zc_blosc_rows_c "zc_blosc_decode_rows" (const uint8_t* src, size_t n, size_t nbytes,
                                                     const zc_rows* rows, uint8_t* tmp, size_t tmp_cap)
    int zc_blosc_rows_open(zc_rows_frame* f, const uint8_t* src, size_t n, size_t nbytes,
                           const zc_rows* rows)
    size_t zc_blosc_rows_tmp(const zc_rows_frame* f)
    int zc_blosc_rows_blocks(const zc_rows_frame* f, int64_t b0, int64_t b1, uint8_t* tmp,
                             size_t tmp_cap)
    int zc_blosc_rows_share_run(zc_rows_share* sh, const zc_rows_frame* f, uint8_t* tmp,
                                size_t tmp_cap)
    int zc_blosc_rows_share_take(zc_rows_share* sh, const zc_rows_frame** job, int64_t* block)
    void zc_blosc_rows_share_do(zc_rows_share* sh, const zc_rows_frame* job, int64_t block,
                                uint8_t* tmp, size_t tmp_cap)
    void zc_blosc_rows_share_wait(int* spins)
    int zc_blosc_rows_share_open(zc_rows_share* sh)


cdef extern from "src/blosc_partial.h" nogil:
    ctypedef struct zc_frame:
        int io_errno
    void zc_frame_file(zc_frame* f, int fd, int64_t base, int64_t size)
    void zc_frame_release(zc_frame* f)
    const uint8_t* zc_frame_get(zc_frame* f, int64_t pos, size_t n)
    int64_t zc_blosc_partial_frame(zc_frame* f, size_t start, size_t len, uint8_t* dst)
    int64_t zc_blosc_partial(const uint8_t* src, size_t n, size_t start, size_t length, uint8_t* dst)

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


# LZ4's decoders take a match of offset 0, which its format forbids, and leave what
# the destination held (src/blosc_lz4.c): the range decoders refuse it (the whole-frame
# decode does not look: the walk would cost a quarter to two fifths of its time)
cdef const char* ZERO_OFFSET = "LZ4 stream holds a match of offset 0"


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
    if nbytes > 0 and src[2] & 0x08:
        # (c-blosc's decompress refuses a flag from the future, its getitem does not)
        return fail(err, ZC_CORRUPT, 0, src[2], "header has a reserved flag set")
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


cdef int blosc_rows_open(zc_rows_frame* f, const uint8_t* src, size_t n, size_t nbytes,
                         const zc_rows* rows) noexcept nogil:
    return zc_blosc_rows_open(f, src, n, nbytes, rows)


cdef size_t blosc_rows_tmp(const zc_rows_frame* f) noexcept nogil:
    return zc_blosc_rows_tmp(f)


cdef int blosc_rows_blocks(const zc_rows_frame* f, int64_t b0, int64_t b1, uint8_t* tmp,
                           size_t tmp_cap) noexcept nogil:
    return zc_blosc_rows_blocks(f, b0, b1, tmp, tmp_cap)


cdef int blosc_rows_share_run(zc_rows_share* sh, const zc_rows_frame* f, uint8_t* tmp,
                              size_t tmp_cap) noexcept nogil:
    return zc_blosc_rows_share_run(sh, f, tmp, tmp_cap)


cdef int blosc_rows_share_take(zc_rows_share* sh, const zc_rows_frame** job,
                               int64_t* block) noexcept nogil:
    return zc_blosc_rows_share_take(sh, job, block)


cdef void blosc_rows_share_do(zc_rows_share* sh, const zc_rows_frame* job, int64_t block,
                              uint8_t* tmp, size_t tmp_cap) noexcept nogil:
    zc_blosc_rows_share_do(sh, job, block, tmp, tmp_cap)


cdef bint blosc_rows_share_open(zc_rows_share* sh) noexcept nogil:
    return zc_blosc_rows_share_open(sh)


cdef void blosc_rows_share_wait(int* spins) noexcept nogil:
    zc_blosc_rows_share_wait(spins)


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
    if not zc_blosc_lz4_no_zero_offset(src, n, start, length):
        return fail(err, ZC_CORRUPT, 0, 0, ZERO_OFFSET)
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
    cdef View src = View(data)
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
    out = new_bytes(cap)
    dst = <uint8_t*>PyBytes_AS_STRING(out)
    with nogil:
        r = zc_blosc_compress(src.ptr(), n, dst, cap, clevel, shuffle, typesize, cnp,
                              blocksize, nthreads, &err)
    if r < 0:
        raise_error("blosc", &err, n)
    return shrink(out, r)


def blosc_decoded_size(data):
    """Decoded size claimed by a blosc frame's header, after validating the header."""
    cdef View src = View(data)
    cdef ZcError err
    cdef Py_ssize_t r = zc_blosc_decoded_size(src.ptr(), src.size(), &err)
    if r < 0:
        raise_error("blosc", &err, src.size())
    return r


def blosc_header(data):
    """(nbytes, cbytes, blocksize, typesize, flags) of a valid blosc frame."""
    cdef View src = View(data)
    cdef ZcError err
    cdef size_t nbytes, cbytes, blocksize
    if zc_blosc_decoded_size(src.ptr(), src.size(), &err) < 0:
        raise_error("blosc", &err, src.size())
    header_sizes(src.ptr(), &nbytes, &cbytes, &blocksize)
    return nbytes, cbytes, blocksize, src.ptr()[3], src.ptr()[2]


def blosc_decode_into(data, out, int nthreads=1):
    """Decode a blosc frame into ``out``, whose size must equal the decoded size."""
    cdef View src = View(data)
    cdef View dst = View(out, True)
    cdef ZcError err
    cdef Py_ssize_t r
    with nogil:
        r = zc_blosc_decode_into(src.ptr(), src.size(), dst.ptr(), dst.size(), nthreads, &err)
    if r < 0:
        raise_error("blosc", &err, src.size())
    return r


def blosc_decode(data, int nthreads=1):
    """Decode a blosc frame into new bytes (size taken from the validated header)."""
    cdef View src = View(data)
    cdef ZcError err
    cdef Py_ssize_t r, nbytes = zc_blosc_decoded_size(src.ptr(), src.size(), &err)
    if nbytes < 0:
        raise_error("blosc", &err, src.size())
    cdef bytes out = new_bytes(nbytes)
    cdef uint8_t* dst = <uint8_t*>PyBytes_AS_STRING(out)
    with nogil:
        r = zc_blosc_decode_into(src.ptr(), src.size(), dst, nbytes, nthreads, &err)
    if r < 0:
        raise_error("blosc", &err, src.size())
    return out


def blosc_decode_rows(data, out, count=None, bint stream=False, Py_ssize_t split=-1):
    """Decode a whole blosc frame into ``out`` row by row, the way a chunk's frame is
    decoded into its place in a larger output (no chunk-sized buffer).

    ``out``: a writable numpy array of the chunk's shape (the frame decodes to its
    size, in C order) whose last axis is contiguous; other axes may have any
    strides (a region of a larger array).  ``count``: per axis, how many leading
    positions to write (rows and items past an array's edge are skipped; default:
    all).  Returns True, or False when the frame is not one decoded this way
    (byte-shuffled LZ4 of typesize 2, 4 or 8, or stored as is): ``out`` may then
    be partly written.  ``stream``: rows are written with streaming stores where
    they cover whole cache lines, as the read engine does for a large output.
    ``split`` (0 or more): the blocks from ``split`` on are decoded first, then those
    before it, as two threads sharing the frame would (zc_blosc_rows_blocks; a
    ``split`` past the last block is clipped to it).
    """
    cdef View src = View(data)
    cdef zc_rows rows
    cdef zc_rows_frame frame
    cdef int64_t at
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
    rows.stream = stream
    with nogil:
        tmp = <uint8_t*>malloc(max(1, nbytes))
        if tmp != NULL:
            if split < 0:
                r = zc_blosc_decode_rows(src.ptr(), src.size(), <size_t>nbytes, &rows, tmp,
                                         <size_t>nbytes)
            elif zc_blosc_rows_open(&frame, src.ptr(), src.size(), <size_t>nbytes, &rows):
                at = min(split, frame.nblocks)
                r = (nbytes if zc_blosc_rows_blocks(&frame, at, frame.nblocks, tmp, <size_t>nbytes)
                     and zc_blosc_rows_blocks(&frame, 0, at, tmp, <size_t>nbytes) else 0)
            else:
                r = 0
            free(tmp)
    if tmp == NULL:
        raise MemoryError()
    return r > 0


def blosc_decode_range(data, size_t start, out):
    """Decode decoded bytes [start, start + len(out)) of a blosc frame into ``out``.

    Only the blocks that hold the range are decompressed.  ``start`` and
    ``len(out)`` must be multiples of the frame's typesize.
    """
    cdef View src = View(data)
    cdef View dst = View(out, True)
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


def library_version():
    """The version of c-blosc this module is linked with."""
    return blosc_get_version_string().decode()
