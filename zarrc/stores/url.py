"""Stores from URLs: which backend serves which scheme, and the open modes.

- plain paths and ``file://``: zarrc's LocalStore (ZipStore for ".zip"), as ``make_store``;
- ``s3://``, ``gs://``, ``gcs://``, ``az://``, ``abfs://``, ``http://``, ``https://``:
  obstore if it is installed, else fsspec (http(s) are read-only);
- ``memory://``, chained URLs (``simplecache::s3://...``, ``zip::...``) and any other
  fsspec protocol: fsspec;
- ``reference://``: kerchunk references, served by ``zarrc.stores.reference`` (see
  :func:`open_reference`).
"""

from __future__ import annotations

import re
from typing import Any

from zarrc.errors import ArgumentError, ArgumentTypeError, MissingDependencyError, ReadOnlyError, StoreError
from zarrc.stores.base import Store
from zarrc.stores.local import open_local
from zarrc.stores.remote import INSTALL_HINT, Backend, RemoteStore

OBSTORE_SCHEMES = {"s3", "s3a", "gs", "gcs", "az", "abfs", "abfss", "azure", "adl", "http", "https"}
MODES = ("r", "r+", "a", "w", "w-")
_URL = re.compile(r"^([A-Za-z][A-Za-z0-9+.-]+)(://|::)")


def url_scheme(obj: Any) -> str | None:
    """The scheme of ``obj`` if it is a URL string with one of at least two letters
    ("s3", "memory", "simplecache" of a chained URL; "file" too), else None (a plain
    path; "C:/data" is a path)."""
    if not isinstance(obj, str):
        return None
    found = _URL.match(obj)
    return found.group(1).lower() if found else None


def is_remote_url(obj: Any) -> bool:
    """True for a URL string that is not a ``file://`` URI (what ``store_from_url`` opens remotely)."""
    scheme = url_scheme(obj)
    return scheme is not None and scheme != "file"


def _have(module: str) -> bool:
    try:
        __import__(module)
    except ImportError:
        return False
    return True


def backend_from_url(url: str, storage_options: dict | None = None) -> Backend:
    """The backend for a remote ``url`` (see the module docstring).  Raises
    StoreError naming the package to install if neither obstore nor fsspec can
    serve it, or if the client refuses the URL or options."""
    scheme = url_scheme(url)
    if scheme is None or scheme == "file":
        raise ArgumentError(f"not a remote URL: {url!r}")
    if storage_options is not None and not isinstance(storage_options, dict):
        raise ArgumentTypeError(f"storage_options must be a dict, not {type(storage_options).__name__}")
    chained = "::" in url
    if scheme in OBSTORE_SCHEMES and not chained and _have("obstore"):
        from zarrc.stores.obstore_backend import open_obstore

        return open_obstore(url, storage_options)
    if not _have("fsspec"):
        raise MissingDependencyError(f"cannot open {url}: it needs obstore or fsspec: {INSTALL_HINT}")
    from zarrc.stores.fsspec_backend import open_fsspec

    return open_fsspec(url, storage_options)


def open_reference(url: str, mode: str, storage_options: dict | None) -> Store:
    """The store of a ``reference://`` URL (the references in ``storage_options["fo"]``)
    or of the path or URL of a references file:
    ``zarrc.stores.reference.open_reference_store``.  References are read-only: modes
    "r", "r+" and "a" open them (writes raise ReadOnlyError), "w" and "w-" raise
    ReadOnlyError, as for http(s) URLs."""
    if mode not in MODES:
        raise ArgumentError(f"mode must be one of {MODES}, got {mode!r}")
    if mode in ("w", "w-"):
        raise ReadOnlyError(f"cannot open {url} with mode {mode!r}: kerchunk references are read-only")
    from zarrc.stores import reference  # (pyarrow, fsspec: imported there when used)

    return reference.open_reference_store(url, "r", storage_options)


def store_from_url(url: str, mode: str = "a", storage_options: dict | None = None,
                   concurrency: int | None = None) -> Store:
    """The store for ``url`` opened with ``mode``: "r" read-only; "r+" / "a" as it
    is; "w" deletes every key under it first; "w-" requires it to hold none.

    Plain paths and ``file://`` URIs open the local stores (``storage_options``
    must then be empty: ArgumentTypeError, as zarr-python's TypeError).  A
    read-only protocol (http(s)) gives a read-only store; "w" / "w-" on it raise
    ReadOnlyError.  Raises ArgumentError for an unknown mode, StoreError when the
    URL cannot be opened or the mode not honoured.
    """
    if mode not in MODES:
        raise ArgumentError(f"mode must be one of {MODES}, got {mode!r}")
    if not is_remote_url(url):
        if storage_options:
            raise ArgumentTypeError(f"'storage_options' was provided but unused: {url!r} is a local path "
                                    "(storage_options are only used with remote URLs)")
        return open_local(url, mode)
    if url_scheme(url) == "reference":
        return open_reference(url, mode, storage_options)
    store = RemoteStore(backend_from_url(url, storage_options), read_only=mode == "r", concurrency=concurrency)
    if store.read_only and mode in ("w", "w-"):
        raise ReadOnlyError(f"cannot open {url} with mode {mode!r}: {store!r} is read-only")
    if mode == "w":
        store.delete_prefix("")
    elif mode == "w-" and next(store.list_prefix(""), None) is not None:
        raise StoreError(f"{store!r} is not empty (mode 'w-')")
    return store


def store_from_object(obj: Any, mode: str) -> Store | None:
    """A RemoteStore over an fsspec filesystem or mapper, an obstore store object or
    a zarr-python-3-like store object (read-only for mode "r" or a read-only
    object), or None if ``obj`` is none of these."""
    backend: Backend | None = None
    if type(obj).__module__.split(".")[0] == "obstore":
        from zarrc.stores.obstore_backend import ObstoreBackend

        backend = ObstoreBackend(obj)
    elif _fsspec_object(obj):
        from zarrc.stores.fsspec_backend import from_fsspec_object

        backend = from_fsspec_object(obj)
    else:
        from zarrc.stores.zarr_store_backend import ZarrStoreBackend, is_zarr_store_like

        if is_zarr_store_like(obj):
            backend = ZarrStoreBackend(obj)
    if backend is None:
        return None
    return RemoteStore(backend, read_only=mode == "r")


def _fsspec_object(obj: Any) -> bool:
    if "fsspec" not in __import__("sys").modules:
        return False
    from zarrc.stores.fsspec_backend import is_fsspec_object

    return is_fsspec_object(obj)
