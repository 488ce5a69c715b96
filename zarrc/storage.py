"""zarr-python's ``zarr.storage`` names over zarrc's stores.

``LocalStore(root, read_only=False)``, ``MemoryStore(store_dict=None,
read_only=False)`` and ``ZipStore(path, mode="r", read_only=None, compression=0,
allowZip64=True)`` are zarrc's own classes (``zarrc.stores``), which take
zarr-python's keywords; ``StorePath`` is the one class of ``zarrc.core.node``; ``StoreLike`` is
what a store argument may be.  zarr-python's remote stores ``FsspecStore(fs,
read_only=False, path="/", allowed_exceptions=...)`` (also ``from_url`` and
``from_mapper``) and ``ObjectStore(store, read_only=False)`` (an obstore store
object) are zarrc ``RemoteStore``s (``zarrc.stores.remote``) with zarr-python's
constructor arguments.  ``LoggingStore``, ``WrapperStore``, ``GpuMemoryStore`` and
``ManagedMemoryStore`` are not provided.
"""

from __future__ import annotations

import os
from typing import TYPE_CHECKING, Any

from zarrc.core.node import StorePath
from zarrc.stores import LocalStore, MemoryStore, Store

if TYPE_CHECKING:
    from zarrc.stores.zarr_names import FsspecStore, ObjectStore
    from zarrc.stores.zip import ZipStore

__all__ = ["FsspecStore", "LocalStore", "MemoryStore", "ObjectStore", "Store", "StoreLike", "StorePath",
           "ZipStore"]

StoreLike = Store | StorePath | str | os.PathLike | dict | None
"""What a store argument may be: a store, a StorePath, a local path (".zip": a zip
file), a dict (held in memory), None (a new memory store)."""


def __getattr__(name: str) -> Any:
    if name == "ZipStore":     # (imported on first use: zipfile with it, not by `import zarrc`)
        from zarrc.stores.zip import ZipStore

        return ZipStore
    if name in ("FsspecStore", "ObjectStore"):     # (and asyncio with them: on first use)
        from zarrc.stores import zarr_names

        return getattr(zarr_names, name)
    raise AttributeError(f"module 'zarrc.storage' has no attribute {name!r}")
