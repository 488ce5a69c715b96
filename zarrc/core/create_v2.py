"""The ``.zarray`` of a new v2 array, from ``create_array``'s arguments (zarr-python's
meaning of each for ``zarr_format=2``)."""

from __future__ import annotations

from collections.abc import Iterable, Mapping
from typing import Any

import numpy as np

from zarrc.core.conventions import v2_dimension_attributes
from zarrc.errors import ArgumentTypeError, MetadataError, UnknownDataTypeError
from zarrc.metadata.dtypes_v2 import OBJECT_CODECS, cast_fill_value_v2, object_codec_id
from zarrc.metadata.v2 import ArrayMetadataV2

DEFAULT_COMPRESSOR = {"id": "zstd", "level": 0}        # as zarr-python 3 for v2
STRING_NAMES = ("str", "string", "<class 'str'>")
BYTES_NAMES = ("bytes", "variable_length_bytes")


def codec_config(codec: Any, what: str) -> dict[str, Any]:
    """The numcodecs configuration ({"id": ...}) of a codec object or dict.
    MetadataError for a dict without an "id", ArgumentTypeError for other objects."""
    if isinstance(codec, Mapping) and isinstance(codec.get("id"), str):
        return dict(codec)
    if hasattr(codec, "get_config"):
        return dict(codec.get_config())
    cls = MetadataError if isinstance(codec, Mapping) else ArgumentTypeError
    raise cls(f"{what} {codec!r} is not a numcodecs codec or a configuration with an \"id\"")


def _list(value: Any, what: str) -> list:
    if isinstance(value, (str, bytes)) or not isinstance(value, Iterable):
        raise ArgumentTypeError(f"{what} must be a numcodecs codec, a configuration with an \"id\" "
                                f"or a sequence of them, got {value!r}")
    return list(value)


def object_codec(dtype: Any) -> tuple[np.dtype, str | None]:
    """(numpy dtype, object codec id for variable-length types or None) of a v2
    ``dtype`` argument; UnknownDataTypeError (a TypeError) if it is no data type."""
    if dtype is str or (isinstance(dtype, str) and dtype in STRING_NAMES):
        return np.dtype(object), "vlen-utf8"
    if dtype is bytes or (isinstance(dtype, str) and dtype in BYTES_NAMES):
        return np.dtype(object), "vlen-bytes"
    if type(dtype).__name__ in ("StringDType", "VariableLengthUTF8"):
        return np.dtype(object), "vlen-utf8"
    if type(dtype).__name__ == "VariableLengthBytes":
        return np.dtype(object), "vlen-bytes"
    try:
        np_dtype = np.dtype(dtype)
    except (TypeError, ValueError) as exc:
        raise UnknownDataTypeError(f"dtype {dtype!r} is not a data type: {exc}") from None
    return np_dtype, ("vlen-utf8" if np_dtype.kind == "O" else None)


def _default_fill(dtype: np.dtype) -> Any:
    if dtype.kind == "O":
        return ""
    if dtype.kind in "mM":
        return np.array("NaT", dtype=dtype)[()]
    if dtype.fields is not None:
        return None
    return np.zeros((), dtype=dtype)[()]


def array_metadata_v2(shape: tuple[int, ...], dtype: Any, chunks: tuple[int, ...], *,
                      fill_value: Any, order: str | None, filters: Any, compressors: Any,
                      compressor: Any, serializer: Any, chunk_key_encoding: Any,
                      dimension_separator: str | None, dimension_names: Any, shards: Any,
                      attributes: dict | None, default: Any = None) -> ArrayMetadataV2:
    """``fill_value`` is ``default`` when not given (the type's default), None for
    null.  ``dimension_names`` are written as the attribute ``_ARRAY_DIMENSIONS``
    (xarray's and GDAL's form).  Raises MetadataError for arguments v2 cannot express
    (shards, serializers, unnamed dimensions, more than one compressor)."""
    if shards is not None:
        raise MetadataError("Zarr v2 arrays cannot be sharded (shards must be None)")
    attributes = v2_dimension_attributes(dimension_names, len(shape), attributes)
    if not (isinstance(serializer, str) and serializer == "auto"):
        raise MetadataError("Zarr v2 arrays have no serializer (give filters and a compressor)")
    np_dtype, vlen = object_codec(dtype)
    filter_list = [] if filters is None else [filters] if isinstance(filters, Mapping) or hasattr(
        filters, "get_config") else _list(filters, "filters")
    configs = [codec_config(f, "filter") for f in filter_list]
    if vlen is not None and object_codec_id(configs) is None:
        configs.insert(0, {"id": vlen})
    if compressor is not None and not (isinstance(compressor, str) and compressor == "unset"):
        compressors = compressor
    elif compressor is None:
        compressors = None
    if isinstance(compressors, str) and compressors == "auto":
        compressors = DEFAULT_COMPRESSOR
    if compressors is not None and not isinstance(compressors, Mapping) and not hasattr(compressors, "get_config"):
        compressors = _list(compressors, "compressors")
        if len(compressors) > 1:
            raise MetadataError(f"Zarr v2 arrays take at most one compressor, got {len(compressors)}")
        compressors = compressors[0] if compressors else None
    comp = None if compressors is None else codec_config(compressors, "compressor")
    if comp is not None and comp.get("id") == "zstd" and comp.get("checksum") is False:
        del comp["checksum"]     # as zarr-python writes numcodecs' Zstd (its issue 2647)
    separator = dimension_separator
    if chunk_key_encoding is not None:
        enc = dict(chunk_key_encoding) if isinstance(chunk_key_encoding, Mapping) else {
            "name": chunk_key_encoding}
        if enc.get("name") != "v2":
            raise MetadataError(f"Zarr v2 arrays use the 'v2' chunk key encoding, got {chunk_key_encoding!r}")
        separator = enc.get("separator", enc.get("configuration", {}).get("separator", separator))
    if fill_value is default:
        fill_value = _default_fill(np_dtype)
    elif fill_value is not None and np_dtype.kind != "O" and not isinstance(
            fill_value, (str, bytes, np.generic)):
        try:       # numbers, tuples for structured types -> an item of the dtype
            fill_value = np.asarray(fill_value, dtype=np_dtype)[()]
        except (TypeError, ValueError):
            pass   # left for the metadata's own check, which names the problem
    elif isinstance(fill_value, str) and np_dtype.kind in "SUMmc" and np_dtype.fields is None:
        fill_value = cast_fill_value_v2(fill_value, np_dtype)    # a value, as zarr-python casts it
    if np_dtype.kind == "O" and object_codec_id(configs) not in OBJECT_CODECS:
        raise MetadataError("object arrays need an object codec filter (vlen-utf8, vlen-bytes, ...)")
    return ArrayMetadataV2(
        shape=shape, chunks=chunks, dtype=np_dtype, compressor=comp, fill_value=fill_value,
        order=order or "C", filters=configs or None, dimension_separator=separator or ".",
        attributes=attributes or {})
