/* The zstd functions c-blosc's zstd compressor calls, as a table: zarrc links
   libzstd into one extension module (zstd.pyx), which hands this table to the
   blosc module when that loads (src/blosc_zstd.c). */
#ifndef ZC_ZSTD_CALLS_H
#define ZC_ZSTD_CALLS_H

#include <stddef.h>

#include "zc_platform.h"

typedef struct zc_zstd_calls {
    size_t (*compress)(void* dst, size_t cap, const void* src, size_t n, int level);
    size_t (*decompress)(void* dst, size_t cap, const void* src, size_t n);
    unsigned (*is_error)(size_t code);
    int (*max_level)(void);
} zc_zstd_calls;

/* Give c-blosc's zstd compressor the table (src/blosc_zstd.c). */
ZC_HIDDEN void zc_blosc_use_zstd(const zc_zstd_calls* table);

#endif
