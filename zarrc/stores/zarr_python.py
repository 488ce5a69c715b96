"""zarr-python's store objects as zarrc stores, where a store is expected.

``zarr.storage.LocalStore(root)`` becomes a :class:`LocalStore` on the same root,
``zarr.storage.MemoryStore`` a :class:`MemoryStore` over the very same dict (its
``_store_dict``: both libraries see each other's writes; zarrc stores zarr-python's
buffer objects in it, which zarr-python reads), ``zarr.storage.ZipStore`` a zarrc
``ZipStore`` on the same file.  A zip file has one writer: a zarr-python ZipStore
that is open is closed first (its central directory written) and then reopened by
zarrc; use one of the two at a time.  zarr is never imported here unless such an
object is given.
"""

from __future__ import annotations

import os
from typing import Any

from zarrc.errors import ArgumentTypeError
from zarrc.stores.base import Store
from zarrc.stores.local import LocalStore
from zarrc.stores.memory import MemoryStore

_SUPPORTED = ("LocalStore", "MemoryStore", "ZipStore")


def is_zarr_python_store(obj: Any) -> bool:
    """True if ``obj`` is an object of a class of zarr-python (module ``zarr.*``)."""
    return type(obj).__module__.split(".")[0] == "zarr"


def _kind(obj: Any) -> str | None:
    for cls in type(obj).__mro__:
        if cls.__module__.split(".")[0] == "zarr" and cls.__name__ in _SUPPORTED:
            return cls.__name__
    return None


def _buffer_maker() -> Any:
    """zarr-python's CPU ``Buffer.from_bytes`` (zarr is imported: an object of it is at hand)."""
    from zarr.core.buffer import cpu

    return cpu.Buffer.from_bytes


def from_zarr_python(obj: Any) -> Store:
    """The zarrc store over the same data as zarr-python's store ``obj``, with its
    ``read_only``.  ArgumentTypeError naming the type for any other zarr-python store
    (remote, logging, wrapper, GPU stores: ``make_store`` then wraps it in a
    RemoteStore over its async interface, ``zarr_store_backend``)."""
    kind = _kind(obj)
    read_only = bool(getattr(obj, "read_only", False))
    if kind == "LocalStore" and type(obj).__name__ == "LocalStore":
        return LocalStore(os.fspath(obj.root), mode="r" if read_only else "a")
    if kind == "MemoryStore" and type(obj).__name__ == "MemoryStore":
        return MemoryStore(obj._store_dict, read_only=read_only, wrap=_buffer_maker())
    if kind == "ZipStore" and isinstance(getattr(obj, "path", None), (str, os.PathLike)):
        from zarrc.stores.zip import ZipStore

        path = os.fspath(obj.path)
        mode = getattr(obj, "_zmode", "r")
        if getattr(obj, "_is_open", False):
            obj.close()          # one writer at a time: zarr-python's central directory is written
            mode = "a" if mode in ("w", "x") else mode
        return ZipStore(path, mode="r" if read_only else mode,
                        compression=getattr(obj, "compression", 0))
    cls = type(obj)
    raise ArgumentTypeError(
        f"cannot use zarr-python's store {cls.__module__}.{cls.__qualname__} with zarrc: only its "
        f"{', '.join(_SUPPORTED)} (on a path or a dict) are taken; give zarrc a path, a dict or a zarrc store")
