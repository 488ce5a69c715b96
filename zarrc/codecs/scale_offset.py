"""The scale_offset codec (v3 ``scale_offset``, zarr-extensions): encodes
``(x - offset) * scale`` and decodes ``x / scale + offset`` in the arithmetic of the
chunk's data type, as zarr-python 3.4 does it (numpy's): floats in their own
precision, integers checked against the type's range (int64 wrapping as numpy's int64
arithmetic), decoded integers only where the division is exact.  The arithmetic is the
kernels' (``zarrc._kernels.values.ScaleOffset``), one call per chunk without the GIL."""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any, cast

import numpy as np

from zarrc._kernels.values import INEXACT, TYPE_CODES
from zarrc._kernels.values import ScaleOffset as ScaleOffsetKernel
from zarrc.codecs._base import Codec, Fail, codec_fail
from zarrc.codecs.registry import register
from zarrc.errors import CodecError, MetadataError
from zarrc.metadata.codecs import ARRAY_TO_ARRAY, required_members
from zarrc.metadata.common import fail
from zarrc.metadata.dtypes import DataType, from_numpy
from zarrc.metadata.fill_value import parse_fill_value


def kernel_type(dtype: np.dtype, codec: str, fail: Fail) -> int:
    """The kernels' code of numeric ``dtype`` (integers and floats of 1-8 bytes)."""
    code = TYPE_CODES.get(np.dtype(dtype).newbyteorder("=").str[1:])
    if code is None:
        fail("data_type", str(np.dtype(dtype)), f"is not an integer or floating-point type {codec} supports")
    return code


def scalar_of(value: Any, data_type: DataType, member: str, fail: Fail) -> Any:
    """JSON scalar ``value`` (the fill value encoding of ``data_type``) as a Python number."""
    if isinstance(value, bool) or not isinstance(value, (int, float, str)):
        fail(member, value, f"must be a number or a string (a {data_type.name} fill value)")
    try:
        return cast(np.generic, parse_fill_value(value, data_type)).item()
    except MetadataError:
        fail(member, value, f"is not representable in {data_type.name}")


def check_config(config: Mapping[str, Any], data_type: DataType, fail: Fail) -> tuple[Any, Any]:
    """(offset, scale) as numbers of ``data_type``; ``fail`` for what the spec forbids."""
    kernel_type(data_type.dtype, "scale_offset", fail)
    offset = scalar_of(config.get("offset", 0), data_type, "offset", fail)
    scale = scalar_of(config.get("scale", 1), data_type, "scale", fail)
    if scale == 0:
        fail("scale", config.get("scale"), "must be non-zero")
    return offset, scale


@register
class ScaleOffset(Codec):
    """array -> array: ``(x - offset) * scale`` on encode, ``x / scale + offset`` on
    decode; ``offset`` and ``scale`` are numbers or JSON strings ("NaN", "Infinity",
    hex floats) in the fill value encoding of the chunk's data type (zarr-python 3.4's
    ``zarr.codecs.ScaleOffset``)."""

    name = "scale_offset"
    codec_id = "scale_offset"
    category = ARRAY_TO_ARRAY
    fixed_size = True

    def __init__(self, *, offset: float | str = 0, scale: float | str = 1) -> None:
        for key, value in (("offset", offset), ("scale", scale)):
            if isinstance(value, bool) or not isinstance(value, (int, float, str)):
                raise CodecError(f"scale_offset: {key} must be a number or a string, got {value!r}")
        self.offset = offset
        self.scale = scale

    @classmethod
    def parse_spec(cls, config: Mapping[str, Any], shape: tuple[int, ...],
                   data_type: DataType) -> dict[str, Any]:
        """offset, scale: the data type's fill value encoding (offset non-zero)."""
        required_members(config, (), ("offset", "scale"))
        check_config(config, data_type, fail)
        return {k: config[k] for k in ("offset", "scale") if k in config}

    def configuration(self) -> dict[str, Any]:
        conf: dict[str, Any] = {}
        if self.offset != 0:
            conf["offset"] = self.offset
        if self.scale != 1:
            conf["scale"] = self.scale
        return conf

    def to_dict(self) -> dict[str, Any]:
        conf = self.configuration()
        return {"name": self.name, "configuration": conf} if conf else {"name": self.name}

    def __hash__(self) -> int:
        return hash((self.name, repr(self.configuration())))

    def encoded(self, dtype: np.dtype, shape: tuple[int, ...]) -> tuple[np.dtype, tuple[int, ...]]:
        """The data type and shape of the encoded chunk: unchanged."""
        return np.dtype(dtype), shape

    def value_step(self, dtype: np.dtype) -> tuple[tuple[Any, ...], np.dtype]:
        """(the kernels' Chain arguments of this codec for items of native ``dtype``, the
        data type it encodes to)."""
        dtype = np.dtype(dtype)
        data_type = from_numpy(dtype)
        offset, scale = check_config(self.configuration(), data_type, codec_fail("scale_offset"))
        code = kernel_type(dtype, "scale_offset", codec_fail("scale_offset"))
        return ("scale_offset", dtype.itemsize, code, offset, scale), dtype

    def _kernel(self, dtype: np.dtype) -> ScaleOffsetKernel:
        data_type = from_numpy(np.dtype(dtype).newbyteorder("="))
        offset, scale = check_config(self.configuration(), data_type, codec_fail("scale_offset"))
        return ScaleOffsetKernel(kernel_type(data_type.dtype, "scale_offset", codec_fail("scale_offset")),
                                 offset, scale)

    def _run(self, arr: Any, decode: bool, dtype: np.dtype | None = None) -> np.ndarray:
        src = np.ascontiguousarray(arr)
        native = src.dtype.newbyteorder("=")
        src = src.astype(native, copy=False)
        out = np.empty(src.shape, native)
        bad = self._kernel(native).run(decode, src.reshape(-1).view(np.uint8), out.reshape(-1).view(np.uint8),
                                       src.size)
        if bad is not None:
            index, why = bad
            value = src.reshape(-1)[index]
            if why == INEXACT:
                raise CodecError(f"scale_offset: item {index} ({value}) is not divisible by scale={self.scale!r}: "
                                 f"its decoded value is not representable in {native}")
            action = "decodes" if decode else "encodes"
            raise CodecError(f"scale_offset: item {index} ({value}) {action} to a value outside the range of "
                             f"{native} (offset={self.offset!r}, scale={self.scale!r})")
        return out

    def encode(self, buf: Any) -> np.ndarray:    # type: ignore[override]
        """The encoded chunk (an array of the same data type and shape)."""
        return self._run(buf, False)

    def decode(self, buf: Any, out: Any = None) -> np.ndarray:
        """The decoded chunk (an array of the same data type and shape)."""
        result = self._run(buf, True)
        if out is not None:
            np.copyto(np.asarray(out).reshape(result.shape), result)
            return out
        return result


__all__ = ["ScaleOffset"]
