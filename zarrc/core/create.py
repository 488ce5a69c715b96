"""Creating nodes in a store, below the node classes: ``create_array``'s and
``create_group``'s arguments -> v3 or v2 metadata (:func:`array_metadata`,
:func:`group_metadata`), and room made for a new node at a path, its missing
ancestor groups created, its documents written (:func:`store_node`).

Nothing here builds an :class:`~zarrc.core.array.Array` or a
:class:`~zarrc.core.group.Group`: ``zarrc.core.group`` does (``new_array``, ``new_group``,
``open_node``), and the public API (``zarrc.api``) sits on top of it.
"""

from __future__ import annotations

import math
import warnings
from collections.abc import Iterable, Mapping, Sequence
from typing import Any

import numpy as np

from zarrc.core import consolidate, node_metadata
from zarrc.core.create_v2 import array_metadata_v2, object_codec
from zarrc.errors import (
    ArgumentError,
    ArgumentTypeError,
    ContainsArrayError,
    MetadataError,
    ZarrcRuntimeWarning,
    ZarrcUserWarning,
)
from zarrc.metadata.dtypes import as_data_type
from zarrc.metadata.names import check_new_path, key_prefix, normalize_path, parent_path
from zarrc.metadata.rectilinear import representative
from zarrc.metadata.v2 import ArrayMetadataV2, GroupMetadataV2
from zarrc.metadata.v3 import ArrayMetadataV3, GroupMetadataV3

MODES = ("r", "r+", "a", "w", "w-")

ArrayMetadata = ArrayMetadataV3 | ArrayMetadataV2
GroupMetadata = GroupMetadataV3 | GroupMetadataV2


class _Default:
    def __repr__(self) -> str:
        return "<default>"


DEFAULT = _Default()     # an argument not given (``None`` can be a value: v2's null fill)


def check_mode(mode: Any) -> None:
    """ArgumentError unless ``mode`` is one of MODES."""
    if mode not in MODES:
        raise ArgumentError(f"mode must be one of {MODES}, got {mode!r}")


def check_format(zarr_format: Any) -> int:
    """``zarr_format`` if it is 2 or 3, else MetadataError."""
    if zarr_format not in (2, 3) or isinstance(zarr_format, bool):
        raise MetadataError(f"zarr_format must be 2 or 3, got {zarr_format!r}")
    return zarr_format


def check_attributes(attributes: Any) -> dict | None:
    """``attributes`` (None or a mapping) as a dict; ArgumentTypeError otherwise."""
    if attributes is None:
        return None
    if not isinstance(attributes, Mapping):
        raise ArgumentTypeError(f"attributes must be a mapping (dict), got {type(attributes).__name__} "
                                f"{attributes!r}")
    return dict(attributes)


def check_path_type(path: Any) -> str:
    """``path`` if it is a str, else ArgumentTypeError."""
    if not isinstance(path, str):
        raise ArgumentTypeError(f"path {path!r} must be a str, not {type(path).__name__}")
    return path


def node_path(path: Any) -> str:
    """``path`` normalised ("/a/b"); ArgumentTypeError if it is not a str,
    MetadataError if a name in it is invalid."""
    return normalize_path(check_path_type(path))


def _shape(value: Any) -> tuple[int, ...]:
    """An int or a sequence of ints as a tuple of ints (as zarr-python: each item
    through ``int``); ArgumentTypeError / ArgumentError for anything else."""
    if isinstance(value, (int, np.integer)):
        return (int(value),)
    if isinstance(value, (str, bytes)) or not isinstance(value, Iterable):
        raise ArgumentTypeError(f"shape must be an integer or a sequence of integers, got {value!r}")
    try:
        return tuple(int(s) for s in value)
    except TypeError:
        raise ArgumentTypeError(f"shape must be an integer or a sequence of integers, got {value!r}") from None
    except ValueError:
        raise ArgumentError(f"shape must be an integer or a sequence of integers, got {value!r}") from None


