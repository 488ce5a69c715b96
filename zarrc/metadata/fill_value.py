"""Fill values: the JSON forms of the v3 data-types spec and zarr-python's extension
types <-> numpy scalars (str / bytes for the variable-length types).

bool: true/false (numbers too, as zarr-python reads them: 0 is false).  Integers:
JSON integers within the type's range (and, as zarr-python reads them, integral
floats and strings of an integer).  Floats: JSON numbers, "NaN", "Infinity",
"-Infinity", or "0x..." giving the bit pattern (exactly 2 * itemsize hex digits),
reproduced bit-exactly (and strings of a number).  ml_dtypes' types (bfloat16,
float8, ..., int4): ``dtypes_ml``.  Complex: a two-element array of
float forms.  Raw ``r<N>``: an array of N/8 integers 0..255 (base64 read too);
``raw_bytes``: base64 of the bytes (an array read too).  Datetimes and timedeltas:
the int64 count of units (NaT is -2**63).  ``fixed_length_utf32``: a string of at
most its length.  ``null_terminated_bytes``: base64 of at most ``length_bytes``
bytes.  ``struct``: an object of each field's fill value (missing fields take
their default), or base64 of the little-endian item (as ``structured`` is written,
by zarr-python 3.1).  ``string``: a JSON string (-> ``str``).  Variable-length
bytes: base64 of the bytes (as zarr-python 3.1 and later write and read it; ``""``
is empty bytes), or an array of integers 0..255 (as zarr-python 3.0 wrote it)
(-> ``bytes``).

Encoding writes what zarr-python writes (JSON numbers, "NaN", "Infinity", base64
for bytes), except that a NaN other than the canonical one ("NaN" means sign 0, mantissa MSB 1, other
mantissa bits 0) is written in the hex form so its payload survives, as tensorstore
does.
"""

from __future__ import annotations

import base64
import binascii
import datetime as dt
import math
import re
from typing import Any, cast

import numpy as np

from zarrc.errors import MetadataError
from zarrc.metadata.common import describe, is_int
from zarrc.metadata.dtypes import DataType
from zarrc.metadata.dtypes_ml import KINDS as ML_KINDS
from zarrc.metadata.dtypes_ml import cast_ml_fill, encode_ml_fill, parse_ml_fill

SPECIAL_FLOATS = {"NaN": math.nan, "Infinity": math.inf, "-Infinity": -math.inf}
UINT_OF_SIZE: dict[int, np.dtype] = {2: np.dtype("<u2"), 4: np.dtype("<u4"), 8: np.dtype("<u8")}
# bit patterns of the canonical NaN ("NaN") per float size
CANONICAL_NAN = {2: 0x7E00, 4: 0x7FC00000, 8: 0x7FF8000000000000}
HEX = re.compile(r"0x[0-9a-fA-F]+")
# the fill value of an array: a numpy scalar of the data type's dtype, or for the
# variable-length types a str ("string") or bytes
FillValue = np.generic | str | bytes


def _bad(value: Any, data_type: DataType, why: str = "") -> MetadataError:
    extra = f" ({why})" if why else ""
    return MetadataError(f'"fill_value" {describe(value)} is not valid for data type {data_type.name}{extra}')


def _float_from_bits(bits: int, float_dtype: np.dtype) -> np.generic:
    raw = np.array(bits, dtype=UINT_OF_SIZE[float_dtype.itemsize]).tobytes()
    return np.frombuffer(raw, dtype=float_dtype.newbyteorder("<"))[0].astype(float_dtype)


def _bits_of_float(value: np.generic) -> int:
    dt = value.dtype
    return int(np.frombuffer(np.asarray(value, dtype=dt.newbyteorder("<")).tobytes(),
                             dtype=UINT_OF_SIZE[dt.itemsize])[0])


def _number_of_string(value: str) -> float | None:
    """A finite number written as a string ("1.5", "2"), as zarr-python reads them;
    None otherwise (spelled-out specials other than the spec's are refused)."""
    try:
        number = float(value)
    except ValueError:
        return None
    return number if math.isfinite(number) else None


