/* Chunk files (see chunk_files.h). */
#define _GNU_SOURCE
#include "chunk_files.h"

#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>

#include "zc_platform.h"

#if !defined(_WIN32)
#include <sys/uio.h>
#endif

/* bytes copied per read/write where the system cannot copy between files itself */
#define COPY_BLOCK ((size_t)4 << 20)

/* parts written by one writev call (IOV_MAX is 1024 on Linux) */
#define PARTS_PER_CALL 256

/* cleared once the system has none; read and written by every writing thread, with
   or without a GIL, so only through these (relaxed atomics: a plain flag, no order) */
static int unnamed_files = 1;
#define UNNAMED_GET() zc_load_int_relaxed(&unnamed_files)
#define UNNAMED_OFF() zc_store_int_relaxed(&unnamed_files, 0)

int zc_unnamed_files(int enabled) {
    if (enabled >= 0)
        zc_store_int_relaxed(&unnamed_files, enabled ? 1 : 0);
    return UNNAMED_GET();
}

/* ------------------------------------------------------------ the system */
/* What differs between POSIX and Windows, each with errno set on failure.  On
   Windows paths are UTF-8 (os.fsencode) and go to the wide-character calls;
   files are opened for reading with every sharing flag, so that a file being
   read can be replaced or deleted (as on POSIX), and written in binary mode. */

/* a file's type and identity (see zc_open_regular) */
typedef struct {
    int is_dir, is_reg;
    int64_t size, dev, ino, mtime_ns;
} file_info;

/* the last directory separator of path, or NULL */
static const char* last_sep(const char* path) {
    const char* slash = strrchr(path, '/');
#if defined(_WIN32)
    const char* back = strrchr(path, '\\');
    if (back != NULL && (slash == NULL || back > slash))
        slash = back;
#endif
    return slash;
}

#if defined(_WIN32)
#include <direct.h>

/* path as a new wide-character string (free it), or NULL */
static wchar_t* wide_path(const char* path) {
    int n = MultiByteToWideChar(CP_UTF8, MB_ERR_INVALID_CHARS, path, -1, NULL, 0);
    wchar_t* w;
    if (n <= 0) {
        errno = EINVAL;
        return NULL;
    }
    w = (wchar_t*)malloc((size_t)n * sizeof(wchar_t));
    if (w == NULL) {
        errno = ENOMEM;
        return NULL;
    }
    if (MultiByteToWideChar(CP_UTF8, MB_ERR_INVALID_CHARS, path, -1, w, n) != n) {
        free(w);
        errno = EINVAL;
        return NULL;
    }
    return w;
}

static int os_open_read(const char* path) {
    wchar_t* w = wide_path(path);
    HANDLE h;
    int fd;
    if (w == NULL)
        return -1;
    /* (FILE_FLAG_BACKUP_SEMANTICS: a directory opens too, and is found below) */
    h = CreateFileW(w, GENERIC_READ, FILE_SHARE_READ | FILE_SHARE_WRITE | FILE_SHARE_DELETE,
                    NULL, OPEN_EXISTING, FILE_ATTRIBUTE_NORMAL | FILE_FLAG_BACKUP_SEMANTICS, NULL);
    free(w);
    if (h == INVALID_HANDLE_VALUE) {
        errno = zc_errno_from_win32(GetLastError());
        return -1;
    }
    fd = _open_osfhandle((intptr_t)h, _O_RDONLY);
    if (fd < 0) {
        int saved = errno ? errno : EMFILE;
        CloseHandle(h);
        errno = saved;
    }
    return fd;
}

static int os_file_info(int fd, file_info* info) {
    HANDLE h = (HANDLE)_get_osfhandle(fd);
    BY_HANDLE_FILE_INFORMATION bh;
    uint64_t t;
    if (h == INVALID_HANDLE_VALUE) {
        errno = EBADF;
        return -1;
    }
    if (!GetFileInformationByHandle(h, &bh)) {
        errno = zc_errno_from_win32(GetLastError());
        return -1;
    }
    info->is_dir = (bh.dwFileAttributes & FILE_ATTRIBUTE_DIRECTORY) != 0;
    info->is_reg = !info->is_dir && GetFileType(h) == FILE_TYPE_DISK;
    info->size = (int64_t)(((uint64_t)bh.nFileSizeHigh << 32) | bh.nFileSizeLow);
    info->dev = (int64_t)bh.dwVolumeSerialNumber;
    info->ino = (int64_t)(((uint64_t)bh.nFileIndexHigh << 32) | bh.nFileIndexLow);
    /* 100 ns ticks since 1601 -> ns since 1970 */
    t = ((uint64_t)bh.ftLastWriteTime.dwHighDateTime << 32) | bh.ftLastWriteTime.dwLowDateTime;
    info->mtime_ns = ((int64_t)t - 116444736000000000LL) * 100;
    return 0;
}

