"""The public API: ``open``, ``open_array``, ``open_group``, ``group``,
``create_array``, ``create_group``, ``consolidate_metadata``, ``open_consolidated``.

On top of the node classes: a store argument (a path, a dict or a Store) becomes a
Store for the mode asked, and the nodes come from ``zarrc.core.group`` (``open_node``,
``new_array``, ``new_group``) over the metadata side in ``zarrc.core.create`` and
``zarrc.core.consolidate``.
"""

from __future__ import annotations

import copy
import warnings
from collections.abc import Iterator, Mapping, Sequence
from dataclasses import asdict, is_dataclass
from typing import Any

import numpy as np

from zarrc.codecs.chain import CodecChain
from zarrc.core import node_metadata
from zarrc.core.array import Array
from zarrc.core.array import array_config as array_settings
from zarrc.core.consolidate import consolidate
from zarrc.core.create import (
    DEFAULT,
    MODES,
    array_metadata,
    check_mode,
    guess_chunks,
    node_path,
)
from zarrc.core.group import Group, make_hierarchy, new_array, new_group, open_node
from zarrc.core.node import StorePath
from zarrc.errors import (
    ArgumentError,
    ArgumentTypeError,
    ArrayNotFoundError,
    ContainsArrayError,
    ContainsNodeError,
    ExpectedArrayError,
    ExpectedGroupError,
    GroupNotFoundError,
    MetadataError,
)
from zarrc.metadata.names import key_prefix
from zarrc.stores import MemoryStore, Store, make_store, names_references
from zarrc.stores.zarr_python import is_zarr_python_store

__all__ = ["DEFAULT", "MODES", "consolidate_metadata", "create_array", "create_group",
           "create_hierarchy", "from_array", "group", "guess_chunks", "open", "open_array",
           "open_consolidated", "open_group", "tree"]


# A node's metadata documents: a store path or URL ending in one names its node (as
# GDAL opens them, for servers that cannot list a directory).
NODE_DOCUMENTS = ("zarr.json", ".zmetadata", ".zarray", ".zgroup", ".zattrs")


def store_and_path(store: Any, path: Any) -> tuple[Any, Any]:
    """A StorePath (zarrc's or zarr-python's) as its store and its path joined before
    ``path``, as zarr-python takes one where a store is expected; a path or URL
    string ending in a node's metadata document (``.../temp/zarr.json``,
    ``.../.zarray``, ``.../.zmetadata``) as the node's directory; anything else as it is."""
    if isinstance(store, str):
        head, sep, name = store.rstrip("/").rpartition("/")
        if sep and name in NODE_DOCUMENTS and head and not head.endswith(":/"):
            store = head
        return store, path
    if not (isinstance(store, StorePath) or (is_zarr_python_store(store) and type(store).__name__ == "StorePath")):
        return store, path                  # (a path of a wrong type is refused by node_path)
    base, rest = str(store.path).strip("/"), (path or "").strip("/")
    return store.store, "/".join(p for p in (base, rest) if p)


def _as_store(store: Any, storage_options: dict | None = None) -> Store:
    """``store`` if it is a Store (and no ``storage_options`` are given), else the store
    ``make_store`` opens for it with mode "a"."""
    if isinstance(store, Store) and not storage_options:
        return store
    return make_store(store, mode="a", storage_options=storage_options)


def create_group(store: Any, path: str = "", *, overwrite: bool = False,
                 attributes: dict | None = None, zarr_format: int | None = None,
                 storage_options: dict | None = None) -> Group:
    """Create a group at ``path`` (its missing ancestors too).  ``store``: a path, a
    dict or a Store.  Raises ContainsNodeError if a node is there and not
    ``overwrite``, ArgumentTypeError for a path that is not a str or attributes
    that are not a mapping (or ``storage_options`` a store does not take),
    MetadataError for an invalid path or ``zarr_format``."""
    check_storage_options(store, storage_options)
    store, path = store_and_path(store, path)
    where = node_path("" if path is None else path)
    return new_group(_as_store(store, storage_options), where, overwrite=overwrite, attributes=attributes,
                     zarr_format=3 if zarr_format is None else zarr_format)


