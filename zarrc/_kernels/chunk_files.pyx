# cython: language_level=3, freethreading_compatible=True, boundscheck=False, wraparound=False
"""Chunk files: the native reads, atomic writes and deletes of a local store's
chunk and shard files (C: src/chunk_files.c), which the batches run per chunk
without the GIL through chunk_files.pxd, and the rule for temporary file names
(temp_path), which zarrc.stores.local uses too.

The Python functions below wrap the C ones one to one, for tests; they raise
KernelError (codec "file") where the C code reports an error.
"""

from cpython.bytes cimport PyBytes_AS_STRING, PyBytes_FromStringAndSize, PyBytes_GET_SIZE
from libc.errno cimport errno
from libc.stdint cimport int64_t, uint8_t
from libc.stdlib cimport free, malloc

from zarrc._kernels.errors cimport ZcError, raise_error

import os
import threading

cdef extern from "src/zc_platform.h" nogil:
    int zc_close(int fd)

cdef extern from "src/chunk_files.h" nogil:
    const char* ZC_TEMP_MARK
    const char* ZC_TEMP_END
    int ZC_TEMP_NAME_KEEP
    size_t ZC_TEMP_EXTRA
    size_t zc_temp_path(char* out, const char* path, const char* tag)
    int64_t zc_pread_all(int fd, uint8_t* dst, size_t n, int64_t offset, ZcError* err)
    int64_t zc_read_file(const char* path, uint8_t** buf, size_t* cap, ZcError* err)
    int64_t zc_read_range(int fd, int64_t offset, size_t length, uint8_t** buf, size_t* cap,
                          ZcError* err)
    int64_t zc_read_chunk_slabs(const char* path, size_t size, const Py_ssize_t* starts,
                                Py_ssize_t nslabs, size_t n, uint8_t* dst, ZcError* err)
    int zc_open_regular(const char* path, int64_t* ident, int* error)
    int zc_make_parents(char* path)
    int64_t zc_write_parts(const char* path, const char* tag, const uint8_t** parts,
                           const size_t* lens, Py_ssize_t nparts, ZcError* err)
    int64_t zc_delete_file(const char* path, ZcError* err)
    int64_t zc_stage_parts(const char* path, const char* tag, const uint8_t** parts,
                           const size_t* lens, Py_ssize_t nparts, ZcError* err)
    int64_t zc_finish_staged(const char* path, const char* tag, int keep, ZcError* err)
    int64_t zc_stage_spliced(const char* path, const char* tag, const uint8_t** parts,
                             const size_t* lens, const int64_t* src_offs, Py_ssize_t nparts,
                             int src_fd, ZcError* err)
    int zc_unnamed_files(int enabled)


# ---------------------------------------------------------------- for the batches

cdef int64_t pread_all(int fd, uint8_t* dst, size_t n, int64_t offset, ZcError* err) noexcept nogil:
    return zc_pread_all(fd, dst, n, offset, err)


cdef int64_t read_file(const char* path, uint8_t** buf, size_t* cap, ZcError* err) noexcept nogil:
    return zc_read_file(path, buf, cap, err)


cdef int64_t read_range(int fd, int64_t offset, size_t length, uint8_t** buf, size_t* cap,
                        ZcError* err) noexcept nogil:
    return zc_read_range(fd, offset, length, buf, cap, err)


cdef int64_t read_chunk_slabs(const char* path, size_t size, const Py_ssize_t* starts,
                              Py_ssize_t nslabs, size_t n, uint8_t* dst, ZcError* err) noexcept nogil:
    return zc_read_chunk_slabs(path, size, starts, nslabs, n, dst, err)


cdef int open_regular(const char* path, int64_t* ident, int* error) noexcept nogil:
    return zc_open_regular(path, ident, error)


cdef void close_file(int fd) noexcept nogil:
    zc_close(fd)


cdef int64_t write_parts(const char* path, const char* tag, const uint8_t** parts,
                         const size_t* lens, Py_ssize_t nparts, ZcError* err) noexcept nogil:
    return zc_write_parts(path, tag, parts, lens, nparts, err)


