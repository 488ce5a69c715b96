"""Zarr v3 data types: the core types of the v3 data-types spec and raw bits ``r<N>``.

A :class:`DataType` pairs the v3 identifier with the numpy dtype (native byte order;
the byte order on disk is the ``bytes`` codec's business) and a ``kind`` that the
fill-value rules dispatch on.  Variable-length types (``string``, ``bytes``) will be
added as further kinds.
"""

from __future__ import annotations

import re
from collections.abc import Mapping
from dataclasses import dataclass
from typing import Any

import numpy as np

from zarrc.errors import MetadataError
from zarrc.metadata.common import describe, parse_extension

# kind of each core type; the numpy dtype is np.dtype(name) for all of them
CORE_KINDS = {
    "bool": "bool",
    "int8": "int", "int16": "int", "int32": "int", "int64": "int",
    "uint8": "uint", "uint16": "uint", "uint32": "uint", "uint64": "uint",
    "float16": "float", "float32": "float", "float64": "float",
    "complex64": "complex", "complex128": "complex",
}

RAW_NAME = re.compile(r"r([1-9][0-9]{0,9})")
MAX_RAW_BITS = 8 * (2**31 - 1)


@dataclass(frozen=True)
class DataType:
    """A v3 data type.

    name : the v3 identifier ("int32", "float64", "r16", ...).
    dtype : the numpy dtype, native byte order (``V<n>`` for raw ``r<8n>``).
    kind : "bool", "int", "uint", "float", "complex" or "raw".
    """

    name: str
    dtype: np.dtype
    kind: str

    @property
    def itemsize(self) -> int:
        """Bytes per element."""
        return self.dtype.itemsize

    @property
    def has_endianness(self) -> bool:
        """True when byte order matters on disk (multi-byte numbers); the ``bytes``
        codec then requires ``endian``."""
        return self.kind in ("int", "uint", "float", "complex") and self.itemsize > 1

    def to_json(self) -> str:
        """The ``data_type`` value of zarr.json."""
        return self.name

    def __str__(self) -> str:
        return self.name


CORE_TYPES = {name: DataType(name, np.dtype(name), kind) for name, kind in CORE_KINDS.items()}


def raw_data_type(bits: int) -> DataType:
    """The raw-bits type ``r<bits>`` (numpy ``V<bits/8>``); bits must be a positive
    multiple of 8.  Raises MetadataError otherwise."""
    if bits <= 0 or bits % 8 or bits > MAX_RAW_BITS:
        raise MetadataError(f'"data_type" "r{bits}": raw data types need a positive multiple of 8 bits')
    return DataType(f"r{bits}", np.dtype(f"V{bits // 8}"), "raw")


def parse_data_type(value: Any) -> DataType:
    """Parse the ``data_type`` member of zarr.json.

    ``value`` is a core identifier ("int32"), a raw type ("r24"), or an extension
    object ``{"name": ..., "configuration": ...}``.  Raises MetadataError for an
    unknown or malformed data type (``"must_understand": false`` does not apply to
    data types).
    """
    name, configuration, _ = parse_extension("data_type", value)
    match = RAW_NAME.fullmatch(name)
    if name not in CORE_TYPES and not match:
        raise MetadataError(f'"data_type" {describe(value)} is not a supported data type')
    if configuration:
        raise MetadataError(f'"data_type" {describe(value)}: data type "{name}" takes no configuration')
    return CORE_TYPES[name] if name in CORE_TYPES else raw_data_type(int(match.group(1)))


def as_data_type(dtype: Any) -> DataType:
    """The v3 data type for a user's ``dtype`` argument.

    Accepts a DataType, a v3 identifier ("uint16", "r16"), or anything numpy accepts
    as a dtype ("<f4", ">i2", np.float32, float, np.dtype("V3")).  Byte order is
    dropped (it is the ``bytes`` codec's concern).  Raises MetadataError for dtypes
    with no v3 equivalent (strings, datetimes, objects, structured types).
    """
    if isinstance(dtype, DataType):
        return dtype
    if isinstance(dtype, str) and (dtype in CORE_TYPES or RAW_NAME.fullmatch(dtype)):
        return parse_data_type(dtype)
    if isinstance(dtype, Mapping):
        return parse_data_type(dtype)
    try:
        np_dtype = np.dtype(dtype)
    except TypeError as exc:
        raise MetadataError(f"dtype {dtype!r} is not a data type: {exc}") from None
    if np_dtype.kind == "V" and np_dtype.fields is None and np_dtype.subdtype is None:
        return raw_data_type(8 * np_dtype.itemsize)
    name = np_dtype.newbyteorder("=").name
    if np_dtype.kind in "biufc" and name in CORE_TYPES:
        return CORE_TYPES[name]
    raise MetadataError(f"dtype {dtype!r} ({np_dtype.str}) has no Zarr v3 data type")
