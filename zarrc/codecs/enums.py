"""zarr-python's codec enums (``zarr.codecs.BloscShuffle``, ...), as ``str`` enums:
a member is equal to its value, and zarrc's codecs take members, their values,
and zarr-python's own members alike (:func:`plain`)."""

from __future__ import annotations

from enum import Enum
from typing import Any


class BloscShuffle(str, Enum):
    """Blosc's shuffle modes."""

    noshuffle = "noshuffle"
    shuffle = "shuffle"
    bitshuffle = "bitshuffle"


class BloscCname(str, Enum):
    """Blosc's compressors."""

    lz4 = "lz4"
    lz4hc = "lz4hc"
    blosclz = "blosclz"
    zstd = "zstd"
    snappy = "snappy"
    zlib = "zlib"


class Endian(str, Enum):
    """Byte order of the bytes codec."""

    big = "big"
    little = "little"


class ShardingCodecIndexLocation(str, Enum):
    """Where a shard's index sits."""

    start = "start"
    end = "end"


def plain(value: Any) -> Any:
    """``value``, or its value if it is an enum member (zarrc's or zarr-python's)."""
    return value.value if isinstance(value, Enum) else value
