# The element-wise value kernels of the array -> array codecs (src/zc_values.h):
# declared once here, for values.pyx and the native chain (chain.pxd, chain.pyx).

from libc.stdint cimport int64_t

cdef extern from "src/zc_values.h" nogil:
    enum:
        ZV_MAX_MAP
        ZV_NOT_FINITE
        ZV_OUT_OF_RANGE
        ZV_INEXACT
    ctypedef struct zv_cast:
        int src, dst, rounding, out_of_range, nmap
        long double keys[64]
        long double vals[64]
    ctypedef struct zv_scale_offset:
        int type, decode
        double offset_f, scale_f
        int64_t offset_i, scale_i
    int64_t zv_cast_values(const zv_cast* c, const void* src, void* dst, int64_t n, int* why,
                           long double* value)
    int64_t zv_scale_offset_values(const zv_scale_offset* c, const void* src, void* dst, int64_t n,
                                   int* why)
    void zv_bitround(void* data, int64_t n, int bytes, int mantissa, int keepbits)
