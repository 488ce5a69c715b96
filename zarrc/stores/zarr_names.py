"""zarr-python's remote store classes under their names and constructor arguments,
as RemoteStores: ``FsspecStore`` (an fsspec filesystem; ``from_url``,
``from_mapper``) and ``ObjectStore`` (an obstore store object).  ``zarrc.storage``
gives them on first use (this module imports asyncio through the remote stores)."""

from __future__ import annotations

from typing import Any

from zarrc.stores.remote import RemoteStore, rebuild

_ALLOWED = (FileNotFoundError, IsADirectoryError, NotADirectoryError)


class FsspecStore(RemoteStore):
    """zarr-python's ``FsspecStore``: a RemoteStore over the fsspec filesystem ``fs``
    (synchronous or asynchronous) at ``path``.  ``allowed_exceptions`` is taken for
    zarr-python's signature (zarrc reads FileNotFoundError and IsADirectoryError as
    absent keys; anything else is a StoreError).  Raises StoreError if fsspec is missing."""

    def __init__(self, fs: Any, read_only: bool = False, path: str = "/",
                 allowed_exceptions: tuple[type[Exception], ...] = _ALLOWED) -> None:
        from zarrc.stores.fsspec_backend import from_fsspec_object

        super().__init__(from_fsspec_object(fs, path if path not in ("", "/") else ""), read_only=read_only)
        self.allowed_exceptions = allowed_exceptions

    @classmethod
    def from_url(cls, url: str, storage_options: dict | None = None,
                 read_only: bool = False,
                 allowed_exceptions: tuple[type[Exception], ...] = _ALLOWED) -> FsspecStore:
        """The store on the fsspec URL ``url`` (chained URLs too) with ``storage_options``."""
        from zarrc.stores.fsspec_backend import open_fsspec

        store = rebuild(cls, open_fsspec(url, storage_options), read_only, None)
        store.allowed_exceptions = allowed_exceptions       # type: ignore[attr-defined]
        return store  # type: ignore[return-value]

    @classmethod
    def from_mapper(cls, fs_map: Any, read_only: bool = False,
                    allowed_exceptions: tuple[type[Exception], ...] = _ALLOWED) -> FsspecStore:
        """The store on an fsspec mapper's filesystem and root."""
        from zarrc.stores.fsspec_backend import from_fsspec_object

        store = rebuild(cls, from_fsspec_object(fs_map), read_only, None)
        store.allowed_exceptions = allowed_exceptions       # type: ignore[attr-defined]
        return store  # type: ignore[return-value]

    @property
    def fs(self) -> Any:
        """The fsspec filesystem."""
        return self.backend.fs  # type: ignore[attr-defined]

    @property
    def path(self) -> str:
        """The root path in the filesystem."""
        return self.backend.root  # type: ignore[attr-defined]


class ObjectStore(RemoteStore):
    """zarr-python's ``ObjectStore``: a RemoteStore over an obstore store object
    (``obstore.store.S3Store``, ``GCSStore``, ``AzureStore``, ``HTTPStore``,
    ``LocalStore``, ``MemoryStore``).  Raises StoreError if obstore is missing."""

    def __init__(self, store: Any, *, read_only: bool = False) -> None:
        from zarrc.stores.obstore_backend import ObstoreBackend

        super().__init__(ObstoreBackend(store), read_only=read_only)

    @property
    def store(self) -> Any:
        """The obstore store object."""
        return self.backend.store  # type: ignore[attr-defined]
