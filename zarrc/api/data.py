"""The public API's data functions, as zarr-python 3's top level: the legacy
``create`` and what sits on it (``array``, ``zeros``, ``ones``, ``full``,
``empty``, their ``*_like`` forms, ``open_like``), and ``save``, ``save_array``,
``save_group``, ``load``.

On top of ``zarrc.api.synchronous``: ``create`` turns zarr-python 2's keywords (``compressor``,
``filters``, ``codecs``, ``chunk_shape``, ``dimension_separator``, ``mode`` ...)
into ``create_array``'s, with zarr-python's checks of which format takes which.
"""

from __future__ import annotations

import warnings
from typing import Any

import numpy as np

from zarrc.api.synchronous import (
    DEFAULT,
    _in_format,
    _store_for,
    array_config,
    check_storage_options,
    create_group,
    from_array,
    new_array,
    open_node,
)
from zarrc.core.array import Array
from zarrc.core.create import array_metadata, check_mode, node_path
from zarrc.core.like import like_arguments
from zarrc.errors import (
    ArgumentError,
    ArgumentTypeError,
    ArrayNotFoundError,
    NodeNotFoundError,
    NodeTypeError,
    ReadOnlyError,
)
from zarrc.metadata.v3 import ArrayMetadataV3

__all__ = ["array", "create", "empty", "empty_like", "full", "full_like", "load", "ones",
           "ones_like", "open_like", "save", "save_array", "save_group", "zeros", "zeros_like"]

# zarr-python's keywords it accepts and warns about ("not yet implemented"); zarrc too
UNUSED = ("synchronizer", "chunk_store", "cache_metadata", "cache_attrs", "read_only",
          "object_codec", "meta_array")


def _chunks(chunks: Any, chunk_shape: Any, shape: Any) -> Any:
    """zarr-python 2's ``chunks`` (or v3's ``chunk_shape``) as ``create_array``'s:
    None -> "auto", False -> one chunk, an int -> that length along every axis,
    -1 or None in a sequence -> the whole axis; True is an error."""
    if chunks is not None and chunk_shape is not None:
        raise ArgumentError("create: give chunks or chunk_shape, not both")
    value = chunks if chunks is not None else chunk_shape
    try:
        dims = (int(shape),) if isinstance(shape, (int, np.integer)) else tuple(int(s) for s in shape)
    except (TypeError, ValueError):
        raise ArgumentTypeError(f"create: shape must be an integer or a sequence of integers, "
                                f"got {shape!r}") from None
    if value is None:
        return "auto"
    if value is True:
        raise ArgumentError("create: chunks=True is not a chunk shape (False for a single chunk)")
    if value is False:
        return tuple(max(d, 1) for d in dims)
    if isinstance(value, (int, np.integer)):
        return (int(value),) * len(dims)
    if isinstance(value, (str, bytes)) or not hasattr(value, "__iter__"):
        raise ArgumentTypeError(f"create: chunks must be an integer or a sequence of integers, got {value!r}")
    items = list(value)
    if len(items) != len(dims):
        raise ArgumentError(f"create: chunks {value!r} do not have one length per axis of shape {dims}")
    return tuple(max(d, 1) if c is None or c == -1 else c for c, d in zip(items, dims))


def _encoding_v3(chunk_key_encoding: Any) -> Any:
    """zarr-python's tuple form ("default", "/") of a chunk key encoding as a dict."""
    if isinstance(chunk_key_encoding, tuple) and len(chunk_key_encoding) == 2:
        return {"name": chunk_key_encoding[0], "separator": chunk_key_encoding[1]}
    return chunk_key_encoding


