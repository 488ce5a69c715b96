"""Metadata documents (zarr.json, .zarray, ...) <-> frozen dataclasses.  No I/O."""

from zarrc.metadata.codecs import CodecSpec, parse_codecs
from zarrc.metadata.common import FrozenDict, freeze, thaw
from zarrc.metadata.dtypes import DataType, as_data_type, parse_data_type
from zarrc.metadata.fill_value import (
    cast_fill_value,
    default_fill_value,
    encode_fill_value,
    parse_fill_value,
)
from zarrc.metadata.v3 import (
    ArrayMetadataV3,
    ChunkKeyEncodingSpec,
    GroupMetadataV3,
    metadata_from_json,
)

__all__ = [
    "ArrayMetadataV3", "ChunkKeyEncodingSpec", "CodecSpec", "DataType", "FrozenDict",
    "GroupMetadataV3", "as_data_type", "cast_fill_value", "default_fill_value",
    "encode_fill_value", "freeze", "metadata_from_json", "parse_codecs", "parse_data_type",
    "parse_fill_value", "thaw",
]
