/* Decode a few bytes of a blosc (1.x format) frame without decompressing the
 * whole block that holds them, and, for a frame in a file, without reading it all.
 *
 * blosc_getitem decompresses every block it touches in full.  For a single
 * element of a large chunk that is a whole block (often 256 KiB) of LZ4 and an
 * unshuffle.  A byte-shuffled, split block stores byte t of every item as its own
 * stream, so the bytes of items [e0, e1) are bytes [e0, e1) of each stream:
 *  - a stream stored as is (incompressible bytes) gives them directly;
 *  - for a few bytes of an LZ4 stream, its sequences are walked up to the last
 *    byte wanted without copying anything (a token, lengths and an offset each;
 *    literals are skipped), and each byte is then traced back through the matches
 *    that copied it to the literal it came from;
 *  - for more bytes, the stream is decompressed as far as needed
 *    (LZ4_decompress_safe_partial).
 *
 * Frame layout (c-blosc 1.x, blosc.c): a 16-byte header (version, versionlz,
 * flags, typesize, nbytes, blocksize, cbytes; little-endian int32s), for a
 * compressed frame an int32 start offset per block, then per block one stream
 * per split, each an int32 compressed size and the stream (stored as is when
 * that size equals the stream's decoded size).
 */

#include <errno.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "blosc_frame.h"
#include "blosc_lz4.h"
#include "blosc_partial.h"
#include "zc_platform.h"

#ifndef ZC_NO_LZ4
#include "lz4.h"
#endif

#define PARTIAL_MAX_RATIO 32
#define SMALL_READ 4096  /* the least a file frame is read in (a header, a stream's size) */
#define WINDOW 16384     /* ... and while walking a stream beyond the part first read */
#define TRACE_MAX 32     /* bytes per stream found by walking its sequences */

/* ------------------------------------------------------------------ frames */

void zc_frame_mem(zc_frame* f, const uint8_t* src, size_t n) {
  memset(f, 0, sizeof *f);
  f->mem = src;
  f->fd = -1;
  f->size = (int64_t)n;
  f->view = src;
  f->view_len = (int64_t)n;
}

void zc_frame_file(zc_frame* f, int fd, int64_t base, int64_t size) {
  memset(f, 0, sizeof *f);
  f->fd = fd;
  f->base = base;
  f->size = size;
}

void zc_frame_release(zc_frame* f) {
  free(f->buf);
  f->buf = NULL;
  f->buf_cap = 0;
  f->view = f->mem;
  f->view_len = f->mem ? f->size : 0;
  f->view_pos = 0;
}

/* Read up to n frame bytes from pos of a file frame into dst: how many (fewer
 * only where the file ends), or -1 if a read failed (io_errno). */
static int64_t pread_frame(zc_frame* f, int64_t pos, size_t n, uint8_t* dst) {
  int64_t done = zc_pread_full(f->fd, dst, n, f->base + pos);
  if (done < 0) f->io_errno = errno ? errno : EIO;
  return done;
}

const uint8_t* zc_frame_get(zc_frame* f, int64_t pos, size_t n) {
  if (pos < 0 || (int64_t)n > f->size || pos > f->size - (int64_t)n) return NULL;
  if (pos >= f->view_pos && pos + (int64_t)n <= f->view_pos + f->view_len)
    return f->view + (pos - f->view_pos);
  if (f->mem != NULL) return NULL;
  size_t want = n > SMALL_READ ? n : SMALL_READ;
  if ((int64_t)want > f->size - pos) want = (size_t)(f->size - pos);
  /* starting inside the window: keep it, read only what follows it */
  int64_t keep = (pos >= f->view_pos && pos < f->view_pos + f->view_len) ? f->view_pos + f->view_len - pos : 0;
  size_t skip = keep ? (size_t)(pos - f->view_pos) : 0;
  if (skip + want > f->buf_cap) {
    uint8_t* b = (uint8_t*)realloc(f->buf, skip + want);
    if (b == NULL) {
      f->io_errno = ENOMEM;
      return NULL;
    }
    f->buf = b;
    f->buf_cap = skip + want;
  }
  if (!keep) f->view_len = 0;
  int64_t got = pread_frame(f, pos + keep, want - (size_t)keep, f->buf + skip + keep);
  if (got < 0) return NULL;
  if (!keep) f->view_pos = pos;
  f->view = f->buf;
  f->view_len = (int64_t)skip + keep + got;         /* (short where the file ends) */
  return keep + got >= (int64_t)n ? f->buf + skip : NULL;
}

