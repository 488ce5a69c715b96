"""ZipStore: keys as members of one zip file, which is replaced whole, never left half written.

Writes are staged in an unnamed temporary archive beside the zip file; ``flush`` (and
``close``, a ``with`` block's end, and the end of the process) writes a complete new
archive into a temporary file in the same directory (the unchanged members copied raw,
never recompressed) and renames it over the old one (zip_archive.write_archive).
"""

from __future__ import annotations

import atexit
import contextlib
import os
import struct
import tempfile
import threading
import time
import warnings
import weakref
import zipfile
import zlib
from collections.abc import Iterator, Sequence
from typing import Any

from zarrc.errors import ArgumentError, StoreError, StoreNotFoundError, ZarrcRuntimeWarning
from zarrc.stores.base import (
    BytesSnapshot,
    FileSnapshot,
    Snapshot,
    Store,
    byte_view,
    check_range,
    clip_range,
    is_valid_key,
    pread,
    read_exactly,
    split_prefix,
    validate_key,
)
from zarrc.stores.zip_archive import EMPTY_ARCHIVE, Handle, member_ends, write_archive

MODES = ("r", "w", "a", "x")
_LOCAL_HEADER = struct.Struct("<4s22xHH")  # signature, ..., file name length, extra field length
_LOCAL_SIGNATURE = b"PK\x03\x04"
_READ_FLAGS = os.O_RDONLY | getattr(os, "O_CLOEXEC", 0) | getattr(os, "O_BINARY", 0)
_DECODE_ERRORS = (zipfile.BadZipFile, zlib.error, EOFError, OSError, RuntimeError, NotImplementedError)

# stores open for writing, flushed at exit; by id, as stores of one path are equal
_writers: weakref.WeakValueDictionary = weakref.WeakValueDictionary()
_writers_lock = threading.Lock()


@atexit.register
def _close_writers() -> None:
    """At interpreter exit, write the archive of every ZipStore still open for writing
    (in the process that opened it: not in a forked child)."""
    with _writers_lock:
        stores = list(_writers.values())
    for store in stores:
        try:
            store._close_if_owner()
        except Exception as e:  # noqa: BLE001 (reported, and the next store still gets written)
            warnings.warn(f"{store!r}: the archive could not be written at exit, its old version "
                          f"stays: {e}", ZarrcRuntimeWarning, stacklevel=1)


