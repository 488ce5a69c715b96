"""Zarr v3 data types: the core types of the v3 data-types spec, raw bits ``r<N>``,
and the variable-length ``string`` and bytes types of the zarr-extensions registry.

A :class:`DataType` pairs the v3 identifier with the numpy dtype (native byte order;
the byte order on disk is the ``bytes`` codec's business) and a ``kind`` that the
fill-value rules dispatch on.

Variable-length types hold numpy ``object`` arrays in memory (``str`` items for
``string``, ``bytes`` items for the bytes type) and are encoded only by the
``vlen-utf8`` / ``vlen-bytes`` codecs.  Names: ``"string"``; the bytes type is
written ``"variable_length_bytes"`` (as zarr-python 3.1 and 3.4 write it) and also
read as ``"bytes"`` (the zarr-extensions name, written by zarr-python 3.0).
"""

from __future__ import annotations

import re
import warnings
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

    name : the v3 identifier ("int32", "float64", "r16", "string", ...).
    dtype : the numpy dtype, native byte order (``V<n>`` for raw ``r<8n>``,
        ``object`` for the variable-length types).
    kind : "bool", "int", "uint", "float", "complex", "raw", or the variable-length
        "string" (str items) and "bytes" (bytes items).
    """

    name: str
    dtype: np.dtype
    kind: str

    @property
    def itemsize(self) -> int:
        """Bytes per element in memory (for the variable-length types: the size of
        an object pointer, not of the data)."""
        return self.dtype.itemsize

    @property
    def variable_length(self) -> bool:
        """True for the variable-length types ("string", "bytes" kinds)."""
        return self.kind in VARIABLE_KINDS

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

VARIABLE_KINDS = ("string", "bytes")
STRING = DataType("string", np.dtype(object), "string")
VARIABLE_LENGTH_BYTES = DataType("variable_length_bytes", np.dtype(object), "bytes")
# every accepted data_type name of the variable-length types
VARIABLE_TYPES = {"string": STRING, "variable_length_bytes": VARIABLE_LENGTH_BYTES,
                  "bytes": VARIABLE_LENGTH_BYTES}
# user ``dtype`` arguments (besides the names above) meaning a variable-length type
STRING_ALIASES = ("str",)


def raw_data_type(bits: int) -> DataType:
    """The raw-bits type ``r<bits>`` (numpy ``V<bits/8>``); bits must be a positive
    multiple of 8.  Raises MetadataError otherwise."""
    if bits <= 0 or bits % 8 or bits > MAX_RAW_BITS:
        raise MetadataError(f'"data_type" "r{bits}": raw data types need a positive multiple of 8 bits')
    return DataType(f"r{bits}", np.dtype(f"V{bits // 8}"), "raw")


def parse_data_type(value: Any) -> DataType:
    """Parse the ``data_type`` member of zarr.json.

    ``value`` is a core identifier ("int32"), a raw type ("r24"), a variable-length
    type ("string", "variable_length_bytes" or "bytes"), or an extension object
    ``{"name": ..., "configuration": ...}``.  Raises MetadataError for an unknown or
    malformed data type (``"must_understand": false`` does not apply to data types).
    """
    name, configuration, _ = parse_extension("data_type", value)
    match = RAW_NAME.fullmatch(name)
    if name not in CORE_TYPES and name not in VARIABLE_TYPES and not match:
        raise MetadataError(f'"data_type" {describe(value)} is not a supported data type')
    if configuration:
        raise MetadataError(f'"data_type" {describe(value)}: data type "{name}" takes no configuration')
    if name in CORE_TYPES:
        return CORE_TYPES[name]
    if name in VARIABLE_TYPES:
        return VARIABLE_TYPES[name]
    assert match is not None  # neither a core nor a variable-length name: a raw one
    return raw_data_type(int(match.group(1)))


def _from_zarr_python(dtype: Any) -> DataType:
    """The data type of a zarr-python data type object (``zarr.core.dtype.*``)."""
    try:
        with warnings.catch_warnings():
            warnings.simplefilter("ignore")  # zarr-python warns that some types are unstable
            value = dtype.to_json(zarr_format=3)
    except Exception as exc:  # noqa: BLE001 - any failure of a foreign object
        raise MetadataError(f"dtype {dtype!r} has no Zarr v3 form: {exc}") from None
    return parse_data_type(value)


def as_data_type(dtype: Any) -> DataType:
    """The v3 data type for a user's ``dtype`` argument.

    Accepts a DataType, a v3 identifier ("uint16", "r16", "string",
    "variable_length_bytes", "bytes"), anything numpy accepts as a dtype ("<f4",
    ">i2", np.float32, float, np.dtype("V3")), and zarr-python data type objects
    (``zarr.core.dtype.VariableLengthBytes()``).  Byte order is dropped (it is the
    ``bytes`` codec's concern).  ``str``, "str" and numpy's variable-width
    ``StringDType`` give "string"; the ``bytes`` type gives the variable-length bytes
    type.  Raises MetadataError for dtypes with no v3 equivalent: fixed-width
    strings ("<U5", "S3"), datetimes, structured types, ``StringDType`` with an
    ``na_object``, and ``object``, which is ambiguous (as in zarr-python).
    """
    if isinstance(dtype, DataType):
        return dtype
    if isinstance(dtype, str) and (dtype in CORE_TYPES or dtype in VARIABLE_TYPES
                                   or RAW_NAME.fullmatch(dtype)):
        return parse_data_type(dtype)
    if dtype is str or (isinstance(dtype, str) and dtype in STRING_ALIASES):
        return STRING
    if dtype is bytes:
        return VARIABLE_LENGTH_BYTES
    if isinstance(dtype, Mapping):
        return parse_data_type(dtype)
    if isinstance(dtype, type) and issubclass(dtype, np.dtype):
        try:  # a dtype class (np.dtypes.StringDType, np.dtypes.Float32DType): its instance
            dtype = dtype()  # type: ignore[call-overload]  # the class, not np.dtype(...)
        except TypeError as exc:
            raise MetadataError(f"dtype {dtype!r} is not a data type: {exc}") from None
    if (not isinstance(dtype, (np.dtype, type, str)) and hasattr(dtype, "to_native_dtype")
            and hasattr(dtype, "to_json")):
        return _from_zarr_python(dtype)
    try:
        np_dtype = np.dtype(dtype)
    except TypeError as exc:
        raise MetadataError(f"dtype {dtype!r} is not a data type: {exc}") from None
    if np_dtype.kind == "T":  # numpy >= 2 StringDType
        if hasattr(np_dtype, "na_object"):
            raise MetadataError(f"dtype {dtype!r}: a StringDType with an na_object (missing values) "
                                'has no Zarr v3 data type; use StringDType() or "string"')
        return STRING
    if np_dtype.kind == "O":
        raise MetadataError(f'dtype {dtype!r} (object) is ambiguous: use "string" (str items) or '
                            '"variable_length_bytes" (bytes items)')
    if np_dtype.kind == "V" and np_dtype.fields is None and np_dtype.subdtype is None:
        return raw_data_type(8 * np_dtype.itemsize)
    name = np_dtype.newbyteorder("=").name
    if np_dtype.kind in "biufc" and name in CORE_TYPES:
        return CORE_TYPES[name]
    hint = ""
    if np_dtype.kind in "US":
        hint = f' (fixed-width; for variable-length items use {"str" if np_dtype.kind == "U" else "bytes"})'
    raise MetadataError(f"dtype {dtype!r} ({np_dtype.str}) has no Zarr v3 data type{hint}")
