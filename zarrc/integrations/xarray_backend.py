"""xarray's backend for zarrc: ``xr.open_dataset(path, engine="zarrc")``.

Registered as the ``xarray.backends`` entry point ``zarrc`` (pyproject.toml);
xarray loads this module, zarrc itself never imports it (nor xarray).  Reading
only: variables are lazy :class:`ZarrcBackendArray` objects whose BASIC, OUTER
and VECTORIZED selections go to zarrc's ``arr[...]``, ``arr.oindex[...]`` and
``arr.vindex[...]``.  Attributes, dimensions, encodings and fill values are
mapped as xarray's own zarr backend maps them, and CF decoding is left to
xarray (its StoreBackendEntrypoint), so a dataset opened here is identical to
one opened with ``engine="zarr"``.  docs/xarray.md lists the options.
"""

from __future__ import annotations

import contextlib
import os
import warnings
from collections.abc import Iterable, Iterator
from typing import Any

import numpy as np
from xarray.backends.common import AbstractDataStore, BackendArray, BackendEntrypoint
from xarray.backends.store import StoreBackendEntrypoint
from xarray.backends.zarr import FillValueCoder
from xarray.coding.strings import create_vlen_dtype
from xarray.core import indexing
from xarray.core.utils import FrozenDict, close_on_error
from xarray.core.variable import Variable

import zarrc
from zarrc.errors import ArgumentError, ArgumentTypeError, MetadataError, MissingDimensionsError

DIMENSION_KEY = "_ARRAY_DIMENSIONS"
STRING_DTYPE = hasattr(np.dtypes, "StringDType")


@contextlib.contextmanager
def _nczarr_keys_expected() -> Iterator[None]:
    """Opening NCZarr nodes: zarrc's warning about their ``_NCZARR_*`` metadata keys
    is silenced (this backend reads them)."""
    with warnings.catch_warnings():
        warnings.filterwarnings("ignore", message=r'.*unknown key\(s\) "_NCZARR_', category=UserWarning)
        yield


def _is_vlen_utf8(array: zarrc.Array) -> bool:
    """True for a variable-length UTF-8 string array (v3 ``vlen-utf8`` serializer,
    v2 ``vlen-utf8`` object filter)."""
    serializer = array.serializer
    if serializer is not None:
        return getattr(serializer, "name", None) == "vlen-utf8"
    return any(f.get("id") == "vlen-utf8" for f in getattr(array.metadata, "filters", None) or ())


class ZarrcBackendArray(BackendArray):
    """A lazy zarrc array for xarray: each selection reads only the chunks it touches."""

    __slots__ = ("_array", "dtype", "shape")

    def __init__(self, array: zarrc.Array) -> None:
        self._array = array
        self.shape = array.shape
        dtype = array.dtype
        if _is_vlen_utf8(array):
            # zarr-python (3.1+) reads vlen-utf8 as numpy 2's StringDType, and xarray
            # keeps it; with numpy 1, xarray's vlen str (object) dtype
            dtype = np.dtypes.StringDType() if STRING_DTYPE else create_vlen_dtype(str)
        self.dtype = dtype

    def get_array(self) -> zarrc.Array:
        """The zarrc Array served."""
        return self._array

    def _method(self, key: Any) -> Any:
        if isinstance(key, indexing.VectorizedIndexer):
            return self._vindex
        if isinstance(key, indexing.OuterIndexer):
            return self._array.oindex.__getitem__
        return self._array.__getitem__

    def _async_method(self, key: Any) -> Any:
        arr = zarrc.AsyncArray(self._array)
        if isinstance(key, indexing.VectorizedIndexer):
            return self._async_vindex
        if isinstance(key, indexing.OuterIndexer):
            return arr.oindex.getitem
        return arr.getitem

    def _points(self, key: tuple) -> tuple:
        # zarrc's vindex takes integer arrays only: the slices of a vectorized key
        # become the index arrays they stand for, broadcast beside the others
        if not any(isinstance(k, slice) for k in key):
            return key
        return indexing._arrayize_vectorized_indexer(indexing.VectorizedIndexer(key), self.shape).tuple

    def _vindex(self, key: tuple) -> Any:
        return self._array.vindex[self._points(key)]

    async def _async_vindex(self, key: tuple) -> Any:
        return await zarrc.AsyncArray(self._array).vindex.getitem(self._points(key))

    def _preserve_string_dtype(self, value: Any) -> Any:
        if self.dtype.kind == "T" and (isinstance(value, str) or value.dtype != self.dtype):
            return np.asarray(value).astype(self.dtype)     # zarrc reads strings as objects
        return value

    def __getitem__(self, key: indexing.ExplicitIndexer) -> Any:
        value = indexing.explicit_indexing_adapter(
            key, self.shape, indexing.IndexingSupport.VECTORIZED, self._method(key))
        return self._preserve_string_dtype(value)

    async def async_getitem(self, key: indexing.ExplicitIndexer) -> Any:
        """As ``__getitem__``, awaited (zarrc's AsyncArray: the read runs in a thread)."""
        value = await indexing.async_explicit_indexing_adapter(
            key, self.shape, indexing.IndexingSupport.VECTORIZED, self._async_method(key))
        return self._preserve_string_dtype(value)


