/* Partial decoding of blosc frames (see blosc_partial.c). */
#ifndef ZC_BLOSC_PARTIAL_H
#define ZC_BLOSC_PARTIAL_H

#include <stddef.h>
#include <stdint.h>

/* Ranges longer than this take blosc_getitem (whole blocks, SIMD unshuffle). */
#define ZC_PARTIAL_MAX 4096

/* A blosc frame in memory, or at bytes [base, base + size) of an open file, read
 * a window at a time (only the parts a partial decode needs are read). */
typedef struct {
  const uint8_t* mem;   /* the frame in memory, or NULL: read it from fd */
  int fd;
  int64_t base;
  int64_t size;
  const uint8_t* view;  /* frame bytes [view_pos, view_pos + view_len): mem, or buf */
  int64_t view_pos;
  int64_t view_len;
  uint8_t* buf;         /* file: the last window read */
  size_t buf_cap;
  int io_errno;         /* set when a read failed (0: the frame is too short) */
} zc_frame;

void zc_frame_mem(zc_frame* f, const uint8_t* src, size_t n);
void zc_frame_file(zc_frame* f, int fd, int64_t base, int64_t size);
void zc_frame_release(zc_frame* f);

/* Frame bytes [pos, pos + n), or NULL if they lie past the frame's end or cannot
 * be read (io_errno set).  The pointer is good until the next call. */
const uint8_t* zc_frame_get(zc_frame* f, int64_t pos, size_t n);

/* Decode bytes [start, start + len) of the blosc frame into dst when they lie in
 * one block of an LZ4 (or uncompressed) frame, decompressing each stream only as
 * far as needed, or, for a few bytes, finding each one through the stream's LZ4
 * sequences without decompressing them.  The header must have been validated.
 * Returns len, 0 if the frame's layout is not handled here (use blosc_getitem),
 * -1 if corrupt, -2 if a read failed (f->io_errno). */
int64_t zc_blosc_partial_frame(zc_frame* f, size_t start, size_t len, uint8_t* dst);

/* The same for a frame src[0..n) in memory. */
int64_t zc_blosc_partial(const uint8_t* src, size_t n, size_t start, size_t len, uint8_t* dst);

#endif