def _grid(value: Any, what: str, ndim: int) -> tuple:
    """A chunk or shard shape (an int for every dimension, or a sequence) as a tuple
    (its items are checked with the metadata); ArgumentTypeError for anything else."""
    if isinstance(value, (int, np.integer)):
        return (int(value),) * ndim
    if isinstance(value, (str, bytes)) or not isinstance(value, Iterable):
        raise ArgumentTypeError(f"{what} must be an integer or a sequence of integers, got {value!r}")
    return tuple(value)


def _rectilinear(value: Any, what: str, shape: tuple[int, ...]) -> tuple[Any, ...] | None:
    """``chunks`` / ``shards`` given per dimension as a length or a list of lengths
    (zarr-python 3.4's rectilinear form: a list must sum to the dimension's length):
    the grid's edges, or None when every dimension is one length (a regular grid).
    ArgumentTypeError / ArgumentError for items that are not positive integers."""
    if isinstance(value, (str, bytes, int, np.integer, Mapping)) or not isinstance(value, Iterable):
        return None
    items = list(value)
    if not any(not isinstance(v, (int, np.integer, str, bytes)) and isinstance(v, Iterable) for v in items):
        return None
    if len(items) != len(shape):
        raise ArgumentError(f"{what} {items!r} has {len(items)} dimensions, the shape {list(shape)} "
                            f"has {len(shape)}")
    edges: list[Any] = []
    for d, (v, n) in enumerate(zip(items, shape)):
        if isinstance(v, (int, np.integer)) and not isinstance(v, bool):
            edges.append(int(v))
            continue
        lengths = list(v) if isinstance(v, Iterable) and not isinstance(v, (str, bytes)) else None
        if not lengths or not all(isinstance(e, (int, np.integer)) and not isinstance(e, bool)
                                  for e in lengths):
            raise ArgumentTypeError(f"{what}[{d}] must be an integer or a list of integers, got {v!r}")
        if any(e <= 0 for e in lengths):
            raise ArgumentError(f"{what}[{d}]: all chunk sizes must be positive, got {lengths}")
        if n > 0 and sum(lengths) != n:
            raise ArgumentError(f"{what}[{d}]: chunk sizes {lengths} do not sum to the "
                                f"dimension's length {n}")
        edges.append(tuple(int(e) for e in lengths))
    return tuple(edges)


def group_metadata(zarr_format: int, attributes: Any = None) -> GroupMetadata:
    """The metadata of a new group (ArgumentTypeError for non-mapping attributes)."""
    cls = GroupMetadataV2 if check_format(zarr_format) == 2 else GroupMetadataV3
    return cls(attributes=check_attributes(attributes) or {})


def _is_codec(value: Any) -> bool:
    return isinstance(value, (str, Mapping)) or hasattr(value, "to_dict")


def _codec_list(value: Any, what: str) -> list:
    """``filters`` / ``compressors`` (None, a codec, or codecs) as a list; a codec is a
    codec object, a spec dict or a name (ArgumentTypeError for anything else)."""
    if value is None:
        return []
    if _is_codec(value):
        return [value]
    if isinstance(value, bytes) or not isinstance(value, Iterable):
        raise ArgumentTypeError(f"{what} must be a codec (a codec object, a spec dict or a name) "
                                f"or a sequence of codecs, got {value!r}")
    codecs = list(value)
    for codec in codecs:
        if not _is_codec(codec):
            raise ArgumentTypeError(f"{what}: {codec!r} is not a codec (a codec object, a spec dict "
                                    "or a name)")
    return codecs


