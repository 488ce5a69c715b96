/* A match of offset 0 in an LZ4 stream.
 *
 * LZ4's format makes offset 0 invalid, but its decoders (1.10) take it: the match
 * then "copies" output bytes onto themselves, leaving whatever the destination
 * held, and the full and the partial decoder leave different bytes.  The range
 * decoders (blosc_partial.c's LZ4 calls, c-blosc's getitem for longer ranges)
 * first walk the streams they decode with this, as far as the bytes they return
 * (and those before them, which a match may copy): a token, its lengths and an
 * offset each, the literals skipped, nothing copied (blosc_partial.c's own walk
 * of a few bytes refuses offset 0 too).  The walk stops where the stream stops
 * making sense (LZ4 then refuses it at that point or before), so it refuses no
 * stream LZ4 decodes but for offset 0.
 *
 * Whole-frame decodes (c-blosc's decompress, blosc_rows.c) do not walk: on a
 * 64 MiB LZ4 chunk set the walk took 27-43% of their decode time (3% on a
 * ramp), so a frame with offset 0 still decodes there, to what the buffer held.
 *
 * Frame layout: see blosc_frame.h.
 */

#include "blosc_lz4.h"

#include "blosc_frame.h"

/* Add a length's extra bytes (255 ..., then one below 255) at *p to *len: 0, or
 * -1 if they run to the stream's end. */
static inline int extra_length(const uint8_t** p, const uint8_t* end, int64_t* len) {
  int b;
  do {
    if (*p >= end) return -1;
    b = *(*p)++;
    *len += b;
  } while (b == 255);
  return 0;
}

int zc_lz4_no_zero_offset(const uint8_t* s, int64_t n, int64_t upto) {
  const uint8_t* p = s;
  const uint8_t* const end = s + n;
  int64_t op = 0;                       /* output bytes made by the sequences walked */
  while (p < end && op < upto) {
    int token = *p++;
    int64_t ll = token >> 4;
    if (ll == 15 && extra_length(&p, end, &ll)) return 1;
    if (ll >= end - p) return 1;        /* the last sequence: literals only (or amiss) */
    p += ll;
    if (end - p < 2) return 1;
    if ((p[0] | p[1]) == 0) return 0;
    p += 2;
    int64_t ml = token & 15;
    if (ml == 15 && extra_length(&p, end, &ml)) return 1;
    op += ll + ml + 4;
  }
  return 1;
}

int zc_blosc_lz4_no_zero_offset(const uint8_t* src, size_t n, size_t start, size_t len) {
  if (n < HEADER || len == 0) return 1;
  int flags = src[2];
  int64_t typesize = src[3];
  int64_t nbytes = rd32(src + 4), blocksize = rd32(src + 8), cbytes = rd32(src + 12);
  if ((flags & FLAG_MEMCPYED) || (flags >> 5) != LZ4_CODE || typesize < 1 || nbytes <= 0 ||
      blocksize <= 0 || cbytes < HEADER || (uint64_t)cbytes > n || start >= (uint64_t)nbytes)
    return 1;
  int64_t nblocks = (nbytes - 1) / blocksize + 1;
  if (nblocks > (cbytes - HEADER) / 4) return 1;
  int64_t leftover = nbytes % blocksize;
  int64_t last_byte = len > (uint64_t)nbytes - start ? nbytes - 1 : (int64_t)(start + len - 1);
  int shuffled = (flags & (FLAG_SHUFFLE | FLAG_BITSHUFFLE)) && typesize > 1;
  for (int64_t b = (int64_t)start / blocksize; b <= last_byte / blocksize; b++) {
    int last = b == nblocks - 1 && leftover > 0;
    int64_t bsize = last ? leftover : blocksize;
    /* (c-blosc's rule: the block's own size decides, as blosc_d) */
    int nsplits = (!(flags & FLAG_DONT_SPLIT) && typesize <= MAX_SPLITS &&
                   bsize / typesize >= MIN_BUFFERSIZE && !last) ? (int)typesize : 1;
    int64_t neblock = bsize / nsplits;
    /* the stream bytes the range's bytes come from, and any before them (a match can
     * copy from there): up to its last byte in the range's last block, else all */
    int64_t upto = neblock;
    if (b == last_byte / blocksize) {
      int64_t in_block = last_byte - b * blocksize + 1;
      if (nsplits > 1) upto = (in_block + typesize - 1) / typesize;   /* items, one byte each */
      else if (!shuffled) upto = in_block;
    }
    int64_t pos = rd32(src + HEADER + 4 * b);
    for (int j = 0; j < nsplits; j++) {
      if (pos < 0 || pos > cbytes - 4) return 1;
      int64_t cs = rd32(src + pos);
      pos += 4;
      if (cs < 0 || cs > cbytes - pos) return 1;
      if (cs != neblock && !zc_lz4_no_zero_offset(src + pos, cs, upto)) return 0;
      pos += cs;
    }
  }
  return 1;
}
