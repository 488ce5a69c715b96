/* Decode a whole blosc (1.x format) frame straight into the rows of an output.
 *
 * c-blosc decodes a byte-shuffled block in two passes: each stream (byte t of
 * every item) into a temporary buffer, copying a stream stored as is, then an
 * unshuffle from there into the destination.  A chunk that is not contiguous in
 * the output then takes a third pass: its rows copied out of that destination.
 * Here the compressed streams are decoded into a block-sized buffer (it stays in
 * the cache), a stream stored as is is read where it lies, and the unshuffle
 * writes each row straight to its place in the output: one pass over the output
 * instead of two, none over a chunk-sized buffer.
 *
 * Frame layout: see blosc_frame.h.  A block is split into typesize streams unless
 * the frame says not to, the block is the short last one, or it holds fewer than
 * MIN_BUFFERSIZE items; an unsplit block is one stream of the shuffled bytes.
 */

#include <string.h>

#include "blosc_frame.h"
#include "blosc_rows.h"
#include "lz4.h"
#include "zc_platform.h"

#if defined(ZC_HAVE_SSE2)
#include <emmintrin.h>
#endif

#define MAX_BLOCKSIZE ((INT32_MAX - 255 * 4) / 3)
#define MAX_LEAD 64

/* ------------------------------------------------------------ row cursor */

/* The row the next decoded items belong to, and how far into it they start.  The
 * destination of the leading dimensions but the last is kept (`outer`): a new row
 * adds one offset to it, a carry into those dimensions sums them again. */
typedef struct {
  const zc_rows* rows;
  int64_t idx[MAX_LEAD];      /* position along each leading dimension */
  char* outer;                /* dst + the offsets of all but the last, or NULL: dropped */
  const ptrdiff_t* last_off;  /* offsets along the last leading dimension (NULL: none) */
  int64_t last_count, last_shape;
  char* base;                 /* the row's destination, or NULL: the row is dropped */
  size_t at;                  /* items of the row already placed */
} cursor;

static void cursor_outer(cursor* c) {
  const zc_rows* r = c->rows;
  ptrdiff_t sum = 0;
  c->outer = NULL;
  for (int d = 0; d < r->nlead - 1; d++) {
    if (c->idx[d] >= r->count[d]) return;
    sum += r->off[d][c->idx[d]];
  }
  c->outer = r->dst + sum;
}

ZC_ALWAYS_INLINE void cursor_row(cursor* c) {
  int64_t i = c->rows->nlead ? c->idx[c->rows->nlead - 1] : 0;
  if (c->outer == NULL || i >= c->last_count) c->base = NULL;
  else c->base = c->last_off ? c->outer + c->last_off[i] : c->outer;
}

static void cursor_start(cursor* c, const zc_rows* rows) {
  memset(c, 0, sizeof *c);
  c->rows = rows;
  int last = rows->nlead - 1;
  c->last_off = last >= 0 ? rows->off[last] : NULL;
  c->last_count = last >= 0 ? rows->count[last] : 1;
  c->last_shape = last >= 0 ? rows->shape[last] : 1;
  cursor_outer(c);
  cursor_row(c);
}

/* The cursor at item `item` (of t bytes) of the chunk: a block's first item. */
static void cursor_seek(cursor* c, const zc_rows* rows, size_t item, int t) {
  cursor_start(c, rows);
  size_t per_row = rows->row_bytes / (size_t)t, row = item / per_row;
  c->at = item % per_row;
  for (int d = rows->nlead - 1; d >= 0; d--) {
    c->idx[d] = (int64_t)(row % (size_t)rows->shape[d]);
    row /= (size_t)rows->shape[d];
  }
  cursor_outer(c);
  cursor_row(c);
}

ZC_ALWAYS_INLINE void cursor_next_row(cursor* c) {
  const zc_rows* r = c->rows;
  c->at = 0;
  if (r->nlead > 0 && ++c->idx[r->nlead - 1] < c->last_shape) {
    cursor_row(c);
    return;
  }
  for (int d = r->nlead - 1; d >= 0; d--) {   /* a carry */
    if (d < r->nlead - 1 && ++c->idx[d] < r->shape[d]) break;
    c->idx[d] = 0;
  }
  cursor_outer(c);
  cursor_row(c);
}

/* ------------------------------------------------------------ unshuffle */

/* Whether a run of n bytes at dst is written with non-temporal stores: whole
 * cache lines only, or runs long enough that a partial line at each end is noise. */
static int use_stream(const char* dst, size_t n, int stream) {
  return stream && (n >= 256 || (n >= 64 && !(((uintptr_t)dst | n) & 63)));
}

