"""Stores: where keys and their bytes live (local directory, memory, zip).

Every store has the synchronous, thread-safe interface of :class:`Store`:
``get``, ``get_range``, ``get_many``, ``get_ranges``, ``set``, ``set_many``,
``delete``, ``delete_prefix``, ``exists``, ``list``, ``list_prefix``, ``list_dir``,
``local_path`` and ``close``.  :func:`make_store` turns what a user passes to
``zarrc.open`` (a path, a dict, a store) into a store.
"""

from __future__ import annotations

import os
from typing import TYPE_CHECKING, Any

from zarrc.errors import ArgumentError, ArgumentTypeError, StoreError
from zarrc.stores.base import Store, validate_key
from zarrc.stores.local import ZIP_MODES, LocalStore, local_path_of, open_local
from zarrc.stores.memory import MemoryStore
from zarrc.stores.zarr_python import from_zarr_python, is_zarr_python_store

if TYPE_CHECKING:
    from zarrc.stores.zip import ZipStore

__all__ = ["LocalStore", "MemoryStore", "Store", "ZipStore", "make_store", "names_references", "validate_key"]



def __getattr__(name: str) -> Any:
    # ZipStore (and zipfile, which it imports) is imported when first used, not by
    # `import zarrc`.
    if name == "ZipStore":
        from zarrc.stores.zip import ZipStore

        return ZipStore
    raise AttributeError(f"module 'zarrc.stores' has no attribute {name!r}")


def make_store(obj: Any, mode: str = "a", storage_options: dict | None = None) -> Store:
    """The store for ``obj``, opened with ``mode`` ("r", "r+", "a", "w", "w-").

    - str / os.PathLike: a :class:`LocalStore` on that directory, or a
      :class:`ZipStore` if the path ends in ".zip"; ``file://`` URIs are accepted.
    - a URL string (``s3://``, ``gs://``, ``az://``, ``http(s)://``, ``memory://``,
      chained fsspec URLs...): a :class:`~zarrc.stores.remote.RemoteStore` opened
      with ``storage_options`` (:func:`zarrc.stores.url.store_from_url`).
    - ``reference://`` (the references in ``storage_options["fo"]``), or a URL or
      local path of a ".json" file (not ``zarr.json``): kerchunk references, a
      read-only :class:`~zarrc.stores.reference.ReferenceStore` (fsspec's
      ReferenceFileSystem options as ``storage_options``; :func:`names_references`).
    - dict: a :class:`MemoryStore` over that very dict ("r": read only; "w" clears
      it; "w-" requires it empty).
    - None: a new, empty :class:`MemoryStore`.
    - a :class:`Store`: itself.
    - zarr-python's LocalStore, MemoryStore (over the same dict) or ZipStore: the
      zarrc store over the same data, with its ``read_only``
      (:func:`zarrc.stores.zarr_python.from_zarr_python`); any other zarr-python
      store, or an object with its interface (Icechunk's), an fsspec filesystem or
      mapper, an obstore store: a RemoteStore over it.

    A store opened here has ``opened_by_zarrc`` set: ``Array.close`` / ``Group.close``
    (and a node's ``with`` block) close it.

    Raises ArgumentTypeError (a TypeError) for any other type, or for
    ``storage_options`` given with anything but a remote URL (as zarr-python);
    ArgumentError (a ValueError) for an unknown mode; StoreError when the mode
    cannot be honoured (e.g. "r" on a missing directory) or a URL cannot be opened.
    """
    if mode not in ZIP_MODES:
        raise ArgumentError(f"mode must be one of {tuple(ZIP_MODES)}, got {mode!r}")
    if storage_options and not _is_remote_url(obj) and not names_references(obj):
        raise ArgumentTypeError("'storage_options' was provided but unused: storage_options are only used "
                                f"when the store is a remote URL, not {type(obj).__name__} {obj!r:.80}")
    if isinstance(obj, Store):
        return obj
    store = _new_store(obj, mode, storage_options)
    store.opened_by_zarrc = True  # (closed by ``close()`` of the nodes opened on it)
    return store


def names_references(obj: Any) -> bool:
    """True if ``obj`` is a string naming kerchunk references, which ``make_store``
    opens as a read-only :class:`~zarrc.stores.reference.ReferenceStore` (taking
    ``storage_options`` as fsspec's ``reference://`` does): ``reference://``, or a
    URL or local file whose name ends in ".json" (a node's ``zarr.json`` excepted),
    or a local directory of Parquet references (a ``.zmetadata`` with a
    ``record_size`` and no ``.zgroup`` beside it)."""
    if not isinstance(obj, (str, os.PathLike)):
        return False
    text = os.fsdecode(os.fspath(obj))
    if text.lower().startswith("reference://"):
        return True
    if ("://" not in text or text.lower().startswith("file://")) and _is_parquet_references(text):
        return True
    name = text.rstrip("/").replace("\\", "/").rpartition("/")[2]
    if not name.lower().endswith(".json") or name == "zarr.json":
        return False
    if _is_remote_url(text):
        return True
    try:
        return os.path.isfile(local_path_of(text))
    except StoreError:
        return False


def _is_parquet_references(path: str) -> bool:
    """True for a local directory of Parquet references (``reference_parquet``)."""
    try:
        path = local_path_of(path)
    except StoreError:
        return False
    meta = os.path.join(path, ".zmetadata")
    if not os.path.isfile(meta) or os.path.exists(os.path.join(path, ".zgroup")):
        return False
    import json

    try:
        with open(meta, "rb") as f:
            doc = json.load(f)
    except (OSError, ValueError):
        return False
    return isinstance(doc, dict) and "record_size" in doc and "metadata" in doc


def _is_remote_url(obj: Any) -> bool:
    if not isinstance(obj, str) or ("://" not in obj and "::" not in obj):
        return False
    from zarrc.stores.url import is_remote_url

    return is_remote_url(obj)


def _new_store(obj: Any, mode: str, storage_options: dict | None = None) -> Store:
    """The store ``make_store`` opens for anything that is not a Store."""
    if names_references(obj):
        from zarrc.stores.url import open_reference

        return open_reference(os.fsdecode(os.fspath(obj)), mode, storage_options)
    if _is_remote_url(obj):
        from zarrc.stores.url import store_from_url

        return store_from_url(obj, mode, storage_options)
    if isinstance(obj, (str, os.PathLike)):
        return open_local(obj, mode)
    if obj is None:
        return MemoryStore(read_only=mode == "r")
    if is_zarr_python_store(obj):
        try:
            return from_zarr_python(obj)
        except ArgumentTypeError:
            pass        # (its remote and wrapper stores: a RemoteStore over it, below)
    if isinstance(obj, dict):
        store = MemoryStore(obj, read_only=mode == "r")
        if mode == "w":
            store.delete_prefix("")
        elif mode == "w-" and obj:
            raise StoreError(f"{store!r} is not empty (mode 'w-')")
        return store
    from zarrc.stores.url import store_from_object

    remote = store_from_object(obj, mode)
    if remote is not None:
        if getattr(obj, "read_only", False):
            remote.read_only = True
        return remote
    raise ArgumentTypeError(f"cannot make a store from {type(obj).__module__}.{type(obj).__qualname__}: {obj!r:.80}")
