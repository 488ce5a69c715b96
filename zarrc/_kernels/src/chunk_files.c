/* Chunk files (see chunk_files.h). */
#define _GNU_SOURCE
#include "chunk_files.h"

#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/uio.h>
#include <unistd.h>

/* parts written by one writev call (IOV_MAX is 1024 on Linux) */
#define PARTS_PER_CALL 256

/* cleared once the system has none; read and written by every writing thread, with
   or without a GIL, so only through these (relaxed atomics: a plain flag, no order) */
static int unnamed_files = 1;
#define UNNAMED_GET() __atomic_load_n(&unnamed_files, __ATOMIC_RELAXED)
#define UNNAMED_OFF() __atomic_store_n(&unnamed_files, 0, __ATOMIC_RELAXED)

int zc_unnamed_files(int enabled) {
    if (enabled >= 0)
        __atomic_store_n(&unnamed_files, enabled ? 1 : 0, __ATOMIC_RELAXED);
    return UNNAMED_GET();
}

size_t zc_temp_path(char* out, const char* path, const char* tag) {
    const char* slash = strrchr(path, '/');
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
    size_t done = 0;
    ssize_t r;
    while (done < n) {
        r = pread(fd, dst + done, n - done, (off_t)(offset + (int64_t)done));
        if (r < 0) {
            if (errno == EINTR)
                continue;
            return zc_fail(err, ZC_IO, 0, errno, "read");
        }
        if (r == 0)
            break;
        done += (size_t)r;
    }
    return (int64_t)done;
}

