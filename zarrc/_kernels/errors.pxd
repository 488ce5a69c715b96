# How the kernels report failure (no C library here): every zc_* function returns
# the number of bytes produced (>= 0) or -1 with a ZcError filled in (fail()); the
# caller turns the ZcError into a Python exception once it holds the GIL again
# (describe / raise_error).

from libc.stdint cimport int64_t, uint8_t, uint32_t


# (the home of the codes and the struct: src/zc_error.h, for the C kernels too)
cdef extern from "src/zc_error.h":
    enum:
        ZC_OK
        ZC_CORRUPT        # data does not decode; detail says how
        ZC_TRUNCATED      # input ends early (expected = bytes needed, actual = held)
        ZC_SIZE           # decodes to `actual` bytes, `expected` wanted
        ZC_TOO_LARGE      # decodes to more than the `expected` bytes
        ZC_NOMEM
        ZC_PARAM          # a parameter is out of range; detail says which
        ZC_UNSUPPORTED    # e.g. a blosc compressor this build lacks
        ZC_CHECKSUM       # stored checksum `expected`, computed `actual`; detail names it
        ZC_IO             # an I/O call failed: detail names it, actual = errno
        ZC_VALUE          # an item cannot be coded: expected = its index; detail says why

    ctypedef struct ZcError "zc_error":
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


# The message for a filled-in ZcError (nin >= 0: the input size, named for corrupt data).
cdef str describe(ZcError* err, Py_ssize_t nin)

# Raise the ZcError of a codec kernel as KernelError (MemoryError for ZC_NOMEM).
cdef object raise_error(str codec, ZcError* err, Py_ssize_t nin)
