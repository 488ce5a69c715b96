"""Zarr v3 data types: the core types of the v3 data-types spec, raw bits ``r<N>``,
and the types of the zarr-extensions registry that zarr-python 3 writes:
``numpy.datetime64`` / ``numpy.timedelta64`` (configuration ``unit``,
``scale_factor``), ``fixed_length_utf32``, ``null_terminated_bytes`` and
``raw_bytes`` (configuration ``length_bytes``), ``struct`` (configuration
``fields``; zarr-python 3.1 wrote it ``structured`` with ``[name, type]`` pairs,
read too), and the variable-length ``string`` and bytes types.

A :class:`DataType` pairs the v3 identifier with the numpy dtype (native byte order;
the byte order on disk is the ``bytes`` codec's business) and a ``kind`` that the
fill-value rules dispatch on.  Every type but the variable-length ones is a
fixed-size item the native engine moves as bytes: datetimes and timedeltas as
int64, strings as their UTF-32 code units (swapped 4 bytes at a time), structs
field by field.

Variable-length types hold numpy ``object`` arrays in memory (``str`` items for
``string``, ``bytes`` items for the bytes type) and are encoded only by the
``vlen-utf8`` / ``vlen-bytes`` codecs.  Names: ``"string"``; the bytes type is
written ``"variable_length_bytes"`` (as zarr-python 3.1 and 3.4 write it) and also
read as ``"bytes"`` (the zarr-extensions name, written by zarr-python 3.0).
"""

from __future__ import annotations

import re
import warnings
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from typing import Any

import numpy as np

from zarrc.errors import MetadataError, UnknownDataTypeError
from zarrc.metadata.common import describe, is_int, parse_extension
from zarrc.metadata.dtypes_ml import ML_KINDS, ml_dtype, ml_name

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
MAX_ITEM_BYTES = 2**31 - 1

# the extension types with a configuration: v3 name -> kind
TIME_TYPES = {"numpy.datetime64": "datetime", "numpy.timedelta64": "timedelta"}
LENGTH_TYPES = {"fixed_length_utf32": "utf32", "null_terminated_bytes": "null_bytes", "raw_bytes": "raw"}
STRUCT_NAMES = ("struct", "structured")     # written by zarr-python 3.4 / 3.1
# the units of numpy.datetime64 / numpy.timedelta64 ("μs" is numpy's "us")
TIME_UNITS = ("Y", "M", "W", "D", "h", "m", "s", "ms", "us", "μs", "ns", "ps", "fs", "as", "generic")
MAX_SCALE_FACTOR = 2**31 - 1
# kinds whose items are numbers of more than one byte, stored in the bytes codec's order
ORDERED_KINDS = ("int", "uint", "float", "complex", "datetime", "timedelta", "utf32", "ml_float")


@dataclass(frozen=True)
class DataType:
    """A v3 data type.

    name : the v3 identifier ("int32", "float64", "r16", "raw_bytes",
        "numpy.datetime64", "struct", "string", ...).
    dtype : the numpy dtype, native byte order (``V<n>`` for raw bytes,
        ``datetime64[<scale><unit>]``, ``U<n>``, ``S<n>``, a packed structured dtype
        for structs, ``object`` for the variable-length types).
    kind : "bool", "int", "uint", "float", "complex", "raw", "datetime",
        "timedelta", "utf32", "null_bytes", "struct", the ml_dtypes types
        "ml_float", "ml_int", "ml_uint" (``dtypes_ml``), or the variable-length
        "string" (str items) and "bytes" (bytes items).
    fields : for a struct, its ``(name, DataType)`` pairs; else empty.
    """

    name: str
    dtype: np.dtype
    kind: str
    fields: tuple[tuple[str, DataType], ...] = ()

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
        """True when byte order matters on disk (multi-byte numbers, datetimes,
        UTF-32 strings); the ``bytes`` codec then requires ``endian``.  A struct is
        not required to have one (zarr-python 3.1 wrote none; it is little endian
        then), but gets one when written (see ``writes_endian``)."""
        return self.kind in ORDERED_KINDS and self.itemsize > 1

    @property
    def writes_endian(self) -> bool:
        """True when a new array's ``bytes`` codec records ``endian``: as
        ``has_endianness``, and for a struct with a field of more than one byte
        (as zarr-python 3.4)."""
        if self.kind == "struct":
            return any(f.itemsize > 1 for _, f in self.fields)
        return self.has_endianness

    def to_json(self) -> Any:
        """The ``data_type`` value of zarr.json."""
        if self.kind in ("datetime", "timedelta"):
            unit, scale = np.datetime_data(self.dtype)
            return {"name": self.name, "configuration": {"unit": unit, "scale_factor": scale}}
        if self.name in LENGTH_TYPES:
            return {"name": self.name, "configuration": {"length_bytes": self.itemsize}}
        if self.name == "struct":
            return {"name": self.name, "configuration": {
                "fields": [{"name": n, "data_type": f.to_json()} for n, f in self.fields]}}
        if self.name == "structured":
            return {"name": self.name, "configuration": {"fields": [[n, f.to_json()] for n, f in self.fields]}}
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