def dims_and_attrs(array: zarrc.Array) -> tuple[tuple[str, ...], dict[str, Any]]:
    """The dimension names and the user attributes of ``array``, as xarray reads them:
    v3 ``dimension_names``; v2 ``_ARRAY_DIMENSIONS`` or NCZarr's dimension
    references (MissingDimensionsError, a MetadataError and a KeyError, if none), without that attribute and NCZarr's ``_nc*``."""
    attrs = dict(array.attrs)
    if array.metadata.zarr_format == 3:
        dims = tuple(array.metadata.dimension_names or ())
        if len(dims) != array.ndim:
            raise MissingDimensionsError(f"array {array.name} has no `dimension_names` metadata, which "
                                         "is required for xarray to determine variable dimensions")
        return dims, attrs
    found = attrs.get(DIMENSION_KEY)
    if found is None:
        found = array.dimension_names       # NCZarr's references (core.conventions)
        if found is None:
            raise MissingDimensionsError(
                f"array {array.name} has neither the attribute `{DIMENSION_KEY}` nor NCZarr's dimension "
                "references, which are required for xarray to determine variable dimensions")
    hidden = {k for k in attrs if k == DIMENSION_KEY or k.lower().startswith("_nc")}
    return tuple(found), {k: v for k, v in attrs.items() if k not in hidden}


