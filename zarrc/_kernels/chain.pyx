# cython: language_level=3, freethreading_compatible=True, boundscheck=False, wraparound=False, cdivision=True, initializedcheck=False
"""The prepared codec chain: a chunk's bytes -> bytes codecs (blosc, zstd, gzip,
zlib, crc32c) set up once for one chunk shape and data type, run per chunk
without the GIL by the batches (decode / encode, see chain.pxd), and the
per-worker scratch they run with (buffers and codec contexts kept per thread).
"""

from libc.stdint cimport uint8_t, uint32_t
from libc.stdlib cimport calloc, free
from libc.string cimport memcpy, memset

from zarrc._kernels.bits cimport pack_body, unpack_body
from zarrc._kernels.copy cimport byteswap
from zarrc._kernels.blosc cimport zc_blosc_compress, zc_blosc_decode_into, zc_blosc_decoded_size
from zarrc._kernels.crc32c cimport zc_crc32c_update
from zarrc._kernels.deflate cimport (ZC_GZIP, ZC_ZLIB, zc_deflate, zc_deflate_bound, zc_deflater_free,
                                     zc_inflate_into)
from zarrc._kernels.errors cimport (ZC_CHECKSUM, ZC_NOMEM, ZC_SIZE, ZC_TRUNCATED, ZC_UNSUPPORTED,
                                    ZC_VALUE, fail, load_le32)
from zarrc._kernels.zstd cimport (zc_zstd_bound, zc_zstd_cctx_free, zc_zstd_cctx_new,
                                  zc_zstd_compress, zc_zstd_dctx_free, zc_zstd_dctx_new,
                                  zc_zstd_decode_into, zc_zstd_decoded_size)


# ---------------------------------------------------------------- per-worker scratch

cdef extern from "src/zc_platform.h" nogil:
    ctypedef int zc_key_t            # (opaque here: only passed by address)
    int zc_key_create(zc_key_t* key, void (*destructor)(void*))
    void* zc_key_get(zc_key_t key)
    int zc_key_set(zc_key_t key, void* value)


# Scratch buffers outlive a batch, one set per thread: small reads then reuse warm
# memory instead of mapping and faulting in fresh pages (and unmapping them, which
# stalls every other thread of the process) on each call.  Buffers larger than
# KEEP_BYTES are released when a batch ends; a thread's set is freed when it exits.
DEF KEEP_BYTES = 16 << 20
cdef zc_key_t scratch_key
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
    s = <Scratch*>zc_key_get(scratch_key)
    if s == NULL:
        s = <Scratch*>calloc(1, sizeof(Scratch))
        if s != NULL and zc_key_set(scratch_key, s) != 0:
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


scratch_key_ok = zc_key_create(&scratch_key, scratch_destroy) == 0


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


# ---------------------------------------------------------------- the value codecs

from zarrc._kernels.values cimport (
    ZV_INEXACT,
    ZV_NOT_FINITE,
    ZV_OUT_OF_RANGE,
    zv_bitround,
    zv_cast_values,
    zv_scale_offset_values,
)


cdef long double exact(v):
    """A Python number as long double (integers beyond 2**53 exactly)."""
    if isinstance(v, int):
        return <long double>(<double>(v >> 32)) * 4294967296.0 + <long double>(v & 0xffffffff)
    return <double>v


cdef void set_cast(zv_cast* c, tuple codes, int rounding, int out_of_range, list pairs) except *:
    if len(pairs) > 64:
        raise ValueError(f"at most 64 scalar_map entries are supported, got {len(pairs)}")
    c.src, c.dst = codes
    c.rounding, c.out_of_range, c.nmap = rounding, out_of_range, len(pairs)
    for i, (k, v) in enumerate(pairs):
        c.keys[i] = exact(k)
        c.vals[i] = exact(v)


cdef int64_t as_int64(v):
    v = int(v)
    return v - (1 << 64) if v >= (1 << 63) else v


