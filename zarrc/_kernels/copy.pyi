"""N-d strided copy / fill kernels (cdef only; used from the read and write batches via copy.pxd)."""
