"""N-d strided copy / fill kernels (cdef only; used from pipeline.pyx via copy.pxd)."""