class ZarrcDataStore(AbstractDataStore):
    """One zarrc group as an xarray data store (read only)."""

    __slots__ = ("_arrays", "_fill_as_mask", "_owned", "zarr_group")

    def __init__(self, group: zarrc.Group, use_zarr_fill_value_as_mask: bool | None = None,
                 owned: bool = True) -> None:
        self.zarr_group = group
        self._owned = owned     # False: the caller's Group, which closing the dataset leaves open
        with _nczarr_keys_expected():       # the members as the store is opened (as xarray)
            self._arrays = list(group.arrays())
        if use_zarr_fill_value_as_mask is None:     # xarray's default: v2 yes, v3 no
            use_zarr_fill_value_as_mask = group.metadata.zarr_format == 2
        self._fill_as_mask = use_zarr_fill_value_as_mask

    def arrays(self) -> list[tuple[str, zarrc.Array]]:
        """The group's arrays, (name, array), as they were when the store was opened."""
        return self._arrays

    def open_store_variable(self, name: str, array: zarrc.Array) -> Variable:
        """The lazy xarray Variable of ``array``, with xarray's zarr encodings."""
        dims, attrs = dims_and_attrs(array)
        wrapper = ZarrcBackendArray(array)
        try:
            chunks: tuple[Any, ...] = tuple(array.chunks)
        except NotImplementedError:      # a rectilinear grid: its chunks' lengths (as xarray)
            chunks = compact_chunk_sizes(array.read_chunk_sizes)
        try:
            shards: Any = array.shards
        except NotImplementedError:      # rectilinear shards
            shards = compact_chunk_sizes(array.write_chunk_sizes)
        encoding: dict[str, Any] = {"chunks": chunks,
                                    "preferred_chunks": dict(zip(dims, chunks, strict=True)),
                                    "shards": shards}
        if wrapper.dtype.kind == "T":
            encoding["dtype"] = wrapper.dtype
        encoding.update(codec_encoding(array))
        if self._fill_as_mask:
            if array.fill_value is not None:
                attrs["_FillValue"] = array.fill_value
        else:
            if array.metadata.zarr_format == 3:
                encoding["fill_value"] = array.fill_value
            if "_FillValue" in attrs:
                dtype = "string" if array.dtype.kind == "T" else array.dtype
                attrs["_FillValue"] = FillValueCoder.decode(attrs["_FillValue"], dtype)
        return Variable(dims, indexing.LazilyIndexedArray(wrapper), attrs, encoding)

    def get_variables(self) -> Any:
        return FrozenDict((k, self.open_store_variable(k, a)) for k, a in self.arrays())

    def get_attrs(self) -> dict[str, Any]:
        return {k: v for k, v in self.zarr_group.attrs.asdict().items() if not k.lower().startswith("_nc")}

    def get_dimensions(self) -> dict[str, int]:
        dims: dict[str, int] = {}
        for _, array in self.arrays():
            for d, n in zip(dims_and_attrs(array)[0], array.shape, strict=True):
                if dims.setdefault(d, n) != n:
                    raise MetadataError(f"found conflicting lengths for dimension {d} ({n} != {dims[d]})")
        return dims

    def close(self) -> None:
        if self._owned:
            self.zarr_group.close()


def codec_encoding(array: zarrc.Array) -> dict[str, Any]:
    """The codecs of ``array`` as xarray's zarr backend puts them in a variable's
    encoding, so ``to_zarr`` writes them again: ``compressors`` and ``filters`` (of
    the inner chunks when sharded), and for v3 the ``serializer`` (the inner chunks'
    too).  v2 codecs are numcodecs objects (as zarrc gives them); v3 codecs are
    zarr-python's codec objects, as zarr-python's arrays give them, made from the
    array's metadata by zarr-python (zarrc's own where zarr-python cannot: not
    installed, or a codec it lacks)."""
    if array.metadata.zarr_format == 2:
        return {"compressors": tuple(array.compressors), "filters": tuple(array.filters)}
    try:
        from zarr.abc.codec import ArrayArrayCodec, ArrayBytesCodec, BytesBytesCodec
        from zarr.core.metadata.v3 import ArrayV3Metadata

        with warnings.catch_warnings():     # (zarr-python's about data types: zarrc warned already)
            warnings.simplefilter("ignore")
            inner = ArrayV3Metadata.from_dict(array.metadata.to_dict()).inner_codecs
    except (ImportError, KeyError, TypeError, ValueError):     # (zarr-python missing, or refusing)
        serializer = array.serializer
        while getattr(serializer, "name", None) == "sharding_indexed":     # the inner chunks'
            serializer = serializer.inner.array_to_bytes
        return {"compressors": tuple(array.compressors), "filters": tuple(array.filters),
                "serializer": serializer}
    return {"compressors": tuple(c for c in inner if isinstance(c, BytesBytesCodec)),
            "filters": tuple(c for c in inner if isinstance(c, ArrayArrayCodec)),
            "serializer": next(c for c in inner if isinstance(c, ArrayBytesCodec))}


def compact_chunk_sizes(sizes: tuple[tuple[int, ...], ...]) -> tuple[Any, ...]:
    """Each dimension's chunk lengths as xarray's zarr backend gives them: one int
    where they describe a regular grid (all equal, the last no longer), else the
    tuple of lengths ((0,) for an empty dimension)."""
    out: list[Any] = []
    for n in sizes:
        if not n:
            out.append((0,))
        elif len(set(n[:-1])) <= 1 and n[-1] <= n[0]:
            out.append(n[0])
        else:
            out.append(tuple(n))
    return tuple(out)