static int os_create_excl(const char* path) {
    wchar_t* w = wide_path(path);
    int fd;
    if (w == NULL)
        return -1;
    fd = _wopen(w, _O_WRONLY | _O_CREAT | _O_EXCL | _O_BINARY | _O_NOINHERIT, _S_IREAD | _S_IWRITE);
    free(w);
    return fd;
}

static int os_mkdir(const char* path) {
    wchar_t* w = wide_path(path);
    int r;
    if (w == NULL)
        return -1;
    r = _wmkdir(w);
    free(w);
    return r;
}

/* rename, replacing path if it exists */
static int os_rename(const char* from, const char* to) {
    wchar_t* wf = wide_path(from);
    wchar_t* wt = wf != NULL ? wide_path(to) : NULL;
    int r = -1;
    if (wt != NULL) {
        r = MoveFileExW(wf, wt, MOVEFILE_REPLACE_EXISTING) ? 0 : -1;
        if (r != 0)
            errno = zc_errno_from_win32(GetLastError());
    }
    free(wf);
    free(wt);
    return r;
}

static int os_unlink(const char* path) {
    wchar_t* w = wide_path(path);
    int r;
    if (w == NULL)
        return -1;
    r = _wunlink(w);
    free(w);
    return r;
}
#else
static int os_open_read(const char* path) { return open(path, O_RDONLY | O_CLOEXEC); }

static int os_file_info(int fd, file_info* info) {
    struct stat st;
    if (fstat(fd, &st) != 0)
        return -1;
    info->is_dir = S_ISDIR(st.st_mode);
    info->is_reg = S_ISREG(st.st_mode);
    info->size = (int64_t)st.st_size;
    info->dev = (int64_t)st.st_dev;
    info->ino = (int64_t)st.st_ino;
#if defined(__APPLE__)
    info->mtime_ns = (int64_t)st.st_mtimespec.tv_sec * 1000000000 + st.st_mtimespec.tv_nsec;
#else
    info->mtime_ns = (int64_t)st.st_mtim.tv_sec * 1000000000 + st.st_mtim.tv_nsec;
#endif
    return 0;
}

static int os_create_excl(const char* path) {
    return open(path, O_WRONLY | O_CREAT | O_EXCL | O_CLOEXEC, 0666);
}

static int os_mkdir(const char* path) { return mkdir(path, 0777); }
static int os_rename(const char* from, const char* to) { return rename(from, to); }
static int os_unlink(const char* path) { return unlink(path); }
#endif

size_t zc_temp_path(char* out, const char* path, const char* tag) {
    const char* slash = last_sep(path);
    size_t dirlen = slash != NULL ? (size_t)(slash - path + 1) : 0;
    size_t namelen = strlen(path + dirlen), taglen = strlen(tag), n = 0;
    if (namelen > ZC_TEMP_NAME_KEEP)
        namelen = ZC_TEMP_NAME_KEEP;
    memcpy(out, path, dirlen);
    n = dirlen;
    out[n++] = '.';
    memcpy(out + n, path + dirlen, namelen);
    n += namelen;
    memcpy(out + n, ZC_TEMP_MARK, sizeof ZC_TEMP_MARK - 1);
    n += sizeof ZC_TEMP_MARK - 1;
    memcpy(out + n, tag, taglen);
    n += taglen;
    memcpy(out + n, ZC_TEMP_END, sizeof ZC_TEMP_END);   /* (with the NUL) */
    return n + sizeof ZC_TEMP_END - 1;
}

/* ------------------------------------------------------------------ reading */

static int grow(uint8_t** buf, size_t* cap, size_t n) {
    uint8_t* p;
    if (*cap >= n && *buf != NULL)
        return 0;
    p = realloc(*buf, n > 0 ? n : 1);
    if (p == NULL)
        return -1;
    *buf = p;
    *cap = n;
    return 0;
}

int64_t zc_pread_all(int fd, uint8_t* dst, size_t n, int64_t offset, zc_error* err) {
    int64_t done = zc_pread_full(fd, dst, n, offset);
    if (done < 0)
        return zc_fail(err, ZC_IO, 0, errno, "read");
    return done;
}

