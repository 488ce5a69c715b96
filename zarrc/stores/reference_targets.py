"""The files kerchunk references point into: byte ranges of local files (``pread`` on
descriptors kept open, a bounded LRU) and of remote ones (fsspec).

``Targets`` is the one door the reference store reads through: ``read(url, start,
end)``, ``read_many(requests)``, ``size(url)``; a later remote store of zarrc's own
can take fsspec's place behind ``RemoteFiles`` without the store changing.
Failures are ``TargetError``, which the store rewords with the reference's key.
"""

from __future__ import annotations

import contextlib
import os
import threading
from collections import OrderedDict
from collections.abc import Sequence
from typing import Any

from zarrc.errors import MissingDependencyError
from zarrc.stores.base import read_exactly

_READ_FLAGS = os.O_RDONLY | getattr(os, "O_CLOEXEC", 0) | getattr(os, "O_BINARY", 0)
_LOCAL_SCHEMES = ("file://", "local://")
EXTRA_HINT = "install zarrc[remote]"


class TargetError(Exception):
    """A target file is missing, unreadable, or shorter than a referenced range."""


def require(module: str, purpose: str) -> Any:
    """The module ``module`` imported; ImportError naming the ``remote`` extra if it is
    not installed."""
    import importlib

    try:
        return importlib.import_module(module)
    except ImportError as e:
        raise MissingDependencyError(f"{purpose} needs {module}: {EXTRA_HINT}") from e


class Handle:
    """An open read descriptor of a target file and its identity (device, inode,
    size, mtime); closed when its last holder (the cache, readers, snapshots)
    releases it."""

    __slots__ = ("_holders", "_lock", "fd", "ident", "size")

    def __init__(self, fd: int, st: os.stat_result) -> None:
        self.fd = fd
        self.size = st.st_size
        self.ident = (st.st_dev, st.st_ino, st.st_size, st.st_mtime_ns)
        self._holders = 1
        self._lock = threading.Lock()

    def acquire(self) -> bool:
        """One more holder; False if the descriptor is already closed."""
        with self._lock:
            if self._holders == 0:
                return False
            self._holders += 1
            return True

    def release(self) -> None:
        """One holder fewer; the last one closes the descriptor."""
        with self._lock:
            self._holders -= 1
            fd = self.fd if self._holders == 0 else -1
        if fd >= 0:
            self.fd = -1
            with contextlib.suppress(OSError):
                os.close(fd)


def local_path(url: str | None, remote_protocol: str | None) -> str | None:
    """The local path a target URL names (a plain path, ``file://``, ``local://``),
    or None for a remote URL.  A path without a scheme is remote when
    ``remote_protocol`` names a remote protocol (as fsspec's references read it)."""
    if url is None:
        return None
    for scheme in _LOCAL_SCHEMES:
        if url.startswith(scheme):
            return url[len(scheme):]
    if "://" in url or "::" in url:
        return None
    if remote_protocol not in (None, "file", "local"):
        return None
    return url


