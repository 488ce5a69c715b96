"""Creating and opening nodes (arrays and groups) in a store, and the public
``open`` / ``open_array`` / ``open_group`` / ``group`` / ``create_array`` API."""

from __future__ import annotations

import math
from collections.abc import Sequence
from typing import Any

import numpy as np

from zarrc import node_metadata
from zarrc.errors import ArgumentError, ContainsNodeError, MetadataError, NodeNotFoundError
from zarrc.metadata.dtypes import as_data_type
from zarrc.metadata.names import key_prefix, normalize_path, parent_path
from zarrc.metadata.v2 import GroupMetadataV2
from zarrc.metadata.v3 import ArrayMetadataV3, GroupMetadataV3
from zarrc.stores import Store, make_store

MODES = ("r", "r+", "a", "w", "w-")


class _Default:
    def __repr__(self) -> str:
        return "<default>"


DEFAULT = _Default()     # an argument not given (``None`` can be a value: v2's null fill)


def open_node(store: Store, path: str, *, read_only: bool = False,
              use_consolidated: bool | None = False) -> Any:
    """The array or group at ``path``, or None if there is no node.  A group's
    consolidated metadata is used if ``use_consolidated`` is None (when present) or
    True (required: MetadataError if absent)."""
    from zarrc.array import Array
    from zarrc.consolidate import read_group
    from zarrc.group import Group

    if use_consolidated is False:
        md, nodes = node_metadata.read(store, path), None
    else:
        md, nodes = read_group(store, path, use_consolidated)
    if md is None:
        return None
    if md.node_type == "array":
        return Array(store, path, md, read_only=read_only)
    return Group(store, path, md, read_only=read_only, consolidated=nodes)


def _check_mode(mode: str) -> None:
    if mode not in MODES:
        raise ArgumentError(f"mode must be one of {MODES}, got {mode!r}")


def _prepare_location(store: Store, path: str, overwrite: bool, zarr_format: int = 3) -> None:
    """Make room for a new node at ``path`` and create its missing ancestor groups
    (in ``zarr_format``).  Everything is checked before anything is deleted or written."""
    if not overwrite and node_metadata.exists(store, path):
        raise ContainsNodeError(f"a node already exists at {path} in {store!r}")
    missing = []
    ancestor = path
    while ancestor != "/":
        ancestor = parent_path(ancestor)
        md = node_metadata.read(store, ancestor)
        if md is None:
            missing.append(ancestor)
        elif md.node_type != "group":
            # (checked first: "arr/c" with overwrite would otherwise delete arr's chunks)
            raise ContainsNodeError(f"cannot create {path}: {ancestor} is an array")
    if overwrite:
        if path == "/":
            store.delete_prefix("")
        else:
            store.delete_prefix(key_prefix(path))
    for ancestor in reversed(missing):
        node_metadata.write(store, ancestor, _group_metadata(zarr_format))


def _check_format(zarr_format: Any) -> int:
    if zarr_format not in (2, 3) or isinstance(zarr_format, bool):
        raise MetadataError(f"zarr_format must be 2 or 3, got {zarr_format!r}")
    return zarr_format


def _group_metadata(zarr_format: int, attributes: dict | None = None) -> Any:
    cls = GroupMetadataV2 if _check_format(zarr_format) == 2 else GroupMetadataV3
    return cls(attributes=attributes or {})


def create_group(store: Store, path: str, *, overwrite: bool = False,
                 attributes: dict | None = None, zarr_format: int = 3) -> Any:
    from zarrc.group import Group

    path = normalize_path(path)
    metadata = _group_metadata(zarr_format, attributes)
    _prepare_location(store, path, overwrite, zarr_format)
    return Group(store, path, node_metadata.write(store, path, metadata))


def _normalize_codecs(value: Any) -> list:
    if value is None:
        return []
    if isinstance(value, (str, dict)) or hasattr(value, "to_dict"):
        return [value]
    return list(value)