def open_root(store: Any, *, group: str | None, consolidated: bool | None, zarr_format: int | None,
              storage_options: dict | None) -> zarrc.Group:
    """The zarrc group at ``group`` in ``store`` opened read only (consolidated: None
    uses consolidated metadata when present, True requires it, False ignores it).
    ``store`` may be a zarrc Group (used as it is opened, ``group`` below it); a zarrc
    Array is refused with an ArgumentTypeError (a TypeError, as xarray's zarr engine
    refuses zarr-python's arrays and groups)."""
    with _nczarr_keys_expected():
        return _open_root(store, group, consolidated, zarr_format, storage_options)


def _open_root(store: Any, group: str | None, consolidated: bool | None, zarr_format: int | None,
               storage_options: dict | None) -> zarrc.Group:
    if isinstance(store, os.PathLike):
        store = os.fspath(store)
    if zarr_format not in (None, 2, 3):
        raise ArgumentError(f"zarr_format must be 2, 3 or None, got {zarr_format!r}")
    if consolidated not in (None, True, False):
        raise ArgumentTypeError(f"consolidated must be True, False or None, got {consolidated!r}")
    path = (group or "").strip("/")
    if not getattr(store, "supports_consolidated_metadata", True):
        consolidated = False        # (a zarr-python store that has none: as xarray)
    if isinstance(store, zarrc.Array):       # (as xarray's zarr engine refuses zarr-python's)
        raise ArgumentTypeError(f"xarray opens a group, not the array {store.name!r}: "
                                "pass its group (or the group's store or path)")
    if isinstance(store, zarrc.Group):
        return _subgroup(store, path, zarr_format)
    if consolidated is False or not path:
        found = zarrc.open_group(store, mode="r", path=path, zarr_format=zarr_format,
                                 use_consolidated=consolidated, storage_options=storage_options)
        if consolidated is None and not path:
            _warn_unconsolidated(store, found)
        return found
    # a subgroup with consolidated metadata: the root's covers it (xarray opens the root)
    root = zarrc.open_group(store, mode="r", zarr_format=zarr_format, use_consolidated=consolidated,
                            storage_options=storage_options)
    if consolidated is None:
        _warn_unconsolidated(store, root)
    node = root[path]
    if not isinstance(node, zarrc.Group):
        raise ArgumentError(f"group {group!r} in {store!r} is an array, not a group")
    return node


UNCONSOLIDATED = (
    "Failed to open Zarr store with consolidated metadata, but successfully read with "
    "non-consolidated metadata. This is typically much slower for opening a dataset. To silence "
    "this warning, consider:\n1. Consolidating metadata in this existing store with "
    "zarr.consolidate_metadata().\n2. Explicitly setting consolidated=False, to avoid trying to "
    "read consolidate metadata, or\n3. Explicitly setting consolidated=True, to raise an error in "
    "this case instead of falling back to try reading non-consolidated metadata.")


def _warn_unconsolidated(store: Any, root: zarrc.Group) -> None:
    """xarray's zarr engine's RuntimeWarning, word for word, when ``consolidated=None``
    found no consolidated metadata at the root (not for stores that declare they
    have none, ``supports_consolidated_metadata``, as xarray)."""
    if not root.consolidated and getattr(store, "supports_consolidated_metadata", True):
        warnings.warn(UNCONSOLIDATED, RuntimeWarning, stacklevel=5)


def _subgroup(group: zarrc.Group, path: str, zarr_format: int | None) -> zarrc.Group:
    """A zarrc Group handed in: it, or its subgroup at ``path``, as it was opened
    (its mode and consolidated metadata)."""
    if zarr_format is not None and group.metadata.zarr_format != zarr_format:
        raise ArgumentError(f"group {group.name!r} is Zarr v{group.metadata.zarr_format}, "
                            f"not the zarr_format={zarr_format} asked for")
    node = group[path] if path else group
    if not isinstance(node, zarrc.Group):
        raise ArgumentError(f"{path!r} in group {group.name!r} is an array, not a group")
    return node


