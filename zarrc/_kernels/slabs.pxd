# Memory for read outputs of 256 KiB and more, kept for the next reads (see slabs.pyx).

cdef object output_array(tuple shape, object dtype, Py_ssize_t nbytes)