# numpy's native IEEE float types, and a magnitude that none of them overflows
# (float16's largest finite value): values a scalar constructor converts as the
# float64 cast does.
_IEEE_FLOATS = (np.dtype(np.float16), np.dtype(np.float32), np.dtype(np.float64))
_HALF_MAX = 65504.0


def _parse_float(value: Any, float_dtype: np.dtype, data_type: DataType) -> np.generic:
    """One float component (of a float or complex type) from its JSON form."""
    if isinstance(value, str):
        if value in SPECIAL_FLOATS:
            if value == "NaN":
                return _float_from_bits(CANONICAL_NAN[float_dtype.itemsize], float_dtype)
            return float_dtype.type(SPECIAL_FLOATS[value])
        if HEX.fullmatch(value):
            if len(value) - 2 != 2 * float_dtype.itemsize:
                raise _bad(value, data_type, f"a hex fill value needs {2 * float_dtype.itemsize} digits")
            return _float_from_bits(int(value, 16), float_dtype)
        number = _number_of_string(value)
        if number is None:
            raise _bad(value, data_type, 'expected a number, "NaN", "Infinity", "-Infinity" or "0x..."')
        value = number
    if is_int(value):
        try:
            as_float = float(value)
        except OverflowError:
            as_float = math.inf if value > 0 else -math.inf
    elif isinstance(value, float) and not math.isnan(value):
        as_float = value  # +-inf can come from JSON numbers like 1e999
    else:
        raise _bad(value, data_type)
    if float_dtype in _IEEE_FLOATS and -_HALF_MAX < as_float < _HALF_MAX:      # (no overflow)
        return cast(np.generic, float_dtype.type(as_float))
    with np.errstate(over="ignore"):
        return cast(np.generic, np.array(as_float, dtype=np.float64).astype(float_dtype)[()])


def _parse_base64(value: str, data_type: DataType) -> bytes:
    try:
        return base64.b64decode(value.encode("ascii"), validate=True)
    except (binascii.Error, ValueError, UnicodeEncodeError):
        raise _bad(value, data_type, "expected base64 of the bytes, or an array of integers 0..255") from None


def _parse_byte_list(value: Any, data_type: DataType) -> bytes:
    if not all(is_int(v) and 0 <= v <= 255 for v in value):
        raise _bad(value, data_type, "expected base64 of the bytes, or an array of integers 0..255")
    return bytes(value)


def _parse_bytes(value: Any, data_type: DataType) -> bytes:
    """Bytes from base64 or an array of integers 0..255."""
    if isinstance(value, str):
        return _parse_base64(value, data_type)
    if isinstance(value, (list, tuple)):
        return _parse_byte_list(value, data_type)
    raise _bad(value, data_type, "expected base64 of the bytes, or an array of integers 0..255")


def _parse_int(value: Any, data_type: DataType) -> np.generic:
    if isinstance(value, float) and value.is_integer():
        value = int(value)          # 2.0, as zarr-python reads it
    elif isinstance(value, str):
        try:
            value = int(value)      # "2", as zarr-python reads it
        except ValueError:
            raise _bad(value, data_type, "expected an integer") from None
    if not is_int(value):
        raise _bad(value, data_type, "expected an integer")
    info = np.iinfo(data_type.dtype)
    if not info.min <= value <= info.max:
        raise _bad(value, data_type, f"out of range {info.min}..{info.max}")
    return cast(np.generic, data_type.dtype.type(value))


def _time_from_count(count: int, data_type: DataType) -> np.generic:
    return cast(np.generic, np.array(count, dtype=np.int64).view(data_type.dtype)[()])


def _string_item(text: str, data_type: DataType) -> np.generic:
    return cast(np.generic, np.array(text, dtype=data_type.dtype)[()])