class LocalFiles:
    """Positioned reads of local target files through descriptors kept open (at most
    ``max_open``, least recently used closed first).  A file's identity is checked
    on every open from the cache: a replaced file is opened anew."""

    def __init__(self, max_open: int = 128) -> None:
        self.max_open = max(1, max_open)
        self._open: OrderedDict[str, Handle] = OrderedDict()
        self._lock = threading.Lock()

    def handle(self, path: str) -> Handle:
        """The file at ``path`` held open (the caller releases it).  Raises
        TargetError if it is missing or cannot be opened."""
        try:
            st = os.stat(path)
        except OSError as e:
            raise TargetError(f"target file {path!r}: {e.strerror}") from None
        ident = (st.st_dev, st.st_ino, st.st_size, st.st_mtime_ns)
        with self._lock:
            handle = self._open.get(path)
            if handle is not None and handle.ident == ident and handle.acquire():
                self._open.move_to_end(path)
                return handle
        try:
            fd = os.open(path, _READ_FLAGS)
        except OSError as e:
            raise TargetError(f"target file {path!r}: {e.strerror}") from None
        try:
            handle = Handle(fd, os.fstat(fd))
        except OSError as e:
            os.close(fd)
            raise TargetError(f"target file {path!r}: {e.strerror}") from None
        handle.acquire()  # (one for the cache, one for the caller)
        evicted = []
        with self._lock:
            old = self._open.pop(path, None)
            if old is not None:
                evicted.append(old)
            self._open[path] = handle
            while len(self._open) > self.max_open:
                evicted.append(self._open.popitem(last=False)[1])
        for h in evicted:
            h.release()
        return handle

    def read(self, path: str, start: int, end: int | None) -> bytes:
        """Bytes [start, end) of the file (``end`` None: to its end).  Raises
        TargetError if the range lies past the end of the file."""
        handle = self.handle(path)
        try:
            return read_held(handle, path, start, end)
        finally:
            handle.release()

    def size(self, path: str) -> int:
        """The file's size; TargetError if it is missing."""
        try:
            return os.stat(path).st_size
        except OSError as e:
            raise TargetError(f"target file {path!r}: {e.strerror}") from None

    def close(self) -> None:
        """Close the cached descriptors (those still held by snapshots close with them)."""
        with self._lock:
            handles = list(self._open.values())
            self._open.clear()
        for h in handles:
            h.release()


def read_held(handle: Handle, path: str, start: int, end: int | None, claimed: int | None = None) -> bytes:
    """Bytes [start, end) of an open target file (see LocalFiles.read); TargetError
    also if ``claimed`` (the end of the whole referenced range) lies past its end."""
    end = handle.size if end is None else end
    if max(end, claimed or 0) > handle.size:
        raise TargetError(f"the range ends at {max(end, claimed or 0)}, past the end of target file "
                          f"{path!r} ({handle.size} bytes)")
    if end <= start:
        return b""
    try:
        data = read_exactly(handle.fd, end - start, start)
    except OSError as e:
        raise TargetError(f"cannot read target file {path!r}: {e.strerror}") from None
    if len(data) != end - start:
        raise TargetError(f"target file {path!r} was truncated: {len(data)} of {end - start} bytes "
                          f"at {start}")
    return data


class RemoteFiles:
    """Reads of remote target files through fsspec: one filesystem per protocol,
    made on first use with ``options`` (fsspec's ``remote_options``); URLs without a
    protocol go to ``default_protocol``."""

    def __init__(self, default_protocol: str | None, options: dict | None) -> None:
        self.default_protocol = default_protocol
        self.options = dict(options or {})
        self._fs: dict[str, Any] = {}
        self._lock = threading.Lock()

    def filesystem(self, url: str) -> Any:
        """The fsspec filesystem for ``url``'s protocol.  ImportError without fsspec."""
        fsspec = require("fsspec", f"reading the remote target {url!r}")
        protocol = url.split("::", 1)[0].split("://", 1)[0] if "://" in url else self.default_protocol
        protocol = protocol or "file"
        with self._lock:
            fs = self._fs.get(protocol)
            if fs is None:
                try:
                    fs = self._fs[protocol] = fsspec.filesystem(protocol, **self.options)
                except (ImportError, ValueError) as e:
                    raise TargetError(f"no filesystem for protocol {protocol!r} of {url!r}: {e} "
                                      f"({EXTRA_HINT})") from e
        return fs

    def read_many(self, requests: Sequence[tuple[str, int, int | None]]) -> list[bytes | TargetError]:
        """For each (url, start, end): those bytes, or a TargetError (missing file,
        range past its end); fetched concurrently (fsspec's ``cat_ranges``)."""
        out: list[bytes | TargetError] = [TargetError("not read")] * len(requests)
        groups: dict[int, list[int]] = {}
        filesystems: dict[int, Any] = {}
        for i, (url, _, _) in enumerate(requests):
            fs = self.filesystem(url)
            filesystems[id(fs)] = fs
            groups.setdefault(id(fs), []).append(i)
        for fid, idx in groups.items():
            fs = filesystems[fid]
            urls = [requests[i][0] for i in idx]
            starts = [requests[i][1] for i in idx]
            ends = [requests[i][2] for i in idx]
            try:
                blobs = fs.cat_ranges(urls, starts, ends, on_error="return")
            except Exception as e:  # noqa: BLE001  (any failure of the transport)
                blobs = [e] * len(idx)
            for i, blob in zip(idx, blobs):
                out[i] = _checked(requests[i], blob)
        return out

    def size(self, url: str) -> int:
        """The size of the remote file; TargetError if it cannot be found."""
        try:
            size = self.filesystem(url).size(url)
        except Exception as e:  # noqa: BLE001
            raise TargetError(f"target {url!r}: {_describe(e)}") from None
        if size is None:
            raise TargetError(f"target {url!r}: its size is unknown")
        return int(size)