cdef int64_t delete_file(const char* path, ZcError* err) noexcept nogil:
    return zc_delete_file(path, err)


cdef int64_t stage_parts(const char* path, const char* tag, const uint8_t** parts,
                         const size_t* lens, Py_ssize_t nparts, ZcError* err) noexcept nogil:
    return zc_stage_parts(path, tag, parts, lens, nparts, err)


cdef int64_t finish_staged(const char* path, const char* tag, bint keep, ZcError* err) noexcept nogil:
    return zc_finish_staged(path, tag, 1 if keep else 0, err)


cdef int64_t stage_spliced(const char* path, const char* tag, const uint8_t** parts,
                           const size_t* lens, const int64_t* src_offs, Py_ssize_t nparts,
                           int src_fd, ZcError* err) noexcept nogil:
    return zc_stage_spliced(path, tag, parts, lens, src_offs, nparts, src_fd, err)


# ---------------------------------------------------------------- temporary names

TEMP_MARK = (<bytes>ZC_TEMP_MARK).decode()
TEMP_END = (<bytes>ZC_TEMP_END).decode()
TEMP_NAME_KEEP = ZC_TEMP_NAME_KEEP

cdef extern from *:
    """
    #include "src/zc_platform.h"
    static Py_ssize_t zc_tags_made = 0;
    /* a number no other call gets, from any thread, with or without a GIL */
    static inline Py_ssize_t zc_next_tag(void) {
        return zc_fetch_add_relaxed(&zc_tags_made, 1);
    }
    """
    Py_ssize_t zc_next_tag() noexcept nogil

_token = os.urandom(4).hex()


def temp_tag():
    """A tag for temporary file names no other writer uses: process, thread, and a
    number new for each call (an atomic counter: itertools.count is not atomic on a
    free-threaded Python)."""
    return f"{os.getpid()}-{threading.get_ident()}-{_token}{zc_next_tag()}".encode()


def temp_path(path, tag=None):
    """The temporary file an atomic write of ``path`` (str or bytes; returned as the
    same type) goes through: "." + the name's first TEMP_NAME_KEEP bytes + TEMP_MARK
    + ``tag`` (bytes; default: a new temp_tag()) + TEMP_END, in path's directory."""
    cdef bytes b = os.fsencode(path)
    cdef bytes t = temp_tag() if tag is None else tag
    cdef char* out = <char*>malloc(len(b) + len(t) + ZC_TEMP_EXTRA)
    cdef size_t n
    if out == NULL:
        raise MemoryError()
    try:
        n = zc_temp_path(out, b, t)
        result = PyBytes_FromStringAndSize(out, <Py_ssize_t>n)
    finally:
        free(out)
    return result if isinstance(path, bytes) else os.fsdecode(result)


def unnamed_files(enabled=None):
    """Whether atomic writes start as files with no name (O_TMPFILE); ``enabled``
    turns them on or off first (for tests; they go off by themselves where the
    system has none)."""
    return bool(zc_unnamed_files(-1 if enabled is None else (1 if enabled else 0)))


# ---------------------------------------------------------------- thin wrappers (tests)

cdef object _fail(ZcError* err):
    raise_error("file", err, -1)


def read_whole_file(bytes path):
    """The bytes of the file ``path``, or None if there is no such file."""
    cdef ZcError err
    cdef uint8_t* buf = NULL
    cdef size_t cap = 0
    cdef int64_t r
    cdef const char* cpath = path
    try:
        with nogil:
            r = zc_read_file(cpath, &buf, &cap, &err)
        if r == ZC_FILE_MISSING:
            return None
        if r < 0:
            _fail(&err)
        return PyBytes_FromStringAndSize(<char*>buf, r)
    finally:
        free(buf)