def create(shape: Any, *, chunks: Any = None, dtype: Any = None, compressor: Any = "auto",
           fill_value: Any = DEFAULT, order: str | None = None, store: Any = None,
           overwrite: bool = False, path: str | None = None, filters: Any = None,
           dimension_separator: str | None = None, write_empty_chunks: bool | None = None,
           zarr_format: int | None = None, attributes: dict | None = None,
           chunk_shape: Any = None, chunk_key_encoding: Any = None, codecs: Any = None,
           dimension_names: Any = None, storage_options: dict | None = None,
           config: Any = None, mode: str | None = None, data: Any = None,
           **unused: Any) -> Array:
    """Create an array with zarr-python's legacy ``create`` keywords.

    dtype : default float64.  chunks (or chunk_shape) : None guesses them, False is
    one chunk, an int is that length along every axis.  zarr_format : default 3.
    v3 takes ``codecs`` (default: the data type's serializer and zstd) and
    ``chunk_key_encoding`` (a dict, or a tuple such as ("default", "/")); v2 takes
    ``compressor`` ("auto": zstd; None: none), ``filters``, ``order`` and
    ``dimension_separator``.  A keyword of the other format raises ArgumentError (a
    ValueError), as in zarr-python.  fill_value : not given, the data type's
    default; for v2 None is a null fill value.  mode : "a" (default) or "r+" create,
    failing on an existing node unless ``overwrite``; "w" replaces; "w-" fails if
    anything is at the path; "r" raises ReadOnlyError.  config : as
    :func:`~zarrc.api.synchronous.create_array`.  data : values written after creation (they
    do not set the shape or dtype).  zarr-python's unimplemented keywords
    (synchronizer, chunk_store, cache_metadata, cache_attrs, read_only,
    object_codec, meta_array) warn (RuntimeWarning) and are ignored."""
    for key, value in unused.items():
        if key not in UNUSED:
            raise ArgumentTypeError(f"create() got an unexpected keyword argument {key!r}")
        if value is not None:
            warnings.warn(f"{key} is not yet implemented", RuntimeWarning, stacklevel=2)
    fmt = 3 if zarr_format is None else zarr_format
    mode = "a" if mode is None else mode
    check_mode(mode)
    if mode == "r":
        raise ReadOnlyError("create: cannot create an array with mode 'r'")
    check_storage_options(store, storage_options)
    grid = _chunks(chunks, chunk_shape, shape)
    dtype = "float64" if dtype is None else dtype
    if fmt == 3:
        for key, value, ok in (("dimension_separator", dimension_separator, None),
                               ("filters", filters, None), ("compressor", compressor, "auto")):
            if value != ok:
                raise ArgumentError(f"create: {key} cannot be used for arrays with zarr_format 3 "
                                    f"(got {value!r}); give codecs (or chunk_key_encoding) instead")
        kwargs: dict[str, Any] = {"chunk_key_encoding": _encoding_v3(chunk_key_encoding),
                                  "dimension_names": dimension_names}
    else:
        for key, value in (("codecs", codecs), ("chunk_key_encoding", chunk_key_encoding),
                           ("dimension_names", dimension_names)):
            if value is not None:
                raise ArgumentError(f"create: {key} cannot be used for arrays with zarr_format 2 "
                                    f"(got {value!r})")
        kwargs = {"filters": filters, "compressor": compressor, "dimension_separator": dimension_separator}
    config_order, empty_chunks = array_config(config, write_empty_chunks)
    if fmt == 2:
        order = order or config_order     # (as zarr-python's create; for v3, order only warns)
    metadata = array_metadata(shape=shape, dtype=dtype, chunks=grid, fill_value=fill_value,
                              order=order, zarr_format=fmt, attributes=attributes, **kwargs)
    if codecs is not None and isinstance(metadata, ArrayMetadataV3):
        metadata = ArrayMetadataV3.create(
            metadata.shape, metadata.data_type, metadata.chunk_shape, fill_value=metadata.fill_value,
            codecs=list(codecs), chunk_key_encoding=metadata.chunk_key_encoding.to_json(),
            attributes=metadata.attributes, dimension_names=metadata.dimension_names)
    where = node_path("" if path is None else path)
    s = _store_for(store, mode, where, storage_options)
    result = new_array(s, where, metadata, overwrite=overwrite or mode == "w",
                       write_empty_chunks=empty_chunks)
    if data is not None:
        result[...] = data
    return result


def empty(shape: Any, **kwargs: Any) -> Array:
    """A new array of ``shape`` whose values are undefined (as zarr-python: missing
    chunks read as the fill value).  Keywords as :func:`create`."""
    return create(shape=shape, **kwargs)


