# Chunk files (src/chunk_files.c), for the batch modules: the C code is linked into
# the chunk_files module alone (one switch for files with no name, see
# unnamed_files) and called through these functions.  All run without the GIL.

from libc.stdint cimport int64_t, uint8_t

from zarrc._kernels.errors cimport ZcError

cdef extern from "src/chunk_files.h":
    enum:
        ZC_FILE_MISSING        # no such file: read as the fill value

cdef int64_t pread_all(int fd, uint8_t* dst, size_t n, int64_t offset, ZcError* err) noexcept nogil
cdef int64_t read_file(const char* path, uint8_t** buf, size_t* cap, ZcError* err) noexcept nogil
cdef int64_t read_range(int fd, int64_t offset, size_t length, uint8_t** buf, size_t* cap,
                        ZcError* err) noexcept nogil
cdef int64_t read_chunk_slabs(const char* path, size_t size, const Py_ssize_t* starts,
                              Py_ssize_t nslabs, size_t n, uint8_t* dst, ZcError* err) noexcept nogil
cdef int open_regular(const char* path, int64_t* ident, int* error) noexcept nogil
cdef void close_file(int fd) noexcept nogil
cdef int64_t write_parts(const char* path, const char* tag, const uint8_t** parts,
                         const size_t* lens, Py_ssize_t nparts, ZcError* err) noexcept nogil
cdef int64_t delete_file(const char* path, ZcError* err) noexcept nogil
# An atomic write in two halves: the parts to path's temporary file, later renamed
# to path (keep) or deleted (a batch that failed elsewhere).
cdef int64_t stage_parts(const char* path, const char* tag, const uint8_t** parts,
                         const size_t* lens, Py_ssize_t nparts, ZcError* err) noexcept nogil
cdef int64_t finish_staged(const char* path, const char* tag, bint keep, ZcError* err) noexcept nogil
# The same with parts copied from the file src_fd (src_offs[i] >= 0) instead of memory.
cdef int64_t stage_spliced(const char* path, const char* tag, const uint8_t** parts,
                           const size_t* lens, const int64_t* src_offs, Py_ssize_t nparts,
                           int src_fd, ZcError* err) noexcept nogil