def create_array(store: Any, *, name: str | None = None, path: str | None = None,
                 shape: Sequence[int] | int | None = None, dtype: Any = None, data: Any = None,
                 chunks: Any = "auto", shards: Any = None,
                 filters: Any = None, compressors: Any = "auto", serializer: Any = "auto",
                 fill_value: Any = DEFAULT, order: str | None = None, zarr_format: int | None = 3,
                 attributes: dict | None = None, chunk_key_encoding: Any = None,
                 dimension_names: Sequence[str | None] | None = None,
                 storage_options: dict | None = None, overwrite: bool = False,
                 config: Any = None, write_data: bool = True,
                 write_empty_chunks: bool | None = None, compressor: Any = "unset",
                 dimension_separator: str | None = None) -> Array:
    """Create an array (zarr-python's ``create_array`` keywords).

    store : a path (local directory, ".zip" for a zip file), a dict (memory), or a Store.
    shape, dtype : the array; or ``data`` (a numpy array or array-like) gives both
        (ArgumentError, a ValueError, if shape or dtype are given too, or neither is)
        and is written unless ``write_data`` is False.
    chunks : the chunk shape ("auto": about 1 MiB); with
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
    config : zarr-python's ArrayConfig keys as a dict (or an ArrayConfig):
        ``write_empty_chunks``; ``order``, the memory order of what is read (accepted;
        zarrc reads into C order; a v2 array's chunk order is ``order``);
        ``read_missing_chunks`` (True only); the sharding coalescing sizes (accepted;
        zarrc plans its own reads).
    storage_options : as zarr-python, only for a URL store; ArgumentTypeError (a
        TypeError) with a plain path, a dict or a Store.
    overwrite : replace whatever is at the path.  Raises ContainsNodeError if a node
        exists and ``overwrite`` is False, MetadataError for invalid arguments,
        ArgumentTypeError (a TypeError) for arguments of the wrong type (a path that
        is not a str, a shape that is not integers, attributes that are not a mapping).
    """
    if data is not None:
        if shape is not None or dtype is not None:
            raise ArgumentError(f"create_array: give data or shape and dtype, not both "
                                f"(shape={shape!r}, dtype={dtype!r})")
        return from_array(
            store, data=data, write_data=write_data, name=path if path is not None else name,
            chunks=chunks, shards=shards, filters=filters, compressors=compressors,
            serializer=serializer, fill_value=fill_value, order=order, zarr_format=zarr_format,
            attributes=attributes, chunk_key_encoding=chunk_key_encoding,
            dimension_names=dimension_names, storage_options=storage_options,
            overwrite=overwrite, config=config, write_empty_chunks=write_empty_chunks,
            compressor=compressor, dimension_separator=dimension_separator)
    if shape is None or dtype is None:
        missing = "shape" if shape is None else "dtype"
        raise ArgumentError(f"create_array: {missing} is not given (and no data to take it from)")
    check_storage_options(store, storage_options)
    _, empty_chunks = array_config(config, write_empty_chunks)
    metadata = array_metadata(       # (checked before the store is made)
        shape=shape, dtype=dtype, chunks=chunks, shards=shards, filters=filters,
        compressors=compressors, serializer=serializer, fill_value=fill_value, order=order,
        zarr_format=3 if zarr_format is None else zarr_format, attributes=attributes,
        chunk_key_encoding=chunk_key_encoding, dimension_names=dimension_names,
        compressor=compressor, dimension_separator=dimension_separator)
    store, where = store_and_path(store, path if path is not None else (name or ""))
    where = node_path(where or "")
    return new_array(_as_store(store, storage_options), where, metadata, overwrite=overwrite,
                     write_empty_chunks=empty_chunks)


CONFIG_KEYS = ("order", "write_empty_chunks", "read_missing_chunks",
               "sharding_coalesce_max_gap_bytes", "sharding_coalesce_max_bytes")


def array_config(config: Any, write_empty_chunks: bool | None) -> tuple[str | None, bool | None]:
    """(the ``order`` setting or None, write_empty_chunks) from zarr-python's
    ``config`` (a dict of ArrayConfig keys, or an ArrayConfig) and the
    ``write_empty_chunks`` keyword (which wins; None when neither gives it: the
    array then follows ``zarrc.config``).  ArgumentTypeError (a TypeError, as
    zarr-python) for an unknown key; the other settings are checked by
    ``Array.with_config``'s rules (``zarrc.core.array.array_config``)."""
    if config is None:
        config = {}
    elif hasattr(config, "to_dict") and not isinstance(config, Mapping):
        config = config.to_dict()
    elif is_dataclass(config) and not isinstance(config, type):
        config = asdict(config)
    if not isinstance(config, Mapping):
        raise ArgumentTypeError(f"config must be a dict of array settings {CONFIG_KEYS}, got {config!r}")
    unknown = sorted(set(config) - set(CONFIG_KEYS))
    if unknown:
        raise ArgumentTypeError(f"config: unknown array setting(s) {unknown}; the settings are {CONFIG_KEYS}")
    order = config.get("order")
    if order not in (None, "C", "F"):
        raise MetadataError(f"config: order must be 'C' or 'F', got {order!r}")
    rest = {key: value for key, value in config.items() if key != "order"}
    given = array_settings(rest, None)
    return order, write_empty_chunks if write_empty_chunks is not None else given