def _struct_from_bytes(raw: bytes, data_type: DataType) -> np.generic:
    """A struct item from its little-endian bytes (the v3 fill value form)."""
    stored = data_type.dtype.newbyteorder("<")
    if len(raw) != data_type.itemsize:
        raise _bad(raw, data_type, f"expected {data_type.itemsize} bytes")
    return cast(np.generic, np.frombuffer(raw, dtype=stored).astype(data_type.dtype)[0])


def _struct_from_fields(values: dict, data_type: DataType, parse: Any) -> np.generic:
    """A struct item from an object of field values (``parse(value, field_type)``
    for each; missing fields take their default)."""
    names = {n for n, _ in data_type.fields}
    unknown = [k for k in values if k not in names]
    if unknown:
        raise _bad(values, data_type, f"no field {unknown[0]!r}")
    out = np.zeros((), dtype=data_type.dtype)
    for n, f in data_type.fields:
        out[n] = parse(values[n], f) if n in values else default_fill_value(f)
    return cast(np.generic, out[()])


def parse_fill_value(value: Any, data_type: DataType) -> FillValue:
    """The fill value for a JSON ``fill_value``: a numpy scalar of exactly
    ``data_type.dtype`` (for strings and null-terminated bytes, of that kind: numpy
    scalars of those carry their own length), or a ``str`` (data type "string") or
    ``bytes`` (variable-length bytes).

    Raises MetadataError when ``value`` is not a permitted fill value for the type
    (wrong JSON type, integer out of range, "nan" instead of "NaN", hex of the
    wrong length, invalid base64, a string longer than the type, ...).
    """
    kind, dtype = data_type.kind, data_type.dtype
    if kind in ML_KINDS:
        return parse_ml_fill(value, data_type.name, kind, dtype)
    if kind == "string":
        if not isinstance(value, str):
            raise _bad(value, data_type, "expected a string")
        return str(value)
    if kind == "bytes":
        return _parse_bytes(value, data_type)
    if kind == "bool":
        if not isinstance(value, (bool, int, float)):
            raise _bad(value, data_type, "expected true or false")
        return np.bool_(value)      # numbers too, as zarr-python reads them (0 is false)
    if kind in ("int", "uint"):
        return _parse_int(value, data_type)
    if kind == "float":
        return _parse_float(value, dtype, data_type)
    if kind == "complex":
        if not isinstance(value, (list, tuple)) or len(value) != 2:
            raise _bad(value, data_type, "expected a two-element array [real, imag]")
        part = np.dtype(f"f{dtype.itemsize // 2}")
        out = np.zeros((), dtype=dtype)
        out.real = _parse_float(value[0], part, data_type)
        out.imag = _parse_float(value[1], part, data_type)
        return cast(np.generic, out[()])
    if kind in ("datetime", "timedelta"):
        if not is_int(value) or not -2**63 <= value < 2**63:
            raise _bad(value, data_type, "expected an int64 count of units (NaT is -9223372036854775808)")
        return _time_from_count(value, data_type)
    if kind == "utf32":
        if not isinstance(value, str):
            raise _bad(value, data_type, "expected a string")
        if len(value) > dtype.itemsize // 4:
            raise _bad(value, data_type, f"longer than {dtype.itemsize // 4} characters")
        return _string_item(value, data_type)
    if kind == "null_bytes":
        raw = _parse_bytes(value, data_type)
        if len(raw) > dtype.itemsize:
            raise _bad(value, data_type, f"longer than {dtype.itemsize} bytes")
        return np.bytes_(raw)
    if kind == "raw":
        why = f"expected an array of {dtype.itemsize} integers 0..255 or base64 of {dtype.itemsize} bytes"
        try:
            raw = _parse_bytes(value, data_type)
        except MetadataError:
            raise _bad(value, data_type, why) from None
        if len(raw) != dtype.itemsize:
            raise _bad(value, data_type, why)
        return cast(np.generic, np.frombuffer(raw, dtype=dtype)[0])
    if kind == "struct":
        if isinstance(value, dict):
            return _struct_from_fields(value, data_type, parse_fill_value)
        if isinstance(value, str):
            return _struct_from_bytes(_parse_base64(value, data_type), data_type)
        raise _bad(value, data_type, "expected an object of field values, or base64 of the item")
    raise MetadataError(f"fill values of data type {data_type.name} are not supported")


