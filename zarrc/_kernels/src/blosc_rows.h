/* Decoding a whole blosc frame straight into the rows of an output (see blosc_rows.c). */
#ifndef ZC_BLOSC_ROWS_H
#define ZC_BLOSC_ROWS_H

#include <stddef.h>
#include <stdint.h>

/* Where the rows of a decoded chunk go.  The chunk, in C order, is rows of
 * row_bytes bytes over nlead leading dimensions of extents shape[d]; the row at
 * leading position (i_0, ..) goes to dst + off[0][i_0] + off[1][i_1] + .. if every
 * i_d < count[d] (rows beyond an edge of the array are dropped), and only its
 * first keep_bytes bytes are written.  stream: write with non-temporal stores
 * (the caller fences before the output is used). */
typedef struct {
  int nlead;
  const int64_t* shape;
  const int64_t* count;
  const ptrdiff_t* const* off;
  size_t row_bytes;
  size_t keep_bytes;
  char* dst;
  int stream;
} zc_rows;

/* Decode the blosc frame src[0..n), which must decode to nbytes bytes, into rows.
 * Handles byte-shuffled LZ4 frames of typesize 2, 4 or 8 (row_bytes and
 * keep_bytes multiples of it) and frames stored as is; tmp holds at least one
 * block (tmp_cap bytes).  Returns nbytes, or 0 when the frame is not one handled
 * here or anything in it is amiss (rows may then be partly written: the caller
 * decodes the frame the usual way, which also words any error). */
int64_t zc_blosc_decode_rows(const uint8_t* src, size_t n, size_t nbytes, const zc_rows* rows,
                             uint8_t* tmp, size_t tmp_cap);

/* A frame zc_blosc_decode_rows handles, opened for decoding by blocks (any
 * ranges, on any threads: each block goes to its own rows). */
typedef struct {
  const uint8_t* src;
  size_t nbytes;
  const zc_rows* rows;
  int flags, t;
  int64_t blocksize, cbytes, nblocks;
} zc_rows_frame;

/* 1 with f set if src[0..n) is a frame zc_blosc_decode_rows handles, else 0 */
int zc_blosc_rows_open(zc_rows_frame* f, const uint8_t* src, size_t n, size_t nbytes,
                       const zc_rows* rows);
/* the temporary bytes a thread decoding blocks of f needs */
size_t zc_blosc_rows_tmp(const zc_rows_frame* f);
/* blocks [b0, b1) of f into their rows: 1, or 0 if anything in them is amiss */
int zc_blosc_rows_blocks(const zc_rows_frame* f, int64_t b0, int64_t b1, uint8_t* tmp,
                         size_t tmp_cap);

/* The blocks of one frame shared by the threads of a batch: the thread that has
 * the frame publishes it (zc_blosc_rows_share_run), threads with nothing else to
 * do take its blocks one at a time (take, do), and the publisher returns once
 * every block is done.  One frame at a time: a second publisher decodes alone.
 * Zero-initialise. */
typedef struct {
  int64_t word;               /* generation << 40 | nblocks << 20 | next block */
  int64_t done;               /* blocks of the job done */
  int64_t busy;               /* a job is published */
  int failed;                 /* a block of the job was amiss */
  const zc_rows_frame* job;
  int64_t until;              /* no sharing before this time (ns): it lost lately */
  int64_t backoff;            /* how long the last loss stopped it for (ns) */
  int steady;                 /* never stop (tests) */
} zc_rows_share;

/* Whether sharing blocks pays now: it stops for a while (longer each time) after a
 * publisher decoded every block itself, or waited for a helper longer than one of
 * its own blocks took (helpers with no core to run on: a busy machine). */
int zc_blosc_rows_share_open(zc_rows_share* sh);

/* Decode every block of f, shared with the threads that take them: 1, or 0 if
 * any block was amiss (as zc_blosc_rows_blocks). */
int zc_blosc_rows_share_run(zc_rows_share* sh, const zc_rows_frame* f, uint8_t* tmp,
                            size_t tmp_cap);
/* A block of the published frame: 1 with *job and *block set, or 0: none left. */
int zc_blosc_rows_share_take(zc_rows_share* sh, const zc_rows_frame** job, int64_t* block);
/* Decode a block taken (tmp NULL: no buffer, the block counts as amiss). */
void zc_blosc_rows_share_do(zc_rows_share* sh, const zc_rows_frame* job, int64_t block,
                            uint8_t* tmp, size_t tmp_cap);
/* One round of a wait for another thread's blocks (*spins: 0 at first). */
void zc_blosc_rows_share_wait(int* spins);

#endif