def zeros(shape: Any, **kwargs: Any) -> Array:
    """A new array of ``shape`` filled with 0.  Keywords as :func:`create`."""
    return create(shape=shape, fill_value=0, **kwargs)


def ones(shape: Any, **kwargs: Any) -> Array:
    """A new array of ``shape`` filled with 1.  Keywords as :func:`create`."""
    return create(shape=shape, fill_value=1, **kwargs)


def full(shape: Any, fill_value: Any, **kwargs: Any) -> Array:
    """A new array of ``shape`` filled with ``fill_value``.  Keywords as :func:`create`."""
    return create(shape=shape, fill_value=fill_value, **kwargs)


def empty_like(a: Any, *, zarr_format: int | None = None, **kwargs: Any) -> Array:
    """An empty array like ``a`` (see :func:`zarrc.core.like.like_arguments`); keywords override."""
    return empty(**(like_arguments(a, zarr_format) | kwargs))


def zeros_like(a: Any, *, zarr_format: int | None = None, **kwargs: Any) -> Array:
    """An array of zeros like ``a``; keywords override."""
    like = like_arguments(a, zarr_format)
    like.pop("fill_value", None)
    return zeros(**(like | kwargs))


def ones_like(a: Any, *, zarr_format: int | None = None, **kwargs: Any) -> Array:
    """An array of ones like ``a``; keywords override."""
    like = like_arguments(a, zarr_format)
    like.pop("fill_value", None)
    return ones(**(like | kwargs))


def full_like(a: Any, *, zarr_format: int | None = None, **kwargs: Any) -> Array:
    """An array like ``a`` filled with ``fill_value`` (default: ``a``'s); keywords override."""
    return full(**(like_arguments(a, zarr_format) | kwargs))


def open_like(a: Any, path: str, *, zarr_format: int | None = None, **kwargs: Any) -> Array:
    """Open the array at ``path`` in ``store`` (a keyword; default a new memory
    store), or create it like ``a`` (mode "a", the default; "w" replaces it)."""
    like = like_arguments(a, zarr_format or 3)
    like.pop("zarr_format")
    kwargs = like | kwargs
    mode = kwargs.pop("mode", None) or "a"
    check_mode(mode)
    store = kwargs.pop("store", None)
    where = node_path(path)
    s = _store_for(store, mode, where)
    if mode != "w":
        node = open_node(s, where, read_only=mode == "r")
        if isinstance(node, Array):
            return node
        if node is not None:
            raise NodeTypeError(f"{where} in {s!r} is a group, not an array")
        if mode in ("r", "r+"):
            raise ArrayNotFoundError(f"no array at {where} in {s!r}")
    return create(store=s, path=where, mode=mode, zarr_format=zarr_format, **kwargs)


def array(data: Any, **kwargs: Any) -> Array:
    """A new array holding ``data`` (a numpy array, an array-like, or a zarrc Array,
    copied with :func:`~zarrc.api.synchronous.from_array`).  Its shape, dtype (unless
    ``dtype``) and chunks (unless ``chunks``; when ``data`` has a chunk shape) come
    from ``data``; other keywords as :func:`create` (``store`` default: memory)."""
    if isinstance(data, Array):
        return from_array(kwargs.pop("store", None), data=data, **kwargs)
    if not (hasattr(data, "shape") and hasattr(data, "dtype")):
        data = np.asanyarray(data)
    if kwargs.get("dtype") is None:
        kwargs["dtype"] = data.dtype
    found = like_arguments(data, None)
    kwargs["shape"] = found["shape"]
    if kwargs.get("chunks") is None:
        kwargs["chunks"] = found.get("chunks")
    if kwargs.pop("read_only", False):
        raise ArgumentError("array: read_only=True is not supported when creating an array")
    result = create(**kwargs)
    result[...] = data
    return result


def _is_ndarray_like(value: Any) -> bool:
    return all(hasattr(value, name) for name in ("shape", "dtype", "ndim", "__array__"))