/* Frame bytes [pos, pos + n) into dst; a file frame reads just them unless they
 * are in the window already.  0, or -1 (short or failed: io_errno). */
static int frame_copy(zc_frame* f, int64_t pos, size_t n, uint8_t* dst) {
  if (pos < 0 || (int64_t)n > f->size || pos > f->size - (int64_t)n) return -1;
  if (f->mem == NULL && !(pos >= f->view_pos && pos + (int64_t)n <= f->view_pos + f->view_len))
    return pread_frame(f, pos, n, dst) == (int64_t)n ? 0 : -1;
  const uint8_t* p = zc_frame_get(f, pos, n);
  if (p == NULL) return -1;
  memcpy(dst, p, n);
  return 0;
}

/* -1: corrupt or short frame; -2: a read failed */
static int64_t frame_failure(const zc_frame* f) { return f->io_errno ? -2 : -1; }

/* ------------------------------------------------ LZ4 streams, byte by byte */

/* One LZ4 sequence: `lit_len` literals at stream byte `lit_src` decode to output
 * bytes [out, out + lit_len), then a match copies the bytes `offset` back up to
 * the next sequence's `out` (offset 0: no match recorded). */
typedef struct {
  int32_t out, lit_len, lit_src, offset;
} sequence;

typedef struct {
  zc_frame* f;
  int64_t at;              /* frame offset of the stream */
  int64_t csize;
  int64_t lo, hi;          /* stream bytes [lo, hi) are view[0 ..) */
  const uint8_t* view;
  sequence* seq;
  int32_t nseq, cap;
} stream_walk;

static int walk_refill(stream_walk* w, int64_t ip) {
  if (ip >= w->csize) return -1;
  int64_t want = w->csize - ip;
  const uint8_t* p = zc_frame_get(w->f, w->at + ip, want < WINDOW ? (size_t)want : WINDOW);
  if (p == NULL) return (int)frame_failure(w->f);
  int64_t end = w->f->view_pos + w->f->view_len - w->at;
  w->view = p;
  w->lo = ip;
  w->hi = end < w->csize ? end : w->csize;
  return 0;
}

#define NEXT_BYTE(w, ip, v)                                       \
  do {                                                            \
    if ((ip) < (w)->lo || (ip) >= (w)->hi) {                      \
      int rc_ = walk_refill((w), (ip));                           \
      if (rc_) return rc_;                                        \
    }                                                             \
    (v) = (w)->view[(ip) - (w)->lo];                              \
    (ip)++;                                                       \
  } while (0)

/* Each thread keeps its sequence array for its next walk (a fresh one of 100 KiB
 * or more would be mapped and faulted in on every call); larger ones are freed. */
#define KEEP_SEQUENCES (1 << 16)
typedef struct {
  sequence* v;
  int32_t cap;
} kept_sequences;
static zc_key_t kept_key;
static zc_once_t kept_once = ZC_ONCE_INIT;
static int kept_ok;

static void kept_free(void* p) {
  if (p != NULL) free(((kept_sequences*)p)->v);
  free(p);
}

static void kept_init(void) { kept_ok = zc_key_create(&kept_key, kept_free) == 0; }

/* Lend the thread's kept array to the walk (or none). */
static void walk_borrow(stream_walk* w) {
  zc_once(&kept_once, kept_init);
  kept_sequences* k = kept_ok ? (kept_sequences*)zc_key_get(kept_key) : NULL;
  if (k != NULL && k->v != NULL) {
    w->seq = k->v;
    w->cap = k->cap;
    k->v = NULL;
  }
}

/* Give the walk's array back to the thread, or free it. */
static void walk_return(stream_walk* w) {
  kept_sequences* k = kept_ok ? (kept_sequences*)zc_key_get(kept_key) : NULL;
  if (k == NULL && kept_ok && w->cap <= KEEP_SEQUENCES) {
    k = (kept_sequences*)calloc(1, sizeof *k);
    if (k != NULL && zc_key_set(kept_key, k) != 0) {
      free(k);
      k = NULL;
    }
  }
  if (k != NULL && k->v == NULL && w->cap <= KEEP_SEQUENCES) {
    k->v = w->seq;
    k->cap = w->cap;
  } else {
    free(w->seq);
  }
  w->seq = NULL;
  w->cap = 0;
}

static int push_sequence(stream_walk* w, sequence s) {
  if (w->nseq == w->cap) {
    int32_t cap = w->cap ? 2 * w->cap : 1024;
    sequence* v = (sequence*)realloc(w->seq, (size_t)cap * sizeof(sequence));
    if (v == NULL) return -3;
    w->seq = v;
    w->cap = cap;
  }
  w->seq[w->nseq++] = s;
  return 0;
}

