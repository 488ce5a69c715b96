/* Chunk files: reading, atomic writing and deleting the files of a local store's
   chunks and shards, without the GIL (the native batches run these per chunk).

   Reads retry short reads and EINTR; "missing" (ZC_FILE_MISSING) is a path with no
   file (ENOENT, ENOTDIR), which reads as the fill value.  Writes are atomic:
   readers see the old file or the new one, never a part (a new file with no name,
   O_TMPFILE, named once written; else a temporary file beside it, renamed).  The
   temporary name rule lives here too (zc_temp_path): zarrc.stores.local uses it. */
#ifndef ZC_CHUNK_FILES_H
#define ZC_CHUNK_FILES_H

#include <stddef.h>
#include <stdint.h>

#include "zc_error.h"

#define ZC_FILE_MISSING (-2)   /* no such file: read as the fill value */

/* Temporary files: "." + the target's name (its first ZC_TEMP_NAME_KEEP bytes, so
   that the whole fits NAME_MAX) + ZC_TEMP_MARK + a tag unique to the writer
   (pid, thread, counter) + ZC_TEMP_END.  Listings skip such names. */
#define ZC_TEMP_MARK ".zarrc-"
#define ZC_TEMP_END ".tmp"
#define ZC_TEMP_NAME_KEEP 32
/* bytes a temporary path has beyond its target's path and tag, with the NUL */
#define ZC_TEMP_EXTRA (1 + sizeof ZC_TEMP_MARK - 1 + sizeof ZC_TEMP_END - 1 + 1)

/* Write the temporary path for `path` with `tag` to out, which has room for
   strlen(path) + strlen(tag) + ZC_TEMP_EXTRA bytes; its length. */
size_t zc_temp_path(char* out, const char* path, const char* tag);

/* Read up to n bytes at offset, retrying short reads: the number read (less than n
   only at the end of the file), or -1 with err. */
int64_t zc_pread_all(int fd, uint8_t* dst, size_t n, int64_t offset, zc_error* err);
/* A whole file into *buf (grown with realloc to *cap as needed): its size,
   ZC_FILE_MISSING, or -1 with err. */
int64_t zc_read_file(const char* path, uint8_t** buf, size_t* cap, zc_error* err);
/* length bytes at offset of an open file into *buf (grown as needed); a range
   past the end of the file is ZC_TRUNCATED. */
int64_t zc_read_range(int fd, int64_t offset, size_t length, uint8_t** buf, size_t* cap,
                      zc_error* err);
/* An uncompressed chunk's file, which must hold exactly `size` bytes: its
   descriptor, ZC_FILE_MISSING, or -1 with err (ZC_SIZE if it holds another size). */
int zc_open_chunk_file(const char* path, size_t size, zc_error* err);
/* nslabs byte ranges [starts[k], starts[k] + n) of an uncompressed chunk's file
   (exactly `size` bytes), one after another into dst: nslabs * n, ZC_FILE_MISSING,
   or -1 with err. */
int64_t zc_read_chunk_slabs(const char* path, size_t size, const ptrdiff_t* starts,
                            ptrdiff_t nslabs, size_t n, uint8_t* dst, zc_error* err);
/* A regular file opened for reading: its descriptor, with ident (if not NULL) set
   to its device, inode, size and mtime in ns; or -1: no such file, -2: not a
   regular file, -3: failed, *error set to the errno. */
int zc_open_regular(const char* path, int64_t* ident, int* error);

/* mkdir -p the directory part of path (modified and restored): 0 or -1, errno set. */
int zc_make_parents(char* path);
/* Write the parts (NULL or empty ones skipped) one after another to path
   atomically, making its directories as needed: the bytes written, or -1 with err.
   tag: see ZC_TEMP_MARK. */
int64_t zc_write_parts(const char* path, const char* tag, const uint8_t* const* parts,
                       const size_t* lens, ptrdiff_t nparts, zc_error* err);
/* The first half of an atomic write: the parts written to path's temporary file
   (see zc_temp_path; directories made as needed), which zc_finish_staged then
   renames to path (keep) or deletes.  The bytes written, or -1 with err (no file
   left behind). */
int64_t zc_stage_parts(const char* path, const char* tag, const uint8_t* const* parts,
                       const size_t* lens, ptrdiff_t nparts, zc_error* err);
/* As zc_stage_parts (this with src_offs NULL), but part i with src_offs[i] >= 0 is
   lens[i] bytes copied from the file src_fd at that offset (copy_file_range where
   the system has it, else in bounded blocks), never held in memory whole. */
int64_t zc_stage_spliced(const char* path, const char* tag, const uint8_t* const* parts,
                         const size_t* lens, const int64_t* src_offs, ptrdiff_t nparts, int src_fd,
                         zc_error* err);
int64_t zc_finish_staged(const char* path, const char* tag, int keep, zc_error* err);
/* Delete path; a missing file is no error.  0, or -1 with err. */
int64_t zc_delete_file(const char* path, zc_error* err);

/* Whether atomic writes start as files with no name; enabled >= 0 sets it first
   (tests; it goes off by itself where the system has none). */
int zc_unnamed_files(int enabled);

#endif