def guess_chunks(shape: Sequence[int], itemsize: int, max_bytes: int = 64 << 20) -> tuple[int, ...]:
    """The chunk shape zarr-python (after h5py) picks for ``chunks="auto"``: a target
    size that doubles for every tenfold growth of the array (256 KiB at 1 MiB of
    data, kept between 128 KiB and ``max_bytes``), reached by halving the
    dimensions in turn, first to last, until the chunk is under the target or within
    half of it (and under ``max_bytes``)."""
    chunks = [max(int(s), 1) for s in shape]
    if itemsize <= 0 or not chunks:
        return tuple(chunks)
    target = (256 << 10) * 2 ** math.log10(math.prod(chunks) * itemsize / (1 << 20))
    target = min(max(target, 128 << 10), max_bytes)
    turn = 0
    while True:
        size = math.prod(chunks) * itemsize
        if (size < target or abs(size - target) / target < 0.5) and size < max_bytes:
            break
        if math.prod(chunks) == 1:
            break
        i = turn % len(chunks)
        chunks[i] = -(-chunks[i] // 2)
        turn += 1
    return tuple(chunks)


def array_metadata(*, shape: Sequence[int] | int, dtype: Any, chunks: Any = "auto", shards: Any = None,
                   filters: Any = None, compressors: Any = "auto", serializer: Any = "auto",
                   fill_value: Any = DEFAULT, order: str | None = None, zarr_format: int = 3,
                   attributes: Any = None, chunk_key_encoding: Any = None,
                   dimension_names: Sequence[str | None] | None = None, compressor: Any = "unset",
                   dimension_separator: str | None = None) -> ArrayMetadata:
    """The metadata of a new array from ``zarrc.create_array``'s keywords (see there).
    Raises MetadataError for invalid arguments, ArgumentTypeError (a TypeError) for
    arguments of the wrong type (a shape or chunks that are not integers,
    attributes that are not a mapping)."""
    check_format(zarr_format)
    if order not in (None, "C", "F"):
        raise MetadataError(f"order must be 'C' or 'F', got {order!r}")
    attributes = check_attributes(attributes)
    shape = _shape(shape)
    if isinstance(chunks, str) and chunks == "auto":
        # as zarr-python: variable-length items count as 1 byte; inner chunks of a
        # sharded array are at most 1 MiB
        if zarr_format == 2:
            np_dtype, _ = object_codec(dtype)
            itemsize = 1 if np_dtype.kind == "O" else (np_dtype.itemsize or 1)
        else:
            data_type = as_data_type(dtype)
            itemsize = 1 if data_type.kind in ("string", "bytes") else data_type.itemsize
        chunks = guess_chunks(shape, itemsize, 64 << 20 if shards is None else 1 << 20)
        edges = None
    else:
        edges = _rectilinear(chunks, "chunks", shape)
        if edges is not None and (zarr_format == 2 or shards is not None):
            raise ArgumentError("chunks given as lists of lengths (a rectilinear chunk grid) need "
                                "zarr_format=3 and no shards (inner chunks are regular; give the "
                                "shards as lists instead)")
        chunks = representative(edges) if edges is not None else _grid(chunks, "chunks", len(shape))
    if zarr_format == 2:
        return array_metadata_v2(
            shape, dtype, chunks, fill_value=fill_value, order=order, filters=filters,
            compressors=compressors, compressor=compressor, serializer=serializer,
            chunk_key_encoding=chunk_key_encoding, dimension_separator=dimension_separator,
            dimension_names=dimension_names, shards=shards, attributes=attributes,
            default=DEFAULT)
    if order is not None:
        warnings.warn("order has no effect for Zarr v3 arrays (chunks are stored in C order; a "
                      "transpose codec in filters= stores them otherwise)", ZarrcRuntimeWarning,
                      stacklevel=3)
    if not (isinstance(compressor, str) and compressor == "unset"):
        compressors = compressor
    if isinstance(serializer, str) and serializer == "auto":
        kind = as_data_type(dtype).kind
        serializer = {"name": {"string": "vlen-utf8", "bytes": "vlen-bytes"}.get(kind, "bytes")}
    elif not _is_codec(serializer):
        raise ArgumentTypeError(f"serializer must be a codec (a codec object, a spec dict or a name), "
                                f"got {serializer!r}")
    if isinstance(compressors, str) and compressors == "auto":
        compressors = [{"name": "zstd", "configuration": {"level": 0, "checksum": False}}]
    codecs = _codec_list(filters, "filters") + [serializer] + _codec_list(compressors, "compressors")
    grid = chunks
    if isinstance(shards, str) and shards == "auto":
        # as zarr-python (whose config sets no target shard size): two chunks along each
        # dimension that has more than 8 of them
        warnings.warn("automatic shard shapes (shards='auto') follow zarr-python's experimental rule",
                      ZarrcUserWarning, stacklevel=3)
        shards = tuple(c * 2 if n // c > 8 else c for n, c in zip(shape, chunks))
    if shards is not None:
        # as zarr-python: ``shards`` is the stored object's shape, ``chunks`` the inner
        # chunks, and every codec goes inside the sharding codec
        edges = _rectilinear(shards, "shards", shape)
        grid = representative(edges) if edges is not None else _grid(shards, "shards", len(shape))
        codecs = [{"name": "sharding_indexed", "configuration": {
            "chunk_shape": list(chunks), "codecs": codecs,
            "index_codecs": [{"name": "bytes", "configuration": {"endian": "little"}}, {"name": "crc32c"}],
            "index_location": "end"}}]
    encoding = chunk_key_encoding if chunk_key_encoding is not None else "default"
    if isinstance(encoding, dict) and "configuration" not in encoding and "separator" in encoding:
        # zarr-python's short form {"name": ..., "separator": ...} -> the spec's JSON form
        rest = {k: v for k, v in encoding.items() if k != "separator"}
        encoding = {"name": "default", **rest, "configuration": {"separator": encoding["separator"]}}
    return ArrayMetadataV3.create(
        shape, dtype, grid, fill_value=None if fill_value is DEFAULT else fill_value, codecs=codecs,
        chunk_key_encoding=encoding, attributes=attributes, dimension_names=dimension_names,
        chunk_edges=edges)


def prepare_location(store: Any, path: str, overwrite: bool, zarr_format: int = 3) -> None:
    """Make room for a new node at ``path`` and create its missing ancestor groups
    (in ``zarr_format``).  Everything is checked before anything is deleted or
    written: ContainsNodeError if a node is at ``path`` (unless ``overwrite``) or
    an ancestor is an array."""
    if not overwrite and node_metadata.exists(store, path):
        raise node_metadata.contains_error(store, path, f"a node already exists at {path} in {store!r}")
    missing = []
    ancestor = path
    while ancestor != "/":
        ancestor = parent_path(ancestor)
        md = node_metadata.read(store, ancestor)
        if md is None:
            missing.append(ancestor)
        elif md.node_type != "group":
            # (checked first: "arr/c" with overwrite would otherwise delete arr's chunks)
            raise ContainsArrayError(f"cannot create {path}: {ancestor} is an array")
    if overwrite:
        if path == "/":
            store.delete_prefix("")
        else:
            store.delete_prefix(key_prefix(path))
    for ancestor in reversed(missing):
        consolidate.write_node(store, ancestor, group_metadata(zarr_format), new=True)


def store_node(store: Any, path: str, metadata: Any, overwrite: bool) -> Any:
    """Write a new node's ``metadata`` at ``path`` (normalised) after
    :func:`prepare_location`, the consolidated metadata of the groups above kept in
    step (``consolidate.write_node``); returns the metadata as a reader will see it.
    MetadataError for a name of the reserved prefix "__" (``names.check_new_path``)."""
    check_new_path(path)
    docs = node_metadata.encode(path, metadata)      # (a value that is not JSON: nothing written)
    prepare_location(store, path, overwrite, metadata.zarr_format)
    return consolidate.write_node(store, path, metadata, docs, new=True)
