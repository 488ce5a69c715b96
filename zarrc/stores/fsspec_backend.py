"""The fsspec backend of RemoteStore: any fsspec filesystem (``pip install fsspec``;
imported when first used).

:func:`open_fsspec` takes an fsspec URL (``memory://``, ``s3://`` through s3fs,
chained URLs such as ``simplecache::s3://...`` or ``zip::memory://a.zip``) and
storage options; :func:`from_fsspec_object` an fsspec filesystem (with a root
path) or a mapper (``fsspec.get_mapper(...)``: its ``fs`` and ``root``).  An
asynchronous filesystem's coroutines (``_cat_file``, ``_pipe_file``, ``_info``,
``_find``, ``_ls``, ``_rm_file``) run on fsspec's own loop, which its sessions
belong to; a synchronous one's calls run in threads.
"""

from __future__ import annotations

import asyncio
import builtins
from collections.abc import Sequence
from typing import Any

from zarrc.errors import ArgumentTypeError, MissingDependencyError, StoreError
from zarrc.stores.remote import (
    INSTALL_HINT,
    Backend,
    deadline_of,
    pop_timeouts,
)

READ_ONLY_PROTOCOLS = {"http", "https", "reference", "github", "zip", "tar", "libarchive"}


def import_fsspec() -> Any:
    """The fsspec module; StoreError naming the extra to install if it is missing."""
    try:
        import fsspec  # type: ignore[import-untyped,unused-ignore]
    except ImportError:
        raise MissingDependencyError(f"fsspec URLs need fsspec: {INSTALL_HINT}") from None
    return fsspec


def _protocols(fs: Any) -> set[str]:
    protocol = fs.protocol
    return set(protocol) if isinstance(protocol, (tuple, list)) else {protocol}


def open_fsspec(url: str, storage_options: dict | None = None) -> FsspecBackend:
    """An FsspecBackend on the fsspec URL ``url`` (fsspec.core.url_to_fs), its
    filesystem made with ``storage_options`` less zarrc's ``timeout``,
    ``connect_timeout`` and ``max_retries``.  Raises StoreError if fsspec (or the
    protocol's package) is missing or refuses the URL."""
    fsspec = import_fsspec()
    options = dict(storage_options or {})
    timeout, connect, retries = pop_timeouts(options)
    try:
        fs, path = fsspec.core.url_to_fs(url, **options)
    except ImportError as e:
        raise StoreError(f"cannot open {url}: {e} ({INSTALL_HINT}, and the protocol's package)") from e
    except Exception as e:
        raise StoreError(f"cannot open {url} with fsspec: {type(e).__name__}: {e}") from e
    backend = FsspecBackend(fs, path, url=url.rstrip("/"))
    backend.deadline = deadline_of(timeout, connect, retries)
    backend.description = (url, dict(storage_options or {}))
    return backend


def is_fsspec_object(obj: Any) -> bool:
    """True for an fsspec filesystem or mapper (its class comes from an fsspec-based package)."""
    for cls in type(obj).__mro__:
        if cls.__module__.startswith("fsspec.") and cls.__name__ in ("AbstractFileSystem", "FSMap"):
            return True
    return False


def from_fsspec_object(obj: Any, root: str = "") -> FsspecBackend:
    """An FsspecBackend on an fsspec filesystem (at ``root``) or mapper (at its root).
    Raises ArgumentTypeError for anything else."""
    fsspec = import_fsspec()
    if isinstance(obj, fsspec.FSMap):
        return FsspecBackend(obj.fs, obj.root)
    if isinstance(obj, fsspec.AbstractFileSystem):
        return FsspecBackend(obj, obj._strip_protocol(root) if root else "")
    raise ArgumentTypeError(f"not an fsspec filesystem or mapper: {type(obj).__qualname__}")