class ZipStore(Store):
    """A store in a zip file: key ``"a/b/c"`` is the member ``a/b/c``.

    Parameters
    ----------
    path : str or os.PathLike
        The zip file.
    mode : {"r", "w", "a", "x"}
        "r" read only; "w" a new archive (replacing the file when first flushed);
        "a" read and write (created if missing); "x" a new archive, failing if the
        file exists (an empty archive is created at once).
    compression : int
        ``zipfile.ZIP_STORED`` (default) or another zipfile method for new members.
    read_only : zarr-python's keyword (``ZipStore(path, mode="w", read_only=False)``):
        None is ``mode == "r"``; ArgumentError if it contradicts ``mode`` (a zip
        file is read only exactly in mode "r").
    allowZip64 : zarr-python's keyword; True only (zip64 is always allowed).

    The file on disk is always a whole archive: the old one until ``flush()``,
    then the new one.  Writes and deletes go to a staged temporary archive (unnamed
    where the system allows) that reads of this store see at once; ``flush()``
    writes a complete new archive beside the file (``.NAME.<pid>.<random>.zarrc-tmp``,
    unchanged members copied raw, in bounded blocks) and renames it over the file.
    ``close()``, the end of a ``with`` block, garbage collection of the store and
    interpreter exit flush; a process killed before that loses its unflushed writes,
    and the old archive stays whole (a kill during the flush can leave the hidden
    temporary file beside it: never read, safe to delete).  A flush copies the whole
    archive, so flush when a batch of writes is done, not after each one.  A key
    written again replaces its member (no duplicate is kept); ``delete`` removes
    members.  One writer per archive: two stores writing one file each replace it
    with their own version.

    Reads of stored (uncompressed) members are ``pread`` calls on the member's bytes,
    outside the lock, so many threads read at once and ``get_range`` reads only the
    range.  Compressed members are read through zipfile under the lock.  Do not
    close the store while other threads use it.
    """

    supports_deletes = True

    def __init__(
        self, path: str | os.PathLike, mode: str = "r", compression: int = zipfile.ZIP_STORED, *,
        read_only: bool | None = None, allowZip64: bool = True,
    ) -> None:
        if read_only is not None and bool(read_only) != (mode == "r"):
            raise ArgumentError(f"ZipStore: mode {mode!r} contradicts read_only={read_only!r} "
                                "(zarrc opens a zip file read only exactly in mode 'r')")
        if allowZip64 is not True:
            raise ArgumentError("ZipStore: allowZip64 must be True (zarrc always allows zip64)")
        if mode not in MODES:
            raise ArgumentError(f"ZipStore mode must be one of {MODES}, got {mode!r}")
        self.path = os.path.abspath(os.fsdecode(os.fspath(path)))
        self.mode = mode
        self.read_only = mode == "r"
        self.compression = compression
        self._lock = threading.RLock()
        self._closed = True
        self._pid = os.getpid()
        self._spans: dict[str, tuple[Handle, int, int]] = {}  # key -> stored member's (file, offset, size)
        self._base: zipfile.ZipFile | None = None  # the archive on disk (None: none yet, or mode "w")
        self._base_handle: Handle | None = None
        self._base_ends: dict[int, int] = {}
        self._stage: zipfile.ZipFile | None = None  # members written since the last flush
        self._stage_handle: Handle | None = None
        self._deleted: set[str] = set()  # members of the archive deleted since the last flush
        exists = os.path.lexists(self.path)
        if mode == "x":
            self._create_empty()
        elif mode != "w" and exists:
            self._open_base(self._open_read())
        elif mode == "r":
            raise StoreNotFoundError(f"{self!r}: the file does not exist (mode 'r')")
        if not self.read_only and not os.path.isdir(os.path.dirname(self.path)):
            raise StoreNotFoundError(f"{self!r}: its directory does not exist (mode {mode!r})")
        self._dirty = mode == "w" or (mode == "a" and not exists)  # the file must be (re)written
        self._closed = False
        if not self.read_only:
            with _writers_lock:
                _writers[id(self)] = self

    def _open_read(self) -> int:
        try:
            return os.open(self.path, _READ_FLAGS)
        except FileNotFoundError as e:
            raise StoreNotFoundError(f"{self!r}: the file does not exist (mode {self.mode!r})") from e
        except OSError as e:
            raise StoreError(f"{self!r}: cannot open: {e.strerror or e}") from e

    def _create_empty(self) -> None:
        flags = os.O_RDWR | os.O_CREAT | os.O_EXCL | getattr(os, "O_BINARY", 0) | getattr(os, "O_CLOEXEC", 0)
        try:
            fd = os.open(self.path, flags, 0o666)
        except FileExistsError as e:
            raise StoreError(f"{self!r}: the file exists (mode 'x')") from e
        except OSError as e:
            raise StoreError(f"{self!r}: cannot create: {e.strerror or e}") from e
        try:
            os.write(fd, EMPTY_ARCHIVE)
        except OSError as e:
            os.close(fd)
            raise StoreError(f"{self!r}: cannot create: {e.strerror or e}") from e
        self._open_base(fd)

    def _open_base(self, fd: int) -> None:
        """Read the archive open as ``fd`` (taken over) as this store's base."""
        handle = Handle(fd)
        try:
            zf = zipfile.ZipFile(os.fdopen(os.dup(fd), "rb"), mode="r", allowZip64=True)
        except zipfile.BadZipFile as e:
            raise StoreError(f"{self!r}: not a zip file ({e})") from e
        except OSError as e:
            raise StoreError(f"{self!r}: cannot open: {e.strerror or e}") from e
        self._base, self._base_handle, self._base_ends = zf, handle, member_ends(zf)

    # -- reading -------------------------------------------------------------

    def _check_open(self) -> None:
        if self._closed:
            raise StoreError(f"{self!r} is closed")

    def _find(self, key: str) -> tuple[zipfile.ZipFile, Handle, zipfile.ZipInfo] | None:
        """The archive, descriptor and entry of ``key``'s current member (lock held)."""
        if self._stage is not None:
            info = self._stage.NameToInfo.get(key)
            if info is not None:
                return self._stage, self._stage_handle, info  # type: ignore[return-value]
        if self._base is None or key in self._deleted:
            return None
        info = self._base.NameToInfo.get(key)
        return None if info is None else (self._base, self._base_handle, info)  # type: ignore[return-value]

    def _locate(self, key: str) -> tuple[Handle, int, int] | tuple[zipfile.ZipFile, zipfile.ZipInfo] | None:
        """(file, offset, size) of a stored member's bytes, (archive, entry) of another member, or None."""
        with self._lock:
            self._check_open()
            span = self._spans.get(key)
            if span is not None:
                return span
            found = self._find(key)
            if found is None:
                return None
            zf, handle, info = found
            if info.compress_type != zipfile.ZIP_STORED or info.flag_bits & 0x1:
                return zf, info  # compressed or encrypted: zipfile decodes it
            header = pread(handle.fd, _LOCAL_HEADER.size, info.header_offset)
            if len(header) != _LOCAL_HEADER.size or header[:4] != _LOCAL_SIGNATURE:
                raise StoreError(
                    f"key {key!r} of {self!r}: corrupt local header at offset {info.header_offset}"
                )
            _, name_len, extra_len = _LOCAL_HEADER.unpack(header)
            span = (handle, info.header_offset + _LOCAL_HEADER.size + name_len + extra_len, info.file_size)
            self._spans[key] = span
            return span

    def _read_member(self, zf: zipfile.ZipFile, info: zipfile.ZipInfo) -> bytes:
        with self._lock:
            self._check_open()
            try:
                return zf.read(info)
            except _DECODE_ERRORS as e:
                raise StoreError(f"cannot read key {info.filename!r} of {self!r}: {e}") from e

    def _pread(self, handle: Handle, key: str, size: int, offset: int) -> bytes:
        data = read_exactly(handle.fd, size, offset)
        if len(data) != size:
            raise StoreError(f"key {key!r} of {self!r}: member truncated ({len(data)} of {size} bytes)")
        return data

    def get(self, key: str) -> bytes | None:
        """The bytes of member ``key`` (this store's own unflushed writes included), or None if absent."""
        found = self._locate(validate_key(key, self))
        if found is None:
            return None
        if len(found) == 2:
            return self._read_member(*found)
        handle, offset, size = found
        return self._pread(handle, key, size, offset)

    def snapshot(self, key: str) -> Snapshot | None:
        """Member ``key`` as it is now (see Snapshot), or None if absent.  A member's
        bytes are never overwritten (a rewrite stages a new member; a flush writes a new
        file), so a stored member is read in place through the descriptor of the file
        holding it, which the snapshot keeps open (its ``anchor``; token: that file and
        the member's offset and size); a compressed one is read whole."""
        found = self._locate(validate_key(key, self))
        if found is None:
            return None
        name = f"key {key!r} of {self!r}"
        if len(found) == 2:
            return BytesSnapshot(self._read_member(*found), name)
        handle, offset, size = found
        snap = FileSnapshot(handle.fd, size, ("zip", id(handle), offset, size), name, base=offset, owned=False)
        snap.anchor = handle
        return snap

    def get_range(self, key: str, start: int, length: int | None = None) -> bytes | None:
        """Bytes [start, start+length) of member ``key`` (see ``Store.get_range``)."""
        out = self.get_ranges(key, ((start, length),))
        return None if out is None else out[0]

    def get_ranges(self, key: str, ranges: Sequence[tuple[int, int | None]]) -> list[bytes] | None:
        """Several (start, length) ranges of member ``key``; None if absent."""
        validate_key(key, self)
        for start, length in ranges:
            check_range(start, length, key, self)
        found = self._locate(key)
        if found is None:
            return None
        if len(found) == 2:
            value = self._read_member(*found)
            return [value[slice(*clip_range(len(value), s, n))] for s, n in ranges]
        handle, offset, size = found
        out = []
        for start, length in ranges:
            begin, end = clip_range(size, start, length)
            out.append(self._pread(handle, key, end - begin, offset + begin))
        return out

    def size(self, key: str) -> int | None:
        """Uncompressed size of member ``key``, or None."""
        validate_key(key, self)
        with self._lock:
            self._check_open()
            found = self._find(key)
            return None if found is None else found[2].file_size

    def exists(self, key: str) -> bool:
        """True if member ``key`` exists."""
        validate_key(key, self)
        with self._lock:
            self._check_open()
            return self._find(key) is not None

    # -- writing -------------------------------------------------------------

    def set(self, key: str, value: Any) -> None:
        """Stage member ``key`` holding ``value`` (any buffer), replacing any member of
        that name when the archive is next written (see the class note)."""
        validate_key(key, self)
        self.check_writable("set", key)
        view = byte_view(value)
        with self._lock:
            self._check_open()
            self._write(key, view)

    def set_many(self, items: Any) -> None:
        """Stage one member per (key, value) of ``items``, under one lock (all checked first)."""
        self.check_writable("set", next(iter(items), ""))
        views = {validate_key(key, self): byte_view(value) for key, value in items.items()}
        with self._lock:
            self._check_open()
            for key, view in views.items():
                self._write(key, view)

    def _staging(self) -> zipfile.ZipFile:
        """The staged archive, made on first use: a temporary file in the zip file's
        directory, unnamed (Linux ``O_TMPFILE``) or removed at once where the system
        allows, so no kill leaves it behind."""
        if self._stage is None:
            try:
                f = tempfile.TemporaryFile(dir=os.path.dirname(self.path))  # noqa: SIM115 (kept open)
            except OSError as e:
                raise StoreError(f"{self!r}: cannot create a temporary file beside it: {e.strerror or e}") from e
            self._stage_handle = Handle(os.dup(f.fileno()))
            self._stage = zipfile.ZipFile(f, mode="w", compression=self.compression, allowZip64=True)
        return self._stage

    def _write(self, key: str, view: memoryview) -> None:
        # Called with the lock held.  An earlier staged member of the name is taken
        # out of NameToInfo first (zipfile would warn); a flush copies only the last.
        stage = self._staging()
        old = stage.NameToInfo.pop(key, None)
        self._spans.pop(key, None)
        info = zipfile.ZipInfo(key, date_time=time.localtime()[:6])
        info.compress_type = self.compression
        info.external_attr = 0o644 << 16
        info.file_size = view.nbytes
        try:
            with stage.open(info, mode="w") as f:
                f.write(view)
            stage.fp.flush()  # type: ignore[union-attr]  # visible to pread on the staged file's descriptor
        except BaseException as e:
            if old is not None and key not in stage.NameToInfo:
                stage.NameToInfo[key] = old
            if isinstance(e, (OSError, ValueError)):
                raise StoreError(f"cannot write key {key!r} of {self!r}: {e}") from e
            raise
        self._dirty = True

    def delete(self, key: str) -> None:
        """Remove member ``key`` (when the archive is next written); no error if absent."""
        validate_key(key, self)
        self.check_writable("delete", key)
        with self._lock:
            self._check_open()
            self._delete(key)

    def _delete(self, key: str) -> None:
        self._spans.pop(key, None)
        if self._stage is not None and self._stage.NameToInfo.pop(key, None) is not None:
            self._dirty = True
        if self._base is not None and key in self._base.NameToInfo and key not in self._deleted:
            self._deleted.add(key)
            self._dirty = True

    def delete_prefix(self, prefix: str) -> None:
        """Remove every member whose name starts with ``prefix`` (see ``delete``)."""
        self.check_writable("delete_prefix", prefix)
        with self._lock:
            for key in list(self.list_prefix(prefix)):
                self._delete(key)

    # -- listing -------------------------------------------------------------

    def list_prefix(self, prefix: str) -> Iterator[str]:
        """Every member name starting with ``prefix`` (directory entries and invalid names skipped)."""
        split_prefix(prefix, self)
        with self._lock:
            self._check_open()
            staged = self._stage.NameToInfo if self._stage is not None else {}
            names = list(staged)
            if self._base is not None:
                names += [n for n in self._base.NameToInfo if n not in staged and n not in self._deleted]
        return iter([n for n in names if n.startswith(prefix) and is_valid_key(n)])

    # -- lifetime and identity ----------------------------------------------

    def flush(self) -> None:
        """Write the archive with every change made so far, atomically: a complete new
        archive in a temporary file beside it, renamed over it (see the class note).
        Nothing to do when read only or unchanged.  Raises StoreError, the file on disk
        then still the old archive and the changes still pending."""
        with self._lock:
            self._check_open()
            if self.read_only or not self._dirty:
                return
            staged = self._stage.NameToInfo if self._stage is not None else {}
            members = []
            if self._base is not None:
                fd = self._base_handle.fd  # type: ignore[union-attr]
                kept = [i for n, i in self._base.NameToInfo.items() if n not in staged and n not in self._deleted]
                kept.sort(key=lambda i: i.header_offset)
                members += [(i, fd, self._base_ends[i.header_offset]) for i in kept]
            if self._stage is not None:
                fd, ends = self._stage_handle.fd, member_ends(self._stage)  # type: ignore[union-attr]
                members += [(i, fd, ends[i.header_offset]) for i in sorted(staged.values(),
                                                                          key=lambda i: i.header_offset)]
            try:
                comment = self._base.comment if self._base is not None else b""
                new = write_archive(self.path, members, repr(self), self._close_base, comment)
            except BaseException:
                if self._base is not None and self._base_handle.fd < 0:  # type: ignore[union-attr]
                    # closed for a rename (Windows) that failed: the archive is the old one
                    self._base.close()
                    self._base = self._base_handle = None
                    self._spans.clear()
                    self._open_base(self._open_read())
                raise
            self._release()
            self._open_base(new)
            self._dirty = False

    def _close_base(self) -> None:
        """Close this store's descriptors of the archive on disk (lock held; before
        the rename on Windows: a snapshot still reading it then fails)."""
        if self._base is not None:
            with contextlib.suppress(OSError):
                self._base.fp.close()  # type: ignore[union-attr]
            self._base_handle.close()  # type: ignore[union-attr]

    def _release(self) -> None:
        """Let go of the base and staged archives (lock held).  Their descriptors close
        when no snapshot holds them any more."""
        if self._stage is not None:
            f = self._stage.fp
            self._stage.fp = None  # a discarded stage needs no central directory
            with contextlib.suppress(OSError):
                f.close()  # type: ignore[union-attr]
        if self._base is not None:
            with contextlib.suppress(OSError):
                self._base.fp.close()  # type: ignore[union-attr]
            self._base.close()
        self._base = self._stage = self._base_handle = self._stage_handle = None
        self._base_ends = {}
        self._spans.clear()
        self._deleted.clear()

    def close(self) -> None:
        """Flush (writable modes) and close; idempotent.  If the flush fails, the store
        stays open (and its changes pending) and the error is raised."""
        with self._lock:
            if self._closed:
                return
            self.flush()
            self._closed = True
            handles = (self._base_handle, self._stage_handle)
            self._release()
            for handle in handles:
                if handle is not None:
                    handle.close()
        with _writers_lock:
            _writers.pop(id(self), None)

    def _close_if_owner(self) -> None:
        """``close`` in the process that opened the store; in a forked child (which
        inherited the store) nothing is written or closed."""
        if os.getpid() == self._pid:
            self.close()

    def __del__(self) -> None:
        with contextlib.suppress(Exception):  # interpreter shutdown, or __init__ failed
            self._close_if_owner()

    def __eq__(self, other: object) -> bool:
        return type(other) is type(self) and other.path == self.path

    def __hash__(self) -> int:
        return hash((type(self), self.path))

    def __repr__(self) -> str:
        return f"ZipStore({self.path!r})"

    def __getstate__(self) -> dict[str, Any]:
        if not self.read_only and not self._closed:
            raise StoreError(
                f"cannot pickle {self!r} while it is open for writing: an archive has one "
                "writer, and its changes are written when it is flushed or closed; close "
                "it first (it then reopens in mode 'a') or open it with mode='r'"
            )
        mode = "r" if self.read_only else "a"
        return {"path": self.path, "mode": mode, "compression": self.compression}

    def __setstate__(self, state: dict[str, Any]) -> None:
        type(self).__init__(self, state["path"], state["mode"], state["compression"])
