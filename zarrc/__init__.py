"""zarrc: a fast Zarr library with native, GIL-free kernels (zarr-python 3 style API)."""

from zarrc import codecs, errors
from zarrc.api import (
    consolidate_metadata,
    create_array,
    group,
    open,
    open_array,
    open_consolidated,
    open_group,
)
from zarrc.array import Array
from zarrc.config import config
from zarrc.group import Group


def __getattr__(name: str) -> str:
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
    "Group",
    "__version__",
    "codecs",
    "config",
    "consolidate_metadata",
    "create_array",
    "errors",
    "group",
    "open",
    "open_array",
    "open_consolidated",
    "open_group",
]