class FsspecBackend(Backend):
    """RemoteStore's backend over an fsspec filesystem, keys under ``root``.

    No ETags (fsspec reads cannot be made conditional): snapshots are
    ``RangeSnapshot``s.  Read-only for http(s), zip, tar and reference
    filesystems.  Pickles to its URL and options if opened from a URL, else to the
    filesystem object and root (fsspec pickles filesystems to their arguments).
    """

    etags = False

    def __init__(self, fs: Any, root: str, url: str | None = None, writable: bool | None = None) -> None:
        self.fs = fs
        self.root = root.rstrip("/")
        protocols = _protocols(fs)
        self.url = url or f"{min(protocols)}://{self.root.lstrip('/')}"
        self.writable = not (protocols & READ_ONLY_PROTOCOLS) if writable is None else writable
        self.description: tuple[str, dict] | None = None

    def __reduce__(self) -> tuple:
        if self.description is not None:
            return (open_fsspec, self.description)
        return (FsspecBackend, (self.fs, self.root, self.url, self.writable))

    def describe(self) -> tuple[str, dict] | None:
        """(url, storage options) this backend was opened with, or None (made from an object)."""
        return self.description

    def _path(self, key: str) -> str:
        return f"{self.root}/{key}" if self.root else key

    def _key(self, path: str) -> str | None:
        """The key of a path the filesystem listed (None: not under the root)."""
        path = path.rstrip("/")
        if not self.root:
            return path.lstrip("/") or None
        base = self.root + "/"
        return path[len(base):] if path.startswith(base) else None

    async def _call(self, name: str, *args: Any, **kwargs: Any) -> Any:
        """The filesystem's method ``name`` (its coroutine ``_name`` on its own loop
        if it has one, else the synchronous call in a thread)."""
        fs = self.fs
        method = getattr(fs, "_" + name, None) if getattr(fs, "async_impl", False) else None
        if method is None:
            return await asyncio.to_thread(getattr(fs, name), *args, **kwargs)
        if getattr(fs, "asynchronous", False):
            return await method(*args, **kwargs)
        return await asyncio.wrap_future(asyncio.run_coroutine_threadsafe(method(*args, **kwargs), fs.loop))

    async def get(self, key: str, start: int | None = None, length: int | None = None,
                  suffix: int | None = None, if_match: str | None = None) -> Any:
        """See Backend.get (cat_file with start / end); ``if_match`` is not supported."""
        if suffix is not None:
            start, end = -suffix, None
        else:
            end = None if length is None else (start or 0) + length
        try:
            return await self._call("cat_file", self._path(key), start=start, end=end)
        except (FileNotFoundError, IsADirectoryError):
            return None

    async def head(self, key: str) -> tuple[int, str | None] | None:
        """(size, None) from the filesystem's info, None if absent or a directory."""
        try:
            info = await self._call("info", self._path(key))
        except (FileNotFoundError, IsADirectoryError):
            return None
        if info.get("type", "file") != "file":
            return None
        return int(info.get("size") or 0), None

    async def put(self, key: str, data: Any, if_match: str | None = None, create: bool = False) -> None:
        """pipe_file (not conditional: StoreError if asked to be)."""
        if if_match is not None or create:
            raise StoreError(f"fsspec filesystem {self.url}: no conditional writes")
        await self._call("pipe_file", self._path(key), bytes(data))

    async def delete(self, key: str) -> None:
        """rm_file; absent is no error."""
        try:
            await self._call("rm_file", self._path(key))
        except FileNotFoundError:
            pass

    async def delete_many(self, keys: Sequence[str]) -> None:
        """rm of all the paths at once, or one by one if that fails on an absent one."""
        try:
            await self._call("rm", [self._path(key) for key in keys])
        except FileNotFoundError:
            for key in keys:
                await self.delete(key)

    async def list(self, prefix: str) -> builtins.list[str]:
        """Every key under ``prefix`` (find)."""
        where = self._path(prefix.rstrip("/")) if prefix else self.root
        try:
            paths = await self._call("find", where or "/")
        except FileNotFoundError:
            return []
        keys = (self._key(path) for path in paths)
        return [key for key in keys if key is not None and key.startswith(prefix)]

    async def list_dir(self, prefix: str) -> tuple[builtins.list[str], builtins.list[str]]:
        """(key names, directory names) directly under ``prefix`` (ls with details)."""
        where = self._path(prefix.rstrip("/")) if prefix else self.root
        try:
            entries = await self._call("ls", where or "/", detail=True)
        except (FileNotFoundError, NotADirectoryError):
            return [], []
        keys: set[str] = set()
        dirs: set[str] = set()
        for entry in entries:
            key = self._key(entry["name"])
            if key is None or not key.startswith(prefix) or "/" in key[len(prefix):]:
                continue
            (dirs if entry.get("type") == "directory" else keys).add(key[len(prefix):])
        return sorted(keys), sorted(dirs)