int64_t zc_read_file(const char* path, uint8_t** buf, size_t* cap, zc_error* err) {
    int fd = os_open_read(path);
    file_info st;
    int64_t r;
    if (fd < 0) {
        if (errno == ENOENT || errno == ENOTDIR)
            return ZC_FILE_MISSING;
        return zc_fail(err, ZC_IO, 0, errno, "open");
    }
    if (os_file_info(fd, &st) != 0) {
        int saved = errno;
        zc_close(fd);
        return zc_fail(err, ZC_IO, 0, saved, "fstat");
    }
    if (st.is_dir) {                    /* (what a read of it says on Linux) */
        zc_close(fd);
        return zc_fail(err, ZC_IO, 0, EISDIR, "read");
    }
    if (grow(buf, cap, (size_t)st.size) != 0) {
        zc_close(fd);
        return zc_fail(err, ZC_NOMEM, 0, 0, NULL);
    }
    r = zc_pread_all(fd, *buf, (size_t)st.size, 0, err);
    zc_close(fd);
    return r;
}

int64_t zc_read_range(int fd, int64_t offset, size_t length, uint8_t** buf, size_t* cap,
                      zc_error* err) {
    int64_t r;
    if (grow(buf, cap, length) != 0)
        return zc_fail(err, ZC_NOMEM, 0, 0, NULL);
    r = zc_pread_all(fd, *buf, length, offset, err);
    if (r >= 0 && (size_t)r != length)
        return zc_fail(err, ZC_TRUNCATED, offset + (int64_t)length, offset + r,
                       "byte range past the end of the file");
    return r;
}

int zc_open_chunk_file(const char* path, size_t size, zc_error* err) {
    int fd = os_open_read(path);
    file_info st;
    if (fd < 0) {
        if (errno == ENOENT || errno == ENOTDIR)
            return ZC_FILE_MISSING;
        return (int)zc_fail(err, ZC_IO, 0, errno, "open");
    }
    if (os_file_info(fd, &st) != 0) {
        int saved = errno;
        zc_close(fd);
        return (int)zc_fail(err, ZC_IO, 0, saved, "fstat");
    }
    if (st.is_dir) {
        zc_close(fd);
        return (int)zc_fail(err, ZC_IO, 0, EISDIR, "read");
    }
    if ((size_t)st.size != size) {   /* (a FIFO or device: st_size 0, as zc_read_file sees it) */
        zc_close(fd);
        return (int)zc_fail(err, ZC_SIZE, (int64_t)size, st.size, "chunk holds");
    }
    return fd;
}

int64_t zc_read_chunk_slabs(const char* path, size_t size, const ptrdiff_t* starts,
                            ptrdiff_t nslabs, size_t n, uint8_t* dst, zc_error* err) {
    int fd = zc_open_chunk_file(path, size, err);
    ptrdiff_t k;
    int64_t r = 0;
    if (fd < 0)
        return fd;
    for (k = 0; k < nslabs; k++) {
        r = zc_pread_all(fd, dst + k * n, n, (int64_t)starts[k], err);
        if (r < 0)
            break;
        if ((size_t)r != n) {
            r = zc_fail(err, ZC_SIZE, (int64_t)size, starts[k] + r, "chunk holds");
            break;
        }
    }
    zc_close(fd);
    if (r < 0)
        return r;
    return (int64_t)nslabs * (int64_t)n;
}

int zc_open_regular(const char* path, int64_t* ident, int* error) {
    file_info st;
    int fd = os_open_read(path);
    *error = 0;
    if (fd < 0) {
        if (errno == ENOENT || errno == ENOTDIR)
            return -1;
        *error = errno;
        return -3;
    }
    if (os_file_info(fd, &st) != 0) {
        *error = errno;
        zc_close(fd);
        return -3;
    }
    if (!st.is_reg) {
        zc_close(fd);
        return -2;
    }
    if (ident != NULL) {
        ident[0] = st.dev;
        ident[1] = st.ino;
        ident[2] = st.size;
        ident[3] = st.mtime_ns;
    }
    return fd;
}

/* ------------------------------------------------------------------ writing */

int zc_make_parents(char* path) {
    /* The deepest directory is tried first and its parents only if it cannot be
       made (ENOENT): a mkdir of a directory that exists takes its parent's lock all
       the same, which the other workers creating files there then wait for. */
    char* slash = (char*)last_sep(path);
    char sep;
    int r;
    if (slash == NULL || slash == path)
        return 0;
    sep = *slash;
    *slash = 0;
    r = os_mkdir(path);
    if (r != 0 && errno == ENOENT) {
        r = zc_make_parents(path);
        if (r == 0)
            r = os_mkdir(path);
    }
    if (r != 0 && errno == EEXIST)
        r = 0;
    *slash = sep;
    return r;
}