def time_data_type(name: str, unit: Any, scale_factor: Any) -> DataType:
    """``numpy.datetime64`` / ``numpy.timedelta64`` with ``unit`` (one of
    TIME_UNITS) and ``scale_factor`` (1 .. 2**31-1; 1 for "generic").  Raises
    MetadataError naming the bad value."""
    if not isinstance(unit, str) or unit not in TIME_UNITS:
        raise MetadataError(f'"data_type" {name}: "unit" {describe(unit)} is not one of {", ".join(TIME_UNITS)}')
    if not is_int(scale_factor) or not 1 <= scale_factor <= MAX_SCALE_FACTOR:
        raise MetadataError(f'"data_type" {name}: "scale_factor" {describe(scale_factor)} '
                            f"must be an integer 1..{MAX_SCALE_FACTOR}")
    code = "M8" if name == "numpy.datetime64" else "m8"
    if unit == "generic":
        if scale_factor != 1:
            raise MetadataError(f'"data_type" {name}: the "generic" unit takes "scale_factor" 1, '
                                f"not {scale_factor}")
        return DataType(name, np.dtype(code), TIME_TYPES[name])
    unit = "us" if unit == "μs" else unit
    return DataType(name, np.dtype(f"{code}[{scale_factor}{unit}]"), TIME_TYPES[name])


def length_data_type(name: str, length_bytes: Any) -> DataType:
    """``fixed_length_utf32`` (numpy ``U<n/4>``), ``null_terminated_bytes``
    (``S<n>``) or ``raw_bytes`` (``V<n>``) of ``length_bytes`` n >= 1 (a multiple
    of 4 for UTF-32).  Raises MetadataError naming the bad value."""
    unit = 4 if name == "fixed_length_utf32" else 1
    if not is_int(length_bytes) or not 1 <= length_bytes <= MAX_ITEM_BYTES or length_bytes % unit:
        need = "a positive multiple of 4" if unit == 4 else "a positive integer"
        raise MetadataError(f'"data_type" {name}: "length_bytes" {describe(length_bytes)} must be {need}')
    code = {"fixed_length_utf32": "U", "null_terminated_bytes": "S", "raw_bytes": "V"}[name]
    return DataType(name, np.dtype(f"{code}{length_bytes // unit}"), LENGTH_TYPES[name])


def struct_data_type(fields: Sequence[tuple[str, DataType]], name: str = "struct") -> DataType:
    """A struct of ``(field name, DataType)`` pairs (numpy: the packed structured
    dtype of the fields' dtypes).  Raises MetadataError for no fields, repeated or
    empty names, and variable-length fields."""
    if not fields:
        raise MetadataError(f'"data_type" {name}: "fields" must name at least one field')
    names = [n for n, _ in fields]
    for n, f in fields:
        if not isinstance(n, str) or not n or names.count(n) > 1:
            raise MetadataError(f'"data_type" {name}: field name {describe(n)} must be a non-empty string '
                                "used once")
        if f.variable_length:
            raise MetadataError(f'"data_type" {name}: field "{n}" has the variable-length type {f.name}, '
                                "which a struct cannot hold")
    dtype = np.dtype([(n, f.dtype) for n, f in fields])
    return DataType(name, dtype, "struct", tuple((n, f) for n, f in fields))


