"""The keywords of arrays made from or like others: ``zarrc.zeros_like`` ... and
``Group.zeros_like`` ... (:func:`like_arguments`), a whole v3 codec list as
create_array's keywords (:func:`split_codecs`), and values taken as array data
(:func:`as_data`)."""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

import numpy as np

from zarrc.core.array import Array
from zarrc.errors import ArgumentError
from zarrc.metadata.codecs import category_of


def as_data(value: Any) -> Any:
    """``value`` as array data: a zarrc Array read whole, an object with a shape and
    dtype as it is, anything else through numpy."""
    if isinstance(value, Array):
        return value[...]
    if hasattr(value, "shape") and hasattr(value, "dtype"):
        return value
    return np.asarray(value)


def split_codecs(codecs: Any) -> dict[str, Any]:
    """A whole v3 codec list (codec objects or spec dicts) as create_array's
    ``filters``, ``serializer`` and ``compressors``."""
    if isinstance(codecs, (Mapping, str)) or hasattr(codecs, "to_dict"):
        codecs = [codecs]
    parts: dict[str, Any] = {"filters": [], "serializer": "auto", "compressors": []}
    for codec in codecs:
        spec = codec.to_dict() if hasattr(codec, "to_dict") and not isinstance(codec, Mapping) else codec
        name = spec if isinstance(spec, str) else spec.get("name") if isinstance(spec, Mapping) else None
        category = category_of(name) if isinstance(name, str) else None
        if category == "array->array":
            parts["filters"].append(codec)
        elif category == "bytes->bytes":
            parts["compressors"].append(codec)
        elif category == "array->bytes":
            parts["serializer"] = codec
        else:
            raise ArgumentError(f"codecs: {codec!r} is not a known codec")
    return parts


def like_arguments(a: Any, zarr_format: int | None) -> dict[str, Any]:
    """zarr-python's ``*_like`` keywords for an array like ``a``, the one helper of the
    top-level ``zeros_like`` ... and of ``Group.zeros_like`` ...: its shape, its
    ``chunks`` (a sharded array's inner chunks, as zarr-python) and dtype; for a
    zarrc Array also its fill value and format, and, when the new array
    (``zarr_format``; None: the source's) has its format, its codecs (v3: the whole
    list, sharding included; v2: filters, compressor and order)."""
    out: dict[str, Any] = {}
    shape = getattr(a, "shape", None)
    if isinstance(shape, tuple):
        out["shape"] = shape
        chunks = getattr(a, "chunks", None)
        if isinstance(chunks, tuple) and len(chunks) == len(shape):
            out["chunks"] = chunks
    if hasattr(a, "dtype"):
        out["dtype"] = a.dtype
    if isinstance(a, Array):
        md = a.metadata
        out["fill_value"] = md.fill_value
        if md.zarr_format == 3:
            out["dtype"] = md.data_type
        zarr_format = md.zarr_format if zarr_format is None else zarr_format
        if md.zarr_format == zarr_format:
            if md.zarr_format == 2:
                out.update(order=md.order, filters=[dict(f) for f in md.filters or ()] or None,
                           compressor=None if md.compressor is None else dict(md.compressor))
            else:
                out["codecs"] = md.to_json()["codecs"]
    if zarr_format is not None:
        out["zarr_format"] = zarr_format
    return out