int64_t zc_read_file(const char* path, uint8_t** buf, size_t* cap, zc_error* err) {
    int fd = open(path, O_RDONLY | O_CLOEXEC);
    struct stat st;
    int64_t r;
    if (fd < 0) {
        if (errno == ENOENT || errno == ENOTDIR)
            return ZC_FILE_MISSING;
        return zc_fail(err, ZC_IO, 0, errno, "open");
    }
    if (fstat(fd, &st) != 0) {
        int saved = errno;
        close(fd);
        return zc_fail(err, ZC_IO, 0, saved, "fstat");
    }
    if (grow(buf, cap, (size_t)st.st_size) != 0) {
        close(fd);
        return zc_fail(err, ZC_NOMEM, 0, 0, NULL);
    }
    r = zc_pread_all(fd, *buf, (size_t)st.st_size, 0, err);
    close(fd);
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
    int fd = open(path, O_RDONLY | O_CLOEXEC);
    struct stat st;
    if (fd < 0) {
        if (errno == ENOENT || errno == ENOTDIR)
            return ZC_FILE_MISSING;
        return (int)zc_fail(err, ZC_IO, 0, errno, "open");
    }
    if (fstat(fd, &st) != 0) {
        int saved = errno;
        close(fd);
        return (int)zc_fail(err, ZC_IO, 0, saved, "fstat");
    }
    if (S_ISDIR(st.st_mode)) {
        close(fd);
        return (int)zc_fail(err, ZC_IO, 0, EISDIR, "read");
    }
    if ((size_t)st.st_size != size) {   /* (a FIFO or device: st_size 0, as zc_read_file sees it) */
        close(fd);
        return (int)zc_fail(err, ZC_SIZE, (int64_t)size, st.st_size, "chunk holds");
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
    close(fd);
    if (r < 0)
        return r;
    return (int64_t)nslabs * (int64_t)n;
}

int zc_open_regular(const char* path, int64_t* ident, int* error) {
    struct stat st;
    int fd = open(path, O_RDONLY | O_CLOEXEC);
    *error = 0;
    if (fd < 0) {
        if (errno == ENOENT || errno == ENOTDIR)
            return -1;
        *error = errno;
        return -3;
    }
    if (fstat(fd, &st) != 0) {
        *error = errno;
        close(fd);
        return -3;
    }
    if (!S_ISREG(st.st_mode)) {
        close(fd);
        return -2;
    }
    if (ident != NULL) {
        ident[0] = (int64_t)st.st_dev;
        ident[1] = (int64_t)st.st_ino;
        ident[2] = (int64_t)st.st_size;
        ident[3] = (int64_t)st.st_mtim.tv_sec * 1000000000 + st.st_mtim.tv_nsec;
    }
    return fd;
}

/* ------------------------------------------------------------------ writing */

int zc_make_parents(char* path) {
    /* The deepest directory is tried first and its parents only if it cannot be
       made (ENOENT): a mkdir of a directory that exists takes its parent's lock all
       the same, which the other workers creating files there then wait for. */
    char* slash = strrchr(path, '/');
    int r;
    if (slash == NULL || slash == path)
        return 0;
    *slash = 0;
    r = mkdir(path, 0777);
    if (r != 0 && errno == ENOENT) {
        r = zc_make_parents(path);
        if (r == 0)
            r = mkdir(path, 0777);
    }
    if (r != 0 && errno == EEXIST)
        r = 0;
    *slash = '/';
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

/* Write the parts to a new file with no name in path's directory, then name it
   path (if path exists: the temporary name tmp, then rename).  The kernel looks
   for a free inode without holding the directory's lock, which a named new file
   holds meanwhile (on ext4 that search takes long after many files were deleted,
   and the other workers creating files in the directory wait).  1: not done (no
   such files here; nothing was written), 0: done, -1: failed (err set). */
static int write_unnamed(const char* path, char* tmp, size_t dirlen, const uint8_t* const* parts,
                         const size_t* lens, ptrdiff_t nparts, size_t* total, zc_error* err) {
    int fd, saved;
    if (!UNNAMED_GET())
        return 1;
    if (dirlen == 0) {
        fd = open_unnamed(".");
    } else {
        tmp[dirlen - 1] = 0;                  /* the directory (tmp's slash, for a moment) */
        fd = open_unnamed(tmp);
        tmp[dirlen - 1] = '/';
        if (fd < 0 && errno == ENOENT) {
            if (zc_make_parents(tmp) != 0)
                return (int)zc_fail(err, ZC_IO, 0, errno, "mkdir");
            tmp[dirlen - 1] = 0;
            fd = open_unnamed(tmp);
            tmp[dirlen - 1] = '/';
        }
    }
    if (fd < 0) {
        if (errno == EOPNOTSUPP || errno == EISDIR || errno == EINVAL)
            UNNAMED_OFF();
        return 1;                             /* (the named file reports other errors) */
    }
    saved = write_all(fd, parts, lens, nparts, total);
    if (saved != 0) {
        close(fd);
        return (int)zc_fail(err, ZC_IO, 0, saved, "write");
    }
    if (link_unnamed(fd, path) != 0) {
        saved = errno;
        if (saved != EEXIST) {                /* (no /proc, or no links allowed here) */
            close(fd);
            UNNAMED_OFF();
            return 1;
        }
        if (link_unnamed(fd, tmp) != 0 || rename(tmp, path) != 0) {
            saved = errno;
            unlink(tmp);
            close(fd);
            return (int)zc_fail(err, ZC_IO, 0, saved, "rename");
        }
    }
    if (close(fd) != 0)
        return (int)zc_fail(err, ZC_IO, 0, errno, "close");
    return 0;
}

int64_t zc_write_parts(const char* path, const char* tag, const uint8_t* const* parts,
                       const size_t* lens, ptrdiff_t nparts, zc_error* err) {
    const char* slash = strrchr(path, '/');
    size_t dirlen = slash != NULL ? (size_t)(slash - path + 1) : 0, total = 0;
    char* tmp = malloc(strlen(path) + strlen(tag) + ZC_TEMP_EXTRA);
    int fd, saved, done;
    if (tmp == NULL)
        return zc_fail(err, ZC_NOMEM, 0, 0, NULL);
    zc_temp_path(tmp, path, tag);
    done = write_unnamed(path, tmp, dirlen, parts, lens, nparts, &total, err);
    if (done != 1) {
        free(tmp);
        return done < 0 ? -1 : (int64_t)total;
    }
    fd = open(tmp, O_WRONLY | O_CREAT | O_EXCL | O_CLOEXEC, 0666);
    if (fd < 0 && errno == ENOENT) {
        if (zc_make_parents(tmp) != 0) {
            saved = errno;
            free(tmp);
            return zc_fail(err, ZC_IO, 0, saved, "mkdir");
        }
        fd = open(tmp, O_WRONLY | O_CREAT | O_EXCL | O_CLOEXEC, 0666);
    }
    if (fd < 0) {
        saved = errno;
        free(tmp);
        return zc_fail(err, ZC_IO, 0, saved, "open");
    }
    saved = write_all(fd, parts, lens, nparts, &total);
    if (saved != 0) {
        close(fd);
        unlink(tmp);
        free(tmp);
        return zc_fail(err, ZC_IO, 0, saved, "write");
    }
    if (close(fd) != 0) {
        saved = errno;
        unlink(tmp);
        free(tmp);
        return zc_fail(err, ZC_IO, 0, saved, "close");
    }
    if (rename(tmp, path) != 0) {
        saved = errno;
        unlink(tmp);
        free(tmp);
        return zc_fail(err, ZC_IO, 0, saved, "rename");
    }
    free(tmp);
    return (int64_t)total;
}

int64_t zc_delete_file(const char* path, zc_error* err) {
    if (unlink(path) != 0 && errno != ENOENT && errno != ENOTDIR)
        return zc_fail(err, ZC_IO, 0, errno, "unlink");
    return 0;
}
