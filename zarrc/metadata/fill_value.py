"""Fill values: the JSON forms of the v3 data-types spec <-> numpy scalars (str /
bytes for the variable-length types).

bool: true/false.  Integers: JSON integers within the type's range.  Floats: JSON
numbers, "NaN", "Infinity", "-Infinity", or "0x..." giving the bit pattern (exactly
2 * itemsize hex digits), reproduced bit-exactly.  Complex: a two-element array of
float forms.  Raw ``r<N>``: an array of N/8 integers 0..255.  ``string``: a JSON
string (-> ``str``).  Variable-length bytes: base64 of the bytes (as zarr-python 3.1
and later write and read it; ``""`` is empty bytes), or an array of integers
0..255 (as zarr-python 3.0 wrote it) (-> ``bytes``).

Encoding writes what zarr-python writes (JSON numbers, "NaN", "Infinity", base64
for bytes), except that a NaN other than the canonical one ("NaN" means sign 0, mantissa MSB 1, other
mantissa bits 0) is written in the hex form so its payload survives, as tensorstore
does.
"""

from __future__ import annotations

import base64
import binascii
import math
import re
from collections.abc import Sequence
from typing import Any, cast

import numpy as np

from zarrc.errors import MetadataError
from zarrc.metadata.common import describe, is_int
from zarrc.metadata.dtypes import DataType

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
        raise _bad(value, data_type, 'expected a number, "NaN", "Infinity", "-Infinity" or "0x..."')
    if is_int(value):
        try:
            as_float = float(value)
        except OverflowError:
            as_float = math.inf if value > 0 else -math.inf
    elif isinstance(value, float) and not math.isnan(value):
        as_float = value  # +-inf can come from JSON numbers like 1e999
    else:
        raise _bad(value, data_type)
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


def parse_fill_value(value: Any, data_type: DataType) -> FillValue:
    """The fill value for a JSON ``fill_value``: a numpy scalar of exactly
    ``data_type.dtype``, or a ``str`` (data type "string") or ``bytes``
    (variable-length bytes).

    Raises MetadataError when ``value`` is not a permitted fill value for the type
    (wrong JSON type, integer out of range, "nan" instead of "NaN", hex of the
    wrong length, invalid base64, ...).
    """
    kind, dtype = data_type.kind, data_type.dtype
    if kind == "string":
        if not isinstance(value, str):
            raise _bad(value, data_type, "expected a string")
        return str(value)
    if kind == "bytes":
        if isinstance(value, str):
            return _parse_base64(value, data_type)
        if isinstance(value, (list, tuple)):
            return _parse_byte_list(value, data_type)
        raise _bad(value, data_type, "expected base64 of the bytes, or an array of integers 0..255")
    if kind == "bool":
        if not isinstance(value, bool):
            raise _bad(value, data_type, "expected true or false")
        return np.bool_(value)
    if kind in ("int", "uint"):
        if not is_int(value):
            raise _bad(value, data_type, "expected an integer")
        info = np.iinfo(dtype)
        if not info.min <= value <= info.max:
            raise _bad(value, data_type, f"out of range {info.min}..{info.max}")
        return dtype.type(value)
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
    if kind == "raw":
        if (not isinstance(value, (list, tuple)) or len(value) != dtype.itemsize
                or not all(is_int(v) and 0 <= v <= 255 for v in value)):
            raise _bad(value, data_type, f"expected an array of {dtype.itemsize} integers 0..255")
        return np.frombuffer(bytes(value), dtype=dtype)[0]
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


def encode_fill_value(value: FillValue, data_type: DataType) -> Any:
    """The JSON form of a fill value (as zarr-python writes it; non-canonical NaNs as
    hex; variable-length bytes as base64).  ``value`` must already have
    ``data_type.dtype`` (see ``parse_fill_value`` and ``cast_fill_value``), or be a
    ``str`` / ``bytes`` for the variable-length types."""
    kind = data_type.kind
    if kind == "string":
        if not isinstance(value, str):
            raise _bad(value, data_type, "expected a str")
        return str(value)
    if kind == "bytes":
        if not isinstance(value, (bytes, bytearray)):
            raise _bad(value, data_type, "expected bytes")
        return base64.standard_b64encode(value).decode("ascii")
    scalar: Any = np.asarray(value, dtype=data_type.dtype)[()]
    if kind == "bool":
        return bool(scalar)
    if kind in ("int", "uint"):
        return int(scalar)
    if kind == "float":
        return _encode_float(scalar)
    if kind == "complex":
        return [_encode_float(scalar.real), _encode_float(scalar.imag)]
    if kind == "raw":
        return list(scalar.tobytes())
    raise MetadataError(f"fill values of data type {data_type.name} are not supported")


def default_fill_value(data_type: DataType) -> FillValue:
    """The fill value used when the user gives none: zero / false / all-zero bytes;
    ``""`` and ``b""`` for the variable-length types (as zarr-python)."""
    if data_type.kind == "string":
        return ""
    if data_type.kind == "bytes":
        return b""
    return cast(np.generic, np.zeros((), dtype=data_type.dtype)[()])


def cast_fill_value(value: Any, data_type: DataType) -> FillValue:
    """A user's ``fill_value`` argument as a scalar of ``data_type.dtype`` (a ``str``
    / ``bytes`` for the variable-length types).

    Accepts None (the default), the JSON forms of ``parse_fill_value``, Python and
    numpy scalars (integers must be integral and in range; floats are rounded to the
    type), complex numbers, and ``bytes`` / np.void of the right length for raw
    types.  NaN payloads of numpy float scalars are kept.  "string" takes a ``str``;
    variable-length bytes take bytes-like values or an array of integers 0..255 (a
    ``str`` is refused there: base64 or UTF-8 would be a guess).  Raises
    MetadataError.
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
    if isinstance(value, str) or (isinstance(value, Sequence) and not isinstance(value, (bytes, bytearray))):
        return parse_fill_value(list(value) if isinstance(value, tuple) else value, data_type)
    same_type = isinstance(value, np.generic) and value.dtype.kind == dtype.kind
    if same_type and value.dtype.itemsize == dtype.itemsize:
        # same type: keep the bits (NaN payloads)
        return cast(np.generic, np.asarray(value).astype(dtype)[()])
    is_bool = isinstance(value, (bool, np.bool_))
    if kind == "bool":
        if is_bool:
            return np.bool_(value)
    elif kind in ("int", "uint"):
        if not is_bool and (isinstance(value, (int, np.integer)) or (
                isinstance(value, (float, np.floating)) and float(value).is_integer())):
            return parse_fill_value(int(value), data_type)
    elif kind in ("float", "complex") and not is_bool:
        if isinstance(value, (int, np.integer)):
            value = _parse_float(int(value), np.dtype(np.float64), data_type)
        accepted: tuple[type, ...] = (float, np.floating)
        if kind == "complex":
            accepted += (complex, np.complexfloating)
        if isinstance(value, accepted):
            with np.errstate(over="ignore"):
                return cast(np.generic, np.asarray(value).astype(dtype)[()])
    elif kind == "raw":
        raw = value.tobytes() if isinstance(value, np.void) else value
        if isinstance(raw, (bytes, bytearray)) and len(raw) == dtype.itemsize:
            return np.frombuffer(bytes(raw), dtype=dtype)[0]
    raise _bad(value, data_type)


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
