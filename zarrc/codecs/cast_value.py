"""The cast_value codec (v3 ``cast_value``, zarr-extensions): each element converted by
value to ``data_type`` (and back on decode): the scalar map first, then exact values,
then ``rounding`` (nearest-even, towards-zero, towards-positive, towards-negative,
nearest-away) and ``out_of_range`` (unset: an error; "clamp"; "wrap", integer targets
only).  NaN and infinities carry over between float types and cannot become integers
except through the scalar map.  Values as zarr-python 3.4 (cast-value-rs) gives them;
the kernels' ``zarrc._kernels.values.Cast`` runs a chunk per call without the GIL."""

from __future__ import annotations

import math
from collections.abc import Mapping
from typing import Any

import numpy as np

from zarrc._kernels.values import NOT_FINITE, OUT_OF_RANGE, ROUNDING, TYPE_CODES, Cast
from zarrc.codecs._base import Codec, Fail, codec_fail
from zarrc.codecs.registry import register
from zarrc.codecs.scale_offset import scalar_of
from zarrc.errors import CodecError, MetadataError
from zarrc.metadata.codecs import ARRAY_TO_ARRAY, required_members
from zarrc.metadata.common import fail
from zarrc.metadata.dtypes import DataType, as_data_type, from_numpy, parse_data_type

NUMBER_TYPES = ("int8", "int16", "int32", "int64", "uint8", "uint16", "uint32", "uint64",
                "float16", "float32", "float64")
ROUNDING_MODES = tuple(ROUNDING)
OUT_OF_RANGE_MODES = ("clamp", "wrap")
MAX_MAP = 64      # scalar_map entries per direction (the kernels' ZV_MAX_MAP)


def _number_type(value: Any, member: str, fail: Fail) -> DataType:
    try:
        data_type = parse_data_type(value) if isinstance(value, (str, dict)) else as_data_type(value)
    except (MetadataError, TypeError, ValueError):
        fail(member, value, "must be a Zarr v3 data type")
    if data_type.name not in NUMBER_TYPES:
        fail(member, value, f"must be one of the integer and floating-point types {list(NUMBER_TYPES)}")
    return data_type


def _scalar_map(value: Any, source: DataType, target: DataType, fail: Fail) -> dict[str, list[tuple[Any, Any]]]:
    """The scalar map as {"encode": [(in, out), ...], "decode": [...]}, JSON scalars kept;
    each entry checked against its direction's data types."""
    if not isinstance(value, Mapping):
        fail("scalar_map", value, 'must be an object with "encode" and/or "decode"')
    extra = set(value) - {"encode", "decode"}
    if extra:
        fail("scalar_map", value, f"has unknown members {sorted(extra)}")
    out: dict[str, list[tuple[Any, Any]]] = {}
    for direction, (key_type, val_type) in (("encode", (source, target)), ("decode", (target, source))):
        if direction not in value:
            continue
        entries = value[direction]
        if isinstance(entries, Mapping):
            entries = list(entries.items())
        if not isinstance(entries, (list, tuple)):
            fail(f"scalar_map.{direction}", entries, "must be an array of [input, output] pairs")
        pairs = []
        for entry in entries:
            if not isinstance(entry, (list, tuple)) or len(entry) != 2:
                fail(f"scalar_map.{direction}", entry, "must be an [input, output] pair")
            if source is not None:
                scalar_of(entry[0], key_type, f"scalar_map.{direction} key", fail)
                scalar_of(entry[1], val_type, f"scalar_map.{direction} value", fail)
            pairs.append((entry[0], entry[1]))
        if len(pairs) > MAX_MAP:
            fail(f"scalar_map.{direction}", f"{len(pairs)} entries", f"has more than the {MAX_MAP} zarrc supports")
        out[direction] = pairs
    return out


