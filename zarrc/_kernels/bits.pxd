# The packbits codec's packing (bits.pyx), for the prepared chain.

from libc.stdint cimport uint8_t

cdef void pack_body(const uint8_t* src, Py_ssize_t count, int size, int first, int width,
                    uint8_t* dst) noexcept nogil
cdef void unpack_body(const uint8_t* src, Py_ssize_t count, int size, int first, int width, int nbits,
                      bint signed, uint8_t* dst) noexcept nogil