def _parse_fields(name: str, fields: Any) -> DataType:
    """A struct from its ``fields``: objects ``{"name", "data_type"}`` ("struct")
    or ``[name, data_type]`` pairs (zarr-python 3.1's "structured", also read under
    "struct" as zarr-python 3.4 does)."""
    if not isinstance(fields, (list, tuple)):
        raise MetadataError(f'"data_type" {name}: "fields" {describe(fields)} must be an array')
    parsed = []
    for item in fields:
        if isinstance(item, Mapping) and set(item) == {"name", "data_type"}:
            parsed.append((item["name"], parse_data_type(item["data_type"])))
        elif isinstance(item, (list, tuple)) and len(item) == 2:
            parsed.append((item[0], parse_data_type(item[1])))
        else:
            raise MetadataError(f'"data_type" {name}: field {describe(item)} must be '
                                '{"name": ..., "data_type": ...} or [name, data_type]')
    return struct_data_type(parsed, name)


def _check_keys(name: str, configuration: Mapping, keys: tuple[str, ...]) -> None:
    if set(configuration) != set(keys):
        want = ", ".join(f'"{k}"' for k in keys)
        raise MetadataError(f'"data_type" {name}: "configuration" {describe(configuration)} must have '
                            f"exactly the members {want}")


def parse_data_type(value: Any) -> DataType:
    """Parse the ``data_type`` member of zarr.json.

    ``value`` is a core identifier ("int32"), a raw type ("r24"), a variable-length
    type ("string", "variable_length_bytes" or "bytes"), an ml_dtypes type
    ("bfloat16", "float8_e4m3fn", "int4", ...: ``dtypes_ml.ML_KINDS``; they raise
    MissingDependencyError without ml_dtypes), or an extension object
    ``{"name": ..., "configuration": ...}`` of a type of TIME_TYPES, LENGTH_TYPES or
    STRUCT_NAMES.  Raises MetadataError for an unknown or malformed data type
    (``"must_understand": false`` does not apply to data types).
    """
    name, configuration, _ = parse_extension("data_type", value)
    if name in ML_KINDS:
        if configuration:
            raise MetadataError(f'"data_type" {describe(value)}: data type "{name}" takes no configuration')
        return DataType(name, ml_dtype(name), ML_KINDS[name])
    if name in TIME_TYPES:
        _check_keys(name, configuration, ("unit", "scale_factor"))
        return time_data_type(name, configuration["unit"], configuration["scale_factor"])
    if name in LENGTH_TYPES:
        _check_keys(name, configuration, ("length_bytes",))
        return length_data_type(name, configuration["length_bytes"])
    if name in STRUCT_NAMES:
        _check_keys(name, configuration, ("fields",))
        return _parse_fields(name, configuration["fields"])
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


def byte_swap_unit(dtype: np.dtype) -> int | None:
    """The bytes of each unit the ``bytes`` codec swaps, for items of ``dtype``
    stored in the other byte order: the item size for numbers and datetimes, half
    of it for complex, 4 for UTF-32 strings, 0 when nothing swaps (one-byte items,
    bool, bytes, raw bytes), and for a struct the one unit all its fields share.
    None for a struct whose fields swap in units of different sizes (or mix
    swapped and unswapped fields): no single unit serves it."""
    if dtype.fields is not None:
        units = {byte_swap_unit(dtype.fields[n][0]) for n in dtype.names or ()}
        return units.pop() if len(units) == 1 else None
    if dtype.subdtype is not None:
        return byte_swap_unit(dtype.subdtype[0])
    if ml_name(dtype) is not None:
        return dtype.itemsize if dtype.itemsize > 1 else 0
    if dtype.kind in "bSVO" or dtype.itemsize <= 1:
        return 0
    if dtype.kind == "U":
        return 4
    return dtype.itemsize // 2 if dtype.kind == "c" else dtype.itemsize


def _from_zarr_python(dtype: Any) -> DataType:
    """The data type of a zarr-python data type object (``zarr.core.dtype.*``)."""
    try:
        with warnings.catch_warnings():
            warnings.simplefilter("ignore")  # zarr-python warns that some types are unstable
            value = dtype.to_json(zarr_format=3)
    except Exception as exc:  # noqa: BLE001 - any failure of a foreign object
        raise UnknownDataTypeError(f"dtype {dtype!r} has no Zarr v3 form: {exc}") from None
    return parse_data_type(value)