def check_storage_options(store: Any, storage_options: Any) -> None:
    """ArgumentTypeError (a TypeError, as zarr-python) when ``storage_options`` is
    given with a store that does not take them: everything but a URL string
    (zarrc opens ``file://`` URLs; other schemes fail when the store is made) or the
    path of kerchunk references (``refs.json``: fsspec's reference options)."""
    if storage_options is None:
        return
    if isinstance(store, str) and ("://" in store or names_references(store)):
        if not isinstance(storage_options, Mapping):
            raise ArgumentTypeError(f"storage_options must be a dict, got {storage_options!r}")
        return
    raise ArgumentTypeError(f"storage_options {storage_options!r} were given, but the store {store!r} "
                            "does not take them: they are only for a store given as a URL string")


def _store_for(store: Any, mode: str, path: str = "/", storage_options: dict | None = None) -> Store:
    """The store for ``store`` opened for ``mode`` at node ``path``.

    "w" and "w-" act on the node at ``path``, not on the whole store: the store is
    cleared ("w") only when the node is the root, else opened with "a"; "w-" opens
    it with "a" and raises ContainsNodeError if any key exists under the path (as
    zarr-python's ``StorePath.open``).  ``storage_options`` go to ``make_store`` (a
    URL's; ArgumentTypeError with anything else)."""
    if isinstance(store, Store) and not storage_options:
        s = store
    else:
        root = node_path(path) == "/"
        s = make_store(store, mode="a" if mode == "w-" or (mode == "w" and not root) else mode,
                       storage_options=storage_options)
    if mode == "w-":
        prefix = key_prefix(node_path(path))
        if next(iter(s.list_prefix(prefix)), None) is not None:
            raise ContainsNodeError(f"{node_path(path)} in {s!r} already holds data (mode 'w-')")
    return s


def open_array(store: Any, *, mode: str = "a", path: str = "", zarr_format: int | None = None,
               storage_options: dict | None = None, config: Any = None, **kwargs: Any) -> Array:
    """Open the array at ``path``; with mode "a" and ``shape`` given, create it if missing.
    Modes: "r" read only, "r+" read/write (must exist), "a" read/write (create if
    missing), "w" create (replace), "w-" create (fail if it exists).  As zarr-python:
    ``zarr_format`` 2 or 3 opens only an array of that format (NodeNotFoundError for
    the other); ``config`` (``{"write_empty_chunks": ...}``) applies to the array
    opened or created; ``storage_options`` only with a URL."""
    check_mode(mode)
    check_storage_options(store, storage_options)
    store, path = store_and_path(store, path)
    s = _store_for(store, mode, path, storage_options)
    where = node_path(path)
    create_kw = dict(kwargs, config=config)
    if zarr_format is not None:
        create_kw["zarr_format"] = zarr_format
    if mode in ("w", "w-"):
        return create_array(s, path=where, overwrite=mode == "w", **create_kw)
    node = open_node(s, where, read_only=mode == "r", zarr_format=_read_format(zarr_format, mode))
    node = _in_format(node, zarr_format, mode, where, s)
    if node is None:
        if mode == "a" and "shape" in kwargs:
            return create_array(s, path=where, **create_kw)
        raise ArrayNotFoundError(f"no array at {where} in {s!r}"
                                 + (f" in Zarr format {zarr_format}" if zarr_format else ""))
    if not isinstance(node, Array):
        raise ExpectedArrayError(f"{where} in {s!r} is a group, not an array")
    _, write_empty = array_config(config, kwargs.get("write_empty_chunks"))
    return node if write_empty is None else node.with_config({"write_empty_chunks": write_empty})


