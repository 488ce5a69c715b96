"""zarrc: a fast Zarr library with native, GIL-free kernels (zarr-python 3 style API)."""

from typing import Any

from zarrc import codecs, errors, storage
from zarrc.api import asynchronous as asynchronous  # (zarrc.asynchronous, the earlier name)
from zarrc.api.asynchronous import AsyncArray, AsyncGroup
from zarrc.api.copy import copy, copy_all, copy_store
from zarrc.api.data import (
    array,
    create,
    empty,
    empty_like,
    full,
    full_like,
    load,
    ones,
    ones_like,
    open_like,
    save,
    save_array,
    save_group,
    zeros,
    zeros_like,
)
from zarrc.api.synchronous import (
    consolidate_metadata,
    create_array,
    create_group,
    create_hierarchy,
    from_array,
    group,
    open,
    open_array,
    open_consolidated,
    open_group,
    tree,
)
from zarrc.core.array import Array
from zarrc.core.group import Group
from zarrc.core.multiscales import multiscales, overviews
from zarrc.core.overviews import build_overviews
from zarrc.runtime.config import config


def __getattr__(name: str) -> Any:
    # zarr-python's codec pipeline on zarrc's kernels: imports zarr, so only on use
    # (zarr's registry finds it as "zarrc.ZarrcCodecPipeline" through the entry point)
    if name in ("ZarrcCodecPipeline", "ZarrcPipelineUnsupported"):
        from zarrc.integrations import zarr_pipeline

        value = getattr(zarr_pipeline, name)
        globals()[name] = value
        return value
    # zarrc.model (the ZEP 6 object model): a submodule, imported on first use
    if name == "model":
        from importlib import import_module

        return import_module("zarrc.model")
    # __version__ comes from the installed metadata (whose version meson.build's
    # project() sets), read on first use: importlib.metadata takes longer to import
    # than the rest of zarrc's Python layer.
    if name == "__version__":
        from importlib.metadata import version

        globals()["__version__"] = value = version("zarrc")
        return value
    raise AttributeError(f"module 'zarrc' has no attribute {name!r}")


__all__ = [
    "Array",
    "AsyncArray",
    "AsyncGroup",
    "Group",
    "__version__",
    "array",
    "build_overviews",
    "codecs",
    "config",
    "consolidate_metadata",
    "copy",
    "copy_all",
    "copy_store",
    "create",
    "create_array",
    "create_group",
    "create_hierarchy",
    "empty",
    "empty_like",
    "errors",
    "from_array",
    "full",
    "full_like",
    "group",
    "load",
    "multiscales",
    "ones",
    "ones_like",
    "open",
    "open_array",
    "open_consolidated",
    "open_group",
    "open_like",
    "overviews",
    "save",
    "save_array",
    "save_group",
    "storage",
    "tree",
    "zeros",
    "zeros_like",
]