def _all_groups(root: zarrc.Group, parent: str) -> list[tuple[str, zarrc.Group]]:
    with _nczarr_keys_expected():
        children = list(root.groups())
    found = [(parent, root)]
    for name, child in children:
        found += _all_groups(child, f"{parent.rstrip('/')}/{name}")
    return found


def _decoders(**options: Any) -> dict[str, Any]:
    """The CF decoding options handed on to xarray's StoreBackendEntrypoint."""
    return options


class ZarrcBackendEntrypoint(BackendEntrypoint):
    """``engine="zarrc"``: open Zarr v2 / v3 stores with zarrc's native reader."""

    description = "Open Zarr v2 and v3 stores (.zarr) with zarrc's native kernels"
    url = "docs/xarray.md (in zarrc's source)"
    supports_groups = True
    open_dataset_parameters = (
        "filename_or_obj", "mask_and_scale", "decode_times", "concat_characters", "decode_coords",
        "drop_variables", "use_cftime", "decode_timedelta", "group", "consolidated", "zarr_format",
        "storage_options", "use_zarr_fill_value_as_mask",
    )

    def guess_can_open(self, filename_or_obj: Any) -> bool:
        if isinstance(filename_or_obj, str | os.PathLike):
            return os.path.splitext(str(filename_or_obj).rstrip("/"))[1] == ".zarr"
        return False

    def _decode(self, store: ZarrcDataStore, decoders: dict[str, Any]) -> Any:
        with close_on_error(store):
            return StoreBackendEntrypoint().open_dataset(store, **decoders)

    def open_dataset(
        self, filename_or_obj: Any, *, mask_and_scale: Any = True, decode_times: Any = True,
        concat_characters: Any = True, decode_coords: Any = True,
        drop_variables: str | Iterable[str] | None = None, use_cftime: Any = None,
        decode_timedelta: Any = None, group: str | None = None, consolidated: bool | None = None,
        zarr_format: int | None = None, storage_options: dict | None = None,
        use_zarr_fill_value_as_mask: bool | None = None,
    ) -> Any:
        """The dataset of the group ``group`` (default the root) of the store."""
        root = open_root(filename_or_obj, group=group, consolidated=consolidated,
                         zarr_format=zarr_format, storage_options=storage_options)
        owned = not isinstance(filename_or_obj, zarrc.Group)
        return self._decode(ZarrcDataStore(root, use_zarr_fill_value_as_mask, owned), _decoders(
            mask_and_scale=mask_and_scale, decode_times=decode_times, concat_characters=concat_characters,
            decode_coords=decode_coords, drop_variables=drop_variables, use_cftime=use_cftime,
            decode_timedelta=decode_timedelta))

    def open_groups_as_dict(
        self, filename_or_obj: Any, *, mask_and_scale: Any = True, decode_times: Any = True,
        concat_characters: Any = True, decode_coords: Any = True,
        drop_variables: str | Iterable[str] | None = None, use_cftime: Any = None,
        decode_timedelta: Any = None, group: str | None = None, consolidated: bool | None = None,
        zarr_format: int | None = None, storage_options: dict | None = None,
    ) -> dict[str, Any]:
        """{"/path": dataset} for the group ``group`` (default the root) and every group below it."""
        root = open_root(filename_or_obj, group=group, consolidated=consolidated,
                         zarr_format=zarr_format, storage_options=storage_options)
        decoders = _decoders(
            mask_and_scale=mask_and_scale, decode_times=decode_times, concat_characters=concat_characters,
            decode_coords=decode_coords, drop_variables=drop_variables, use_cftime=use_cftime,
            decode_timedelta=decode_timedelta)
        owned = not isinstance(filename_or_obj, zarrc.Group)
        return {path: self._decode(ZarrcDataStore(g, owned=owned), decoders) for path, g in _all_groups(root, "/")}

    def open_datatree(
        self, filename_or_obj: Any, **kwargs: Any,
    ) -> Any:
        """The DataTree of the group ``group`` (default the root) and every group below it."""
        from xarray.backends.common import datatree_from_dict_with_io_cleanup

        return datatree_from_dict_with_io_cleanup(self.open_groups_as_dict(filename_or_obj, **kwargs))
