"""The bytes codec (v3 ``bytes``): an array as its elements' bytes in C order,
little or big endian."""

from __future__ import annotations

import sys
from collections.abc import Mapping
from typing import Any

from zarrc.codecs._base import Codec
from zarrc.codecs.enums import plain
from zarrc.codecs.registry import register
from zarrc.errors import CodecError, MetadataError
from zarrc.metadata.codecs import ARRAY_TO_BYTES, VLEN_CODECS, required_members
from zarrc.metadata.common import fail
from zarrc.metadata.dtypes import DataType


@register
class Bytes(Codec):
    """array -> bytes: elements in lexicographical (C) order, ``endian`` "little" or
    "big" (None only for data types of one byte)."""

    name = "bytes"
    codec_id = "bytes"
    category = ARRAY_TO_BYTES
    fixed_size = True

    def __init__(self, endian: str | None = "little") -> None:
        endian = plain(endian)                              # (an Endian member)
        if endian not in ("little", "big", None):
            raise CodecError(f"bytes: endian must be 'little' or 'big', got {endian!r}")
        self.endian = endian

    @classmethod
    def parse_spec(cls, config: Mapping[str, Any], shape: tuple[int, ...],
                   data_type: DataType) -> dict[str, Any]:
        """endian, required for types with a byte order (as zarr-python 3.4 reads), dropped
        for one-byte types (as zarr-python writes); not for the variable-length types."""
        required_members(config, (), ("endian",))
        if data_type.kind in VLEN_CODECS:
            raise MetadataError(f"cannot encode the variable-length data type {data_type.name} "
                                f'(use "{VLEN_CODECS[data_type.kind]}")')
        endian = config.get("endian")
        if "endian" in config and endian not in ("little", "big"):
            fail("endian", endian, 'must be "little" or "big"')
        if endian is None:
            if data_type.has_endianness:
                raise MetadataError(f'"configuration" needs "endian" for data type {data_type.name}')
            return {}
        if data_type.itemsize == 1:
            return {}  # as zarr-python: endian is meaningless for one-byte types
        return {"endian": endian}

    @classmethod
    def from_spec(cls, configuration: Mapping[str, Any]) -> Bytes:
        codec = cls.__new__(cls)
        codec.endian = configuration.get("endian")
        return codec

    def swaps(self, itemsize: int) -> bool:
        """True if the stored byte order differs from this machine's for items of itemsize."""
        return itemsize > 1 and self.endian is not None and self.endian != sys.byteorder

    def configuration(self) -> dict[str, Any]:
        return {} if self.endian is None else {"endian": self.endian}

    def to_dict(self) -> dict[str, Any]:
        conf = self.configuration()
        return {"name": self.name, "configuration": conf} if conf else {"name": self.name}
