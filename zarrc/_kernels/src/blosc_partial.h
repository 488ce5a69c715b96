/* Partial decoding of blosc frames (see blosc_partial.c). */
#ifndef ZC_BLOSC_PARTIAL_H
#define ZC_BLOSC_PARTIAL_H

#include <stddef.h>
#include <stdint.h>

/* Ranges longer than this take blosc_getitem (whole blocks, SIMD unshuffle). */
#define ZC_PARTIAL_MAX 4096

/* Decode bytes [start, start + len) of the blosc frame src[0..n) into dst when they
 * lie in one block of an LZ4 (or uncompressed) frame, decompressing each stream
 * only as far as needed.  The header must have been validated.  Returns len, 0 if
 * the frame's layout is not handled here (use blosc_getitem), -1 if corrupt. */
int64_t zc_blosc_partial(const uint8_t* src, size_t n, size_t start, size_t len, uint8_t* dst);

#endif
