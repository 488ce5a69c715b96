# The crc32c kernel (src/crc32c.c: the CPU's crc32 instruction where there is one).

from libc.stdint cimport uint8_t, uint32_t


cdef uint32_t zc_crc32c_update(uint32_t crc, const uint8_t* src, size_t n) noexcept nogil
