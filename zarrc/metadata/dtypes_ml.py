"""The low-precision v3 data types held in memory as ``ml_dtypes`` numpy dtypes:
``bfloat16``; the float8 family (the registered ``float8_e3m4``, ``float8_e4m3``,
``float8_e4m3fnuz``, ``float8_e4m3b11fnuz``, ``float8_e5m2``, ``float8_e5m2fnuz``,
``float8_e8m0fnu``, and tensorstore's ``float8_e4m3fn``, which ml_dtypes names
alike); ``float4_e2m1fn``, ``float6_e2m3fn``, ``float6_e3m2fn``; ``int2``,
``int4``, ``uint2``, ``uint4``.

ml_dtypes is optional (the ``zarrc[dtypes]`` extra) and imported only when one of
these types is parsed or asked for: ``ml_dtype`` raises MissingDependencyError
naming it otherwise.  Every type is one byte in memory except bfloat16 (two); the
sub-byte ones hold their value in the low bits of the byte (``bits``), and the
``packbits`` codec stores only those.

Fill values (each type's spec): the floats take JSON numbers, "NaN" (the type's
canonical NaN bits, ``NAN_BITS``), "Infinity" / "-Infinity" for the types with
infinities, and "0x..." with exactly two hex digits per byte; the integers take
JSON integers in range.  Written as zarr-python and tensorstore write floats: a
number, "NaN" for the canonical NaN, "Infinity" / "-Infinity", and other NaNs in
the hex form; float8_e8m0fnu always in hex but for "NaN" (tensorstore reads its
numbers as other values).  A number at most 2**-127 (0.0, tensorstore's default)
is float8_e8m0fnu's smallest value, 0x00, as tensorstore reads it.
"""

from __future__ import annotations

import importlib
import math
import re
from typing import Any, cast

import numpy as np

from zarrc.errors import MetadataError, MissingDependencyError

EXTRA_HINT = "pip install ml_dtypes (or zarrc[dtypes])"

# v3 name -> kind ("ml_float", "ml_int": signed integers, "ml_uint")
ML_KINDS = {
    "bfloat16": "ml_float",
    "float8_e3m4": "ml_float", "float8_e4m3": "ml_float", "float8_e4m3fn": "ml_float",
    "float8_e4m3fnuz": "ml_float", "float8_e4m3b11fnuz": "ml_float", "float8_e5m2": "ml_float",
    "float8_e5m2fnuz": "ml_float", "float8_e8m0fnu": "ml_float",
    "float4_e2m1fn": "ml_float", "float6_e2m3fn": "ml_float", "float6_e3m2fn": "ml_float",
    "int2": "ml_int", "int4": "ml_int", "uint2": "ml_uint", "uint4": "ml_uint",
}
# the bit pattern "NaN" means, for the types that have a NaN (each type's spec;
# float8_e4m3fn: tensorstore's and ml_dtypes' 0x7f)
NAN_BITS = {
    "bfloat16": 0x7FC0, "float8_e3m4": 0x78, "float8_e4m3": 0x7C, "float8_e4m3fn": 0x7F,
    "float8_e4m3fnuz": 0x80, "float8_e4m3b11fnuz": 0x80, "float8_e5m2": 0x7E,
    "float8_e5m2fnuz": 0x80, "float8_e8m0fnu": 0xFF,
}
HAS_INFINITY = ("bfloat16", "float8_e3m4", "float8_e4m3", "float8_e5m2")
# bits of a value, where fewer than the item's 8 (what packbits stores)
SUB_BYTE_BITS = {"int2": 2, "uint2": 2, "int4": 4, "uint4": 4,
                 "float4_e2m1fn": 4, "float6_e2m3fn": 6, "float6_e3m2fn": 6}
KINDS = ("ml_float", "ml_int", "ml_uint")
E8M0_MIN = 2.0**-127
HEX = re.compile(r"0x[0-9a-fA-F]+")
SPECIALS = {"NaN": math.nan, "Infinity": math.inf, "-Infinity": -math.inf}


def ml_dtype(name: str) -> np.dtype:
    """The numpy dtype of the v3 type ``name`` (a key of ML_KINDS), from ml_dtypes.
    Raises MissingDependencyError when ml_dtypes is not installed (or lacks the type)."""
    try:
        module = importlib.import_module("ml_dtypes")
    except ImportError:
        raise MissingDependencyError(f'data type "{name}" needs ml_dtypes: {EXTRA_HINT}') from None
    if not hasattr(module, name):
        raise MissingDependencyError(f'data type "{name}" needs a newer ml_dtypes than '
                                     f"{getattr(module, '__version__', '?')}: {EXTRA_HINT}")
    return np.dtype(getattr(module, name))


def ml_name(dtype: np.dtype) -> str | None:
    """The v3 name of an ml_dtypes dtype (None for any other dtype)."""
    if dtype.fields is None and getattr(dtype.type, "__module__", "") == "ml_dtypes":
        return dtype.name if dtype.name in ML_KINDS else None
    return None