def from_numpy(np_dtype: np.dtype, dtype: Any = None) -> DataType:
    """The v3 data type of a numpy dtype (byte order dropped): core numbers and
    bool, ml_dtypes' types (bfloat16, ...), ``datetime64`` / ``timedelta64``, ``U<n>`` -> fixed_length_utf32,
    ``S<n>`` -> null_terminated_bytes, ``V<n>`` -> raw_bytes, structured ->
    struct (of its fields' types; packed).  ``dtype``: the user's argument, for
    messages.  Raises MetadataError for dtypes with no v3 equivalent."""
    shown = np_dtype if dtype is None else dtype
    kind = np_dtype.kind
    if kind in "mM":
        unit, scale = np.datetime_data(np_dtype)
        return time_data_type("numpy.datetime64" if kind == "M" else "numpy.timedelta64", unit, scale)
    if np_dtype.subdtype is not None:
        raise UnknownDataTypeError(f"dtype {shown!r}: subarray dtypes have no Zarr v3 data type")
    if ml_name(np_dtype) is not None:
        return parse_data_type(ml_name(np_dtype))
    if np_dtype.fields is not None:
        return struct_data_type([(n, from_numpy(np_dtype.fields[n][0])) for n in np_dtype.names or ()])
    if kind in "USV":
        if np_dtype.itemsize == 0:
            raise MetadataError(f"dtype {shown!r} has no length (give one, as in U5, S3 or V4)")
        name = {"U": "fixed_length_utf32", "S": "null_terminated_bytes", "V": "raw_bytes"}[kind]
        return length_data_type(name, np_dtype.itemsize)
    name = np_dtype.newbyteorder("=").name
    if kind in "biufc" and name in CORE_TYPES:
        return CORE_TYPES[name]
    raise UnknownDataTypeError(f"dtype {shown!r} ({np_dtype.str}) has no Zarr v3 data type")


def as_data_type(dtype: Any) -> DataType:
    """The v3 data type for a user's ``dtype`` argument.

    Accepts a DataType, a v3 identifier ("uint16", "r16", "string",
    "variable_length_bytes", "bytes", "bfloat16" and the other ml_dtypes types) or extension object, anything numpy accepts
    as a dtype ("<f4", ">i2", np.float32, "M8[ns]", "U8", "S4", "V3", structured
    dtypes; see ``from_numpy``), and zarr-python data type objects
    (``zarr.core.dtype.VariableLengthBytes()``).  Byte order is dropped (it is the
    ``bytes`` codec's concern).  ``str``, "str" and numpy's variable-width
    ``StringDType`` give "string"; the ``bytes`` type gives the variable-length bytes
    type.  Raises MetadataError for dtypes with no v3 equivalent: ``StringDType``
    with an ``na_object``, subarrays, and ``object``, which is ambiguous (as in
    zarr-python).
    """
    if isinstance(dtype, DataType):
        return dtype
    if isinstance(dtype, str) and (dtype in CORE_TYPES or dtype in VARIABLE_TYPES or dtype in ML_KINDS
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
            raise UnknownDataTypeError(f"dtype {dtype!r} is not a data type: {exc}") from None
    if (not isinstance(dtype, (np.dtype, type, str)) and hasattr(dtype, "to_native_dtype")
            and hasattr(dtype, "to_json")):
        return _from_zarr_python(dtype)
    try:
        np_dtype = np.dtype(dtype)
    except TypeError as exc:
        raise UnknownDataTypeError(f"dtype {dtype!r} is not a data type: {exc}") from None
    if np_dtype.kind == "T":  # numpy >= 2 StringDType
        if hasattr(np_dtype, "na_object"):
            raise MetadataError(f"dtype {dtype!r}: a StringDType with an na_object (missing values) "
                                'has no Zarr v3 data type; use StringDType() or "string"')
        return STRING
    if np_dtype.kind == "O":
        raise MetadataError(f'dtype {dtype!r} (object) is ambiguous: use "string" (str items) or '
                            '"variable_length_bytes" (bytes items)')
    return from_numpy(np_dtype, dtype)
