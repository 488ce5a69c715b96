"""zarrc: a fast Zarr (v2 and v3) library with native, GIL-free kernels."""

from zarrc import codecs, errors
from zarrc.config import config

__version__ = "0.1.0"

__all__ = ["codecs", "config", "errors", "__version__"]
