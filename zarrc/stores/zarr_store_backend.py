"""The zarr-python store backend of RemoteStore: any object with zarr-python 3's
asynchronous store interface (``zarr.abc.store.Store``: ``get(key, prototype,
byte_range)``, ``set``, ``delete``, ``list_prefix``, ``getsize``, ``read_only``),
such as zarr-python's ``FsspecStore`` and ``ObjectStore``, Icechunk's
``session.store`` or VirtualiZarr's ``ManifestStore``.

zarr is imported only when such an object is given.  (zarr-python's LocalStore,
MemoryStore and ZipStore become native zarrc stores instead: ``zarr_python.py``.)
"""

from __future__ import annotations

import asyncio
import builtins
import copyreg
import inspect
from collections.abc import Sequence
from typing import Any

from zarrc.errors import ArgumentTypeError, StoreError
from zarrc.stores.remote import Backend, describe_error

_METHODS = ("get", "set", "delete", "list_prefix", "list_dir", "exists")
_DOCUMENTS = ("zarr.json", ".zarray", ".zgroup", ".zattrs", ".zmetadata")   # keys, never directories


def is_zarr_store_like(obj: Any) -> bool:
    """True if ``obj`` has zarr-python 3's store interface (an instance of
    ``zarr.abc.store.Store``, or an object with its coroutine methods and
    ``supports_writes``: Icechunk's, duck-typed without importing zarr)."""
    if type(obj).__module__.split(".")[0] == "zarr":
        from zarr.abc.store import Store as ZarrStore

        if isinstance(obj, ZarrStore):
            return True
    if not hasattr(obj, "supports_writes"):
        return False
    return all(callable(getattr(obj, name, None)) for name in _METHODS) and \
        inspect.iscoroutinefunction(obj.get)


def describe_store(store: Any) -> str:
    """A name for ``store`` in messages: its repr, unless that is object's default
    ("<icechunk.store.IcechunkStore object at 0x...>"); then its class, and for an
    Icechunk store its session's branch (or snapshot) and whether it is read-only."""
    text = repr(store)
    if getattr(type(store), "__repr__", None) is not object.__repr__:
        return text
    name = f"{type(store).__module__}.{type(store).__qualname__}"
    try:
        session = getattr(store, "session", None)
        if session is None:
            return name
        branch = getattr(session, "branch", None)
        where = f"branch {branch!r}" if branch else f"snapshot {getattr(session, 'snapshot_id', '?')}"
        return f"{name}({where}{', read-only' if getattr(session, 'read_only', False) else ''})"
    except Exception:  # noqa: BLE001  (a description must not fail)
        return name


class _Reduced:
    """Pickles as the reduction ``reduced`` of another object (so unpickles as that
    object; copyreg's ``__newobj__``, which pickle accepts only from the object
    itself, is replaced by a plain function doing the same)."""

    def __init__(self, reduced: Any) -> None:
        self.reduced = reduced

    def __reduce__(self) -> Any:
        reduced = self.reduced
        if isinstance(reduced, tuple) and reduced and reduced[0] is copyreg.__newobj__:  # type: ignore[attr-defined]
            return (_new, *reduced[1:])
        if isinstance(reduced, tuple) and reduced and reduced[0] is copyreg.__newobj_ex__:  # type: ignore[attr-defined]
            cls, args, kwargs = reduced[1]
            return (_new_ex, (cls, args, kwargs), *reduced[2:])
        return reduced


def _new(cls: type, *args: Any) -> Any:
    return cls.__new__(cls, *args)


def _new_ex(cls: type, args: tuple, kwargs: dict) -> Any:
    return cls.__new__(cls, *args, **kwargs)