def check_config(config: Mapping[str, Any], source: DataType | None, fail: Fail) -> dict[str, Any]:
    """The configuration normalised (``data_type`` its JSON name; rounding, out_of_range,
    scalar_map only when given); ``fail`` for what the spec forbids.  ``source``: the data
    type the codec receives (None: not known yet, the scalar map is checked later)."""
    target = _number_type(config.get("data_type"), "data_type", fail)
    if source is not None and source.name not in NUMBER_TYPES:
        fail("data_type", source.name, "(the codec's input) must be an integer or floating-point type")
    rounding = config.get("rounding", "nearest-even")
    if rounding not in ROUNDING_MODES:
        fail("rounding", rounding, f"must be one of {list(ROUNDING_MODES)}")
    oor = config.get("out_of_range")
    if oor is not None and oor not in OUT_OF_RANGE_MODES:
        fail("out_of_range", oor, f"must be one of {list(OUT_OF_RANGE_MODES)}")
    if oor == "wrap" and target.kind not in ("int", "uint"):
        fail("out_of_range", oor, f'"wrap" needs an integer data_type, not {target.name}')
    norm: dict[str, Any] = {"data_type": target.name}
    if "rounding" in config:
        norm["rounding"] = rounding
    if oor is not None:
        norm["out_of_range"] = oor
    if config.get("scalar_map") is not None:
        norm["scalar_map"] = _scalar_map(config["scalar_map"], source, target, fail)  # type: ignore[arg-type]
    return norm


def _map_number(value: Any, data_type: DataType) -> Any:
    """A scalar map entry as the exact number of ``data_type`` (int, or float)."""
    number = scalar_of(value, data_type, "scalar_map", codec_fail("cast_value"))
    return int(number) if data_type.kind in ("int", "uint") else float(number)