/* Add a length's extra bytes at stream byte *ip_ to *len (at most neblock):
 * 0, -1 corrupt, -2 read failed. */
static int window_length(stream_walk* w, int64_t* ip_, int64_t neblock, int64_t* len) {
  int64_t ip = *ip_;
  int b;
  do {
    NEXT_BYTE(w, ip, b);
    *len += b;
    if (*len > neblock) return -1;
  } while (b == 255);
  *ip_ = ip;
  return 0;
}

/* Record the sequence at stream byte *ip (making output bytes from *op): 0, 1 if
 * it is the last one needed (output byte `last` is a literal) or the stream's
 * last, -1 corrupt, -2 read failed, -3 no memory.  Any lengths, any window. */
static int walk_one(stream_walk* w, int64_t neblock, int64_t last, int64_t* ip_, int64_t* op_) {
  int64_t ip = *ip_, op = *op_;
  int b, token;
  NEXT_BYTE(w, ip, token);
  int64_t ll = token >> 4;
  if (ll == 15 && (b = window_length(w, &ip, neblock, &ll)) != 0) return b;
  sequence s = {(int32_t)op, (int32_t)ll, (int32_t)ip, 0};
  if (op + ll > neblock || ip + ll > w->csize) return -1;
  ip += ll;
  op += ll;
  if (op > last || ip == w->csize) {       /* the bytes wanted are literals, or the end */
    *op_ = op;
    return push_sequence(w, s) ? -3 : 1;
  }
  int lo, hi;
  NEXT_BYTE(w, ip, lo);
  NEXT_BYTE(w, ip, hi);
  int64_t offset = lo | (hi << 8);
  if (offset == 0 || offset > op) return -1;
  int64_t ml = token & 15;
  if (ml == 15 && (b = window_length(w, &ip, neblock, &ml)) != 0) return b;
  ml += 4;
  if (op + ml > neblock) return -1;
  s.offset = (int32_t)offset;
  if (push_sequence(w, s)) return -3;
  *ip_ = ip;
  *op_ = op + ml;
  return 0;
}

/* Add a length's extra bytes (255 ..., then one below 255) at *p to *len: 0, or
 * -1 if they run to `limit` (the caller takes the sequence the careful way). */
static inline int extra_length(const uint8_t** p, const uint8_t* limit, int64_t* len) {
  int b;
  do {
    if (*p >= limit) return -1;
    b = *(*p)++;
    *len += b;
  } while (b == 255);
  return 0;
}

/* Record the sequences of the stream (decoding to neblock bytes) up to the one
 * that makes output byte `last`.  0, -1 corrupt, -2 read failed, -3 no memory.
 * The inner loop takes the sequences that lie in the window with room to spare
 * (most of them) through plain pointers, bounds checked once per sequence; the
 * rest, and any it is unsure of, go through walk_one. */
static int walk_sequences(stream_walk* w, int64_t neblock, int64_t last) {
  int64_t ip = 0, op = 0;
  while (op <= last) {
    if (ip >= w->lo && ip < w->hi) {
      const uint8_t* const view = w->view - w->lo;     /* stream byte i is view[i] */
      const uint8_t* p = view + ip;
      const uint8_t* const limit = view + w->hi - 16;   /* a sequence's fixed part fits */
      /* (limit <= the stream's end - 16: a sequence whose literals end before
       * limit has its offset, and a match length's first extra byte, in the stream) */
      sequence* s = w->seq + w->nseq;
      sequence* const s_end = w->seq + w->cap;
      while (p < limit && s < s_end) {
        const uint8_t* const start = p;
        int token = *p++;
        int64_t ll = token >> 4, ml = token & 15;
        if (ll == 15 && extra_length(&p, limit, &ll)) goto bail;
        int64_t mop = op + ll;
        if (ll > limit - p || mop > last) goto bail;
        s->lit_src = (int32_t)(p - view);
        p += ll;
        int64_t offset = p[0] | (p[1] << 8);
        /* A match length's extra byte is taken without a branch: whether there is
         * one follows no pattern in smooth data, and a mispredicted branch costs
         * more than the whole sequence otherwise.  The window has room for it. */
        int64_t more = ml == 15, extra = p[2];
        ml += extra & -more;
        p += 2 + more;
        /* (one test for both: ml is 15 + 255 only when there is an extra byte of 255,
         * so compilers keep this a single, rarely taken branch) */
        if (ml == 15 + 255 && extra_length(&p, limit, &ml)) goto bail;
        ml += 4;
        if (offset == 0 || offset > mop || mop + ml > neblock) return -1;
        s->out = (int32_t)op;
        s->lit_len = (int32_t)ll;
        s->offset = (int32_t)offset;
        s++;
        op = mop + ml;
        continue;
      bail:
        p = start;
        break;
      }
      int32_t n = (int32_t)(s - w->seq);
      w->nseq = n;
      ip = p - view;
      if (op > last) break;
    }
    int r = walk_one(w, neblock, last, &ip, &op);
    if (r < 0) return r;
    if (r == 1) break;
  }
  return op > last ? 0 : -1;
}