cdef void set_value_op(ValueOp* op, tuple spec) except *:
    """One value codec from its kernel arguments (``zarrc.codecs`` ``ValueStep.kernel_args``):
    ("scale_offset", itemsize, type, offset, scale), ("cast_value", in itemsize, out itemsize,
    in type, out type, rounding, out_of_range, encode pairs, decode pairs), ("bitround",
    itemsize, unit, mantissa, keepbits)."""
    memset(op, 0, sizeof(ValueOp))
    name = spec[0]
    if name == "scale_offset":
        op.kind = 1
        op.in_size = op.out_size = spec[1]
        op.so.type = spec[2]
        if op.so.type >= 8:
            op.so.offset_f, op.so.scale_f = float(spec[3]), float(spec[4])
        else:
            op.so.offset_i, op.so.scale_i = as_int64(spec[3]), as_int64(spec[4])
            if op.so.scale_i == 0:
                raise ValueError("scale_offset: scale must be non-zero")
    elif name == "cast_value":
        op.kind = 2
        op.in_size, op.out_size = spec[1], spec[2]
        set_cast(&op.enc, (spec[3], spec[4]), spec[5], spec[6], list(spec[7]))
        set_cast(&op.dec, (spec[4], spec[3]), spec[5], spec[6], list(spec[8]))
    elif name == "bitround":
        op.kind = 3
        op.in_size = op.out_size = spec[1]
        op.unit, op.mantissa, op.keepbits = spec[2], spec[3], spec[4]
    else:
        raise ValueError(f"value codec {name!r} has no native kernel")


# ---------------------------------------------------------------- the prepared codec chain