def save_array(store: Any, arr: Any, *, zarr_format: int | None = None, path: str | None = None,
               storage_options: dict | None = None, **kwargs: Any) -> None:
    """Save a numpy array (or array-like with shape and dtype) to ``store`` at
    ``path``, as zarr-python: ``mode`` (default "a") and other keywords go to
    :func:`create`; chunks from ``arr.chunks`` if it has them, else guessed.
    ArgumentTypeError (a TypeError) if ``arr`` is not an array."""
    if np.isscalar(arr):
        arr = np.array(arr)
    if not _is_ndarray_like(arr):
        raise ArgumentTypeError(f"save_array: arr must be a numpy (or numpy-like) array, got "
                                f"{type(arr).__name__}")
    check_storage_options(store, storage_options)
    mode = kwargs.pop("mode", "a")
    overwrite = kwargs.pop("overwrite", None) or mode == "w"
    chunks = getattr(arr, "chunks", None)
    new = create(shape=arr.shape, dtype=arr.dtype, chunks=chunks if isinstance(chunks, tuple) else None,
                 store=_store_for(store, mode, "" if path is None else path, storage_options), path=path,
                 zarr_format=zarr_format, overwrite=overwrite, **kwargs)
    new[...] = arr


def save_group(store: Any, *args: Any, zarr_format: int | None = None, path: str | None = None,
               storage_options: dict | None = None, **kwargs: Any) -> None:
    """Save arrays to a new group at ``path`` (replacing what is there): the
    positional ones as "arr_0", "arr_1" ..., the keyword ones under their names.
    ArgumentError (a ValueError) if there are none, ArgumentTypeError if one is not
    an array; both checked before anything is replaced."""
    for i, arr in enumerate(args):
        if not _is_ndarray_like(arr):
            raise ArgumentTypeError(f"save_group: argument {i} must be a numpy (or numpy-like) array, "
                                    f"got {type(arr).__name__}")
    for key, arr in kwargs.items():
        if not _is_ndarray_like(arr):
            raise ArgumentTypeError(f"save_group: keyword argument {key!r} must be a numpy (or numpy-like) "
                                    f"array, got {type(arr).__name__}")
    if not args and not kwargs:
        raise ArgumentError("save_group: at least one array must be given")
    check_storage_options(store, storage_options)
    where = node_path("" if path is None else path)
    s = _store_for(store, "w", where, storage_options)
    group = create_group(s, where, overwrite=True, zarr_format=zarr_format)
    named = {f"arr_{i}": arr for i, arr in enumerate(args)} | kwargs
    for name, arr in named.items():
        save_array(s, arr, zarr_format=zarr_format, path=group.path.rstrip("/") + "/" + name)


def save(store: Any, *args: Any, zarr_format: int | None = None, path: str | None = None,
         storage_options: dict | None = None, **kwargs: Any) -> None:
    """Save one array (:func:`save_array`) or several (:func:`save_group`) to
    ``store``; ArgumentError (a ValueError) for none."""
    if not args and not kwargs:
        raise ArgumentError("save: at least one array must be given")
    if len(args) == 1 and not kwargs:
        save_array(store, args[0], zarr_format=zarr_format, path=path, storage_options=storage_options)
    else:
        save_group(store, *args, zarr_format=zarr_format, path=path, storage_options=storage_options,
                   **kwargs)


def load(store: Any, path: str | None = None, zarr_format: int | None = None) -> Any:
    """The values at ``path``: a numpy array for an array; for a group, a dict of
    its member arrays' values by name (zarr-python documents this; 3.x raises
    NotImplementedError for groups).  NodeNotFoundError (a FileNotFoundError) if
    nothing is there."""
    where = node_path("" if path is None else path)
    s = _store_for(store, "r", where)
    node = open_node(s, where, read_only=True, zarr_format=zarr_format)
    node = _in_format(node, zarr_format, "r", where, s)
    if node is None:
        raise NodeNotFoundError(f"load: no array or group at {where} in {s!r}"
                                + (f" in Zarr format {zarr_format}" if zarr_format else ""))
    if isinstance(node, Array):
        return node[...]
    return {name: member[...] for name, member in node.arrays()}
