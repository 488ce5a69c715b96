"""The public API: ``open``, ``open_array``, ``open_group``, ``group``,
``create_array``, ``create_group``, ``consolidate_metadata``, ``open_consolidated``.

On top of the node classes: a store argument (a path, a dict or a Store) becomes a
Store for the mode asked, and the nodes come from ``zarrc.group`` (``open_node``,
``new_array``, ``new_group``) over the metadata side in ``zarrc.create`` and
``zarrc.consolidate``.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

from zarrc import create, node_metadata
from zarrc.array import Array
from zarrc.consolidate import consolidate
from zarrc.create import DEFAULT, MODES, check_mode, guess_chunks, node_path
from zarrc.errors import ContainsNodeError, NodeNotFoundError, NodeTypeError
from zarrc.group import Group, new_array, new_group, open_node
from zarrc.metadata.names import key_prefix
from zarrc.stores import Store, make_store

__all__ = ["DEFAULT", "MODES", "consolidate_metadata", "create_array", "create_group", "group",
           "guess_chunks", "open", "open_array", "open_consolidated", "open_group"]


def _as_store(store: Any) -> Store:
    return store if isinstance(store, Store) else make_store(store, mode="a")


def create_group(store: Any, path: str = "", *, overwrite: bool = False,
                 attributes: dict | None = None, zarr_format: int = 3) -> Group:
    """Create a group at ``path`` (its missing ancestors too).  ``store``: a path, a
    dict or a Store.  Raises ContainsNodeError if a node is there and not
    ``overwrite``, ArgumentTypeError for a path that is not a str or attributes
    that are not a mapping, MetadataError for an invalid path or ``zarr_format``."""
    where = node_path(path)
    return new_group(_as_store(store), where, overwrite=overwrite, attributes=attributes,
                     zarr_format=zarr_format)


def create_array(store: Any, *, name: str | None = None, path: str | None = None,
                 shape: Sequence[int] | int, dtype: Any, chunks: Any = "auto", shards: Any = None,
                 filters: Any = None, compressors: Any = "auto", serializer: Any = "auto",
                 fill_value: Any = DEFAULT, order: str | None = None, zarr_format: int = 3,
                 attributes: dict | None = None, chunk_key_encoding: Any = None,
                 dimension_names: Sequence[str | None] | None = None, overwrite: bool = False,
                 write_empty_chunks: bool = False, compressor: Any = "unset",
                 dimension_separator: str | None = None) -> Array:
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
        exists and ``overwrite`` is False, MetadataError for invalid arguments,
        ArgumentTypeError (a TypeError) for arguments of the wrong type (a path that
        is not a str, a shape that is not integers, attributes that are not a mapping).
    """

    metadata = create.array_metadata(       # (checked before the store is made)
        shape=shape, dtype=dtype, chunks=chunks, shards=shards, filters=filters,
        compressors=compressors, serializer=serializer, fill_value=fill_value, order=order,
        zarr_format=zarr_format, attributes=attributes, chunk_key_encoding=chunk_key_encoding,
        dimension_names=dimension_names, compressor=compressor,
        dimension_separator=dimension_separator)
    where = node_path(path if path is not None else (name or ""))
    return new_array(_as_store(store), where, metadata, overwrite=overwrite,
                     write_empty_chunks=write_empty_chunks)


def _store_for(store: Any, mode: str, path: str = "/") -> Store:
    """The store for ``store`` opened for ``mode`` at node ``path``.

    "w" and "w-" act on the node at ``path``, not on the whole store: the store is
    cleared ("w") only when the node is the root, else opened with "a"; "w-" opens
    it with "a" and raises ContainsNodeError if any key exists under the path (as
    zarr-python's ``StorePath.open``)."""
    if isinstance(store, Store):
        s = store
    else:
        root = node_path(path) == "/"
        s = make_store(store, mode="a" if mode == "w-" or (mode == "w" and not root) else mode)
    if mode == "w-":
        prefix = key_prefix(node_path(path))
        if next(iter(s.list_prefix(prefix)), None) is not None:
            raise ContainsNodeError(f"{node_path(path)} in {s!r} already holds data (mode 'w-')")
    return s