def _encode_float(value: np.floating) -> float | str:
    if np.isnan(value):
        bits = _bits_of_float(value)
        if bits == CANONICAL_NAN[value.dtype.itemsize]:
            return "NaN"
        return f"0x{bits:0{2 * value.dtype.itemsize}x}"
    if np.isinf(value):
        return "Infinity" if value > 0 else "-Infinity"
    return float(value)


def _b64(raw: bytes) -> str:
    return base64.standard_b64encode(raw).decode("ascii")


def encode_fill_value(value: FillValue, data_type: DataType) -> Any:
    """The JSON form of a fill value (as zarr-python writes it; non-canonical NaNs as
    hex; variable-length, null-terminated and raw_bytes bytes as base64; a struct
    as an object of its fields, or for "structured" as base64).  ``value`` must
    already be of the data type (see ``parse_fill_value`` and
    ``cast_fill_value``), or be a ``str`` / ``bytes`` for the variable-length types."""
    kind = data_type.kind
    if kind == "string":
        if not isinstance(value, str):
            raise _bad(value, data_type, "expected a str")
        return str(value)
    if kind == "bytes":
        if not isinstance(value, (bytes, bytearray)):
            raise _bad(value, data_type, "expected bytes")
        return _b64(value)
    if kind == "null_bytes":
        return _b64(bytes(value).rstrip(b"\0") if isinstance(value, (bytes, bytearray)) else b"")
    if kind == "utf32":
        return str(value)
    if kind in ML_KINDS:
        return encode_ml_fill(value, data_type.name, kind, data_type.dtype)
    scalar: Any = np.asarray(value, dtype=data_type.dtype)[()]
    if kind == "bool":
        return bool(scalar)
    if kind in ("int", "uint"):
        return int(scalar)
    if kind == "float":
        return _encode_float(scalar)
    if kind == "complex":
        return [_encode_float(scalar.real), _encode_float(scalar.imag)]
    if kind in ("datetime", "timedelta"):
        return int(np.asarray(scalar).view(np.int64))
    if kind == "raw":
        return _b64(scalar.tobytes()) if data_type.name == "raw_bytes" else list(scalar.tobytes())
    if kind == "struct":
        if data_type.name == "structured":
            return _b64(np.asarray(scalar).astype(data_type.dtype.newbyteorder("<")).tobytes())
        return {n: encode_fill_value(_field(scalar, n, f), f) for n, f in data_type.fields}
    raise MetadataError(f"fill values of data type {data_type.name} are not supported")


def _field(item: Any, name: str, data_type: DataType) -> Any:
    """A struct field of ``item`` as the fill value form of its type."""
    value = item[name]
    if data_type.kind == "null_bytes":
        return bytes(value)
    return value


def default_fill_value(data_type: DataType) -> FillValue:
    """The fill value used when the user gives none, as zarr-python: NaT for
    datetimes and timedeltas; zero / false / all-zero bytes / empty strings, for a
    struct field by field; ``""`` and ``b""`` for the variable-length types."""
    if data_type.kind == "string":
        return ""
    if data_type.kind == "bytes":
        return b""
    if data_type.kind in ("datetime", "timedelta"):
        return _time_from_count(-2**63, data_type)
    if data_type.kind == "null_bytes":
        return np.bytes_(b"")
    if data_type.kind == "struct":
        return _struct_from_fields({}, data_type, parse_fill_value)
    return cast(np.generic, np.zeros((), dtype=data_type.dtype)[()])


