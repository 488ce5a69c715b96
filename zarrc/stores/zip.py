"""ZipStore: keys as members of one zip file (the zipfile module)."""

from __future__ import annotations

import contextlib
import os
import struct
import threading
import time
import warnings
import zipfile
import zlib
from collections.abc import Iterator, Sequence
from typing import Any

from zarrc.errors import ArgumentError, StoreError, StoreNotFoundError
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

MODES = ("r", "w", "a", "x")
_LOCAL_HEADER = struct.Struct("<4s22xHH")  # signature, ..., file name length, extra field length
_LOCAL_SIGNATURE = b"PK\x03\x04"
_READ_FLAGS = os.O_RDONLY | getattr(os, "O_CLOEXEC", 0) | getattr(os, "O_BINARY", 0)


class ZipStore(Store):
    """A store in a zip file: key ``"a/b/c"`` is the member ``a/b/c``.

    Parameters
    ----------
    path : str or os.PathLike
        The zip file.
    mode : {"r", "w", "a", "x"}
        "r" read only; "w" create or truncate; "a" append (created if missing);
        "x" create, failing if the file exists.
    compression : int
        ``zipfile.ZIP_STORED`` (default) or another zipfile method for new members.

    Reads of stored (uncompressed) members are ``pread`` calls on the member's bytes,
    outside the lock, so many threads read at once and ``get_range`` reads only the
    range.  Compressed members are read through zipfile under the lock.

    Writing a key again appends a second member and emits a UserWarning (as
    zarr-python's ZipStore does, through zipfile): readers, zarrc's and zarr-python's,
    use the later member, and the file grows.  The zip format cannot remove members,
    so ``delete`` / ``delete_prefix`` of an existing key raise StoreError (an absent
    key is a no-op).  ``close()`` writes the central directory; until then the file
    is not a readable zip.  Do not close the store while other threads use it.
    """

    supports_deletes = False

    def __init__(
        self, path: str | os.PathLike, mode: str = "r", compression: int = zipfile.ZIP_STORED
    ) -> None:
        if mode not in MODES:
            raise ArgumentError(f"ZipStore mode must be one of {MODES}, got {mode!r}")
        self.path = os.path.abspath(os.fsdecode(os.fspath(path)))
        self.mode = mode
        self.read_only = mode == "r"
        self.compression = compression
        self._lock = threading.RLock()
        self._spans: dict[str, tuple[int, int]] = {}  # key -> (data offset, size) of stored members
        self._closed = True
        if mode == "a" and os.path.exists(self.path) and not zipfile.is_zipfile(self.path):
            raise StoreError(f"{self!r}: the file exists and is not a zip file (mode 'a')")
        try:
            self._zf = zipfile.ZipFile(self.path, mode=mode, compression=compression,  # type: ignore[call-overload]
                                       allowZip64=True)  # (mode checked above)
        except FileNotFoundError as e:
            raise StoreNotFoundError(f"{self!r}: the file does not exist (mode {mode!r})") from e
        except FileExistsError as e:
            raise StoreError(f"{self!r}: the file exists (mode 'x')") from e
        except zipfile.BadZipFile as e:
            raise StoreError(f"{self!r}: not a zip file ({e})") from e
        except OSError as e:
            raise StoreError(f"{self!r}: cannot open: {e.strerror or e}") from e
        self._fd = os.open(self.path, _READ_FLAGS)
        self._closed = False

    # -- reading -------------------------------------------------------------

    def _check_open(self) -> None:
        if self._closed:
            raise StoreError(f"{self!r} is closed")

    def _locate(self, key: str) -> tuple[int, int] | zipfile.ZipInfo | None:
        """(offset, size) of a stored member's bytes, the ZipInfo of another member, or None."""
        with self._lock:
            self._check_open()
            span = self._spans.get(key)
            if span is not None:
                return span
            try:
                info = self._zf.getinfo(key)
            except KeyError:
                return None
            if info.compress_type != zipfile.ZIP_STORED or info.flag_bits & 0x1:
                return info  # compressed or encrypted: zipfile decodes it
            header = pread(self._fd, _LOCAL_HEADER.size, info.header_offset)
            if len(header) != _LOCAL_HEADER.size or header[:4] != _LOCAL_SIGNATURE:
                raise StoreError(
                    f"key {key!r} of {self!r}: corrupt local header at offset {info.header_offset}"
                )
            _, name_len, extra_len = _LOCAL_HEADER.unpack(header)
            span = (info.header_offset + _LOCAL_HEADER.size + name_len + extra_len, info.file_size)
            self._spans[key] = span
            return span

    def _read_member(self, info: zipfile.ZipInfo) -> bytes:
        with self._lock:
            self._check_open()
            try:
                return self._zf.read(info)
            except (
                zipfile.BadZipFile,
                zlib.error,
                EOFError,
                OSError,
                RuntimeError,
                NotImplementedError,
            ) as e:
                raise StoreError(f"cannot read key {info.filename!r} of {self!r}: {e}") from e

    def _pread(self, key: str, size: int, offset: int) -> bytes:
        data = read_exactly(self._fd, size, offset)
        if len(data) != size:
            raise StoreError(f"key {key!r} of {self!r}: member truncated ({len(data)} of {size} bytes)")
        return data

    def get(self, key: str) -> bytes | None:
        """The bytes of member ``key``, or None if absent."""
        found = self._locate(validate_key(key, self))
        if found is None:
            return None
        if isinstance(found, zipfile.ZipInfo):
            return self._read_member(found)
        offset, size = found
        return self._pread(key, size, offset)

    def snapshot(self, key: str) -> Snapshot | None:
        """Member ``key`` as it is now (see Snapshot), or None if absent.  A member's
        bytes are never overwritten (a rewrite appends a new member), so a stored
        member is read in place through the store's descriptor (token: its offset
        and size); a compressed one is read whole."""
        found = self._locate(validate_key(key, self))
        if found is None:
            return None
        name = f"key {key!r} of {self!r}"
        if isinstance(found, zipfile.ZipInfo):
            return BytesSnapshot(self._read_member(found), name)
        offset, size = found
        return FileSnapshot(self._fd, size, ("zip", offset, size), name, base=offset, owned=False)

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
        if isinstance(found, zipfile.ZipInfo):
            value = self._read_member(found)
            return [value[slice(*clip_range(len(value), s, n))] for s, n in ranges]
        offset, size = found
        out = []
        for start, length in ranges:
            begin, end = clip_range(size, start, length)
            out.append(self._pread(key, end - begin, offset + begin))
        return out

    def size(self, key: str) -> int | None:
        """Uncompressed size of member ``key``, or None."""
        validate_key(key, self)
        with self._lock:
            self._check_open()
            info = self._zf.NameToInfo.get(key)
            return None if info is None else info.file_size

    def exists(self, key: str) -> bool:
        """True if member ``key`` exists."""
        validate_key(key, self)
        with self._lock:
            self._check_open()
            return key in self._zf.NameToInfo

    # -- writing -------------------------------------------------------------

    def set(self, key: str, value: Any) -> None:
        """Append member ``key`` holding ``value`` (any buffer); see the class note on rewrites."""
        validate_key(key, self)
        self.check_writable("set", key)
        view = byte_view(value)
        with self._lock:
            self._check_open()
            self._write(key, view)

    def set_many(self, items: Any) -> None:
        """Append one member per (key, value) of ``items``, under one lock (all checked first)."""
        self.check_writable("set", next(iter(items), ""))
        views = {validate_key(key, self): byte_view(value) for key, value in items.items()}
        with self._lock:
            self._check_open()
            for key, view in views.items():
                self._write(key, view)

    def _write(self, key: str, view: memoryview) -> None:
        # Called with the lock held.  The old entry is taken out of NameToInfo while
        # writing so that zipfile does not warn too; we warn once, with the store named.
        old = self._zf.NameToInfo.pop(key, None)
        if old is not None:
            warnings.warn(
                f"key {key!r} of {self!r} written again: a zip file cannot replace a member, so it "
                "keeps both and readers use the later one (the file grows)",
                UserWarning,
                stacklevel=3,
            )
        self._spans.pop(key, None)
        info = zipfile.ZipInfo(key, date_time=time.localtime()[:6])
        info.compress_type = self.compression
        info.external_attr = 0o644 << 16
        info.file_size = view.nbytes
        try:
            with self._zf.open(info, mode="w") as f:
                f.write(view)
            self._zf.fp.flush()  # make the bytes visible to pread on our own descriptor
        except BaseException as e:
            if old is not None and key not in self._zf.NameToInfo:
                self._zf.NameToInfo[key] = old
            if isinstance(e, (OSError, ValueError)):
                raise StoreError(f"cannot write key {key!r} of {self!r}: {e}") from e
            raise

    def delete(self, key: str) -> None:
        """No-op if ``key`` is absent; StoreError if present (zip cannot remove members)."""
        validate_key(key, self)
        self.check_writable("delete", key)
        if self.exists(key):
            raise StoreError(
                f"cannot delete key {key!r} of {self!r}: the zip format cannot remove members "
                "(write a new archive without it)"
            )

    def delete_prefix(self, prefix: str) -> None:
        """No-op if no key starts with ``prefix``; StoreError otherwise (see ``delete``)."""
        self.check_writable("delete_prefix", prefix)
        for key in self.list_prefix(prefix):
            raise StoreError(
                f"cannot delete prefix {prefix!r} of {self!r} (it holds {key!r}): the zip format "
                "cannot remove members (write a new archive without them)"
            )

    # -- listing -------------------------------------------------------------

    def list_prefix(self, prefix: str) -> Iterator[str]:
        """Every member name starting with ``prefix`` (directory entries and invalid names skipped)."""
        split_prefix(prefix, self)
        with self._lock:
            self._check_open()
            names = list(self._zf.NameToInfo)
        return iter([n for n in names if n.startswith(prefix) and is_valid_key(n)])

    # -- lifetime and identity ----------------------------------------------

    def close(self) -> None:
        """Write the central directory (writable modes) and close the file; idempotent."""
        with self._lock:
            if self._closed:
                return
            self._closed = True
            try:
                self._zf.close()
            finally:
                os.close(self._fd)

    def __del__(self) -> None:
        with contextlib.suppress(Exception):  # interpreter shutdown, or __init__ failed
            self.close()

    def __eq__(self, other: object) -> bool:
        return type(other) is type(self) and other.path == self.path

    def __hash__(self) -> int:
        return hash((type(self), self.path))

    def __repr__(self) -> str:
        return f"ZipStore({self.path!r})"

    def __getstate__(self) -> dict[str, Any]:
        if not self.read_only and not self._closed:
            raise StoreError(
                f"cannot pickle {self!r} while it is open for writing: a zip file has one writer "
                "and no central directory until close(); close it first (it then reopens in "
                "mode 'a') or open it with mode='r'"
            )
        mode = "r" if self.read_only else "a"
        return {"path": self.path, "mode": mode, "compression": self.compression}

    def __setstate__(self, state: dict[str, Any]) -> None:
        type(self).__init__(self, state["path"], state["mode"], state["compression"])