def read_file_range(bytes path, int64_t offset, size_t length):
    """``length`` bytes at ``offset`` of the file ``path`` (opened here)."""
    cdef ZcError err
    cdef uint8_t* buf = NULL
    cdef size_t cap = 0
    cdef int64_t r
    cdef int error = 0
    cdef int fd = zc_open_regular(path, NULL, &error)
    if fd < 0:
        raise FileNotFoundError(error, os.strerror(error) if error else "no such regular file", path)
    try:
        with nogil:
            r = zc_read_range(fd, offset, length, &buf, &cap, &err)
        if r < 0:
            _fail(&err)
        return PyBytes_FromStringAndSize(<char*>buf, r)
    finally:
        free(buf)
        zc_close(fd)


def read_slabs(bytes path, size_t size, list starts, size_t n):
    """The byte ranges [start, start + n) of an uncompressed chunk's file that must
    hold ``size`` bytes, one after another; None if there is no such file."""
    cdef Py_ssize_t k, nslabs = len(starts)
    cdef Py_ssize_t* st = <Py_ssize_t*>malloc(max(1, nslabs) * sizeof(Py_ssize_t))
    cdef bytes out = PyBytes_FromStringAndSize(NULL, nslabs * n)
    cdef ZcError err
    cdef int64_t r
    if st == NULL:
        raise MemoryError()
    try:
        for k in range(nslabs):
            st[k] = starts[k]
        r = zc_read_chunk_slabs(path, size, st, nslabs, n, <uint8_t*>PyBytes_AS_STRING(out), &err)
        if r == ZC_FILE_MISSING:
            return None
        if r < 0:
            _fail(&err)
        return out
    finally:
        free(st)


def open_regular_file(bytes path):
    """(descriptor, (device, inode, size, mtime_ns)) of the regular file ``path``
    opened for reading; -1 if there is none, -2 if it is not a regular file."""
    cdef int64_t ident[4]
    cdef int error
    cdef int fd = zc_open_regular(path, ident, &error)
    if fd == -3:
        raise OSError(error, os.strerror(error), path)
    if fd < 0:
        return fd
    return fd, (ident[0], ident[1], ident[2], ident[3])


def make_parents(bytes path):
    """Make the directories of ``path`` (mkdir -p of its directory part)."""
    cdef bytes p = PyBytes_FromStringAndSize(path, len(path))   # (a copy: zc_make_parents writes to it)
    if zc_make_parents(<char*>PyBytes_AS_STRING(p)) != 0:
        raise OSError(errno, os.strerror(errno), path)


def write_parts_to(bytes path, list parts, bytes tag=None):
    """Write ``parts`` (bytes, None skipped) one after another to ``path``
    atomically; the bytes written."""
    cdef Py_ssize_t k, n = len(parts)
    cdef const uint8_t** ptrs = <const uint8_t**>malloc(max(1, n) * sizeof(void*))
    cdef size_t* lens = <size_t*>malloc(max(1, n) * sizeof(size_t))
    cdef bytes t = temp_tag() if tag is None else tag
    cdef ZcError err
    cdef int64_t r
    try:
        if ptrs == NULL or lens == NULL:
            raise MemoryError()
        for k in range(n):
            part = parts[k]
            if part is None:
                ptrs[k] = NULL
            else:
                ptrs[k] = <const uint8_t*>PyBytes_AS_STRING(part)
            lens[k] = 0 if part is None else <size_t>PyBytes_GET_SIZE(part)
        r = zc_write_parts(path, t, ptrs, lens, n, &err)
        if r < 0:
            _fail(&err)
        return r
    finally:
        free(ptrs)
        free(lens)


def finish(bytes path, bytes tag, bint keep):
    """Name (``keep``) or delete the temporary file of ``path`` that a staged write
    with ``tag`` left (WriteBatch.write_shard(stage=True)).  Raises OSError."""
    cdef ZcError err
    if zc_finish_staged(path, tag, 1 if keep else 0, &err) < 0:
        _fail(&err)


def delete(bytes path):
    """Delete the file ``path``; a missing file is no error."""
    cdef ZcError err
    if zc_delete_file(path, &err) < 0:
        _fail(&err)
