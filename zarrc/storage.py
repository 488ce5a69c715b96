"""zarr-python's ``zarr.storage`` names over zarrc's stores.

``LocalStore(root, read_only=False)`` and ``MemoryStore(store_dict=None,
read_only=False)`` are zarrc's own classes (``zarrc.stores``), which take
zarr-python's keywords; ``ZipStore(path, mode="r", read_only=None,
compression=0, allowZip64=True)`` is zarrc's zip store with zarr-python's
constructor; ``StorePath`` is the one class of ``zarrc.node``; ``StoreLike`` is
what a store argument may be.  zarr-python's remote stores (``FsspecStore``,
``ObjectStore``) have no zarrc counterpart yet: making one raises
NotImplementedError saying so.  ``LoggingStore``, ``WrapperStore``,
``GpuMemoryStore`` and ``ManagedMemoryStore`` are not provided.
"""

from __future__ import annotations

import os
from typing import TYPE_CHECKING, Any, NoReturn

from zarrc.errors import ArgumentError
from zarrc.node import StorePath
from zarrc.stores import LocalStore, MemoryStore, Store

if TYPE_CHECKING:
    from zarrc.stores.zip import ZipStore

__all__ = ["FsspecStore", "LocalStore", "MemoryStore", "ObjectStore", "Store", "StoreLike", "StorePath",
           "ZipStore"]

StoreLike = Store | StorePath | str | os.PathLike | dict | None
"""What a store argument may be: a store, a StorePath, a local path (".zip": a zip
file), a dict (held in memory), None (a new memory store)."""

_ZIP_CLASS: list[type] = []


def _zip_class() -> type:
    """zarrc's ZipStore with zarr-python's constructor (made on first use: zipfile is
    imported with it, not by ``import zarrc``)."""
    if _ZIP_CLASS:
        return _ZIP_CLASS[0]
    from zarrc.stores.zip import ZipStore as Base

    class ZipStore(Base):
        """A zip file as a store, with zarr-python's constructor: ``mode`` "r", "w",
        "a" or "x" (zipfile's), ``read_only`` (None: ``mode == "r"``; True with
        another mode: ArgumentError), ``compression`` (a zipfile constant; members
        are stored uncompressed by default), ``allowZip64`` (True only)."""

        def __init__(self, path: str | os.PathLike, *, mode: str = "r", read_only: bool | None = None,
                     compression: int = 0, allowZip64: bool = True) -> None:
            if read_only is None:
                read_only = mode == "r"
            if bool(read_only) != (mode == "r"):
                raise ArgumentError(f"ZipStore: mode {mode!r} contradicts read_only={read_only!r} "
                                    "(zarrc opens a zip file read only exactly in mode 'r')")
            if allowZip64 is not True:
                raise ArgumentError("ZipStore: allowZip64 must be True (zarrc always allows zip64)")
            Base.__init__(self, path, mode, compression)

        def __setstate__(self, state: dict[str, Any]) -> None:
            Base.__init__(self, state["path"], state["mode"], state["compression"])

    ZipStore.__module__ = __name__
    _ZIP_CLASS.append(ZipStore)
    return ZipStore


def _unavailable(name: str, what: str) -> type:
    def __init__(self: Any, *args: Any, **kwargs: Any) -> NoReturn:
        raise NotImplementedError(f"zarrc.storage.{name}: {what} are not available in zarrc yet; "
                                  "use a local path, a zip file or a dict (memory)")

    def from_url(cls: Any, *args: Any, **kwargs: Any) -> NoReturn:
        __init__(None)

    return type(name, (), {"__init__": __init__, "from_url": classmethod(from_url), "__module__": __name__,
                           "__doc__": f"Not available: {what} (zarr-python's {name})."})


FsspecStore = _unavailable("FsspecStore", "fsspec (remote) stores")
ObjectStore = _unavailable("ObjectStore", "obstore (object storage) stores")


def __getattr__(name: str) -> Any:
    if name == "ZipStore":
        return _zip_class()
    raise AttributeError(f"module 'zarrc.storage' has no attribute {name!r}")