def _describe(e: BaseException) -> str:
    if isinstance(e, FileNotFoundError):
        return "not found"
    return f"{type(e).__name__}: {e}"


def _checked(request: tuple[str, int, int | None], blob: Any) -> bytes | TargetError:
    """A fetched blob as bytes, or the TargetError it amounts to (an exception, or
    fewer bytes than the range asked for: the range lies past the end)."""
    url, start, end = request
    if isinstance(blob, BaseException):
        return TargetError(f"cannot read target {url!r} bytes [{start}, {end}): {_describe(blob)}")
    data = bytes(blob)
    if end is not None and len(data) != end - start:
        return TargetError(f"bytes [{start}, {end}) lie past the end of target {url!r} "
                           f"({len(data)} bytes returned)")
    return data


class Targets:
    """Local and remote target files behind one interface (see the module)."""

    def __init__(self, remote_protocol: str | None = None, remote_options: dict | None = None,
                 max_open: int = 128) -> None:
        self.remote_protocol = remote_protocol
        self.local = LocalFiles(max_open)
        self.remote = RemoteFiles(remote_protocol, remote_options)

    def path(self, url: str) -> str | None:
        """The local path of ``url``, or None if it is remote."""
        return local_path(url, self.remote_protocol)

    def read(self, url: str, start: int, end: int | None) -> bytes:
        """Bytes [start, end) of the target (``end`` None: to its end).  Raises
        TargetError."""
        path = self.path(url)
        if path is not None:
            return self.local.read(path, start, end)
        result = self.remote.read_many([(url, start, end)])[0]
        if isinstance(result, TargetError):
            raise result
        return result

    def read_many(self, requests: Sequence[tuple]) -> list[bytes | TargetError]:
        """For each (url, start, end[, claimed end]) its bytes or its TargetError
        (``claimed``: where the whole referenced range ends, checked against a local
        file's size): local files read in turn (one open per file), remote ones
        fetched concurrently."""
        out: list[bytes | TargetError] = [b""] * len(requests)
        remote: list[int] = []
        by_path: dict[str, list[int]] = {}
        for i, request in enumerate(requests):
            path = self.path(request[0])
            if path is None:
                remote.append(i)
            else:
                by_path.setdefault(path, []).append(i)
        for path, idx in by_path.items():
            try:
                handle = self.local.handle(path)
            except TargetError as e:
                for i in idx:
                    out[i] = e
                continue
            try:
                for i in idx:
                    try:
                        out[i] = read_held(handle, path, *requests[i][1:4])
                    except TargetError as e:
                        out[i] = e
            finally:
                handle.release()
        if remote:
            for i, blob in zip(remote, self.remote.read_many([tuple(requests[i][:3]) for i in remote])):
                out[i] = blob
        return out

    def size(self, url: str) -> int:
        """The size of the whole target file.  Raises TargetError."""
        path = self.path(url)
        return self.local.size(path) if path is not None else self.remote.size(url)

    def close(self) -> None:
        """Close the cached descriptors."""
        self.local.close()