def _cast_number(value: Any, data_type: DataType) -> FillValue | None:
    """A number for a bool, int, uint, float or complex type, with zarr-python's
    casts: any number for bool (0 is false), bool and finite floats (truncated) for integers,
    bool and integers for floats, strings of a number; None if not castable."""
    kind, dtype = data_type.kind, data_type.dtype
    if isinstance(value, (str, np.str_)):
        if kind == "complex":
            try:
                value = complex(value)
            except ValueError:
                return None
        else:
            return parse_fill_value(str(value), data_type) if kind != "bool" else None
    is_bool = isinstance(value, (bool, np.bool_))
    same_type = isinstance(value, np.generic) and value.dtype.kind == dtype.kind
    if same_type and value.dtype.itemsize == dtype.itemsize:
        # same type: keep the bits (NaN payloads)
        return cast(np.generic, np.asarray(value).astype(dtype)[()])
    if kind == "bool":
        if isinstance(value, (int, float, np.number, np.bool_)):
            return np.bool_(bool(value))
    elif kind in ("int", "uint"):
        if is_bool:
            return dtype.type(int(value))
        if isinstance(value, (float, np.floating)) and math.isfinite(value):
            value = int(value)      # a fractional float truncated, as zarr-python (and numpy) do
        if isinstance(value, (int, np.integer)):
            return parse_fill_value(int(value), data_type)
    else:
        if is_bool:
            value = int(value)
        if isinstance(value, (int, np.integer)):
            value = _parse_float(int(value), np.dtype(np.float64), data_type)
        accepted: tuple[type, ...] = (float, np.floating)
        if kind == "complex":
            accepted += (complex, np.complexfloating)
        if isinstance(value, accepted):
            with np.errstate(over="ignore"):
                return cast(np.generic, np.asarray(value).astype(dtype)[()])
    return None


def _cast_time(value: Any, data_type: DataType) -> FillValue | None:
    """A datetime / timedelta from an integer count of units, a numpy datetime /
    timedelta (converted to the unit), a string numpy reads ("NaT",
    "2020-01-01"), or a Python datetime / date / timedelta."""
    want = np.datetime64 if data_type.kind == "datetime" else np.timedelta64
    if is_int(value) or (isinstance(value, np.integer) and not isinstance(value, (np.bool_, np.timedelta64))):
        return parse_fill_value(int(value), data_type)
    if isinstance(value, (str, want, dt.date if data_type.kind == "datetime" else dt.timedelta)):
        try:
            return cast(np.generic, np.array(value).astype(data_type.dtype)[()])
        except (ValueError, TypeError):
            return None
    return None


def _cast_string(value: Any, data_type: DataType) -> FillValue | None:
    """utf32: a str (or a number, as its text), cut to the type's length (as
    zarr-python); null_bytes: bytes (or an ASCII str, or a number as its text), cut
    likewise."""
    length = data_type.itemsize // 4 if data_type.kind == "utf32" else data_type.itemsize
    if isinstance(value, (int, float, np.number)) and not isinstance(value, (bool, np.bool_)):
        value = str(value)
    if data_type.kind == "utf32":
        return _string_item(str(value)[:length], data_type) if isinstance(value, str) else None
    if isinstance(value, str):
        try:
            value = value.encode("ascii")
        except UnicodeEncodeError:
            return None
    if isinstance(value, (bytes, bytearray, memoryview)):
        return np.bytes_(bytes(value)[:length])
    return None


def _cast_struct(value: Any, data_type: DataType) -> FillValue | None:
    """A struct from a structured numpy item, a tuple of field values, an object
    of field values (each cast as its field's fill value), or its bytes
    (native order)."""
    if isinstance(value, np.void) and value.dtype.fields is not None:
        if value.dtype.names != data_type.dtype.names:
            return None
        value = value.item()
    if isinstance(value, (tuple, list)):
        if len(value) != len(data_type.fields):
            return None
        value = {n: v for (n, _), v in zip(data_type.fields, value)}
    if isinstance(value, dict):
        return _struct_from_fields(value, data_type, cast_fill_value)
    raw = value.tobytes() if isinstance(value, np.void) else value
    if isinstance(raw, (bytes, bytearray)) and len(raw) == data_type.itemsize:
        return cast(np.generic, np.frombuffer(bytes(raw), dtype=data_type.dtype)[0])
    return None