#if defined(ZC_HAVE_SSE2)
/* Groups of 16 items [k, kend) of unshuffle_run (t 2, 4 or 8), as far as m allows;
 * with streaming stores (nt) the output at k is on a cache line.  Returns the
 * first item not written. */
ZC_ALWAYS_INLINE size_t unshuffle_groups(char* dst, const uint8_t* const* p, size_t first, size_t k,
                                         size_t kend, size_t m, int t, int nt) {
#define ZC_PUT(off, v)                                                  \
  do {                                                                  \
    if (nt) _mm_stream_si128((__m128i*)(o + (off)), (v));               \
    else _mm_storeu_si128((__m128i*)(o + (off)), (v));                  \
  } while (0)
  if (t == 2) {
    const uint8_t* s0 = p[0] + first;
    const uint8_t* s1 = p[1] + first;
    for (; k < kend && k + 16 <= m; k += 16) {
      __m128i a = _mm_loadu_si128((const __m128i*)(s0 + k));
      __m128i b = _mm_loadu_si128((const __m128i*)(s1 + k));
      char* o = dst + 2 * k;
      ZC_PUT(0, _mm_unpacklo_epi8(a, b));
      ZC_PUT(16, _mm_unpackhi_epi8(a, b));
    }
  } else if (t == 4) {
    for (; k < kend && k + 16 <= m; k += 16) {
      size_t i = first + k;
      __m128i a = _mm_loadu_si128((const __m128i*)(p[0] + i));
      __m128i b = _mm_loadu_si128((const __m128i*)(p[1] + i));
      __m128i c = _mm_loadu_si128((const __m128i*)(p[2] + i));
      __m128i d = _mm_loadu_si128((const __m128i*)(p[3] + i));
      __m128i ab_lo = _mm_unpacklo_epi8(a, b), ab_hi = _mm_unpackhi_epi8(a, b);
      __m128i cd_lo = _mm_unpacklo_epi8(c, d), cd_hi = _mm_unpackhi_epi8(c, d);
      char* o = dst + 4 * k;
      ZC_PUT(0, _mm_unpacklo_epi16(ab_lo, cd_lo));
      ZC_PUT(16, _mm_unpackhi_epi16(ab_lo, cd_lo));
      ZC_PUT(32, _mm_unpacklo_epi16(ab_hi, cd_hi));
      ZC_PUT(48, _mm_unpackhi_epi16(ab_hi, cd_hi));
    }
  } else if (t == 8) {
    for (; k < kend && k + 16 <= m; k += 16) {
      size_t i = first + k;
      __m128i x[8], y[8], z[8];
      for (int j = 0; j < 8; j++) x[j] = _mm_loadu_si128((const __m128i*)(p[j] + i));
      for (int j = 0; j < 4; j++) {     /* byte pairs (2j, 2j + 1): items 0-7, 8-15 */
        y[2 * j] = _mm_unpacklo_epi8(x[2 * j], x[2 * j + 1]);
        y[2 * j + 1] = _mm_unpackhi_epi8(x[2 * j], x[2 * j + 1]);
      }
      for (int h = 0; h < 2; h++) {     /* bytes 0-3 and 4-7 of items 0-3, 4-7, 8-11, 12-15 */
        z[4 * h + 0] = _mm_unpacklo_epi16(y[4 * h + 0], y[4 * h + 2]);
        z[4 * h + 1] = _mm_unpackhi_epi16(y[4 * h + 0], y[4 * h + 2]);
        z[4 * h + 2] = _mm_unpacklo_epi16(y[4 * h + 1], y[4 * h + 3]);
        z[4 * h + 3] = _mm_unpackhi_epi16(y[4 * h + 1], y[4 * h + 3]);
      }
      char* o = dst + 8 * k;
      for (int q = 0; q < 4; q++) {     /* items 4q .. 4q + 3, two at a time */
        ZC_PUT(32 * q, _mm_unpacklo_epi32(z[q], z[4 + q]));
        ZC_PUT(32 * q + 16, _mm_unpackhi_epi32(z[q], z[4 + q]));
      }
    }
  }
#undef ZC_PUT
  return k;
}
#endif

/* Items [first, first + m) of typesize-t byte planes p[0..t) into dst, interleaved
 * (dst[k * t + j] = p[j][first + k]).  t is 1, 2, 4 or 8. */
