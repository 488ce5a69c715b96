# cython: language_level=3, freethreading_compatible=True, boundscheck=False, wraparound=False, cdivision=True
"""The ``packbits`` codec's bit packing, without the GIL.

Items are made of ``ncomp`` components (2 for complex types, else 1) of ``size``
bytes each, little-endian in memory (the packing is defined on the little-endian
value); a component holds ``nbits`` significant bits (1 for bool, 2 / 4 / 6 for
the sub-byte types, ``8 * size`` otherwise).  Bits ``first`` .. ``last`` of each
component are written one after the other into a bit sequence, least significant
bit first, and the sequence into bytes, bit 0 of byte 0 first (the packbits
spec, as zarrs does).  Unpacking shifts the bits back to ``first``, sign-extends
them up to ``nbits`` for signed types, and leaves the bits above ``nbits`` zero
(the form ml_dtypes' int2 / int4 hold)."""

from libc.stdint cimport uint8_t, uint64_t
from libc.string cimport memcpy, memset


cdef inline uint64_t low_mask(int n) noexcept nogil:
    return ~(<uint64_t>0) if n >= 64 else ((<uint64_t>1 << n) - 1)


cdef void pack_whole(const uint8_t* src, Py_ssize_t count, int width, uint8_t* dst) noexcept nogil:
    """pack_body for one-byte components of width 1, 2, 4 or 8 from bit 0: 8 // width
    values per byte, unrolled per width."""
    cdef int per = 8 // width, k
    cdef Py_ssize_t j, n = count // per
    cdef const uint8_t* p
    cdef uint8_t m = <uint8_t>low_mask(width), b
    if width == 8:
        memcpy(dst, src, count)
        return
    if width == 4:
        for j in range(n):
            p = src + 2 * j
            dst[j] = (p[0] & 15) | ((p[1] & 15) << 4)
    elif width == 2:
        for j in range(n):
            p = src + 4 * j
            dst[j] = (p[0] & 3) | ((p[1] & 3) << 2) | ((p[2] & 3) << 4) | ((p[3] & 3) << 6)
    else:
        for j in range(n):
            p = src + 8 * j
            dst[j] = ((p[0] & 1) | ((p[1] & 1) << 1) | ((p[2] & 1) << 2) | ((p[3] & 1) << 3)
                      | ((p[4] & 1) << 4) | ((p[5] & 1) << 5) | ((p[6] & 1) << 6) | ((p[7] & 1) << 7))
    if n * per < count:
        b = 0
        for k in range(count - n * per):
            b |= <uint8_t>((src[n * per + k] & m) << (k * width))
        dst[n] = b


cdef inline uint8_t widen(int v, int sign_bit, int mask) noexcept nogil:
    """v sign-extended from sign_bit (0: unsigned) and cut to mask."""
    return <uint8_t>(((v ^ sign_bit) - sign_bit) & mask)


cdef void unpack_whole(const uint8_t* src, Py_ssize_t count, int width, int sign_bit, int mask,
                       uint8_t* dst) noexcept nogil:
    """unpack_body for one-byte components of width 1, 2, 4 or 8 from bit 0."""
    cdef int per = 8 // width, k, b
    cdef Py_ssize_t j, n = count // per
    cdef uint8_t* q
    cdef int m = <int>low_mask(width)
    if width == 8:
        for j in range(count):
            dst[j] = widen(src[j], sign_bit, mask)
        return
    if width == 4:
        for j in range(n):
            b = src[j]
            q = dst + 2 * j
            q[0] = widen(b & 15, sign_bit, mask)
            q[1] = widen(b >> 4, sign_bit, mask)
    elif width == 2:
        for j in range(n):
            b = src[j]
            q = dst + 4 * j
            q[0] = widen(b & 3, sign_bit, mask)
            q[1] = widen((b >> 2) & 3, sign_bit, mask)
            q[2] = widen((b >> 4) & 3, sign_bit, mask)
            q[3] = widen(b >> 6, sign_bit, mask)
    else:
        for j in range(n):
            b = src[j]
            q = dst + 8 * j
            for k in range(8):
                q[k] = widen((b >> k) & 1, sign_bit, mask)
    if n * per < count:
        b = src[n]
        for k in range(count - n * per):
            dst[n * per + k] = widen((b >> (k * width)) & m, sign_bit, mask)


