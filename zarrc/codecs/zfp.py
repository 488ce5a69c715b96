"""The zfp codec (v3 ``zfp``, zarr-extensions): an array -> bytes codec compressing a
chunk with LLNL's zfp, without a zfp header, in one of zfp's modes (``reversible``,
``fixed_accuracy``, ``fixed_rate``, ``fixed_precision``; ``expert`` is parsed but
zfpy cannot run it).  zfp runs through the ``zfpy`` package, an optional extra:
``pip install 'zarrc[zfp]'``; without it, reading or writing such a chunk raises a
CodecError naming the extra (the metadata still parses).  Chunks of 1-4 dimensions
(0-d as one element); int32, int64, float32, float64, and int8 / int16 / uint8 /
uint16 (promoted to int32 as zfp_promote_* does) and float16 (as float32)."""

from __future__ import annotations

import math
from collections.abc import Mapping
from typing import Any

import numpy as np

from zarrc.codecs._base import Codec, Fail, codec_fail
from zarrc.codecs.bounded import zfp_padded
from zarrc.codecs.registry import register
from zarrc.errors import CodecError
from zarrc.metadata.codecs import ARRAY_TO_BYTES, required_members
from zarrc.metadata.common import fail, is_int
from zarrc.metadata.dtypes import DataType

EXTRA_HINT = "the zfp codec needs the zfpy package: pip install 'zarrc[zfp]'"
MODES = {
    "reversible": (),
    "fixed_accuracy": ("tolerance",),
    "fixed_rate": ("rate",),
    "fixed_precision": ("precision",),
    "expert": ("minbits", "maxbits", "maxprec", "minexp"),
}
DIRECT = ("int32", "int64", "float32", "float64")
PROMOTED = ("int8", "int16", "uint8", "uint16", "float16")


def zfpy_module() -> Any:
    """The zfpy module; CodecError naming the ``zfp`` extra when it is not installed."""
    try:
        import zfpy

    except ImportError:
        raise CodecError(EXTRA_HINT) from None
    return zfpy


def check_config(config: Mapping[str, Any], fail: Fail) -> dict[str, Any]:
    mode = config.get("mode")
    if mode not in MODES:
        fail("mode", mode, f"must be one of {list(MODES)}")
    members = MODES[mode]
    extra = set(config) - {"mode", *members}
    if extra:
        key = min(extra)
        fail(key, config[key], f'is not a member of mode "{mode}"')
    out: dict[str, Any] = {"mode": mode}
    for key in members:
        value: Any = config.get(key)
        if key in ("tolerance", "rate"):
            if isinstance(value, bool) or not isinstance(value, (int, float)) or value < 0:
                fail(key, value, "must be a non-negative number")
        elif not is_int(value) or (key != "minexp" and value < 0):
            fail(key, value, "must be an integer" + ("" if key == "minexp" else " of at least 0"))
        out[key] = value
    return out