ZC_ALWAYS_INLINE void unshuffle_run(char* dst, const uint8_t* const* p, size_t first, size_t m, int t,
                                    int stream) {
  size_t k = 0;
  int nt = use_stream(dst, m * (size_t)t, stream);
  if (t == 1) {
    const uint8_t* s = p[0] + first;
#if defined(ZC_HAVE_SSE2)
    if (nt) {
      k = (size_t)(-(uintptr_t)dst) & 63;      /* to the first cache line boundary */
      if (k > m) k = m;
      memcpy(dst, s, k);
      for (; k + 64 <= m; k += 64) {
        __m128i a = _mm_loadu_si128((const __m128i*)(s + k));
        __m128i b = _mm_loadu_si128((const __m128i*)(s + k + 16));
        __m128i c = _mm_loadu_si128((const __m128i*)(s + k + 32));
        __m128i d = _mm_loadu_si128((const __m128i*)(s + k + 48));
        _mm_stream_si128((__m128i*)(dst + k), a);
        _mm_stream_si128((__m128i*)(dst + k + 16), b);
        _mm_stream_si128((__m128i*)(dst + k + 32), c);
        _mm_stream_si128((__m128i*)(dst + k + 48), d);
      }
    }
#else
    (void)nt;                                   /* (no streaming stores here) */
#endif
    memcpy(dst + k, s + k, m - k);
    return;
  }
#if defined(ZC_HAVE_SSE2)
  /* streaming stores go to whole cache lines (a group of them that straddles two
   * lines writes each in part: a partial write-combining flush, about 2x slower on
   * an output numpy aligned to 16 bytes): the items before the output's first line
   * boundary are unshuffled in whole groups into a buffer and copied, and streaming
   * starts there (an output not aligned to its items, or a run too short: plain
   * stores) */
  if (nt) {
    size_t h = (size_t)(-(uintptr_t)dst) & 63;
    if (h % (size_t)t || h / (size_t)t + 16 > m) nt = 0;
    else if (h) {                             /* (through a buffer: a plain store to a
                                                   line also streamed to is slow) */
      char head[128];
      unshuffle_groups(head, p, first, 0, h / (size_t)t, m, t, 0);
      memcpy(dst, head, h);
      k = h / (size_t)t;
    }
  }
  k = unshuffle_groups(dst, p, first, k, m, m, t, nt);
#endif
  for (; k < m; k++)
    for (int j = 0; j < t; j++) dst[k * (size_t)t + (size_t)j] = (char)p[j][first + k];
}

/* The m items of t bytes of planes p into the rows, in order (the cursor counts
 * items of t bytes: t is the same for every call). */
ZC_ALWAYS_INLINE void put_items(cursor* c, const uint8_t* const* p, size_t m, int t) {
  const zc_rows* r = c->rows;
  const size_t per_row = r->row_bytes / (size_t)t, keep = r->keep_bytes / (size_t)t;
  size_t first = 0;
  while (m > 0) {
    size_t take = per_row - c->at < m ? per_row - c->at : m;
    if (c->base != NULL && c->at < keep) {
      size_t put = keep - c->at < take ? keep - c->at : take;
      unshuffle_run(c->base + c->at * (size_t)t, p, first, put, t, r->stream);
    }
    first += take;
    m -= take;
    c->at += take;
    if (c->at == per_row) cursor_next_row(c);
  }
}

/* put_items compiled for each item size (rows are short: no call or branch per row). */
static void put_items_1(cursor* c, const uint8_t* const* p, size_t m) { put_items(c, p, m, 1); }
static void put_items_2(cursor* c, const uint8_t* const* p, size_t m) { put_items(c, p, m, 2); }
static void put_items_4(cursor* c, const uint8_t* const* p, size_t m) { put_items(c, p, m, 4); }
static void put_items_8(cursor* c, const uint8_t* const* p, size_t m) { put_items(c, p, m, 8); }

/* ------------------------------------------------------------ frames */