def _read_format(zarr_format: int | None, mode: str) -> int | None:
    """The format whose documents an open reads: ``zarr_format`` in modes "r" and
    "r+" (a folder holding a ``.zarray`` beside a ``zarr.json`` opens as the format
    asked for, as zarr-python); None in mode "a", where a node of the other format
    is a ContainsNodeError (``_in_format``), not a place to create one."""
    return None if mode == "a" else zarr_format


def _in_format(node: Array | Group | None, zarr_format: int | None, mode: str, where: str,
               s: Store) -> Array | Group | None:
    """``node``, or None if ``zarr_format`` asks for the other format (zarr-python opens
    only that format); in mode "a", ContainsNodeError (zarr-python would try to create
    a node there, and fail the same way)."""
    if node is None or zarr_format is None or node.metadata.zarr_format == zarr_format:
        return node
    if mode == "a":
        raise ContainsNodeError(f"{where} in {s!r} holds a Zarr format {node.metadata.zarr_format} "
                                f"{node.metadata.node_type}, not format {zarr_format}")
    return None


def open_group(store: Any = None, *, mode: str = "a", path: str = "",
               attributes: dict | None = None, zarr_format: int | None = None,
               use_consolidated: bool | None = None, storage_options: dict | None = None) -> Group:
    """Open the group at ``path`` (created if missing, for modes "a", "w", "w-"; in
    ``zarr_format``, default 3).  An existing group's format is detected.

    use_consolidated : None (default) looks members up in the group's consolidated
        metadata when it has some (one read for the whole tree); True requires it
        (MetadataError if absent); False ignores it.
    zarr_format : 2 or 3 opens only a group of that format, as zarr-python
        (NodeNotFoundError for the other; ContainsNodeError in mode "a")."""
    check_mode(mode)
    check_storage_options(store, storage_options)
    store, path = store_and_path(store, path)
    s = _store_for(store, mode, path, storage_options)
    where = node_path(path)
    fmt = 3 if zarr_format is None else zarr_format
    if mode in ("w", "w-"):
        return new_group(s, where, overwrite=mode == "w", attributes=attributes, zarr_format=fmt)
    node = open_node(s, where, read_only=mode == "r", use_consolidated=use_consolidated,
                     zarr_format=_read_format(zarr_format, mode))
    node = _in_format(node, zarr_format, mode, where, s)
    if node is None:
        if mode == "a":
            return new_group(s, where, attributes=attributes, zarr_format=fmt)
        raise GroupNotFoundError(f"no group at {where} in {s!r}")
    if not isinstance(node, Group):
        raise ExpectedGroupError(f"{where} in {s!r} is an array, not a group")
    return node


def group(store: Any = None, *, path: str = "", overwrite: bool = False,
          attributes: dict | None = None, zarr_format: int | None = None) -> Group:
    """Create a group (or open the existing one unless ``overwrite``)."""
    store, path = store_and_path(store, path)
    s = _store_for(store, "a", path)
    where = node_path(path)
    if not overwrite:
        node = open_node(s, where)
        if node is not None:
            if not isinstance(node, Group):
                raise ContainsArrayError(f"{where} in {s!r} is an array")
            return node
    return new_group(s, where, overwrite=overwrite, attributes=attributes,
                     zarr_format=3 if zarr_format is None else zarr_format)


def open(store: Any = None, *, mode: str = "a", path: str = "",
         use_consolidated: bool | None = None, **kwargs: Any) -> Array | Group:
    """Open the array or group at ``path`` (a group with its consolidated metadata,
    as :func:`open_group`).  If nothing is there and the mode allows creating: an
    array if ``shape`` is given, else a group."""
    check_mode(mode)
    storage_options = kwargs.pop("storage_options", None)
    check_storage_options(store, storage_options)
    store, path = store_and_path(store, path)
    s = _store_for(store, mode, path, storage_options)
    where = node_path(path)
    if mode not in ("w", "w-"):
        node = open_node(s, where, read_only=mode == "r", use_consolidated=use_consolidated,
                         zarr_format=_read_format(kwargs.get("zarr_format"), mode))
        node = _in_format(node, kwargs.get("zarr_format"), mode, where, s)
        if node is not None:
            return node
        if mode in ("r", "r+"):
            # (GroupNotFoundError, as zarr-python, which looks for a group last)
            raise GroupNotFoundError(f"no array or group at {where} in {s!r}")
    if "shape" in kwargs:
        return create_array(s, path=where, overwrite=mode == "w", **kwargs)
    if mode == "w-" and node_metadata.exists(s, where):
        raise node_metadata.contains_error(s, where, f"a node already exists at {where} in {s!r}")
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
    store, path = store_and_path(store, path)
    where = node_path(path)
    s = _as_store(store)
    md, nodes = consolidate(s, where, zarr_format)
    return Group(s, where, md, consolidated=nodes)


