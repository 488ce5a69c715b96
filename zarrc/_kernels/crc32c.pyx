# cython: language_level=3, freethreading_compatible=True, boundscheck=False, wraparound=False, cdivision=True
"""CRC-32C (src/crc32c.c: the CPU's crc32 instruction where there is one, else
slicing tables), computed without the GIL."""

from libc.stdint cimport uint8_t, uint32_t

from zarrc._kernels.buffers cimport View

cdef extern from "src/crc32c.h" nogil:
    uint32_t zc_crc32c(uint32_t crc, const void* buf, size_t len)
    uint32_t zc_crc32c_software(uint32_t crc, const void* buf, size_t len)
    int zc_crc32c_hardware_available()


cdef uint32_t zc_crc32c_update(uint32_t crc, const uint8_t* src, size_t n) noexcept nogil:
    return zc_crc32c(crc, src, n)


def crc32c(data, uint32_t crc=0):
    """CRC-32C of ``data`` (continuing from ``crc``)."""
    cdef View src = View(data)
    cdef uint32_t r
    with nogil:
        r = zc_crc32c(crc, src.ptr(), src.size())
    return r


def crc32c_software(data, uint32_t crc=0):
    """CRC-32C computed without the CPU's crc32 instruction (for tests)."""
    cdef View src = View(data)
    cdef uint32_t r
    with nogil:
        r = zc_crc32c_software(crc, src.ptr(), src.size())
    return r


def crc32c_hardware():
    """True if CRC-32C runs on the CPU's crc32 instruction."""
    return bool(zc_crc32c_hardware_available())
