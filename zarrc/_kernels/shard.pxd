# Shard assembly, for other kernels.

from libc.stdint cimport uint8_t

cdef Py_ssize_t fill_index(const uint8_t** ptrs, const Py_ssize_t* lens, Py_ssize_t n,
                           Py_ssize_t first_offset, bint index_big_endian, bint index_crc,
                           uint8_t* index) noexcept nogil
cdef object build_shard(const uint8_t** ptrs, const Py_ssize_t* lens, Py_ssize_t n,
                        bint index_at_start, bint index_big_endian, bint index_crc)
cdef int part_pointer(object part, Py_ssize_t i, const uint8_t** ptr, Py_ssize_t* length) except -1