KEEP = "keep"


def _is_keep(value: Any) -> bool:
    return isinstance(value, str) and value == KEEP


def _split_codecs(codecs: list) -> tuple[list, dict, list]:
    """(filters, serializer, compressors) of a v3 codec list, as JSON dicts."""
    chain = CodecChain(codecs)
    return ([c.to_dict() for c in chain.array_to_array], chain.array_to_bytes.to_dict(),
            [c.to_dict() for c in chain.bytes_to_bytes])


def _source_settings(a: Array, zarr_format: int) -> dict[str, Any]:
    """What ``from_array``'s "keep" takes from a zarrc array (as zarr-python): its
    chunk and shard shapes; its codecs, chunk key encoding and order when
    ``zarr_format`` is its format; its fill value, dimension names and attributes."""
    md = a.metadata
    same = md.zarr_format == zarr_format
    out: dict[str, Any] = {"fill_value": md.fill_value, "attributes": copy.deepcopy(a.attrs.asdict()),
                           "filters": "auto", "compressors": "auto", "serializer": "auto",
                           "shards": None, "chunks": md.chunk_shape, "chunk_key_encoding": None,
                           "dimension_names": None, "order": None}
    if md.zarr_format == 2:
        if same:
            out.update(filters=[dict(f) for f in md.filters or ()] or None,
                       compressors=None if md.compressor is None else dict(md.compressor),
                       order=md.order,
                       chunk_key_encoding={"name": "v2", "separator": md.dimension_separator})
        return out
    codecs = md.to_json()["codecs"]
    if codecs[0]["name"] == "sharding_indexed":
        out.update(shards=md.chunk_shape, chunks=tuple(codecs[0]["configuration"]["chunk_shape"]))
        codecs = codecs[0]["configuration"]["codecs"]
    out["dimension_names"] = md.dimension_names
    if same:
        filters, serializer, compressors = _split_codecs(codecs)
        out.update(filters=filters or None, serializer=serializer, compressors=compressors or None,
                   chunk_key_encoding=md.chunk_key_encoding.to_json())
    return out


def _source_dtype(a: Array) -> Any:
    """The data type to give ``create_array`` for an array like ``a``."""
    md = a.metadata
    if md.zarr_format == 3:
        return md.data_type
    if md.dtype.kind == "O":     # v2 object arrays: their object codec names the type
        ids = [f.get("id") for f in md.filters or ()]
        return bytes if "vlen-bytes" in ids else str
    return md.dtype


def _same_place(a: Array, store: Store, path: str) -> bool:
    """True if ``a`` lives in ``store`` at, above or below ``path``."""
    same_store = a.store is store or (
        a.store.local_path("") is not None and a.store.local_path("") == store.local_path("")) or (
        isinstance(a.store, MemoryStore) and isinstance(store, MemoryStore) and a.store.data is store.data)
    if not same_store:
        return False
    mine, theirs = key_prefix(path), key_prefix(a.path)
    return mine.startswith(theirs) or theirs.startswith(mine)