int zc_blosc_rows_open(zc_rows_frame* f, const uint8_t* src, size_t n, size_t nbytes,
                       const zc_rows* rows) {
  if (n < HEADER || nbytes == 0 || rows->nlead < 0 || rows->nlead > MAX_LEAD) return 0;
  int flags = src[2], t = src[3];
  int64_t hn = rd32(src + 4), blocksize = rd32(src + 8), cbytes = rd32(src + 12);
  size_t nrows = 1;
  for (int d = 0; d < rows->nlead; d++) nrows *= (size_t)rows->shape[d];
  /* what c-blosc refuses is refused here too (the caller's decode then says why) */
  if (src[0] != FORMAT_VERSION || (flags & FLAG_RESERVED) || t == 0 || blocksize <= 0 ||
      blocksize > MAX_BLOCKSIZE)
    return 0;
  if (hn < 0 || (size_t)hn != nbytes || (uint64_t)blocksize > nbytes || cbytes < HEADER ||
      (uint64_t)cbytes > n || rows->row_bytes == 0 || rows->keep_bytes > rows->row_bytes ||
      nrows * rows->row_bytes != nbytes)
    return 0;
  f->src = src;
  f->nbytes = nbytes;
  f->rows = rows;
  f->flags = flags;
  f->blocksize = blocksize;
  f->cbytes = cbytes;
  f->nblocks = ((int64_t)nbytes - 1) / blocksize + 1;
  if (flags & FLAG_MEMCPYED) {
    f->t = 1;                   /* (blocks of bytes copied as they lie) */
    return (uint64_t)cbytes == nbytes + HEADER;
  }
  f->t = t;
  if ((flags & FLAG_BITSHUFFLE) || !(flags & FLAG_SHUFFLE) || (flags >> 5) != LZ4_CODE ||
      src[1] != LZ4_VERSION || !(t == 2 || t == 4 || t == 8) || rows->row_bytes % (size_t)t || rows->keep_bytes % (size_t)t)
    return 0;
  if (blocksize % t || f->nblocks > (cbytes - HEADER) / 4) return 0;
  return 1;
}

size_t zc_blosc_rows_tmp(const zc_rows_frame* f) {
  return (f->flags & FLAG_MEMCPYED) ? 0 : (size_t)f->blocksize;
}

int zc_blosc_rows_blocks(const zc_rows_frame* f, int64_t b0, int64_t b1, uint8_t* tmp,
                         size_t tmp_cap) {
  const uint8_t* src = f->src;
  int t = f->t;
  int64_t blocksize = f->blocksize, cbytes = f->cbytes, nblocks = f->nblocks;
  int64_t leftover = (int64_t)f->nbytes % blocksize;
  if (b0 < 0 || b1 > nblocks || b0 >= b1) return b0 == b1;
  cursor c;
  cursor_seek(&c, f->rows, (size_t)(b0 * blocksize / t), t);
  if (f->flags & FLAG_MEMCPYED) {
    const uint8_t* plane = src + HEADER + b0 * blocksize;
    int64_t end = b1 * blocksize < (int64_t)f->nbytes ? b1 * blocksize : (int64_t)f->nbytes;
    put_items_1(&c, &plane, (size_t)(end - b0 * blocksize));
    return 1;
  }
  if (tmp == NULL || (uint64_t)blocksize > tmp_cap) return 0;
  for (int64_t b = b0; b < b1; b++) {
    int last = b == nblocks - 1 && leftover > 0;
    int64_t bsize = last ? leftover : blocksize;
    int split = !(f->flags & FLAG_DONT_SPLIT) && t <= MAX_SPLITS && bsize / t >= MIN_BUFFERSIZE && !last;
    int nsplits = split ? t : 1;
    int64_t neblock = bsize / nsplits, quot = bsize / t;
    if (bsize % t) return 0;
    const uint8_t* stream[MAX_SPLITS];
    int64_t pos = rd32(src + HEADER + 4 * b);
    for (int j = 0; j < nsplits; j++) {
      if (pos < 0 || pos > cbytes - 4) return 0;
      int64_t cs = rd32(src + pos);
      pos += 4;
      if (cs < 0 || cs > cbytes - pos) return 0;
      if (cs == neblock) {
        stream[j] = src + pos;                 /* stored as is: read in place */
      } else {
        uint8_t* at = tmp + (size_t)j * (size_t)neblock;
        if (cs > (int64_t)INT32_MAX ||
            LZ4_decompress_safe((const char*)src + pos, (char*)at, (int)cs, (int)neblock) != neblock)
          return 0;
        stream[j] = at;
      }
      pos += cs;
    }
    const uint8_t* plane[MAX_SPLITS];
    for (int j = 0; j < t; j++) plane[j] = split ? stream[j] : stream[0] + (size_t)j * (size_t)quot;
    if (t == 2) put_items_2(&c, plane, (size_t)quot);
    else if (t == 4) put_items_4(&c, plane, (size_t)quot);
    else put_items_8(&c, plane, (size_t)quot);
  }
  return 1;
}

int64_t zc_blosc_decode_rows(const uint8_t* src, size_t n, size_t nbytes, const zc_rows* rows,
                             uint8_t* tmp, size_t tmp_cap) {
  zc_rows_frame f;
  if (!zc_blosc_rows_open(&f, src, n, nbytes, rows) ||
      !zc_blosc_rows_blocks(&f, 0, f.nblocks, tmp, tmp_cap))
    return 0;
  return (int64_t)nbytes;
}

/* ------------------------------------------------------------ shared blocks */

