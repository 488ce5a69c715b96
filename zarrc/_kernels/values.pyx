# cython: language_level=3, freethreading_compatible=True, boundscheck=False, wraparound=False, cdivision=True
"""Element-wise value kernels (src/zc_values.h) of the array -> array codecs
``cast_value`` and ``scale_offset``, run without the GIL over whole chunks."""

from libc.stdint cimport int64_t

# numpy dtype str (native order) -> the kernels' type code
TYPE_CODES = {"i1": 0, "i2": 1, "i4": 2, "i8": 3, "u1": 4, "u2": 5, "u4": 6, "u8": 7,
              "f2": 8, "f4": 9, "f8": 10}
ROUNDING = {"nearest-even": 0, "towards-zero": 1, "towards-positive": 2, "towards-negative": 3,
            "nearest-away": 4}
OUT_OF_RANGE = {None: 0, "clamp": 1, "wrap": 2}
# why an element failed
NOT_FINITE = 1
OUT_OF_RANGE_VALUE = 2
INEXACT = 3


cdef class Cast:
    """A prepared value cast from type code ``src`` to ``dst`` (:data:`TYPE_CODES`),
    ``rounding`` and ``out_of_range`` (:data:`ROUNDING`, :data:`OUT_OF_RANGE` codes),
    ``scalar_map``: (input, output) number pairs, first match wins (NaN matches NaN)."""

    cdef zv_cast c

    def __init__(self, int src, int dst, int rounding, int out_of_range, list scalar_map):
        if not (0 <= src <= 10 and 0 <= dst <= 10 and 0 <= rounding <= 4 and 0 <= out_of_range <= 2):
            raise ValueError("cast: bad type, rounding or out_of_range code")
        if len(scalar_map) > ZV_MAX_MAP:
            raise ValueError(f"cast: at most {ZV_MAX_MAP} scalar_map entries are supported, got {len(scalar_map)}")
        self.c.src, self.c.dst, self.c.rounding, self.c.out_of_range = src, dst, rounding, out_of_range
        self.c.nmap = len(scalar_map)
        for i, (k, v) in enumerate(scalar_map):
            self.c.keys[i] = self._exact(k)
            self.c.vals[i] = self._exact(v)

    @staticmethod
    def _exact(v):
        # integers beyond 2**53 exactly (long double holds 64 bits)
        cdef long double r
        if isinstance(v, int):
            r = <long double>(<double>(v >> 32)) * 4294967296.0 + <long double>(v & 0xffffffff)
            return r
        return <double>v

    def run(self, const unsigned char[::1] src, unsigned char[::1] dst, int64_t n):
        """Cast n items of src into dst.  Returns None, or (index, why, value) of the first
        item that cannot be cast (why: NOT_FINITE or OUT_OF_RANGE_VALUE)."""
        cdef int why = 0
        cdef long double value = 0
        cdef int64_t bad
        if n < 0 or (n and (src.shape[0] < n or dst.shape[0] < n)):
            raise ValueError("cast: buffers too small")
        if n == 0:
            return None
        with nogil:
            bad = zv_cast_values(&self.c, &src[0], &dst[0], n, &why, &value)
        if bad < 0:
            return None
        return (bad, why, float(<double>value))


cdef class ScaleOffset:
    """A prepared scale_offset for type code ``type``: offset and scale as Python numbers
    of the type (floats for float types, ints otherwise)."""

    cdef zv_scale_offset c

    def __init__(self, int type, offset, scale):
        if not 0 <= type <= 10:
            raise ValueError("scale_offset: bad type code")
        self.c.type = type
        if type >= 8:
            self.c.offset_f, self.c.scale_f = float(offset), float(scale)
        else:
            self.c.offset_i = <int64_t>(int(offset) - (1 << 64) if int(offset) >= (1 << 63) else int(offset))
            self.c.scale_i = <int64_t>(int(scale) - (1 << 64) if int(scale) >= (1 << 63) else int(scale))
            if self.c.scale_i == 0:
                raise ValueError("scale_offset: scale must be non-zero")

    def run(self, bint decode, const unsigned char[::1] src, unsigned char[::1] dst, int64_t n):
        """(x - offset) * scale (decode: x / scale + offset) of n items of src into dst.
        Returns None, or (index, why) of the first item that fails (OUT_OF_RANGE_VALUE,
        INEXACT)."""
        cdef int why = 0
        cdef int64_t bad
        cdef zv_scale_offset c = self.c
        c.decode = decode
        if n <= 0:
            return None
        with nogil:
            bad = zv_scale_offset_values(&c, &src[0], &dst[0], n, &why)
        return None if bad < 0 else (bad, why)


def bitround(unsigned char[::1] data, int itemsize, int mantissa, int keepbits):
    """Round ``data`` in place, units of ``itemsize`` bytes (1, 2, 4, 8): floats'
    significands of ``mantissa`` bits to ``keepbits`` bits; integers (``mantissa`` 0)
    to ``keepbits`` bits from their most significant set bit."""
    cdef int64_t n
    if itemsize not in (1, 2, 4, 8) or keepbits < 1 or mantissa < 0:
        raise ValueError("bitround: bad itemsize, mantissa or keepbits")
    n = data.shape[0] // itemsize
    if n == 0:
        return
    with nogil:
        zv_bitround(&data[0], n, itemsize, mantissa, keepbits)