/* A new file with no name in directory dir (Linux O_TMPFILE); -1 and errno
   EOPNOTSUPP where there are none. */
static int open_unnamed(const char* dir) {
#if defined(__linux__) && defined(O_TMPFILE)
    return open(dir, O_WRONLY | O_TMPFILE | O_CLOEXEC, 0666);
#else
    (void)dir;
    errno = EOPNOTSUPP;
    return -1;
#endif
}

/* Give the unnamed file fd the name path (which must not exist). */
static int link_unnamed(int fd, const char* path) {
#if defined(__linux__) && defined(O_TMPFILE)
    char proc[40];
    snprintf(proc, sizeof proc, "/proc/self/fd/%d", fd);
    return linkat(AT_FDCWD, proc, AT_FDCWD, path, AT_SYMLINK_FOLLOW);
#else
    (void)fd;
    (void)path;
    errno = EOPNOTSUPP;
    return -1;
#endif
}

/* Write the parts (NULL ones skipped) one after another to fd: 0, or the errno of
   the failure.  Their length goes to total. */
#if defined(_WIN32)
static int write_all(int fd, const uint8_t* const* parts, const size_t* lens, ptrdiff_t nparts,
                     size_t* total) {
    ptrdiff_t i;
    size_t done;
    int r;
    *total = 0;
    for (i = 0; i < nparts; i++) {        /* (no writev: one write call per part) */
        if (parts[i] == NULL)
            continue;
        for (done = 0; done < lens[i]; done += (size_t)r) {
            size_t n = lens[i] - done;
            r = _write(fd, parts[i] + done, (unsigned int)(n > ((size_t)1 << 30) ? (size_t)1 << 30 : n));
            if (r <= 0)
                return r < 0 ? errno : EIO;
        }
        *total += lens[i];
    }
    return 0;
}
#else
static int write_all(int fd, const uint8_t* const* parts, const size_t* lens, ptrdiff_t nparts,
                     size_t* total) {
    struct iovec iov[PARTS_PER_CALL];
    ptrdiff_t i = 0;
    int n, k;
    ssize_t r;
    *total = 0;
    while (i < nparts) {                  /* up to PARTS_PER_CALL parts per writev call */
        n = 0;
        while (i < nparts && n < PARTS_PER_CALL) {
            if (parts[i] != NULL && lens[i] > 0) {
                iov[n].iov_base = (void*)parts[i];
                iov[n].iov_len = lens[i];
                *total += lens[i];
                n++;
            }
            i++;
        }
        k = 0;
        while (k < n) {
            r = writev(fd, iov + k, n - k);
            if (r <= 0) {
                if (r < 0 && errno == EINTR)
                    continue;
                return r < 0 ? errno : EIO;
            }
            while (k < n && (size_t)r >= iov[k].iov_len) {   /* skip the parts written */
                r -= (ssize_t)iov[k].iov_len;
                k++;
            }
            if (k < n) {
                iov[k].iov_base = (char*)iov[k].iov_base + r;
                iov[k].iov_len -= (size_t)r;
            }
        }
    }
    return 0;
}
#endif

/* Write the parts to a new file with no name in path's directory, then name it
   path (if path exists: the temporary name tmp, then rename).  The kernel looks
   for a free inode without holding the directory's lock, which a named new file
   holds meanwhile (on ext4 that search takes long after many files were deleted,
   and the other workers creating files in the directory wait).  1: not done (no
   such files here; nothing was written), 0: done, -1: failed (err set). */