/* Output byte q of the walked stream: trace it back through the matches that
 * copied it to its literal.  0, or -1/-2 as walk_sequences.  Each step moves q
 * before the match it was in, usually by a row or a plane of the chunk, so the
 * sequence holding it is searched for backwards from there, in growing steps. */
static int trace_byte(stream_walk* w, int64_t q, uint8_t* dst) {
  const sequence* seq = w->seq;
  int32_t k = w->nseq - 1;
  for (;;) {
    int32_t lo = k, hi = k, step = 1;  /* find the last sequence starting at or before q */
    while (seq[lo].out > q) {
      hi = lo - 1;
      lo = lo >= step ? lo - step : 0;
      step *= 2;
    }
    while (lo < hi) {
      int32_t mid = lo + (hi - lo + 1) / 2;
      if (seq[mid].out <= q) lo = mid;
      else hi = mid - 1;
    }
    k = lo;
    const sequence* s = &seq[k];
    int64_t d = q - s->out;
    if (d < 0) return -1;
    if (d < s->lit_len)
      return frame_copy(w->f, w->at + s->lit_src + d, 1, dst) ? (int)frame_failure(w->f) : 0;
    if (s->offset == 0) return -1;
    int64_t into = d - s->lit_len;     /* q's place in the match: the copy repeats every */
    if (into >= s->offset) into %= s->offset;    /* offset bytes when it overlaps itself */
    q = (int64_t)s->out + s->lit_len - s->offset + into;
  }
}

/* Stream bytes [first, first + count) of an LZ4 stream at frame offset `at`:
 * 0, -1/-2 as walk_sequences, 1 if there was no memory to trace them. */
static int64_t trace_stream(zc_frame* f, int64_t at, int32_t csize, int32_t neblock,
                            int32_t first, int32_t count, uint8_t* dst) {
  stream_walk w;
  memset(&w, 0, sizeof w);
  w.f = f;
  w.at = at;
  w.csize = csize;
  if (f->mem == NULL) {         /* read about as much of the stream as the walk will need */
    int64_t want = (int64_t)csize * (first + count) / neblock * 5 / 4 + 1024;
    if (zc_frame_get(f, at, (size_t)(want < csize ? want : csize)) == NULL) return frame_failure(f);
  }
  walk_borrow(&w);
  int r = walk_sequences(&w, neblock, (int64_t)first + count - 1);
  for (int32_t k = 0; r == 0 && k < count; k++) r = trace_byte(&w, first + k, dst + k);
  walk_return(&w);
  return r == -3 ? 1 : r;
}

/* ------------------------------------------------------------- one stream */

/* Decode the first `want` bytes of the stream at src[0..cbytes) whose decoded
 * size is `neblock` into buf (capacity `neblock`).  0 or -1 (corrupt). */
static int stream_prefix(const uint8_t* src, int32_t cbytes, int32_t neblock, int32_t want,
                         uint8_t* buf) {
#ifdef ZC_NO_LZ4
  (void)src, (void)cbytes, (void)neblock, (void)want, (void)buf;
  return -1;
#else
  /* a match of offset 0 leaves what buf held (blosc_lz4.c): refused up to `want` */
  if (!zc_lz4_no_zero_offset(src, cbytes, want)) return -1;
  /* LZ4's partial mode copies long matches slowly: a stream that compresses more
   * than 32:1 (runs, like the exponent bytes of smooth floats) decodes faster in
   * full (10 us instead of 230 us for 128 KiB of f32 exponents). */
  if ((int64_t)cbytes * PARTIAL_MAX_RATIO < neblock)
    return LZ4_decompress_safe((const char*)src, (char*)buf, cbytes, neblock) == neblock ? 0 : -1;
  int r = LZ4_decompress_safe_partial((const char*)src, (char*)buf, cbytes, want, neblock);
  return r < want ? -1 : 0;
#endif
}

/* Bytes [first, first + count) of the stream at frame offset `at` (csize bytes,
 * decoding to neblock) into dst.  0, -1/-2, or -3 (no memory). */
