# cython: language_level=3, freethreading_compatible=True
"""Buffers for the codec modules (no C library): :class:`View`, a contiguous
buffer held while a kernel runs, and :class:`NewBytes`, new bytes that parallel
decoders fill through the buffer protocol."""

from cpython.buffer cimport PyBUF_ANY_CONTIGUOUS, PyBUF_WRITABLE, PyBuffer_Release, PyObject_GetBuffer
from cpython.bytes cimport PyBytes_AS_STRING, PyBytes_FromStringAndSize


cdef class View:

    def __cinit__(self, obj, bint writable=False):
        cdef int flags = PyBUF_ANY_CONTIGUOUS
        if writable:
            flags |= PyBUF_WRITABLE
        PyObject_GetBuffer(obj, &self.buf, flags)
        self.held = True

    def __dealloc__(self):
        if self.held:
            PyBuffer_Release(&self.buf)


cdef bytes new_bytes(size_t n):
    return PyBytes_FromStringAndSize(NULL, <Py_ssize_t>n)


cdef bytes shrink(bytes out, Py_ssize_t n):
    # A copy of the compressed bytes: small next to the compression itself.
    return out if n == len(out) else out[:n]


cdef extern from "Python.h":
    int PyBuffer_FillInfo(Py_buffer* view, object exporter, void* buf, Py_ssize_t len,
                          int readonly, int flags) except -1


cdef class NewBytes:
    """A new, uninitialised bytes object of ``n`` bytes, writable through the buffer
    protocol so that parallel decoders can fill it; ``take()`` hands it out."""
    cdef bytes obj

    def __cinit__(self, Py_ssize_t n):
        self.obj = PyBytes_FromStringAndSize(NULL, n)

    def __getbuffer__(self, Py_buffer* view, int flags):
        PyBuffer_FillInfo(view, self, PyBytes_AS_STRING(self.obj), len(self.obj), 0, flags)

    def __releasebuffer__(self, Py_buffer* view):
        pass

    def take(self):
        return self.obj