def open_array(store: Any, *, mode: str = "a", path: str = "", **kwargs: Any) -> Array:
    """Open the array at ``path``; with mode "a" and ``shape`` given, create it if missing.
    Modes: "r" read only, "r+" read/write (must exist), "a" read/write (create if
    missing), "w" create (replace), "w-" create (fail if it exists)."""
    check_mode(mode)
    s = _store_for(store, mode, path)
    where = node_path(path)
    if mode in ("w", "w-"):
        return create_array(s, path=where, overwrite=mode == "w", **kwargs)
    node = open_node(s, where, read_only=mode == "r")
    if node is None:
        if mode == "a" and "shape" in kwargs:
            return create_array(s, path=where, **kwargs)
        raise NodeNotFoundError(f"no array at {where} in {s!r}")
    if not isinstance(node, Array):
        raise NodeTypeError(f"{where} in {s!r} is a group, not an array")
    return node


def open_group(store: Any = None, *, mode: str = "a", path: str = "",
               attributes: dict | None = None, zarr_format: int | None = None,
               use_consolidated: bool | None = None) -> Group:
    """Open the group at ``path`` (created if missing, for modes "a", "w", "w-"; in
    ``zarr_format``, default 3).  An existing group's format is detected.

    use_consolidated : None (default) looks members up in the group's consolidated
        metadata when it has some (one read for the whole tree); True requires it
        (MetadataError if absent); False ignores it."""
    check_mode(mode)
    s = _store_for(store, mode, path)
    where = node_path(path)
    fmt = 3 if zarr_format is None else zarr_format
    if mode in ("w", "w-"):
        return new_group(s, where, overwrite=mode == "w", attributes=attributes, zarr_format=fmt)
    node = open_node(s, where, read_only=mode == "r", use_consolidated=use_consolidated)
    if node is None:
        if mode == "a":
            return new_group(s, where, attributes=attributes, zarr_format=fmt)
        raise NodeNotFoundError(f"no group at {where} in {s!r}")
    if not isinstance(node, Group):
        raise NodeTypeError(f"{where} in {s!r} is an array, not a group")
    return node


def group(store: Any = None, *, path: str = "", overwrite: bool = False,
          attributes: dict | None = None, zarr_format: int | None = None) -> Group:
    """Create a group (or open the existing one unless ``overwrite``)."""
    s = _store_for(store, "a", path)
    where = node_path(path)
    if not overwrite:
        node = open_node(s, where)
        if node is not None:
            if not isinstance(node, Group):
                raise ContainsNodeError(f"{where} in {s!r} is an array")
            return node
    return new_group(s, where, overwrite=overwrite, attributes=attributes,
                     zarr_format=3 if zarr_format is None else zarr_format)


def open(store: Any = None, *, mode: str = "a", path: str = "",
         use_consolidated: bool | None = None, **kwargs: Any) -> Array | Group:
    """Open the array or group at ``path`` (a group with its consolidated metadata,
    as :func:`open_group`).  If nothing is there and the mode allows creating: an
    array if ``shape`` is given, else a group."""
    check_mode(mode)
    s = _store_for(store, mode, path)
    where = node_path(path)
    if mode not in ("w", "w-"):
        node = open_node(s, where, read_only=mode == "r", use_consolidated=use_consolidated)
        if node is not None:
            return node
        if mode in ("r", "r+"):
            raise NodeNotFoundError(f"no array or group at {where} in {s!r}")
    if "shape" in kwargs:
        return create_array(s, path=where, overwrite=mode == "w", **kwargs)
    if mode == "w-" and node_metadata.exists(s, where):
        raise ContainsNodeError(f"a node already exists at {where} in {s!r}")
    return new_group(s, where, overwrite=mode == "w", attributes=kwargs.get("attributes"),
                     zarr_format=kwargs.get("zarr_format") or 3)


def open_consolidated(store: Any, *, mode: str = "r", path: str = "", **kwargs: Any) -> Group:
    """Open the group at ``path`` with its consolidated metadata (MetadataError if it
    has none), as zarr-python's ``open_consolidated``."""
    return open_group(store, mode=mode, path=path, use_consolidated=True, **kwargs)


def consolidate_metadata(store: Any, path: str = "", zarr_format: int | None = None) -> Group:
    """Gather the metadata of every node below the group at ``path`` into consolidated
    metadata, in the group's format (v2: ``.zmetadata``; v3: its zarr.json), and
    return the group opened with it.  ``store``: a path, dict or Store.  Raises
    NodeNotFoundError if there is no group at ``path``, MetadataError if
    ``zarr_format`` is not the group's."""
    where = node_path(path)
    s = _as_store(store)
    md, nodes = consolidate(s, where, zarr_format)
    return Group(s, where, md, consolidated=nodes)