def from_array(store: Any, *, data: Any, write_data: bool = True, name: str | None = None,
               chunks: Any = KEEP, shards: Any = KEEP, filters: Any = KEEP,
               compressors: Any = KEEP, serializer: Any = KEEP, fill_value: Any = DEFAULT,
               order: str | None = None, zarr_format: int | None = None,
               attributes: dict | None = None, chunk_key_encoding: Any = None,
               dimension_names: Sequence[str | None] | None = None,
               storage_options: dict | None = None, overwrite: bool = False, config: Any = None,
               **kwargs: Any) -> Array:
    """A new array in ``store`` (at ``name``) like ``data`` (a zarrc Array, a numpy
    array or an array-like), holding its values unless ``write_data`` is False.

    "keep" (the default for chunks, shards, filters, compressors, serializer) takes
    the setting from a zarrc Array ``data`` (its codecs only when ``zarr_format`` is
    its format, else the defaults), and so do fill_value, order, chunk_key_encoding,
    dimension_names, attributes and zarr_format when not given; for other data,
    "keep" means "auto" (and no shards).  Other keywords as :func:`create_array`.
    Raises ArgumentError (a ValueError) when ``overwrite`` would replace the source
    array itself (its path, or one above or below it, in the same store)."""
    check_storage_options(store, storage_options)
    settings: dict[str, Any]
    if isinstance(data, Array):
        zarr_format = data.metadata.zarr_format if zarr_format is None else zarr_format
        settings = _source_settings(data, zarr_format)
        dtype = _source_dtype(data)
    else:
        if not (hasattr(data, "shape") and hasattr(data, "dtype")):
            data = np.asarray(data)
        zarr_format = 3 if zarr_format is None else zarr_format
        settings = {"chunks": "auto", "shards": None, "filters": "auto", "compressors": "auto",
                    "serializer": "auto", "fill_value": DEFAULT, "order": None, "attributes": None,
                    "chunk_key_encoding": None, "dimension_names": None}
        dtype = data.dtype
    given = {"chunks": chunks, "shards": shards, "filters": filters, "compressors": compressors,
             "serializer": serializer}
    chosen = {k: settings[k] if _is_keep(v) else v for k, v in given.items()}
    for key, value, unset in (("fill_value", fill_value, DEFAULT), ("order", order, None),
                              ("attributes", attributes, None), ("dimension_names", dimension_names, None),
                              ("chunk_key_encoding", chunk_key_encoding, None)):
        chosen[key] = settings[key] if value is unset else value
    if isinstance(chosen["filters"], str) and chosen["filters"] == "auto":
        chosen["filters"] = None         # (the default: none; v2 object arrays get their codec)
    if zarr_format == 2:
        chosen.update(serializer="auto", dimension_names=None)
    store, name = store_and_path(store, name)
    s = _as_store(store, storage_options)
    where = node_path(name or "")
    if overwrite and isinstance(data, Array) and _same_place(data, s, where):
        raise ArgumentError(f"from_array: cannot overwrite {where} with the array at {data.path}: "
                            "the paths overlap (write elsewhere, or pass data=array[...])")
    result = create_array(s, path=where, shape=data.shape, dtype=dtype, zarr_format=zarr_format,
                          overwrite=overwrite, config=config, **chosen, **kwargs)
    if write_data:
        copy_values(result, data)
    return result


def copy_values(target: Array, data: Any) -> None:
    """Write ``data`` (same shape) into ``target``: a zarrc Array in slabs of whole
    shards (or chunks) along the first axis, anything else as one numpy array."""
    if isinstance(data, np.ndarray) or target.ndim == 0 or not isinstance(data, Array):
        target[...] = np.asarray(data) if not isinstance(data, Array) else data[...]
        return
    outer = target.shards or target.chunks
    row_bytes = max(1, target.nbytes // max(1, target.shape[0]))
    step = max(outer[0], (SLAB_BYTES // row_bytes) // outer[0] * outer[0])
    for start in range(0, target.shape[0], step):
        target[start:start + step] = data[start:start + step]


SLAB_BYTES = 256 << 20     # at most about this much of a copied array in memory at once


def create_hierarchy(*, store: Any, nodes: Mapping[str, Any],
                     overwrite: bool = False) -> Iterator[tuple[str, Array | Group]]:
    """Create every node of ``nodes`` ({path: metadata}, paths relative to the
    store's root, "" for the root; metadata: zarrc metadata objects, zarr-json
    dicts (a v3 zarr.json, or a v2 .zarray / .zgroup with an "attributes" key), or
    objects with ``to_dict()`` giving one) and the groups above them that are
    missing, all in one zarr format; returns an iterator of (path, node) pairs.

    Everything is checked before anything is written: ContainsNodeError for an
    existing node at a given path unless ``overwrite`` (an existing group above a
    given path is kept), MetadataError for invalid metadata or mixed formats."""
    return iter(make_hierarchy(_as_store(store), nodes, overwrite))


def tree(grp: Group, expand: bool | None = None, level: int | None = None) -> Any:
    """The hierarchy below ``grp`` (``Group.tree``; zarr-python deprecates this
    function for ``grp.tree()``, and ``expand`` is for its HTML display)."""
    warnings.warn("zarrc.tree(grp) is deprecated as in zarr-python: use grp.tree()",
                  DeprecationWarning, stacklevel=2)
    return grp.tree(level=level)
