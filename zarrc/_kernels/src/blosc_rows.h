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

#endif