cdef void pack_body(const uint8_t* src, Py_ssize_t count, int size, int first, int width,
                    uint8_t* dst) noexcept nogil:
    """``count`` components of ``size`` bytes -> their bits first..first+width-1,
    packed into ceil(count * width / 8) bytes at dst."""
    cdef Py_ssize_t i, bitpos = 0, nbytes = (count * width + 7) // 8
    cdef uint64_t v, mask = low_mask(width)
    cdef int k, shift, take, left
    memset(dst, 0, nbytes)
    if size == 1 and first == 0 and 8 % width == 0:     # bool, int2, int4 ...: whole values per byte
        pack_whole(src, count, width, dst)
        return
    for i in range(count):
        v = 0
        for k in range(size):
            v |= (<uint64_t>src[i * size + k]) << (8 * k)
        v = (v >> first) & mask
        left = width
        while left > 0:
            shift = bitpos & 7
            take = 8 - shift
            if take > left:
                take = left
            dst[bitpos >> 3] |= <uint8_t>((v & low_mask(take)) << shift)
            v >>= take
            bitpos += take
            left -= take


cdef void unpack_body(const uint8_t* src, Py_ssize_t count, int size, int first, int width, int nbits,
                      bint signed, uint8_t* dst) noexcept nogil:
    """The inverse of pack_body: ``count`` components of ``size`` bytes at dst."""
    cdef Py_ssize_t i, bitpos = 0
    cdef uint64_t v, got
    cdef int k, shift, take, done, top = first + width
    if size == 1 and first == 0 and 8 % width == 0:     # whole values per byte
        unpack_whole(src, count, width, <int>(1 << (width - 1)) if signed else 0,
                     <int>low_mask(nbits), dst)
        return
    for i in range(count):
        v = 0
        done = 0
        while done < width:
            shift = bitpos & 7
            take = 8 - shift
            if take > width - done:
                take = width - done
            got = (<uint64_t>src[bitpos >> 3] >> shift) & low_mask(take)
            v |= got << done
            bitpos += take
            done += take
        v <<= first
        if signed and top < nbits and (v >> (top - 1)) & 1:
            v |= low_mask(nbits) & ~low_mask(top)      # sign-extended up to nbits
        for k in range(size):
            dst[i * size + k] = <uint8_t>(v >> (8 * k))


def _check(int size, int first, int last, int nbits):
    if size < 1 or size > 8:
        raise ValueError(f"packbits: components of {size} bytes are not supported")
    if not 0 <= first <= last < nbits or nbits > 8 * size:
        raise ValueError(f"packbits: bits {first}..{last} are not within a {nbits}-bit component")


def packed_size(Py_ssize_t count, int first, int last):
    """Bytes that ``count`` components packed to bits first..last take (no padding byte)."""
    return (count * (last - first + 1) + 7) // 8


def pack(const uint8_t[::1] src, int size, int first, int last, int nbits, uint8_t[::1] dst):
    """Pack the components in ``src`` (``size`` bytes each, little-endian) into ``dst``
    (``packed_size`` bytes).  Raises ValueError for bad sizes or bit ranges."""
    _check(size, first, last, nbits)
    cdef Py_ssize_t count = src.shape[0] // size
    if src.shape[0] % size or dst.shape[0] != packed_size(count, first, last):
        raise ValueError(f"packbits: {src.shape[0]} bytes of {size}-byte components do not pack into "
                         f"{dst.shape[0]} bytes")
    if count == 0:
        return
    with nogil:
        pack_body(&src[0], count, size, first, last - first + 1, &dst[0])


def unpack(const uint8_t[::1] src, int size, int first, int last, int nbits, bint signed,
           uint8_t[::1] dst):
    """Unpack ``src`` (``packed_size`` bytes) into ``dst`` (components of ``size``
    bytes, little-endian).  Raises ValueError for bad sizes or bit ranges."""
    _check(size, first, last, nbits)
    cdef Py_ssize_t count = dst.shape[0] // size
    if dst.shape[0] % size or src.shape[0] != packed_size(count, first, last):
        raise ValueError(f"packbits: {src.shape[0]} bytes do not unpack into {count} components "
                         f"of bits {first}..{last}")
    if count == 0:
        return
    with nogil:
        unpack_body(&src[0], count, size, first, last - first + 1, nbits, signed, &dst[0])
