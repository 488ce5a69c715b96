/* c-blosc's zstd compressor, without a second copy of libzstd: the four zstd
   functions it calls forward to the one copy, in zarrc's zstd extension module,
   whose table zc_blosc_use_zstd is given when the blosc module loads (blosc.pyx
   cimports zstd.pyx, so zstd has loaded by then).  Hidden: nothing is exported. */
#include "zstd_calls.h"

static zc_zstd_calls calls;

ZC_HIDDEN void zc_blosc_use_zstd(const zc_zstd_calls* table) { calls = *table; }

ZC_HIDDEN size_t ZSTD_compress(void* dst, size_t cap, const void* src, size_t n, int level) {
    return calls.compress(dst, cap, src, n, level);
}

ZC_HIDDEN size_t ZSTD_decompress(void* dst, size_t cap, const void* src, size_t n) {
    return calls.decompress(dst, cap, src, n);
}

ZC_HIDDEN unsigned ZSTD_isError(size_t code) { return calls.is_error(code); }

ZC_HIDDEN int ZSTD_maxCLevel(void) { return calls.max_level(); }