def _bad(value: Any, name: str, why: str) -> MetadataError:
    shown = f'"{value}"' if isinstance(value, str) else repr(value)
    return MetadataError(f'"fill_value" {shown} is not valid for data type {name} ({why})')


def _of_bits(bits: int, dtype: np.dtype) -> np.generic:
    raw = bits.to_bytes(dtype.itemsize, "little")
    return cast(np.generic, np.frombuffer(raw, dtype=np.dtype(f"<u{dtype.itemsize}")).view(dtype)[0])


def bits_of(value: Any, dtype: np.dtype) -> int:
    """The item's bits, as an unsigned integer."""
    return int(np.asarray(value, dtype=dtype).reshape(1).view(np.dtype(f"u{dtype.itemsize}"))[0])


def parse_ml_fill(value: Any, name: str, kind: str, dtype: np.dtype) -> np.generic:
    """The fill value of the ml type ``name`` for its JSON form (MetadataError if not one)."""
    if kind != "ml_float":
        if isinstance(value, float) and value.is_integer():
            value = int(value)
        if isinstance(value, bool) or not isinstance(value, int):
            raise _bad(value, name, "expected an integer")
        bits = SUB_BYTE_BITS[name]
        low, high = (-(1 << (bits - 1)), (1 << (bits - 1)) - 1) if kind == "ml_int" else (0, (1 << bits) - 1)
        if not low <= value <= high:
            raise _bad(value, name, f"out of range {low}..{high}")
        return cast(np.generic, np.array(value).astype(dtype)[()])
    if isinstance(value, str):
        if value in SPECIALS:
            if value == "NaN":
                if name not in NAN_BITS:
                    raise _bad(value, name, "the type has no NaN")
                return _of_bits(NAN_BITS[name], dtype)
            if name not in HAS_INFINITY:
                raise _bad(value, name, "the type has no infinity")
            return cast(np.generic, np.array(SPECIALS[value]).astype(dtype)[()])
        if value.startswith("0x"):
            if not HEX.fullmatch(value):
                raise _bad(value, name, "not hexadecimal")
            bits = int(value, 16)
            if len(value) - 2 != 2 * dtype.itemsize:
                raise _bad(value, name, f"a hex fill value needs {2 * dtype.itemsize} digits")
            return _of_bits(bits, dtype)
        try:
            number = float(value)
        except ValueError:
            number = math.nan
        if not math.isfinite(number):   # "nan", "inf": only the spec's spellings
            raise _bad(value, name, 'expected a number, "NaN", "Infinity", "-Infinity" or "0x..."')
        value = number
    if isinstance(value, bool) or not isinstance(value, (int, float)):
        raise _bad(value, name, "expected a number")
    number = float(value)
    if math.isnan(number):
        raise _bad(value, name, 'write NaN as "NaN"')
    if math.isinf(number) and name not in HAS_INFINITY:
        raise _bad(value, name, "the type has no infinity")
    if name == "float8_e8m0fnu" and 0 <= number <= E8M0_MIN:
        # no zero: 0 (tensorstore's default, written 0.0) and below mean the smallest
        # value, 2**-127 (0x00), as tensorstore reads them (ml_dtypes would give NaN)
        return _of_bits(0, dtype)
    with np.errstate(over="ignore", invalid="ignore"):
        return cast(np.generic, np.array(number).astype(dtype)[()])


def encode_ml_fill(value: Any, name: str, kind: str, dtype: np.dtype) -> Any:
    """The JSON form of a fill value of the ml type ``name``."""
    scalar = np.asarray(value, dtype=dtype)[()]
    if kind != "ml_float":
        return int(scalar)
    number = float(scalar)
    if math.isnan(number):
        bits = bits_of(scalar, dtype)
        if bits == NAN_BITS.get(name):
            return "NaN"
        return f"0x{bits:0{2 * dtype.itemsize}x}"
    if math.isinf(number):
        return "Infinity" if number > 0 else "-Infinity"
    if name == "float8_e8m0fnu":
        # in hex: tensorstore (0.1.8x) reads numbers for this type other than ml_dtypes
        # and the spec do (1.0 as 0x3f), hex forms as the spec does
        return f"0x{bits_of(scalar, dtype):02x}"
    return number


def cast_ml_fill(value: Any, name: str, kind: str, dtype: np.dtype) -> np.generic:
    """A user's fill value (a number, a numpy scalar, a JSON form) as the ml type."""
    if isinstance(value, np.generic) and value.dtype == dtype:
        return value
    if isinstance(value, (str, np.str_)):
        return parse_ml_fill(str(value), name, kind, dtype)
    if isinstance(value, (bool, np.bool_)):
        value = int(value)
    if isinstance(value, (np.integer, np.floating)) or (isinstance(value, np.generic) and ml_name(value.dtype)):
        value = float(value) if kind == "ml_float" else int(value)
    if kind != "ml_float" and isinstance(value, float) and math.isfinite(value):
        value = int(value)
    if kind == "ml_float" and isinstance(value, float) and math.isnan(value):
        return parse_ml_fill("NaN", name, kind, dtype)     # (an error for the types without one)
    return parse_ml_fill(value, name, kind, dtype)
