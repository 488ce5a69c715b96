/* How the kernels report failure: a function returns bytes produced (>= 0) or -1
   with a zc_error filled in (zc_fail); the Cython caller turns it into a Python
   exception once it holds the GIL again (errors.pyx).  errors.pxd mirrors this. */
#ifndef ZC_ERROR_H
#define ZC_ERROR_H

#include <stdint.h>

enum zc_code {
    ZC_OK = 0,
    ZC_CORRUPT = 1,        /* data does not decode; detail says how */
    ZC_TRUNCATED = 2,      /* input ends early (expected = bytes needed, actual = held) */
    ZC_SIZE = 3,           /* decodes to `actual` bytes, `expected` wanted */
    ZC_TOO_LARGE = 4,      /* decodes to more than the `expected` bytes */
    ZC_NOMEM = 5,
    ZC_PARAM = 6,          /* a parameter is out of range; detail says which */
    ZC_UNSUPPORTED = 7,    /* e.g. a blosc compressor this build lacks */
    ZC_CHECKSUM = 8,       /* stored checksum `expected`, computed `actual`; detail names it */
    ZC_IO = 9,             /* an I/O call failed: detail names it, actual = errno */
    ZC_VALUE = 10,         /* an item cannot be coded (cast_value, scale_offset): expected = its index */
};

typedef struct zc_error {
    int code;
    int64_t expected;
    int64_t actual;
    const char* detail;
} zc_error;

/* Fill in err and return -1 (the kernels' error return). */
static inline int64_t zc_fail(zc_error* err, int code, int64_t expected, int64_t actual,
                              const char* detail) {
    err->code = code;
    err->expected = expected;
    err->actual = actual;
    err->detail = detail;
    return -1;
}

#endif
