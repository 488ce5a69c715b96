/* Decode a few bytes of a blosc (1.x format) frame without decompressing the
 * whole block that holds them.
 *
 * blosc_getitem decompresses every block it touches in full.  For a single
 * element of a large chunk that is a whole block (often 256 KiB) of LZ4 and an
 * unshuffle.  LZ4 can stop early (LZ4_decompress_safe_partial), and a byte-
 * shuffled, split block stores byte t of every item as its own LZ4 stream, so
 * the bytes of items [e0, e1) need only the first e1 bytes of each stream.
 *
 * Frame layout (c-blosc 1.x, blosc.c): a 16-byte header (version, versionlz,
 * flags, typesize, nbytes, blocksize, cbytes; little-endian int32s), for a
 * compressed frame an int32 start offset per block, then per block one stream
 * per split, each an int32 compressed size and the stream (stored as is when
 * that size equals the stream's decoded size).
 */

#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "blosc_partial.h"

#ifndef ZC_NO_LZ4
#include "lz4.h"
#endif

#define HEADER 16
#define FLAG_SHUFFLE 0x1
#define FLAG_MEMCPYED 0x2
#define FLAG_BITSHUFFLE 0x4
#define FLAG_DONT_SPLIT 0x10
#define LZ4_CODE 1
#define MAX_SPLITS 16
#define MIN_BUFFERSIZE 128
#define PARTIAL_MAX_RATIO 32

static int32_t rd32(const uint8_t* p) {
  return (int32_t)((uint32_t)p[0] | ((uint32_t)p[1] << 8) | ((uint32_t)p[2] << 16) |
                   ((uint32_t)p[3] << 24));
}

/* Decode the first `want` bytes of the stream at src[0..cbytes) whose decoded
 * size is `neblock` into buf (capacity `neblock`).  0 or -1 (corrupt). */
static int stream_prefix(const uint8_t* src, int32_t cbytes, int32_t neblock, int32_t want,
                         uint8_t* buf) {
  if (cbytes == neblock) {
    memcpy(buf, src, (size_t)want);
    return 0;
  }
#ifdef ZC_NO_LZ4
  (void)buf;
  return -1;
#else
  /* LZ4's partial mode copies long matches slowly: a stream that compresses more
   * than 32:1 (runs, like the exponent bytes of smooth floats) decodes faster in
   * full (10 us instead of 230 us for 128 KiB of f32 exponents). */
  if ((int64_t)cbytes * PARTIAL_MAX_RATIO < neblock)
    return LZ4_decompress_safe((const char*)src, (char*)buf, cbytes, neblock) == neblock ? 0 : -1;
  int r = LZ4_decompress_safe_partial((const char*)src, (char*)buf, cbytes, want, neblock);
  return r < want ? -1 : 0;
#endif
}

int64_t zc_blosc_partial(const uint8_t* src, size_t n, size_t start, size_t len, uint8_t* dst) {
  if (n < HEADER || len == 0 || len > ZC_PARTIAL_MAX) return 0;
  int flags = src[2];
  int32_t typesize = src[3];
  int32_t nbytes = rd32(src + 4), blocksize = rd32(src + 8), cbytes = rd32(src + 12);
  if (nbytes < 0 || blocksize <= 0 || cbytes < HEADER || (size_t)cbytes > n || typesize < 1) return 0;
  if (start + len > (size_t)nbytes) return 0;
  if (flags & FLAG_MEMCPYED) {
    if ((size_t)cbytes < HEADER + (size_t)nbytes) return -1;
    memcpy(dst, src + HEADER + start, len);
    return (int64_t)len;
  }
#ifdef ZC_NO_LZ4
  return 0;
#else
  if (((flags >> 5) & 0x7) != LZ4_CODE || (flags & FLAG_BITSHUFFLE)) return 0;
  int32_t nblocks = nbytes / blocksize + (nbytes % blocksize != 0);
  int32_t b = (int32_t)(start / (size_t)blocksize);
  if (b != (int32_t)((start + len - 1) / (size_t)blocksize)) return 0;   /* spans blocks */
  if ((size_t)HEADER + 4 * (size_t)nblocks > (size_t)cbytes) return -1;
  int leftover = (b == nblocks - 1) && (nbytes % blocksize != 0);
  int32_t bsize = leftover ? nbytes % blocksize : blocksize;
  int shuffled = (flags & FLAG_SHUFFLE) && typesize > 1;
  int nsplits = (!(flags & FLAG_DONT_SPLIT) && typesize <= MAX_SPLITS &&
                 blocksize / typesize >= MIN_BUFFERSIZE && !leftover) ? typesize : 1;
  if (shuffled && (nsplits != typesize || bsize % typesize)) return 0;
  int32_t neblock = bsize / nsplits;
  int32_t o = (int32_t)(start - (size_t)b * (size_t)blocksize);
  int64_t offset = rd32(src + HEADER + 4 * (size_t)b);
  uint8_t* buf = (uint8_t*)malloc((size_t)neblock);
  if (buf == NULL) return 0;
  int64_t result = (int64_t)len;
  int32_t e0 = o / typesize, e1 = (o + (int32_t)len + typesize - 1) / typesize;
  for (int j = 0; j < nsplits; j++) {
    if (offset < HEADER || offset > (int64_t)cbytes - 4) { result = -1; break; }
    int32_t csize = rd32(src + offset);
    offset += 4;
    if (csize < 0 || csize > cbytes - offset) { result = -1; break; }
    const uint8_t* stream = src + offset;
    offset += csize;
    if (shuffled) {              /* stream j: byte j of items 0, 1, ... of the block */
      if (stream_prefix(stream, csize, neblock, e1, buf) < 0) { result = -1; break; }
      for (int32_t e = e0; e < e1; e++) {
        int64_t at = (int64_t)(e - e0) * typesize + j - (o - e0 * typesize);
        if (at >= 0 && at < (int64_t)len) dst[at] = buf[e];
      }
    } else {                     /* stream j: bytes [j * neblock, (j + 1) * neblock) */
      int32_t lo = j * neblock, hi = lo + neblock;
      if (hi <= o || lo >= o + (int32_t)len) continue;
      int32_t from = o > lo ? o : lo, to = (o + (int32_t)len) < hi ? o + (int32_t)len : hi;
      if (stream_prefix(stream, csize, neblock, to - lo, buf) < 0) { result = -1; break; }
      memcpy(dst + (from - o), buf + (from - lo), (size_t)(to - from));
    }
  }
  free(buf);
  return result;
#endif
}