cdef class Chain:
    """A codec chain prepared for one chunk shape and data type.

    ``steps``: the bytes -> bytes codecs in encode order, as tuples
    ("blosc", cname, clevel, shuffle, typesize, blocksize), ("zstd", level,
    checksum), ("gzip", level), ("zlib", level), ("crc32c",); and first, the
    array -> bytes packbits codec if the chunk is packed: ("packbits", component
    size, first_bit, last_bit, nbits, signed, padding 0 none / 1 first byte / 2
    last byte), see bits.pyx.
    ``chunk_shape``, ``itemsize``: the chunk; ``swap_unit``: 0 if the stored byte
    order is the native one, else the size of the units whose bytes are reversed
    (the item size; for complex types, one component); ``order``: the transpose
    codec's permutation (the stored array is ``chunk.transpose(order)`` in C
    order) or None.
    """

    def __init__(self, list steps, tuple chunk_shape, Py_ssize_t itemsize,
                 Py_ssize_t swap_unit=0, order=None, list values=None, Py_ssize_t stored_swap=0):
        cdef int i, d
        cdef Py_ssize_t stride
        cdef Step* st
        if len(steps) > MAX_STEPS:
            raise ValueError(f"at most {MAX_STEPS} bytes->bytes codecs are supported, got {len(steps)}")
        if len(chunk_shape) > PLAN_MAX_DIMS:
            raise ValueError(f"at most {PLAN_MAX_DIMS} dimensions are supported, got {len(chunk_shape)}")
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
        values = values or []
        if len(values) > MAX_VALUE_OPS:
            raise ValueError(f"at most {MAX_VALUE_OPS} value codecs are supported, got {len(values)}")
        self.nvalues = len(values)
        self.stored_itemsize = itemsize
        self.stored_swap = 0
        for i, spec in enumerate(values):
            set_value_op(&self.values[i], tuple(spec))
            if self.values[i].in_size != self.stored_itemsize:
                raise ValueError(f"value codec {spec[0]} takes items of {self.values[i].in_size} bytes, "
                                 f"gets {self.stored_itemsize}")
            self.stored_itemsize = self.values[i].out_size
        if self.nvalues:
            # the chain swaps the stored items itself (before decoding the values)
            self.stored_swap = stored_swap if stored_swap > 1 else 0
            self.swap_unit = 0
            steps = [("values",)] + steps
        if len(steps) > MAX_STEPS:
            raise ValueError(f"at most {MAX_STEPS - 1} bytes->bytes codecs are supported with value codecs")
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
            elif name == "packbits" and i == 0:
                st.kind = PACKBITS
                st.typesize, st.first_bit, st.last_bit, st.nbits, st.signed, st.padding = spec[1:7]
                if (st.typesize < 1 or st.typesize > 8 or itemsize % st.typesize
                        or not 0 <= st.first_bit <= st.last_bit < st.nbits <= 8 * st.typesize
                        or st.padding not in (0, 1, 2)):
                    raise ValueError(f"packbits step {spec!r} does not fit items of {itemsize} bytes")
                self.packed = True
                self.pack_count = self.nitems * (itemsize // st.typesize)
                self.packed_nbytes = ((self.pack_count * (st.last_bit - st.first_bit + 1) + 7) // 8
                                      + (st.padding != 0))
            elif name == "values" and i == 0:
                st.kind = VALUES
                continue
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
            if st.kind == VALUES:
                if length != <size_t>(self.nitems * self.stored_itemsize):
                    fail(err, ZC_SIZE, self.nitems * self.stored_itemsize, length, "chunk holds")
                    return NULL
                return self.run_values(ptr, dst, True, s, &slot, err)
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
            if st.kind == PACKBITS:
                if self.unpack(ptr, length, dst, err) != 0:
                    return NULL
                ptr = dst
                length = <size_t>self.chunk_nbytes
                continue
            if i == self.last_decompressor and not self.packed and not self.nvalues:
                target = dst
                size = self.chunk_nbytes
            elif i == self.last_decompressor and self.nvalues:     # (the stored items, for the value codecs)
                size = self.nitems * self.stored_itemsize
                if ensure(s, slot, <size_t>size) != 0:
                    fail(err, ZC_NOMEM, 0, 0, NULL)
                    return NULL
                target = s.buf[slot]
                slot = 3 - slot
            else:
                if i == self.last_decompressor:     # packed: its size is known
                    size = self.packed_nbytes
                elif st.kind == BLOSC:
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

    cdef int unpack(self, const uint8_t* src, size_t length, uint8_t* dst, ZcError* err) noexcept nogil:
        """The packbits step's decode: ``length`` packed bytes at src -> chunk_nbytes at dst."""
        cdef Step* st = &self.steps[0]
        cdef int width = st.last_bit - st.first_bit + 1
        cdef int pad = <int>((-(self.pack_count * width)) % 8 + 8) % 8
        if length != <size_t>self.packed_nbytes:
            fail(err, ZC_SIZE, self.packed_nbytes, length, "packed chunk holds")
            return -1
        if st.padding == 1:
            if src[0] != pad:
                fail(err, ZC_SIZE, pad, src[0], "packbits padding bits (first byte)")
                return -1
            src += 1
        elif st.padding == 2 and src[length - 1] != pad:
            fail(err, ZC_SIZE, pad, src[length - 1], "packbits padding bits (last byte)")
            return -1
        unpack_body(src, self.pack_count, <int>st.typesize, st.first_bit, width, st.nbits, st.signed, dst)
        return 0

    cdef void pack(self, const uint8_t* src, uint8_t* out) noexcept nogil:
        """The packbits step's encode: chunk_nbytes at src -> packed_nbytes at out."""
        cdef Step* st = &self.steps[0]
        cdef int width = st.last_bit - st.first_bit + 1
        cdef uint8_t pad = <uint8_t>(((-(self.pack_count * width)) % 8 + 8) % 8)
        if st.padding == 1:
            out[0] = pad
            out += 1
        elif st.padding == 2:
            out[self.packed_nbytes - 1] = pad
        pack_body(src, self.pack_count, <int>st.typesize, st.first_bit, width, out)

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
            if st.kind == VALUES:
                ptr = self.run_values(ptr, NULL, False, s, &slot, err)
                if ptr == NULL:
                    return -1
                length = <size_t>(self.nitems * self.stored_itemsize)
                continue
            if st.kind == BLOSC:
                cap = length + 16
            elif st.kind == ZSTD:
                cap = zc_zstd_bound(length)
            elif st.kind == CRC32C:
                cap = length + 4
            elif st.kind == PACKBITS:
                cap = <size_t>self.packed_nbytes
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
            elif st.kind == PACKBITS:
                self.pack(ptr, out)
                r = self.packed_nbytes
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

    cdef const uint8_t* run_values(self, const uint8_t* src, uint8_t* dst, bint decode, Scratch* s,
                                   int* slot, ZcError* err) noexcept nogil:
        """The value codecs over the chunk's items: decoding (stored items at src ->
        chunk_nbytes at dst, the stored byte order swapped first) or encoding (the
        chunk's items at src -> stored items in a scratch buffer, returned, in the stored
        byte order).  Buffers alternate between scratch slots ``slot[0]`` and 3 - it.
        NULL with err set for an item that cannot be coded."""
        cdef const uint8_t* ptr = src
        cdef uint8_t* out
        cdef int k, j, why = 0
        cdef int64_t bad = -1
        cdef long double value = 0
        cdef ValueOp* op
        cdef zv_scale_offset so
        cdef Py_ssize_t size
        if decode and self.stored_swap:
            size = self.nitems * self.stored_itemsize
            if ensure(s, slot[0], <size_t>size) != 0:
                fail(err, ZC_NOMEM, 0, 0, NULL)
                return NULL
            out = s.buf[slot[0]]
            if out != ptr:
                memcpy(out, ptr, <size_t>size)
            byteswap(<char*>out, self.nitems * self.stored_itemsize // self.stored_swap, self.stored_swap)
            ptr = out
            slot[0] = 3 - slot[0]
        for j in range(self.nvalues):
            k = self.nvalues - 1 - j if decode else j
            op = &self.values[k]
            size = self.nitems * (op.in_size if decode else op.out_size)
            if decode and j == self.nvalues - 1:
                out = dst
            else:
                if ensure(s, slot[0], <size_t>size if size > 0 else 1) != 0:
                    fail(err, ZC_NOMEM, 0, 0, NULL)
                    return NULL
                out = s.buf[slot[0]]
                slot[0] = 3 - slot[0]
            if op.kind == 1:
                so = op.so
                so.decode = decode
                bad = zv_scale_offset_values(&so, ptr, out, self.nitems, &why)
            elif op.kind == 2:
                bad = zv_cast_values(&op.dec if decode else &op.enc, ptr, out, self.nitems, &why, &value)
            else:
                if out != ptr:
                    memcpy(out, ptr, <size_t>size)
                if not decode:
                    zv_bitround(out, size // op.unit, <int>op.unit, op.mantissa, op.keepbits)
            if bad >= 0:
                if why == ZV_NOT_FINITE:
                    fail(err, ZC_VALUE, bad, 0, "cast_value: NaN or infinity, which the integer type cannot "
                         "hold (map it with scalar_map)")
                elif why == ZV_INEXACT:
                    fail(err, ZC_VALUE, bad, 0, "scale_offset: not divisible by scale (the decoded value is "
                         "not representable)")
                elif op.kind == 1:
                    fail(err, ZC_VALUE, bad, 0, "scale_offset: the result is outside the range of the data type")
                else:
                    fail(err, ZC_VALUE, bad, 0, "cast_value: out of the range of the target type (set "
                         "out_of_range to 'clamp' or 'wrap' to allow it)")
                return NULL
            ptr = out
        if not decode and self.stored_swap:
            byteswap(<char*>ptr, self.nitems * self.stored_itemsize // self.stored_swap, self.stored_swap)
        return ptr

    @property
    def nvalue_codecs(self):
        """The number of array -> array value codecs the chain runs."""
        return self.nvalues

    @property
    def ncodecs(self):
        """The number of bytes -> bytes codecs (0: chunks are stored uncompressed)."""
        return self.n