@register
class Zfp(Codec):
    """array -> bytes: zfp compression (through zfpy) in ``mode`` with its parameters
    (``tolerance``, ``rate``, ``precision``)."""

    name = "zfp"
    codec_id = "zfp"
    category = ARRAY_TO_BYTES

    def __init__(self, *, mode: str = "reversible", **parameters: Any) -> None:
        self.config = check_config({"mode": mode, **parameters}, codec_fail("zfp"))

    @classmethod
    def parse_spec(cls, config: Mapping[str, Any], shape: tuple[int, ...],
                   data_type: DataType) -> dict[str, Any]:
        """mode and its members; chunks of at most 4 dimensions of the types zfp holds."""
        required_members(config, ("mode",), ("tolerance", "rate", "precision", "minbits", "maxbits",
                                             "maxprec", "minexp"))
        if data_type.name not in DIRECT + PROMOTED:
            fail("data_type", data_type.name, f"is not one zfp compresses ({list(DIRECT + PROMOTED)})")
        if len(shape) > 4:
            fail("chunk shape", list(shape), "has more than the 4 dimensions zfp compresses")
        return check_config(config, fail)

    @classmethod
    def from_spec(cls, configuration: Mapping[str, Any]) -> Zfp:
        codec = cls.__new__(cls)
        codec.config = dict(configuration)
        return codec

    def configuration(self) -> dict[str, Any]:
        return dict(self.config)

    def _params(self) -> dict[str, Any]:
        mode = self.config["mode"]
        if mode == "expert":
            raise CodecError("zfp: mode 'expert' is not supported by zfpy, which zarrc runs zfp with")
        return {k: self.config[k] for k in MODES[mode]}

    @staticmethod
    def _promote(arr: np.ndarray) -> np.ndarray:
        kind, bits = arr.dtype.kind, arr.dtype.itemsize * 8
        if arr.dtype.str[1:] in ("i4", "i8", "f4", "f8"):
            return arr
        if kind == "f":
            return arr.astype(np.float32)
        if kind == "i" and bits < 32:
            return arr.astype(np.int32) << (31 - bits)
        if kind == "u" and bits < 32:
            return (arr.astype(np.int32) - (1 << (bits - 1))) << (31 - bits)
        raise CodecError(f"zfp: data type {arr.dtype} is not one zfp compresses")

    @staticmethod
    def _demote(arr: np.ndarray, dtype: np.dtype) -> np.ndarray:
        kind, bits = dtype.kind, dtype.itemsize * 8
        if arr.dtype == dtype:
            return arr
        if kind == "f":
            return arr.astype(dtype)
        if kind == "i":
            return np.clip(arr >> (31 - bits), -(1 << (bits - 1)), (1 << (bits - 1)) - 1).astype(dtype)
        return np.clip((arr >> (31 - bits)) + (1 << (bits - 1)), 0, (1 << bits) - 1).astype(dtype)

    def encode(self, buf: Any) -> bytes:
        """The chunk (an array of 1-4 dimensions; 0-d as one element) compressed."""
        zfpy = zfpy_module()
        arr = np.asarray(buf)
        arr = np.ascontiguousarray(self._promote(arr.astype(arr.dtype.newbyteorder("="), copy=False)))
        if arr.ndim == 0:
            arr = arr.reshape(1)
        if arr.ndim > 4:
            raise CodecError(f"zfp: chunks of at most 4 dimensions, got shape {list(arr.shape)}")
        return bytes(zfpy.compress_numpy(arr, write_header=False, **self._params()))

    def decode_array(self, data: Any, shape: tuple[int, ...], dtype: np.dtype) -> np.ndarray:
        """The chunk of ``shape`` and ``dtype`` that ``data`` holds."""
        zfpy = zfpy_module()
        dtype = np.dtype(dtype)
        work = self._promote(np.zeros(0, dtype.newbyteorder("="))).dtype
        zshape = tuple(shape) if shape else (1,)
        try:
            rate = self.config.get("rate") if self.config["mode"] == "fixed_rate" else None
            minbits = int(4 ** len(zshape) * float(rate) + 0.5) if rate is not None else 0
            stream = zfp_padded(data, zshape, work.itemsize, minbits)   # (zfp reads without bounds)
            stream = stream if isinstance(stream, np.ndarray) else bytes(stream)
            arr = zfpy._decompress(stream, zfpy.dtype_to_ztype(work), zshape, **self._params())
        except (RuntimeError, ValueError, TypeError) as exc:   # what zfpy reports of bad data
            raise CodecError(f"zfp: chunk does not decompress: {exc}") from None
        arr = np.asarray(arr)
        if arr.size != math.prod(zshape):
            raise CodecError(f"zfp: chunk decodes to {arr.size} items, expected {math.prod(zshape)}")
        return self._demote(arr.reshape(shape), dtype)

    def decode(self, buf: Any, out: Any = None) -> Any:
        """Decoding needs the chunk's shape and data type: give ``out`` (an array)."""
        if out is None:
            raise CodecError("zfp: decode needs out= (an array of the chunk's shape and data type)")
        target = np.asarray(out)
        np.copyto(target, self.decode_array(buf, target.shape, target.dtype))
        return out


__all__ = ["EXTRA_HINT", "Zfp"]
