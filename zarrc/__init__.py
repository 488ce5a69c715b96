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

__version__ = "0.1.0"

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
