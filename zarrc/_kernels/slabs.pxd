# Read outputs of a chunk or a few, carved from huge-page slabs (see slabs.pyx).

cdef object slab_array(tuple shape, object dtype, Py_ssize_t nbytes)
