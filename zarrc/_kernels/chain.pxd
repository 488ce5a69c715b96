# The prepared codec chain and the per-worker scratch, for the batch modules.

from libc.stdint cimport int64_t, uint8_t
from libc.stdlib cimport realloc

from zarrc._kernels.deflate cimport Deflater
from zarrc._kernels.errors cimport ZcError
from zarrc._kernels.plan cimport PLAN_MAX_DIMS
from zarrc._kernels.values cimport zv_cast, zv_scale_offset
from zarrc._kernels.zstd cimport ZSTD_CCtx, ZSTD_DCtx

cdef enum:
    MAX_STEPS = 8       # bytes -> bytes codecs a chain may have

cdef enum StepKind:
    BLOSC = 1
    ZSTD = 2
    GZIP = 3
    ZLIB = 4
    CRC32C = 5
    PACKBITS = 6        # the array -> bytes packbits codec: first in encode order, at most once
    VALUES = 7          # the array -> array value codecs (always steps[0]: first to encode, last to decode)

cdef enum:
    MAX_VALUE_OPS = 4   # scale_offset / cast_value / bitround codecs a chain may have

# one array -> array value codec of the chain
cdef struct ValueOp:
    int kind             # 1 scale_offset, 2 cast_value, 3 bitround
    Py_ssize_t in_size   # item sizes, encode direction
    Py_ssize_t out_size
    zv_scale_offset so
    zv_cast enc
    zv_cast dec
    int unit, mantissa, keepbits


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
    int first_bit        # packbits: the bits first_bit..last_bit of each component of size typesize,
    int last_bit         # which holds nbits (sign-extended if signed); padding: 0 none,
    int nbits            # 1 a first byte, 2 a last byte giving the padding bits
    int padding
    bint signed


# A worker's buffers and codec contexts.
cdef struct Scratch:
    uint8_t* buf[4]      # 0: file bytes, 1-2: codec ping-pong, 3: chunk buffer
    size_t cap[4]
    ZSTD_DCtx* dctx
    ZSTD_CCtx* cctx
    Deflater deflater
    Py_ssize_t* offs
    size_t offs_cap


cdef inline int ensure(Scratch* s, int slot, size_t n) noexcept nogil:
    """Make scratch buffer ``slot`` hold at least n bytes: 0, or -1 if out of memory."""
    cdef uint8_t* p
    if s.cap[slot] >= n and s.buf[slot] != NULL:
        return 0
    p = <uint8_t*>realloc(s.buf[slot], n if n > 0 else 1)
    if p == NULL:
        return -1
    s.buf[slot] = p
    s.cap[slot] = n
    return 0


# This thread's scratch, kept between batches (NULL if out of memory or thread keys
# are unavailable); scratch_trim releases its large buffers when a batch ends.
cdef Scratch* thread_scratch() noexcept nogil
cdef void scratch_trim(Scratch* s) noexcept nogil
cdef void scratch_free(Scratch* s) noexcept nogil


cdef class Chain:
    cdef int n
    cdef Step steps[MAX_STEPS]
    cdef readonly Py_ssize_t chunk_nbytes
    cdef readonly Py_ssize_t itemsize
    cdef readonly Py_ssize_t nitems
    cdef readonly Py_ssize_t swap_unit
    cdef readonly bint c_layout
    cdef int ndim
    cdef Py_ssize_t shape[PLAN_MAX_DIMS]
    cdef Py_ssize_t strides[PLAN_MAX_DIMS]   # byte strides of the logical chunk in the decoded buffer
    cdef int last_decompressor          # index of the step decoded last (-1: none)
    cdef bint packed                    # steps[0] is packbits
    cdef Py_ssize_t packed_nbytes       # its output: the packed chunk and its padding byte
    cdef Py_ssize_t pack_count          # the components it packs
    cdef int nvalues                    # value codecs (steps[0] is VALUES when > 0)
    cdef ValueOp values[MAX_VALUE_OPS]
    cdef readonly Py_ssize_t stored_itemsize   # the item size the bytes codec writes
    cdef Py_ssize_t stored_swap         # value chains: the stored items' byte swap unit (0: none)
    cdef const uint8_t* run_values(self, const uint8_t* src, uint8_t* dst, bint decode, Scratch* s,
                                   int* slot, ZcError* err) noexcept nogil

    cdef const uint8_t* decode(self, const uint8_t* src, size_t n, uint8_t* dst, Scratch* s,
                               ZcError* err) noexcept nogil
    cdef Py_ssize_t encode(self, const uint8_t* src, const uint8_t** result, Scratch* s,
                           ZcError* err) noexcept nogil
    cdef int unpack(self, const uint8_t* src, size_t length, uint8_t* dst, ZcError* err) noexcept nogil
    cdef void pack(self, const uint8_t* src, uint8_t* out) noexcept nogil
