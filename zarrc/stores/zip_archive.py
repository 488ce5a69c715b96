"""Zip archive building blocks for ZipStore: shared read descriptors, member extents,
and the atomic rewrite of an archive (members copied raw into a temporary file beside
it, which is then renamed over it)."""

from __future__ import annotations

import contextlib
import copy
import errno
import os
import secrets
import struct
import zipfile
from collections.abc import Callable, Iterable

from zarrc.errors import StoreError
from zarrc.stores.base import pread

COPY_BLOCK = 4 << 20  # bytes copied per call when rewriting an archive
TEMP_SUFFIX = ".zarrc-tmp"
EMPTY_ARCHIVE = b"PK\x05\x06" + bytes(18)  # an end-of-central-directory record, no members
_EXTRA_HEADER = struct.Struct("<HH")
_ZIP64_EXTRA = 0x0001
RENAME_NEEDS_CLOSED = os.name == "nt"  # Windows cannot rename over (or rename) an open file


class Handle:
    """An open read descriptor shared by the store and the snapshots taken from it:
    closed when the last reference goes (or by ``close``), so a snapshot taken before
    a flush keeps reading the archive version it was taken from."""

    __slots__ = ("fd",)

    def __init__(self, fd: int) -> None:
        self.fd = fd

    def close(self) -> None:
        fd, self.fd = self.fd, -1
        if fd >= 0:
            os.close(fd)

    def __del__(self) -> None:
        with contextlib.suppress(Exception):
            self.close()


def member_ends(zf: zipfile.ZipFile) -> dict[int, int]:
    """For each member's local header offset in ``zf``, where its bytes end: the next
    member's header or the central directory (so a data descriptor, or anything a
    writer put between members, is kept with the member it follows)."""
    starts = sorted({info.header_offset for info in zf.filelist})
    limit = zf.start_dir
    return {s: (starts[i + 1] if i + 1 < len(starts) else max(limit, s)) for i, s in enumerate(starts)}


def _strip_zip64(extra: bytes) -> bytes:
    """``extra`` without its zip64 field (zipfile writes a new one where the copy needs it)."""
    out = bytearray()
    i = 0
    while i + _EXTRA_HEADER.size <= len(extra):
        tag, size = _EXTRA_HEADER.unpack_from(extra, i)
        end = i + _EXTRA_HEADER.size + size
        if tag != _ZIP64_EXTRA:
            out += extra[i:end]
        i = end
    return bytes(out)


_copy_file_range = getattr(os, "copy_file_range", None)  # Linux: copied in the kernel (or shared, on CoW file systems)
_NO_COPY_RANGE = {errno.EXDEV, errno.ENOSYS, errno.EINVAL, errno.EOPNOTSUPP, errno.EPERM}


def _copy(src: int, dst: int, start: int, end: int, name: str) -> None:
    """Bytes [start, end) of descriptor ``src`` appended to ``dst``, in bounded blocks."""
    if _copy_file_range is not None:
        try:
            while start < end:
                n = _copy_file_range(src, dst, min(COPY_BLOCK, end - start), start)
                if n == 0:
                    raise StoreError(f"{name}: archive truncated at byte {start} while rewriting it")
                start += n
        except OSError as e:
            if e.errno not in _NO_COPY_RANGE:  # (StoreError: errno None)
                raise
    while start < end:
        n = min(COPY_BLOCK, end - start)
        block = pread(src, n, start)
        if not block:
            raise StoreError(f"{name}: archive truncated at byte {start} while rewriting it")
        view = memoryview(block)
        while view:
            view = view[os.write(dst, view):]
        start += len(block)


def temp_path(path: str) -> str:
    """A hidden name beside ``path`` for the archive being written (``.NAME.<pid>.<random>.zarrc-tmp``)."""
    directory, base = os.path.split(path)
    return os.path.join(directory, f".{base}.{os.getpid()}.{secrets.token_hex(4)}{TEMP_SUFFIX}")


def write_archive(path: str, members: Iterable[tuple[zipfile.ZipInfo, int, int]], name: str,
                  release: Callable[[], None], comment: bytes = b"", durable: bool = True) -> int:
    """Write a complete archive of ``members`` into a temporary file beside ``path``
    and rename it over ``path``; return a read descriptor of the new archive.

    ``members``: (ZipInfo, source descriptor, end of the member's bytes in it); each is
    copied raw (local header, data, descriptor: never recompressed, by copy_file_range
    where the system has it) and listed in a new central directory, with ``comment``.
    The temporary file is synced to disk (``durable``) before the rename and removed
    on any failure, so ``path`` is always the old or the new archive, whole.  Raises StoreError (the old archive untouched) on I/O errors.
    Windows renames only files no one holds open: there ``release()`` is called to
    close the caller's descriptors of the old archive just before the rename, and
    the new one is reopened after it (another process reading the archive makes
    the rename fail: StoreError).
    """
    tmp = temp_path(path)
    try:
        fd = os.open(tmp, os.O_RDWR | os.O_CREAT | os.O_EXCL | getattr(os, "O_BINARY", 0)
                     | getattr(os, "O_CLOEXEC", 0), 0o666)
    except OSError as e:
        raise StoreError(f"{name}: cannot create {tmp!r} to write the archive: {e.strerror or e}") from e
    try:
        infos = []
        position = 0
        for info, src, end in members:
            new = copy.copy(info)
            new.header_offset = position
            new.extra = _strip_zip64(info.extra)
            _copy(src, fd, info.header_offset, end, name)
            position += end - info.header_offset
            infos.append(new)
        with os.fdopen(os.dup(fd), "r+b") as f:
            f.seek(position)
            out = zipfile.ZipFile(f, "w", allowZip64=True)
            out.filelist.extend(infos)
            out.NameToInfo.update((i.filename, i) for i in infos)
            out.comment = comment
            out.close()  # writes the central directory at ``position``
        with contextlib.suppress(OSError):
            os.chmod(tmp, os.stat(path).st_mode & 0o7777)  # keep the archive's permissions
        if durable:
            os.fsync(fd)
        if RENAME_NEEDS_CLOSED:
            os.close(fd)
            fd = -1
            release()
        os.replace(tmp, path)
        if fd < 0:
            fd = os.open(path, os.O_RDONLY | getattr(os, "O_BINARY", 0))
    except BaseException as e:
        if fd >= 0:
            os.close(fd)
        with contextlib.suppress(OSError):
            os.unlink(tmp)
        if isinstance(e, (OSError, ValueError, zipfile.LargeZipFile)):
            raise StoreError(f"{name}: cannot write the archive: {e}") from e
        raise
    if durable:
        _sync_directory(os.path.dirname(path))
    return fd


def _sync_directory(directory: str) -> None:
    """Flush the rename to disk (POSIX; a no-op where directories cannot be opened)."""
    with contextlib.suppress(OSError):
        dfd = os.open(directory or ".", os.O_RDONLY)
        try:
            os.fsync(dfd)
        finally:
            os.close(dfd)