def guess_chunks(shape: Sequence[int], itemsize: int, target: int = 1 << 20) -> tuple[int, ...]:
    """A chunk shape of roughly ``target`` bytes (at least 1 per dimension), halving the
    largest dimension until it fits."""
    chunks = [max(int(s), 1) for s in shape]
    while math.prod(chunks) * itemsize > target and max(chunks) > 1:
        i = chunks.index(max(chunks))
        chunks[i] = -(-chunks[i] // 2)
    return tuple(chunks)


def create_array(store: Any, *, name: str | None = None, path: str | None = None,
                 shape: Sequence[int] | int, dtype: Any, chunks: Any = "auto", shards: Any = None,
                 filters: Any = None, compressors: Any = "auto", serializer: Any = "auto",
                 fill_value: Any = DEFAULT, order: str | None = None, zarr_format: int = 3,
                 attributes: dict | None = None, chunk_key_encoding: Any = None,
                 dimension_names: Sequence[str | None] | None = None, overwrite: bool = False,
                 write_empty_chunks: bool = False, compressor: Any = "unset",
                 dimension_separator: str | None = None) -> Any:
    """Create an array (zarr-python's ``create_array`` keywords).

    store : a path (local directory, ".zip" for a zip file), a dict (memory), or a Store.
    shape, dtype : the array; chunks : the chunk shape ("auto": about 1 MiB); with
        ``shards`` (the shard shape), the inner chunk shape of a sharded array.
    filters : array->array codecs (e.g. ``Transpose``); serializer : the array->bytes
        codec ("auto": ``Bytes("little")``); compressors : bytes->bytes codecs ("auto":
        ``Zstd(level=0)``, as zarr-python; None for none).  Codecs are codec objects
        or v3 spec dicts.
    chunk_key_encoding : None (default "/"), or {"name": "default"|"v2", "separator": ...}.
    zarr_format : 3, or 2 for a v2 array: ``filters`` and ``compressors`` (at most one;
        "auto": zstd level 0) are numcodecs codecs or configurations; ``compressor``
        and ``dimension_separator`` are accepted as in zarr-python 2; dtype ``str`` /
        ``bytes`` make an object array with the vlen-utf8 / vlen-bytes filter.
    fill_value : not given: the data type's default (0, False, "", NaT ...); for v2,
        None writes a null fill value (undefined; missing chunks read as zeros).
    overwrite : replace whatever is at the path.  Raises ContainsNodeError if a node
        exists and ``overwrite`` is False, MetadataError for invalid arguments.
    """

    _check_format(zarr_format)
    if order not in (None, "C", "F"):
        raise MetadataError(f"order must be 'C' or 'F', got {order!r}")
    store = make_store(store, mode="a") if not isinstance(store, Store) else store
    node_path = normalize_path(path if path is not None else (name or ""))
    shape = (int(shape),) if isinstance(shape, (int, np.integer)) else tuple(int(s) for s in shape)
    if isinstance(chunks, str) and chunks == "auto":
        itemsize = 8 if zarr_format == 2 else as_data_type(dtype).itemsize
        if zarr_format == 2 and dtype not in (str, bytes):
            itemsize = np.dtype(dtype).itemsize or 8
        chunks = guess_chunks(shape, itemsize)
    elif isinstance(chunks, (int, np.integer)):
        chunks = (int(chunks),) * len(shape)
    if zarr_format == 2:
        from zarrc.create_v2 import array_metadata_v2
        metadata = array_metadata_v2(
            shape, dtype, tuple(chunks), fill_value=fill_value, order=order, filters=filters,
            compressors=compressors, compressor=compressor, serializer=serializer,
            chunk_key_encoding=chunk_key_encoding, dimension_separator=dimension_separator,
            dimension_names=dimension_names, shards=shards, attributes=attributes,
            default=DEFAULT)
        return _store_new_array(store, node_path, metadata, overwrite, write_empty_chunks)
    if not (isinstance(compressor, str) and compressor == "unset"):
        compressors = compressor
    if isinstance(serializer, str) and serializer == "auto":
        kind = as_data_type(dtype).kind
        serializer = {"name": {"string": "vlen-utf8", "bytes": "vlen-bytes"}.get(kind, "bytes")}
    if isinstance(compressors, str) and compressors == "auto":
        compressors = [{"name": "zstd", "configuration": {"level": 0, "checksum": False}}]
    codecs = _normalize_codecs(filters) + [serializer] + _normalize_codecs(compressors)
    grid = tuple(chunks)
    if shards is not None:
        # as zarr-python: ``shards`` is the stored object's shape, ``chunks`` the inner
        # chunks, and every codec goes inside the sharding codec
        grid = (int(shards),) * len(shape) if isinstance(shards, (int, np.integer)) else tuple(shards)
        codecs = [{"name": "sharding_indexed", "configuration": {
            "chunk_shape": list(chunks), "codecs": codecs,
            "index_codecs": [{"name": "bytes", "configuration": {"endian": "little"}}, {"name": "crc32c"}],
            "index_location": "end"}}]
    encoding = chunk_key_encoding if chunk_key_encoding is not None else "default"
    if isinstance(encoding, dict) and "configuration" not in encoding and "separator" in encoding:
        # zarr-python's short form {"name": ..., "separator": ...} -> the spec's JSON form
        rest = {k: v for k, v in encoding.items() if k != "separator"}
        encoding = {"name": "default", **rest, "configuration": {"separator": encoding["separator"]}}
    metadata = ArrayMetadataV3.create(
        shape, dtype, grid, fill_value=None if fill_value is DEFAULT else fill_value, codecs=codecs,
        chunk_key_encoding=encoding, attributes=attributes, dimension_names=dimension_names)
    return _store_new_array(store, node_path, metadata, overwrite, write_empty_chunks)


def _store_new_array(store: Store, path: str, metadata: Any, overwrite: bool,
                     write_empty_chunks: bool) -> Any:
    from zarrc.array import Array

    Array(store, path, metadata)  # validates the codecs before anything is written
    _prepare_location(store, path, overwrite, metadata.zarr_format)
    metadata = node_metadata.write(store, path, metadata)
    return Array(store, path, metadata, write_empty_chunks=write_empty_chunks)


def _store_for(store: Any, mode: str, path: str = "/") -> Store:
    """The store for ``store`` opened for ``mode`` at node ``path``.

    "w" and "w-" act on the node at ``path``, not on the whole store: the store is
    cleared ("w") only when the node is the root, else opened with "a"; "w-" opens
    it with "a" and raises ContainsNodeError if any key exists under the path (as
    zarr-python's ``StorePath.open``)."""
    if isinstance(store, Store):
        s = store
    else:
        root = normalize_path(path) == "/"
        s = make_store(store, mode="a" if mode == "w-" or (mode == "w" and not root) else mode)
    if mode == "w-":
        prefix = key_prefix(normalize_path(path))
        if next(iter(s.list_prefix(prefix)), None) is not None:
            raise ContainsNodeError(f"{normalize_path(path)} in {s!r} already holds data (mode 'w-')")
    return s


def open_array(store: Any, *, mode: str = "a", path: str = "", **kwargs: Any) -> Any:
    """Open the array at ``path``; with mode "a" and ``shape`` given, create it if missing.
    Modes: "r" read only, "r+" read/write (must exist), "a" read/write (create if
    missing), "w" create (replace), "w-" create (fail if it exists)."""
    _check_mode(mode)
    s = _store_for(store, mode, path)
    node_path = normalize_path(path)
    if mode in ("w", "w-"):
        return create_array(s, path=node_path, overwrite=mode == "w", **kwargs)
    node = open_node(s, node_path, read_only=mode == "r")
    if node is None:
        if mode == "a" and "shape" in kwargs:
            return create_array(s, path=node_path, **kwargs)
        raise NodeNotFoundError(f"no array at {node_path} in {s!r}")
    from zarrc.array import Array
    if not isinstance(node, Array):
        raise NodeNotFoundError(f"{node_path} in {s!r} is a group, not an array")
    return node


def open_group(store: Any = None, *, mode: str = "a", path: str = "",
               attributes: dict | None = None, zarr_format: int | None = None,
               use_consolidated: bool | None = None) -> Any:
    """Open the group at ``path`` (created if missing, for modes "a", "w", "w-"; in
    ``zarr_format``, default 3).  An existing group's format is detected.

    use_consolidated : None (default) looks members up in the group's consolidated
        metadata when it has some (one read for the whole tree); True requires it
        (MetadataError if absent); False ignores it."""
    _check_mode(mode)
    s = _store_for(store, mode, path)
    node_path = normalize_path(path)
    fmt = 3 if zarr_format is None else zarr_format
    if mode in ("w", "w-"):
        return create_group(s, node_path, overwrite=mode == "w", attributes=attributes, zarr_format=fmt)
    node = open_node(s, node_path, read_only=mode == "r", use_consolidated=use_consolidated)
    if node is None:
        if mode == "a":
            return create_group(s, node_path, attributes=attributes, zarr_format=fmt)
        raise NodeNotFoundError(f"no group at {node_path} in {s!r}")
    from zarrc.group import Group
    if not isinstance(node, Group):
        raise NodeNotFoundError(f"{node_path} in {s!r} is an array, not a group")
    return node


def group(store: Any = None, *, path: str = "", overwrite: bool = False,
          attributes: dict | None = None, zarr_format: int | None = None) -> Any:
    """Create a group (or open the existing one unless ``overwrite``)."""
    s = _store_for(store, "a", path)
    node_path = normalize_path(path)
    if not overwrite:
        node = open_node(s, node_path)
        if node is not None:
            from zarrc.group import Group
            if not isinstance(node, Group):
                raise ContainsNodeError(f"{node_path} in {s!r} is an array")
            return node
    return create_group(s, node_path, overwrite=overwrite, attributes=attributes,
                        zarr_format=3 if zarr_format is None else zarr_format)


def open(store: Any = None, *, mode: str = "a", path: str = "",
         use_consolidated: bool | None = None, **kwargs: Any) -> Any:
    """Open the array or group at ``path`` (a group with its consolidated metadata,
    as :func:`open_group`).  If nothing is there and the mode allows creating: an
    array if ``shape`` is given, else a group."""
    _check_mode(mode)
    s = _store_for(store, mode, path)
    node_path = normalize_path(path)
    if mode not in ("w", "w-"):
        node = open_node(s, node_path, read_only=mode == "r", use_consolidated=use_consolidated)
        if node is not None:
            return node
        if mode in ("r", "r+"):
            raise NodeNotFoundError(f"no array or group at {node_path} in {s!r}")
    if "shape" in kwargs:
        return create_array(s, path=node_path, overwrite=mode == "w", **kwargs)
    if mode == "w-" and node_metadata.exists(s, node_path):
        raise ContainsNodeError(f"a node already exists at {node_path} in {s!r}")
    return create_group(s, node_path, overwrite=mode == "w", attributes=kwargs.get("attributes"),
                        zarr_format=kwargs.get("zarr_format") or 3)


def open_consolidated(store: Any, *, mode: str = "r", path: str = "", **kwargs: Any) -> Any:
    """Open the group at ``path`` with its consolidated metadata (MetadataError if it
    has none), as zarr-python's ``open_consolidated``."""
    return open_group(store, mode=mode, path=path, use_consolidated=True, **kwargs)