static int64_t stream_bytes(zc_frame* f, int64_t at, int32_t csize, int32_t neblock,
                            int32_t first, int32_t count, uint8_t* dst) {
  if (csize == neblock)                  /* stored as is */
    return frame_copy(f, at + first, (size_t)count, dst) ? frame_failure(f) : 0;
  if (count <= TRACE_MAX) {
    int64_t r = trace_stream(f, at, csize, neblock, first, count, dst);
    if (r != 1) return r;                /* (1: no memory to trace: decode instead) */
  }
  const uint8_t* src = zc_frame_get(f, at, (size_t)csize);
  if (src == NULL) return frame_failure(f);
  uint8_t* buf = (uint8_t*)malloc((size_t)neblock);
  if (buf == NULL) return -3;
  int r = stream_prefix(src, csize, neblock, first + count, buf);
  if (r == 0) memcpy(dst, buf + first, (size_t)count);
  free(buf);
  return r;
}

/* ------------------------------------------------------------------ frames */

int64_t zc_blosc_partial_frame(zc_frame* f, size_t start, size_t len, uint8_t* dst) {
  if (len == 0 || len > ZC_PARTIAL_MAX) return 0;
  const uint8_t* h = zc_frame_get(f, 0, HEADER);
  if (h == NULL) return f->io_errno ? -2 : 0;
  int flags = h[2];
  int32_t typesize = h[3];
  int32_t nbytes = rd32(h + 4), blocksize = rd32(h + 8), cbytes = rd32(h + 12);
  if (nbytes < 0 || blocksize <= 0 || cbytes < HEADER || cbytes > f->size || typesize < 1) return 0;
  /* what c-blosc refuses whole is refused here too (the caller's full decode says why) */
  if (h[0] != FORMAT_VERSION || (flags & FLAG_RESERVED)) return 0;
  if (start + len > (size_t)nbytes) return 0;
  if (flags & FLAG_MEMCPYED) {
    if ((size_t)cbytes < HEADER + (size_t)nbytes) return -1;
    return frame_copy(f, HEADER + (int64_t)start, len, dst) ? frame_failure(f) : (int64_t)len;
  }
  if (((flags >> 5) & 0x7) != LZ4_CODE || h[1] != LZ4_VERSION || (flags & FLAG_BITSHUFFLE)) return 0;
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
  const uint8_t* p = zc_frame_get(f, HEADER + 4 * (int64_t)b, 4);
  if (p == NULL) return frame_failure(f);
  int64_t offset = rd32(p);
  int32_t e0 = o / typesize, e1 = (o + (int32_t)len + typesize - 1) / typesize;
  uint8_t* bytes = shuffled ? (uint8_t*)malloc((size_t)(e1 - e0)) : NULL;
  if (shuffled && bytes == NULL) return 0;
  int64_t result = (int64_t)len;
  for (int j = 0; j < nsplits && result > 0; j++) {
    if (offset < HEADER || offset > (int64_t)cbytes - 4) { result = -1; break; }
    p = zc_frame_get(f, offset, 4);
    if (p == NULL) { result = frame_failure(f); break; }
    int32_t csize = rd32(p);
    offset += 4;
    if (csize < 0 || csize > cbytes - offset) { result = -1; break; }
    int64_t at = offset;
    offset += csize;
    int64_t r = 0;
    if (shuffled) {              /* stream j: byte j of items 0, 1, ... of the block */
      r = stream_bytes(f, at, csize, neblock, e0, e1 - e0, bytes);
      for (int32_t e = e0; r == 0 && e < e1; e++) {
        int64_t k = (int64_t)(e - e0) * typesize + j - (o - e0 * typesize);
        if (k >= 0 && k < (int64_t)len) dst[k] = bytes[e - e0];
      }
    } else {                     /* stream j: bytes [j * neblock, (j + 1) * neblock) */
      int32_t lo = j * neblock, hi = lo + neblock;
      if (hi <= o || lo >= o + (int32_t)len) continue;
      int32_t from = o > lo ? o : lo, to = (o + (int32_t)len) < hi ? o + (int32_t)len : hi;
      r = stream_bytes(f, at, csize, neblock, from - lo, to - from, dst + (from - o));
    }
    if (r == -3) result = 0;
    else if (r < 0) result = r;
  }
  free(bytes);
  return result;
}

int64_t zc_blosc_partial(const uint8_t* src, size_t n, size_t start, size_t len, uint8_t* dst) {
  zc_frame f;
  zc_frame_mem(&f, src, n);
  return zc_blosc_partial_frame(&f, start, len, dst);
}
