"""zarr-python's ``zarr.storage`` names over zarrc's stores.

``LocalStore(root, read_only=False)``, ``MemoryStore(store_dict=None,
read_only=False)`` and ``ZipStore(path, mode="r", read_only=None, compression=0,
allowZip64=True)`` are zarrc's own classes (``zarrc.stores``), which take
zarr-python's keywords; ``StorePath`` is the one class of ``zarrc.core.node``; ``StoreLike`` is
what a store argument may be.  zarr-python's remote stores (``FsspecStore``,
``ObjectStore``) have no zarrc counterpart yet: making one raises
NotImplementedError saying so.  ``LoggingStore``, ``WrapperStore``,
``GpuMemoryStore`` and ``ManagedMemoryStore`` are not provided.
"""

from __future__ import annotations

import os
from typing import TYPE_CHECKING, Any, NoReturn

from zarrc.core.node import StorePath
from zarrc.stores import LocalStore, MemoryStore, Store

if TYPE_CHECKING:
    from zarrc.stores.zip import ZipStore

__all__ = ["FsspecStore", "LocalStore", "MemoryStore", "ObjectStore", "Store", "StoreLike", "StorePath",
           "ZipStore"]

StoreLike = Store | StorePath | str | os.PathLike | dict | None
"""What a store argument may be: a store, a StorePath, a local path (".zip": a zip
file), a dict (held in memory), None (a new memory store)."""


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
    if name == "ZipStore":     # (imported on first use: zipfile with it, not by `import zarrc`)
        from zarrc.stores.zip import ZipStore

        return ZipStore
    raise AttributeError(f"module 'zarrc.storage' has no attribute {name!r}")