def cast_fill_value(value: Any, data_type: DataType) -> FillValue:
    """A user's ``fill_value`` argument as a scalar of ``data_type.dtype`` (a ``str``
    / ``bytes`` for the variable-length types).

    Accepts None (the default), the JSON forms of ``parse_fill_value``, Python and
    numpy scalars, with zarr-python's casts: numbers for bool (0 is false), bool
    and floats for integers (a fractional float truncated, as zarr-python), bool,
    integers and strings of a number for floats and
    complex; NaN payloads of numpy float scalars are kept.  Datetimes and
    timedeltas take a count of units, numpy scalars (converted to the unit), "NaT"
    or dates numpy reads, and Python datetimes; fixed-length strings and bytes take
    str / bytes (cut to the length, as zarr-python); raw types take bytes or
    np.void of the right length; structs a structured item, a tuple or dict of
    field values.  "string" takes a ``str``; variable-length bytes take bytes-like
    values or an array of integers 0..255 (a ``str`` is refused there: base64 or
    UTF-8 would be a guess).  Raises MetadataError.
    """
    if value is None:
        return default_fill_value(data_type)
    kind, dtype = data_type.kind, data_type.dtype
    if isinstance(value, np.ndarray) and value.ndim == 0:
        value = value[()]
    if kind == "string":
        if isinstance(value, str):
            return str(value)
        raise _bad(value, data_type, "expected a str")
    if kind == "bytes":
        if isinstance(value, (bytes, bytearray, memoryview)):
            return bytes(value)
        if isinstance(value, (list, tuple)):
            return _parse_byte_list(value, data_type)
        why = "expected bytes"
        if isinstance(value, str):
            why += (f" (a str is ambiguous: give {value.encode('utf-8', 'backslashreplace')!r}, or its "
                    "base64 form in the JSON metadata)")
        raise _bad(value, data_type, why)
    result: FillValue | None = None
    if kind in ML_KINDS:
        return cast_ml_fill(value, data_type.name, kind, dtype)
    if kind in ("datetime", "timedelta"):
        result = _cast_time(value, data_type)
    elif kind in ("utf32", "null_bytes"):
        result = _cast_string(value, data_type)
    elif kind == "struct":
        result = _cast_struct(value, data_type)
    elif kind == "raw":
        raw = value.tobytes() if isinstance(value, np.void) else value
        if isinstance(raw, (bytes, bytearray)) and len(raw) == dtype.itemsize:
            return cast(np.generic, np.frombuffer(bytes(raw), dtype=dtype)[0])
        if isinstance(value, (list, str)):
            return parse_fill_value(value, data_type)
    elif isinstance(value, (list, tuple)):
        return parse_fill_value(list(value), data_type)
    else:
        result = _cast_number(value, data_type)
    if result is None:
        raise _bad(value, data_type)
    return result


def fill_bytes(value: Any, dtype: np.dtype) -> bytes:
    """The fill value ``value`` as one item of ``dtype`` (native byte order), the
    bytes the engine fills missing chunks with: ``b""`` for object
    (variable-length) items; for None (a v2 array's undefined fill value) what
    zarr-python 3 reads: NaT for datetimes and timedeltas, else zeros; bytes
    shorter than the item padded with zeros."""
    if dtype.kind == "O":
        return b""
    if value is None:
        if dtype.kind in "mM":
            return np.array("NaT", dtype=dtype).tobytes()
        return bytes(dtype.itemsize)
    if isinstance(value, (bytes, bytearray)):
        return bytes(value).ljust(dtype.itemsize, b"\0")
    return np.asarray(value, dtype=dtype).tobytes()