/* share->word: generation << 40 | nblocks << 20 | next block to take */
#define WORD_BITS 20
#define WORD_MASK ((INT64_C(1) << WORD_BITS) - 1)
#define GEN_MASK ((INT64_C(1) << 23) - 1)
/* a publisher that no helper joined, or that waited for helpers longer than one
 * of its blocks took (plus this), stops sharing for a while: 2 ms, doubled on each
 * loss in a row, at most 256 ms (then one chunk tries again) */
#define SHARE_SLACK_NS 20000
#define SHARE_BACKOFF_MIN_NS 2000000
#define SHARE_BACKOFF_MAX_NS 256000000

/* One round of a wait for another thread: a pause, and after a while a yield (the
 * thread waited for may be waiting for this CPU). */
void zc_blosc_rows_share_wait(int* spins) {
  if (++*spins < 256) zc_cpu_relax();
  else zc_yield();
}

/* Take a block of the job in progress: 1 (*job, *block set), or 0: none left. */
int zc_blosc_rows_share_take(zc_rows_share* sh, const zc_rows_frame** job, int64_t* block) {
  for (;;) {
    int64_t w = zc_load_i64_acquire(&sh->word);
    int64_t nb = (w >> WORD_BITS) & WORD_MASK, next = w & WORD_MASK;
    if (next >= nb) return 0;
    if (zc_cas_i64(&sh->word, w, w + 1)) {
      *job = sh->job;         /* (stays put while a block of it is held) */
      *block = next;
      return 1;
    }
  }
}

/* Block `block` of `job` decoded (tmp: the thread's block buffer, or NULL: none)
 * and counted done. */
void zc_blosc_rows_share_do(zc_rows_share* sh, const zc_rows_frame* job, int64_t block,
                            uint8_t* tmp, size_t tmp_cap) {
  if (!zc_blosc_rows_blocks(job, block, block + 1, tmp, tmp_cap))
    zc_store_int_relaxed(&sh->failed, 1);
#if defined(ZC_HAVE_SSE2)
  if (job->rows->stream) _mm_sfence();   /* (its streaming stores, before done) */
#endif
  zc_fetch_add_i64_acq_rel(&sh->done, 1);
}

int zc_blosc_rows_share_run(zc_rows_share* sh, const zc_rows_frame* f, uint8_t* tmp,
                            size_t tmp_cap) {
  if (f->nblocks < 2 || f->nblocks > WORD_MASK || !zc_cas_i64(&sh->busy, 0, 1))
    return zc_blosc_rows_blocks(f, 0, f->nblocks, tmp, tmp_cap);   /* alone */
  int64_t gen = ((zc_load_i64_acquire(&sh->word) >> (2 * WORD_BITS)) + 1) & GEN_MASK;
  sh->job = f;
  zc_store_int_relaxed(&sh->failed, 0);
  zc_store_i64_release(&sh->done, 0);
  zc_store_i64_release(&sh->word, (gen << (2 * WORD_BITS)) | (f->nblocks << WORD_BITS));
  const zc_rows_frame* job;
  int64_t b, mine = 0, t0 = zc_now_ns();
  while (zc_blosc_rows_share_take(sh, &job, &b)) {
    zc_blosc_rows_share_do(sh, job, b, tmp, tmp_cap);
    mine++;
  }
  int64_t t1 = zc_now_ns();
  int spins = 0;
  while (zc_load_i64_acquire(&sh->done) < f->nblocks) zc_blosc_rows_share_wait(&spins);
  int64_t t2 = zc_now_ns();
  /* lost: no helper came in time (it costs a thread handed the call for nothing),
   * or one kept the publisher waiting; a helper that took every block: nothing learnt */
  if (mine > 0 && !zc_load_int_relaxed(&sh->steady)) {
    if (mine == f->nblocks || t2 - t1 > (t1 - t0) / mine + SHARE_SLACK_NS) {
      sh->backoff = sh->backoff ? 2 * sh->backoff : SHARE_BACKOFF_MIN_NS;
      if (sh->backoff > SHARE_BACKOFF_MAX_NS) sh->backoff = SHARE_BACKOFF_MAX_NS;
      zc_store_i64_release(&sh->until, t2 + sh->backoff);
    } else {
      sh->backoff = 0;
    }
  }
  int ok = !zc_load_int_relaxed(&sh->failed);
  zc_store_i64_release(&sh->busy, 0);
  return ok;
}

int zc_blosc_rows_share_open(zc_rows_share* sh) {
  int64_t until = zc_load_i64_acquire(&sh->until);
  return until == 0 || zc_load_int_relaxed(&sh->steady) || zc_now_ns() >= until;
}