class ZarrStoreBackend(Backend):
    """RemoteStore's backend over a zarr-python 3 store object (keys as it has them).

    No ETags (zarr's interface has no versions): snapshots are RangeSnapshots.
    Writable unless the store is ``read_only`` or does not ``supports_writes``.
    Pickles to the store object (zarr-python's stores pickle to their configuration).
    """

    etags = False

    def __init__(self, store: Any, url: str | None = None) -> None:
        if not is_zarr_store_like(store):
            raise ArgumentTypeError(f"not a zarr-python store: {type(store).__qualname__}")
        from zarr.abc.store import OffsetByteRequest, RangeByteRequest, SuffixByteRequest
        from zarr.core.buffer import default_buffer_prototype

        self.store = store
        self.url = url or describe_store(store)
        self.writable = bool(getattr(store, "supports_writes", True)) and not getattr(store, "read_only", False)
        self._prototype = default_buffer_prototype()
        self._requests = (RangeByteRequest, OffsetByteRequest, SuffixByteRequest)
        self._opened = False
        self._no_prefix_listing = False     # (set once the store's list_prefix is found missing)

    def __reduce_ex__(self, protocol: Any) -> tuple:
        # The store object's own reduction, taken here so that a store that refuses to
        # be pickled (Icechunk's writable sessions: only ``session.fork()``'s pickle)
        # fails with a StoreError naming it, not deep inside pickle.
        try:
            reduced = self.store.__reduce_ex__(protocol)
        except Exception as e:
            raise StoreError(f"cannot pickle the zarrc store over {self.url}: {describe_error(e)}") from e
        return (ZarrStoreBackend, (_Reduced(reduced), self.url))

    def describe(self) -> tuple[str, dict] | None:
        """None: this backend is described by its store object, not a URL."""
        return None

    async def _ready(self) -> Any:
        """The store, opened first if it is not (zarr-python's ``_open``)."""
        store = self.store
        if not self._opened:
            if not getattr(store, "_is_open", True) and hasattr(store, "_open"):
                try:
                    await store._open()
                except Exception:
                    if not getattr(store, "_is_open", True):
                        raise
            self._opened = True
        return store

    async def get(self, key: str, start: int | None = None, length: int | None = None,
                  suffix: int | None = None, if_match: str | None = None) -> Any:
        """See Backend.get: the store's get with a zarr byte request; ``if_match`` unsupported."""
        if if_match is not None:
            raise StoreError(f"{self.url}: zarr-python stores have no conditional reads")
        ranged, offset, suffixed = self._requests
        if suffix is not None:
            request: Any = suffixed(suffix)
        elif length is not None:
            request = ranged((start or 0), (start or 0) + length)
        elif start:
            request = offset(start)
        else:
            request = None
        store = await self._ready()
        found = await store.get(key, self._prototype, byte_range=request)
        return None if found is None else found.to_bytes()

    async def head(self, key: str) -> tuple[int, str | None] | None:
        """(size, None) from the store's getsize (exists first: getsize of a missing key
        raises in some stores), None if absent."""
        store = await self._ready()
        try:
            if not await store.exists(key):
                return None
        except KeyError:
            return None     # (Icechunk's exists raises KeyError for Zarr v2 keys: it holds v3 only)
        except NotImplementedError:
            pass            # (VirtualiZarr's ManifestStore: getsize, below, reads the value)
        fs, path = getattr(store, "fs", None), getattr(store, "path", None)
        if fs is not None and isinstance(path, str) and hasattr(fs, "_info"):
            # (zarr-python's FsspecStore: ``exists`` is also true of a directory)
            try:
                info = await fs._info(f"{path.rstrip('/')}/{key}")
            except FileNotFoundError:
                return None
            return (int(info.get("size") or 0), None) if info.get("type", "file") == "file" else None
        try:
            return int(await store.getsize(key)), None
        except (FileNotFoundError, KeyError):
            return None

    async def put(self, key: str, data: Any, if_match: str | None = None, create: bool = False) -> None:
        """The store's set (not conditional: StoreError if asked to be)."""
        if if_match is not None or create:
            raise StoreError(f"{self.url}: zarr-python stores have no conditional writes")
        store = await self._ready()
        await store.set(key, self._prototype.buffer.from_bytes(bytes(data)))

    async def delete(self, key: str) -> None:
        """The store's delete; absent is no error."""
        store = await self._ready()
        try:
            await store.delete(key)
        except (FileNotFoundError, KeyError):
            pass

    async def delete_many(self, keys: Sequence[str]) -> None:
        for key in keys:
            await self.delete(key)

    async def _prefix_keys(self, prefix: str) -> builtins.list[str] | None:
        """The store's list_prefix, or None if it has none (NotImplementedError:
        VirtualiZarr's ManifestStore lists only directories)."""
        if self._no_prefix_listing:
            return None
        store = await self._ready()
        try:
            return [key async for key in store.list_prefix(prefix)]
        except NotImplementedError:
            self._no_prefix_listing = True
            return None

    async def list(self, prefix: str) -> list[str]:
        """Every key under the directory ``prefix`` (the store's list_prefix; without
        one, a walk of its list_dir)."""
        keys = await self._prefix_keys(prefix)
        if keys is not None:
            return keys
        found, dirs = await self._dir_entries(prefix)
        out = [prefix + name for name in found]
        for name in dirs:
            out += await self.list(f"{prefix}{name}/")
        return out

    async def list_dir(self, prefix: str) -> tuple[builtins.list[str], builtins.list[str]]:
        """(keys, child directories) directly under ``prefix``: from list_prefix, or
        from the store's list_dir where it cannot list by prefix."""
        if self._no_prefix_listing or await self._prefix_keys(prefix) is None:
            return await self._dir_entries(prefix)
        return await super().list_dir(prefix)

    async def _dir_entries(self, prefix: str) -> tuple[builtins.list[str], builtins.list[str]]:
        """zarr-python's ``list_dir(prefix)`` (names of keys and child directories alike)
        split in two: a name with something listed under it is a directory."""
        store = await self._ready()
        names = [name async for name in store.list_dir(prefix)]

        async def is_dir(name: str) -> bool:
            if name.endswith("/"):
                return True
            if name in _DOCUMENTS:
                return False
            try:
                async for _ in store.list_dir(f"{prefix}{name}/"):
                    return True
            except NotImplementedError:
                return True     # (ManifestStore lists no array whose chunk keys use "/": a node)
            return False

        kinds = await asyncio.gather(*(is_dir(name) for name in names))
        keys = sorted(name for name, d in zip(names, kinds) if not d)
        return keys, sorted(name.rstrip("/") for name, d in zip(names, kinds) if d)