@register
class CastValue(Codec):
    """array -> array: values cast to ``data_type`` (zarr-python 3.4's
    ``zarr.codecs.CastValue``): ``rounding`` (default "nearest-even"), ``out_of_range``
    (None: values outside the target's range are an error; "clamp"; "wrap"),
    ``scalar_map`` ({"encode": [[in, out], ...], "decode": [...]}, JSON scalars)."""

    name = "cast_value"
    codec_id = "cast_value"
    category = ARRAY_TO_ARRAY
    fixed_size = True

    def __init__(self, *, data_type: Any, rounding: str = "nearest-even", out_of_range: str | None = None,
                 scalar_map: Mapping[str, Any] | None = None) -> None:
        config: dict[str, Any] = {"data_type": data_type, "rounding": rounding}
        if out_of_range is not None:
            config["out_of_range"] = out_of_range
        if scalar_map is not None:
            config["scalar_map"] = scalar_map
        norm = check_config(config, None, codec_fail("cast_value"))
        self._set(norm)

    def _set(self, norm: Mapping[str, Any]) -> None:
        self.data_type: str = norm["data_type"]
        self.rounding: str = norm.get("rounding", "nearest-even")
        self.out_of_range: str | None = norm.get("out_of_range")
        sm = norm.get("scalar_map")
        self.scalar_map: dict[str, list[tuple[Any, Any]]] | None = (
            None if sm is None else {k: [tuple(p) for p in v] for k, v in sm.items()})
        self._kernels: dict[tuple[str, bool], Cast] = {}

    @property
    def dtype(self) -> np.dtype:
        """The numpy dtype of the encoded values."""
        return parse_data_type(self.data_type).dtype

    @classmethod
    def parse_spec(cls, config: Mapping[str, Any], shape: tuple[int, ...],
                   data_type: DataType) -> dict[str, Any]:
        """data_type (required), rounding, out_of_range, scalar_map (checked against the
        chunk's data type and the target)."""
        required_members(config, ("data_type",), ("rounding", "out_of_range", "scalar_map"))
        return check_config(config, data_type, fail)

    @classmethod
    def spec_data_type(cls, config: Mapping[str, Any], data_type: DataType) -> DataType:
        return parse_data_type(config["data_type"])

    @classmethod
    def from_spec(cls, configuration: Mapping[str, Any]) -> CastValue:
        codec = cls.__new__(cls)
        codec._set(configuration)
        return codec

    def configuration(self) -> dict[str, Any]:
        conf: dict[str, Any] = {"data_type": self.data_type}
        if self.rounding != "nearest-even":
            conf["rounding"] = self.rounding
        if self.out_of_range is not None:
            conf["out_of_range"] = self.out_of_range
        if self.scalar_map is not None:
            conf["scalar_map"] = {k: [list(p) for p in v] for k, v in self.scalar_map.items()}
        return conf

    def __hash__(self) -> int:
        return hash((self.name, repr(self.configuration())))

    def encoded(self, dtype: np.dtype, shape: tuple[int, ...]) -> tuple[np.dtype, tuple[int, ...]]:
        """The data type and shape of the encoded chunk."""
        return self.dtype, shape

    def _pairs(self, source: DataType, target: DataType, direction: str) -> list[tuple[Any, Any]]:
        src, dst = (source, target) if direction == "encode" else (target, source)
        pairs = (self.scalar_map or {}).get(direction, [])
        return [(_map_number(k, src), _map_number(v, dst)) for k, v in pairs]

    def value_step(self, dtype: np.dtype) -> tuple[tuple[Any, ...], np.dtype]:
        """(the kernels' Chain arguments of this codec for items of native ``dtype``, the
        data type it encodes to)."""
        dtype = np.dtype(dtype)
        source, target = from_numpy(dtype), parse_data_type(self.data_type)
        if source.name not in NUMBER_TYPES:
            codec_fail("cast_value")("data_type", source.name,
                                     "(the codec's input) must be an integer or floating-point type")
        args = ("cast_value", dtype.itemsize, target.itemsize, TYPE_CODES[dtype.str[1:]],
                TYPE_CODES[target.dtype.str[1:]], ROUNDING[self.rounding], OUT_OF_RANGE[self.out_of_range],
                self._pairs(source, target, "encode"), self._pairs(source, target, "decode"))
        return args, target.dtype

    def _kernel(self, source: np.dtype, decode: bool) -> Cast:
        key = (source.str, decode)
        kernel = self._kernels.get(key)
        if kernel is None:
            fail_ = codec_fail("cast_value")
            array_type = from_numpy(source)
            target = parse_data_type(self.data_type)
            if array_type.name not in NUMBER_TYPES:
                fail_("data_type", array_type.name, "(the codec's input) must be an integer or floating-point type")
            src, dst = (target, array_type) if decode else (array_type, target)
            pairs = (self.scalar_map or {}).get("decode" if decode else "encode", [])
            entries = [(_map_number(k, src), _map_number(v, dst)) for k, v in pairs]
            kernel = Cast(TYPE_CODES[src.dtype.str[1:]], TYPE_CODES[dst.dtype.str[1:]], ROUNDING[self.rounding],
                          OUT_OF_RANGE[self.out_of_range], entries)
            self._kernels[key] = kernel
        return kernel

    def _run(self, arr: Any, source: np.dtype, target: np.dtype, decode: bool) -> np.ndarray:
        src = np.ascontiguousarray(arr)
        src = src.astype(src.dtype.newbyteorder("="), copy=False)
        out = np.empty(src.shape, target)
        kernel = self._kernel(source, decode)
        bad = kernel.run(src.reshape(-1).view(np.uint8), out.reshape(-1).view(np.uint8), src.size)
        if bad is not None:
            index, why, value = bad
            shown = int(value) if math.isfinite(value) and src.dtype.kind in "iu" else src.reshape(-1)[index]
            if why == NOT_FINITE:
                raise CodecError(f"cast_value: item {index} is {shown}, which {target} cannot hold "
                                 f"(map it with scalar_map)")
            raise CodecError(f"cast_value: item {index} ({shown}) is out of the range of {target} "
                             f"(rounding {self.rounding!r}; set out_of_range to 'clamp' or 'wrap' to allow it)")
        return out

    def encode(self, buf: Any) -> np.ndarray:    # type: ignore[override]
        """The chunk's values as ``data_type`` (an array of the same shape)."""
        arr = np.asarray(buf)
        return self._run(arr, arr.dtype.newbyteorder("="), self.dtype, False)

    def decode_array(self, arr: Any, dtype: np.dtype) -> np.ndarray:
        """Encoded values (``data_type``) back to ``dtype``, the chunk's data type."""
        return self._run(np.asarray(arr, dtype=self.dtype), np.dtype(dtype).newbyteorder("="),
                         np.dtype(dtype).newbyteorder("="), True)

    def decode(self, buf: Any, out: Any = None) -> Any:
        """Encoded values back to ``out``'s data type (required: the codec does not know
        the chunk's data type otherwise)."""
        if out is None:
            raise CodecError("cast_value: decode needs out= (an array of the chunk's data type)")
        result = self.decode_array(np.asarray(buf).reshape(-1), np.asarray(out).dtype)
        np.copyto(np.asarray(out).reshape(-1), result)
        return out


__all__ = ["CastValue"]