static int write_unnamed(const char* path, char* tmp, size_t dirlen, const uint8_t* const* parts,
                         const size_t* lens, ptrdiff_t nparts, size_t* total, zc_error* err) {
    int fd, saved;
    char sep;
    if (!UNNAMED_GET())
        return 1;
    if (dirlen == 0) {
        fd = open_unnamed(".");
    } else {
        sep = tmp[dirlen - 1];
        tmp[dirlen - 1] = 0;                  /* the directory (tmp's slash, for a moment) */
        fd = open_unnamed(tmp);
        tmp[dirlen - 1] = sep;
        if (fd < 0 && errno == ENOENT) {
            if (zc_make_parents(tmp) != 0)
                return (int)zc_fail(err, ZC_IO, 0, errno, "mkdir");
            tmp[dirlen - 1] = 0;
            fd = open_unnamed(tmp);
            tmp[dirlen - 1] = sep;
        }
    }
    if (fd < 0) {
        if (errno == EOPNOTSUPP || errno == EISDIR || errno == EINVAL)
            UNNAMED_OFF();
        return 1;                             /* (the named file reports other errors) */
    }
    saved = write_all(fd, parts, lens, nparts, total);
    if (saved != 0) {
        zc_close(fd);
        return (int)zc_fail(err, ZC_IO, 0, saved, "write");
    }
    if (link_unnamed(fd, path) != 0) {
        saved = errno;
        if (saved != EEXIST) {                /* (no /proc, or no links allowed here) */
            zc_close(fd);
            UNNAMED_OFF();
            return 1;
        }
        if (link_unnamed(fd, tmp) != 0 || os_rename(tmp, path) != 0) {
            saved = errno;
            os_unlink(tmp);
            zc_close(fd);
            return (int)zc_fail(err, ZC_IO, 0, saved, "rename");
        }
    }
    if (zc_close(fd) != 0)
        return (int)zc_fail(err, ZC_IO, 0, errno, "close");
    return 0;
}

static int write_spliced(int fd, const uint8_t* const* parts, const size_t* lens,
                         const int64_t* src_offs, ptrdiff_t nparts, int src_fd, size_t* total);

/* Write the parts to the new file tmp (its directories made as needed): all from
   memory, or with src_offs (not NULL) some copied from the file src_fd
   (write_spliced).  0, or -1 with err and no file left behind. */
static int write_temp(char* tmp, const uint8_t* const* parts, const size_t* lens,
                      const int64_t* src_offs, ptrdiff_t nparts, int src_fd, size_t* total,
                      zc_error* err) {
    int fd = os_create_excl(tmp), saved;
    if (fd < 0 && errno == ENOENT) {
        if (zc_make_parents(tmp) != 0)
            return (int)zc_fail(err, ZC_IO, 0, errno, "mkdir");
        fd = os_create_excl(tmp);
    }
    if (fd < 0)
        return (int)zc_fail(err, ZC_IO, 0, errno, "open");
    saved = src_offs == NULL ? write_all(fd, parts, lens, nparts, total)
                             : write_spliced(fd, parts, lens, src_offs, nparts, src_fd, total);
    if (saved != 0) {
        zc_close(fd);
        os_unlink(tmp);
        return (int)zc_fail(err, ZC_IO, 0, saved, "write");
    }
    if (zc_close(fd) != 0) {
        saved = errno;
        os_unlink(tmp);
        return (int)zc_fail(err, ZC_IO, 0, saved, "close");
    }
    return 0;
}

int64_t zc_write_parts(const char* path, const char* tag, const uint8_t* const* parts,
                       const size_t* lens, ptrdiff_t nparts, zc_error* err) {
    const char* slash = last_sep(path);
    size_t dirlen = slash != NULL ? (size_t)(slash - path + 1) : 0, total = 0;
    char* tmp = malloc(strlen(path) + strlen(tag) + ZC_TEMP_EXTRA);
    int saved, done;
    if (tmp == NULL)
        return zc_fail(err, ZC_NOMEM, 0, 0, NULL);
    zc_temp_path(tmp, path, tag);
    done = write_unnamed(path, tmp, dirlen, parts, lens, nparts, &total, err);
    if (done != 1) {
        free(tmp);
        return done < 0 ? -1 : (int64_t)total;
    }
    if (write_temp(tmp, parts, lens, NULL, nparts, -1, &total, err) != 0) {
        free(tmp);
        return -1;
    }
    if (os_rename(tmp, path) != 0) {
        saved = errno;
        os_unlink(tmp);
        free(tmp);
        return zc_fail(err, ZC_IO, 0, saved, "rename");
    }
    free(tmp);
    return (int64_t)total;
}

/* Copy n bytes at offset off of the file in to the current position of out: by
   copy_file_range where the system has it (no bytes through this process), else in
   reads and writes of at most COPY_BLOCK bytes (*buf, allocated on first use, freed
   by the caller).  0, or the errno of the failure (EIO: in ends early). */
