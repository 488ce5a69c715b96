/* The c-blosc 1.x frame format, shared by blosc_partial.c and blosc_rows.c.
 *
 * A 16-byte header (version, versionlz, flags, typesize, nbytes, blocksize, cbytes;
 * little-endian int32s), for a compressed frame an int32 start offset per block,
 * then per block one stream per split, each an int32 compressed size and the
 * stream (stored as is when that size equals the stream's decoded size). */
#ifndef ZC_BLOSC_FRAME_H
#define ZC_BLOSC_FRAME_H

#include <stdint.h>

#define HEADER 16
#define FLAG_SHUFFLE 0x1
#define FLAG_MEMCPYED 0x2
#define FLAG_BITSHUFFLE 0x4
#define FLAG_DONT_SPLIT 0x10
#define LZ4_CODE 1          /* flags >> 5 of a frame compressed with LZ4 (or LZ4HC) */
#define FORMAT_VERSION 2    /* the header's version byte c-blosc 1.x takes */
#define LZ4_VERSION 1       /* ... and its versionlz byte for LZ4 (c-blosc refuses others) */
#define FLAG_RESERVED 0x8   /* a flag from the future: c-blosc refuses the frame */
#define MAX_SPLITS 16       /* a block is split into typesize streams up to this typesize */
#define MIN_BUFFERSIZE 128  /* ... and when it holds at least this many items */

static inline int32_t rd32(const uint8_t* p) {
  return (int32_t)((uint32_t)p[0] | ((uint32_t)p[1] << 8) | ((uint32_t)p[2] << 16) |
                   ((uint32_t)p[3] << 24));
}

#endif
