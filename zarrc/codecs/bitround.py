"""The bitround codec (v3 ``bitround``, zarr-extensions): floats' significands rounded
to ``keepbits`` bits (complex numbers component by component), integers rounded to
``keepbits`` bits from their most significant set bit; ties to even.  Lossy: decoding
is the identity.  Values as numcodecs' BitRound and zarrs' bitround give them; the
kernels' ``zarrc._kernels.values.bitround`` runs a chunk per call without the GIL."""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

import numpy as np

from zarrc._kernels.values import bitround
from zarrc.codecs._base import Codec, Fail, codec_fail
from zarrc.codecs.registry import register
from zarrc.metadata.codecs import ARRAY_TO_ARRAY, required_members
from zarrc.metadata.common import fail, is_int
from zarrc.metadata.dtypes import DataType

# significand bits of the float types (complex: of each component)
MANTISSA_BITS = {"e": 10, "f": 23, "d": 52}


def units(dtype: np.dtype) -> tuple[int, int] | None:
    """(unit size in bytes, significand bits, 0 for integers) of ``dtype``'s values, or
    None where bitround is not defined (bool, strings, structs)."""
    dtype = np.dtype(dtype)
    if dtype.kind == "c":
        return dtype.itemsize // 2, MANTISSA_BITS[np.dtype(f"f{dtype.itemsize // 2}").char]
    if dtype.kind == "f":
        return dtype.itemsize, MANTISSA_BITS[dtype.char]
    if dtype.kind in "iumM":
        return dtype.itemsize, 0
    return None


def check_keepbits(keepbits: Any, fail: Fail) -> int:
    if not is_int(keepbits) or keepbits < 1:
        fail("keepbits", keepbits, "must be an integer of at least 1")
    return int(keepbits)


@register
class BitRound(Codec):
    """array -> array: values rounded to ``keepbits`` bits (encoding only)."""

    name = "bitround"
    codec_id = "bitround"
    category = ARRAY_TO_ARRAY
    fixed_size = True

    def __init__(self, *, keepbits: int) -> None:
        self.keepbits = check_keepbits(keepbits, codec_fail("bitround"))

    @classmethod
    def parse_spec(cls, config: Mapping[str, Any], shape: tuple[int, ...],
                   data_type: DataType) -> dict[str, Any]:
        """keepbits (required, >= 1); integer, float and complex data types only."""
        required_members(config, ("keepbits",))
        keepbits = check_keepbits(config["keepbits"], fail)
        if units(data_type.dtype) is None:
            fail("data_type", data_type.name, "is not an integer, float or complex type bitround rounds")
        return {"keepbits": keepbits}

    def configuration(self) -> dict[str, Any]:
        return {"keepbits": self.keepbits}

    def encoded(self, dtype: np.dtype, shape: tuple[int, ...]) -> tuple[np.dtype, tuple[int, ...]]:
        return np.dtype(dtype), shape

    def value_step(self, dtype: np.dtype) -> tuple[tuple[Any, ...], np.dtype]:
        """(the kernels' Chain arguments of this codec for items of native ``dtype``, the
        data type it encodes to: the same)."""
        dtype = np.dtype(dtype)
        spec = units(dtype)
        if spec is None:
            codec_fail("bitround")("data_type", str(dtype), "is not an integer, float or complex type")
        return ("bitround", dtype.itemsize, spec[0], spec[1], self.keepbits), dtype

    def encode(self, buf: Any) -> np.ndarray:    # type: ignore[override]
        """The chunk rounded (a new array of the same data type and shape)."""
        arr = np.array(buf, copy=True, order="C")
        spec = units(arr.dtype)
        if spec is None:
            codec_fail("bitround")("data_type", str(arr.dtype), "is not an integer, float or complex type")
        native = arr.astype(arr.dtype.newbyteorder("="), copy=False)
        bitround(native.reshape(-1).view(np.uint8), spec[0], spec[1], self.keepbits)
        return native

    def decode(self, buf: Any, out: Any = None) -> Any:
        """The identity (rounding cannot be undone)."""
        if out is not None:
            np.copyto(np.asarray(out).reshape(-1), np.asarray(buf).reshape(-1))
            return out
        return np.asarray(buf)


__all__ = ["BitRound"]