static int copy_range(int out, int in, int64_t off, size_t n, uint8_t** buf) {
    size_t total;
    int64_t got;
    int r;
    while (n > 0) {
        int64_t k = zc_copy_file_range(in, &off, out, n > ((size_t)1 << 30) ? (size_t)1 << 30 : n);
        if (k < 0 && errno == EINTR)
            continue;
        if (k < 0)        /* (ENOSYS, EXDEV, EINVAL, EOPNOTSUPP ...: copy by hand) */
            break;
        if (k == 0)
            return EIO;
        n -= (size_t)k;
    }
    while (n > 0) {
        size_t m = n < COPY_BLOCK ? n : COPY_BLOCK;
        const uint8_t* part;
        if (*buf == NULL && (*buf = malloc(COPY_BLOCK)) == NULL)
            return ENOMEM;
        got = zc_pread_full(in, *buf, m, off);
        if (got < 0)
            return errno;
        if ((size_t)got < m)
            return EIO;
        part = *buf;
        r = write_all(out, &part, &m, 1, &total);
        if (r != 0)
            return r;
        off += (int64_t)m;
        n -= m;
    }
    return 0;
}

/* Write parts to fd: runs of parts in memory (src_offs[i] < 0) by write_all, runs
   adjacent in the file src_fd (src_offs[i] >= 0, each following the one before) by
   one copy_range each; *total: the bytes written.  0, or the errno of the failure. */
static int write_spliced(int fd, const uint8_t* const* parts, const size_t* lens,
                         const int64_t* src_offs, ptrdiff_t nparts, int src_fd, size_t* total) {
    uint8_t* buf = NULL;
    size_t written, n;
    ptrdiff_t i = 0, j;
    int64_t off;
    int saved = 0;
    *total = 0;
    /* The new file's blocks allocated up front (where the file system can: no zeros
       written): ext4 then has no delayed allocation to force when the file is renamed
       over the old one (auto_da_alloc), which otherwise starts its writeback there. */
    for (j = 0, n = 0; j < nparts; j++)
        n += lens[j];
    zc_preallocate(fd, (int64_t)n);
    while (i < nparts && saved == 0) {
        if (src_offs[i] < 0) {            /* a run of parts in memory: one writev */
            for (j = i; j < nparts && src_offs[j] < 0; j++)
                ;
            saved = write_all(fd, parts + i, lens + i, j - i, &written);
            *total += written;
        } else {                          /* a run of parts adjacent in the source: one copy */
            off = src_offs[i];
            n = 0;
            for (j = i; j < nparts && src_offs[j] == off + (int64_t)n; j++)
                n += lens[j];
            saved = copy_range(fd, src_fd, off, n, &buf);
            *total += n;
        }
        i = j;
    }
    free(buf);
    return saved;
}

int64_t zc_stage_spliced(const char* path, const char* tag, const uint8_t* const* parts,
                         const size_t* lens, const int64_t* src_offs, ptrdiff_t nparts, int src_fd,
                         zc_error* err) {
    char* tmp = malloc(strlen(path) + strlen(tag) + ZC_TEMP_EXTRA);
    size_t total = 0;
    int r;
    if (tmp == NULL)
        return zc_fail(err, ZC_NOMEM, 0, 0, NULL);
    zc_temp_path(tmp, path, tag);
    r = write_temp(tmp, parts, lens, src_offs, nparts, src_fd, &total, err);
    free(tmp);
    return r != 0 ? -1 : (int64_t)total;
}

int64_t zc_stage_parts(const char* path, const char* tag, const uint8_t* const* parts,
                       const size_t* lens, ptrdiff_t nparts, zc_error* err) {
    return zc_stage_spliced(path, tag, parts, lens, NULL, nparts, -1, err);
}

int64_t zc_finish_staged(const char* path, const char* tag, int keep, zc_error* err) {
    char* tmp = malloc(strlen(path) + strlen(tag) + ZC_TEMP_EXTRA);
    int saved;
    if (tmp == NULL)
        return zc_fail(err, ZC_NOMEM, 0, 0, NULL);
    zc_temp_path(tmp, path, tag);
    if (!keep) {
        os_unlink(tmp);
        free(tmp);
        return 0;
    }
    if (os_rename(tmp, path) != 0) {
        saved = errno;
        os_unlink(tmp);
        free(tmp);
        return zc_fail(err, ZC_IO, 0, saved, "rename");
    }
    free(tmp);
    return 0;
}

int64_t zc_delete_file(const char* path, zc_error* err) {
    if (os_unlink(path) != 0 && errno != ENOENT && errno != ENOTDIR)
        return zc_fail(err, ZC_IO, 0, errno, "unlink");
    return 0;
}
