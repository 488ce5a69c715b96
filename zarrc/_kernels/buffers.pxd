# Buffers the codec modules' Python functions hand to their kernels.

from libc.stdint cimport uint8_t


cdef class View:
    """A contiguous buffer held for the duration of a kernel call."""
    cdef Py_buffer buf
    cdef bint held

    cdef inline uint8_t* ptr(self) noexcept nogil:
        return <uint8_t*>self.buf.buf

    cdef inline size_t size(self) noexcept nogil:
        return <size_t>self.buf.len


cdef bytes new_bytes(size_t n)        # uninitialised
cdef bytes shrink(bytes out, Py_ssize_t n)
