/* LZ4 streams of blosc frames checked for what LZ4's decoders take but its format
 * forbids (see blosc_lz4.c). */
#ifndef ZC_BLOSC_LZ4_H
#define ZC_BLOSC_LZ4_H

#include <stddef.h>
#include <stdint.h>

/* 1 if no match of the LZ4 stream s[0..n) that makes output before byte `upto` has
 * offset 0, as far as the stream can be walked; 0 if one does. */
int zc_lz4_no_zero_offset(const uint8_t* s, int64_t n, int64_t upto);

/* 1 if no LZ4 stream of the blocks holding decoded bytes [start, start + len) of
 * the blosc frame src[0..n) has a match of offset 0 (also for a frame that is not
 * LZ4, and where the frame's layout is amiss: c-blosc refuses it then); 0 if one
 * does. */
int zc_blosc_lz4_no_zero_offset(const uint8_t* src, size_t n, size_t start, size_t len);

#endif
