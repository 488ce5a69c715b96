"""The Array: a thin user-facing object over metadata, a store and the engine."""

from __future__ import annotations

import math
import threading
from collections.abc import Iterator, Mapping
from typing import Any

import numpy as np

from zarrc.codecs.numcodecs_compat import numcodecs_codec
from zarrc.core import conventions, indexing, node_metadata, resize
from zarrc.core.chunk_grid import Edges, RectilinearChunkGrid, RegularChunkGrid
from zarrc.core.node import AsyncNode, Node, forward
from zarrc.engine import api as engine_api
from zarrc.engine.prepare import prepare
from zarrc.errors import (
    ArgumentError,
    ArgumentTypeError,
    ArrayNotFoundError,
    ExpectedArrayError,
    SelectionError,
    ZarrcError,
)
from zarrc.metadata.v3 import ArrayMetadataV3
from zarrc.runtime.async_calls import run_sync
from zarrc.runtime.config import config
from zarrc.stores import Store, make_store

# what Array._prepare sets (Array.__getattr__ prepares a listed array on first use)
_PREPARED = frozenset(("_engine", "_chunked", "_encoding", "_prefix", "_codec_chain", "_inner_chain"))
_PREPARING = threading.Lock()


@indexing.names_selection_errors(
    "__getitem__", "__setitem__", "get_basic_selection", "set_basic_selection",
    "get_orthogonal_selection", "set_orthogonal_selection", "get_block_selection",
    "set_block_selection", "get_coordinate_selection", "set_coordinate_selection",
    "get_mask_selection", "set_mask_selection")
class Array(Node):
    """A Zarr array.

    Index it like a numpy array (integers, slices with positive steps, ``...``) to
    read (``a[...]`` returns a numpy array) and to write (``a[0:10] = values``, with
    numpy broadcasting).  Chunks are fetched, decoded and scattered by native
    workers without the GIL.  Raises SelectionError (an IndexError) for bad
    selections, CodecError / ChecksumError for corrupt chunks.
    """

    kind = "array"

    def __init__(self, store: Store, path: str, metadata: ArrayMetadataV3, *,
                 read_only: bool = False, write_empty_chunks: bool | None = None,
                 prepare_now: bool = True) -> None:
        super().__init__(store, path, metadata, read_only)
        if write_empty_chunks is None:
            write_empty_chunks = config.write_empty_chunks
        self._write_empty_chunks = bool(write_empty_chunks)
        if prepare_now:
            self._prepare()

    def __getattr__(self, name: str) -> Any:
        # an array listed by its group (``prepare_now=False``) is prepared for the
        # engine when first read, written or asked about its codecs
        if name in _PREPARED and "_metadata" in self.__dict__:
            with _PREPARING:
                if name not in self.__dict__:
                    self._prepare()
            return self.__dict__[name]
        return object.__getattribute__(self, name)        # (the usual AttributeError)

    def _prepare(self) -> None:
        """Prepare the array for the engine: its state and strategy (engine.prepare)."""
        prepared = prepare(self._store, self._path, self._metadata, self._write_empty_chunks)
        self._engine = prepared.strategy
        self._chunked = prepared.strategy.arr
        self._encoding = prepared.encoding
        self._prefix = self._chunked.prefix
        self._codec_chain = prepared.codec_chain
        self._inner_chain = prepared.inner_chain

    # -------------------------------------------------------------- properties

    @property
    def shape(self) -> tuple[int, ...]:
        return self._metadata.shape

    def _sharding(self) -> Any:
        """The sharding codec's spec when it is the array's only codec (zarr-python's
        rule for a sharded array), else None."""
        codecs: tuple[Any, ...] = getattr(self._metadata, "codecs", ())
        return codecs[0] if len(codecs) == 1 and codecs[0].name == "sharding_indexed" else None

    @property
    def chunks(self) -> tuple[int, ...]:
        """The chunk shape: for a sharded array (``sharding_indexed`` the only codec),
        the chunks inside a shard (with nested sharding, the outer sharding codec's),
        as zarr-python; with codecs around the sharding codec, the shard shape."""
        sharding = self._sharding()
        if sharding is None:
            if self._rectilinear() is not None:
                raise NotImplementedError(
                    "The `chunks` attribute is only defined for arrays using regular chunk grids. "
                    "This array has a rectilinear chunk grid. Use `read_chunk_sizes` for general access.")
            return self._metadata.chunk_shape
        return tuple(sharding.configuration["chunk_shape"])

    @property
    def shards(self) -> tuple[int, ...] | None:
        """The shard shape of a sharded array (as ``chunks``), else None."""
        if self._sharding() is not None and self._rectilinear() is not None:
            raise NotImplementedError(
                "The `shards` attribute is only defined for arrays using regular chunk grids. "
                "This array has a rectilinear chunk grid. Use `write_chunk_sizes` for general access.")
        return self._metadata.chunk_shape if self._sharding() is not None else None

    def _rectilinear(self) -> RectilinearChunkGrid | None:
        """The array's rectilinear chunk grid, or None for a regular one."""
        edges = getattr(self._metadata, "chunk_edges", None)
        return None if edges is None else RectilinearChunkGrid(self.shape, edges)

    def _blocks(self) -> tuple[Any, ...]:
        """The blocks of ``a.blocks[...]``: the stored chunks (shards), per dimension a
        length or a rectilinear dimension's ``Edges``."""
        grid = self._rectilinear()
        return self._metadata.chunk_shape if grid is None else grid.dims

    def _stored_grid(self) -> RegularChunkGrid | RectilinearChunkGrid:
        """The grid of the stored chunks (shards)."""
        return self._rectilinear() or RegularChunkGrid(self.shape, self._metadata.chunk_shape)

    @property
    def write_chunk_sizes(self) -> tuple[tuple[int, ...], ...]:
        """Each dimension's stored chunk (shard) lengths inside the array (dask's
        ``chunks``), as zarr-python 3.4."""
        grid = self._stored_grid()
        if isinstance(grid, RectilinearChunkGrid):
            return grid.chunk_sizes()
        return tuple(tuple(min(c, n - i) for i in range(0, n, c)) if n else ()
                     for n, c in zip(self.shape, grid.chunk_shape))

    @property
    def read_chunk_sizes(self) -> tuple[tuple[int, ...], ...]:
        """As ``write_chunk_sizes``, but of the inner chunks of a sharded array."""
        if self._sharding() is None:
            return self.write_chunk_sizes
        if not all(self.shape):
            return tuple(() for _ in self.shape)
        return RectilinearChunkGrid(self.shape, self.chunks).chunk_sizes()

    @property
    def dtype(self) -> np.dtype:
        return self._metadata.dtype

    @property
    def ndim(self) -> int:
        return len(self.shape)

    @property
    def size(self) -> int:
        return math.prod(self.shape)

    @property
    def nbytes(self) -> int:
        """Bytes of the whole array in memory (not what the store holds)."""
        return self.size * self.dtype.itemsize

    @property
    def fill_value(self) -> Any:
        return self._metadata.fill_value

    @property
    def order(self) -> str:
        """"C" or "F": the element order within stored chunks (v2; always "C" for v3)."""
        return getattr(self._metadata, "order", "C")

    @property
    def dimension_names(self) -> tuple[str | None, ...] | None:
        """The names of the dimensions, or None: v3's ``dimension_names``; for v2,
        the attribute ``_ARRAY_DIMENSIONS`` (xarray, GDAL) or NCZarr's dimension
        references (``core.conventions.dimension_names``)."""
        return conventions.dimension_names(self._metadata)

    @property
    def codecs(self) -> tuple[Any, ...]:
        """The codec objects, in order (v2: the filters, then the compressor)."""
        if self._codec_chain is None:
            return self.filters + self.compressors
        return self._codec_chain.codecs

    @property
    def compressors(self) -> tuple[Any, ...]:
        """The bytes->bytes codecs (of the inner chunks, for a sharded array); for v2,
        the compressor (numcodecs codec object), if any."""
        if self._inner_chain is None:
            md = self._metadata
            return () if md.compressor is None else (numcodecs_codec(md.compressor, "compressor"),)
        return self._inner_chain.bytes_to_bytes

    @property
    def filters(self) -> tuple[Any, ...]:
        """The array->array codecs (of the inner chunks, for a sharded array); for v2,
        the filters (numcodecs codec objects)."""
        if self._inner_chain is None:
            return tuple(numcodecs_codec(f, "filters") for f in self._metadata.filters or ())
        return self._inner_chain.array_to_array

    @property
    def serializer(self) -> Any:
        """The array->bytes codec (None for v2)."""
        return None if self._codec_chain is None else self._codec_chain.array_to_bytes

    @property
    def compressor(self) -> Any:
        """The compressor of a v2 array (a numcodecs codec, or None); zarr-python's
        name.  ArgumentTypeError (a TypeError) for a v3 array: see ``compressors``."""
        if self.zarr_format != 2:
            raise ArgumentTypeError(f"array {self._path}: `compressor` is not available for Zarr "
                                    "format 3 arrays; use `compressors`")
        return self.compressors[0] if self.compressors else None

    @property
    def cdata_shape(self) -> tuple[int, ...]:
        """The number of chunks along each dimension (of ``chunks``: for a sharded
        array, the chunks inside shards, as zarr-python)."""
        if self._sharding() is None and self._rectilinear() is not None:
            return self._stored_grid().grid_shape
        return RegularChunkGrid(self.shape, self.chunks).grid_shape

    @property
    def nchunks(self) -> int:
        """The number of chunks (``chunks``, see ``cdata_shape``)."""
        return math.prod(self.cdata_shape)

    @property
    def nchunks_initialized(self) -> int:
        """How many chunks exist in the store: for a sharded array, the chunks of
        every stored shard, counted whole as zarr-python does (an edge shard's
        chunks beyond the array included, so this can exceed ``nchunks``)."""
        grid = self._rectilinear()
        if self._sharding() is not None and grid is not None:     # (shards of several sizes)
            inner = self.chunks

            def length(d: int, c: int) -> int:      # shard c's length along dimension d
                dim = grid.dims[d]
                return int(dim.edges[c]) if isinstance(dim, Edges) else dim
            return sum(math.prod(length(d, c) // inner[d] for d, c in enumerate(coords))
                       for coords in self._stored_chunk_coords())
        if self._sharding() is None:
            return self._nshards_initialized()
        per_shard = math.prod(s // c for s, c in zip(self._metadata.chunk_shape, self.chunks))
        return self._nshards_initialized() * per_shard

    def _nshards_initialized(self) -> int:
        """How many stored objects (shards, or chunks if unsharded) are in the store."""
        return sum(1 for _ in self._stored_chunk_coords())

    def _stored_chunk_coords(self) -> Iterator[tuple[int, ...]]:
        """The grid coordinates of the stored objects (shards, or chunks) in the store."""
        ndim = self.ndim
        grid = self._stored_grid().grid_shape
        for key in self._store.list_prefix(self._prefix):
            rest = key[len(self._prefix):]
            if rest in node_metadata.METADATA_NAMES:
                continue
            try:
                coords = self._encoding.decode(rest, ndim)
            except ZarrcError:
                continue
            if all(c < g for c, g in zip(coords, grid)):
                yield tuple(coords)

    def nbytes_stored(self) -> int:
        """The bytes the store holds for this array: its chunks (shards) and metadata
        documents, every key under its path."""
        store = self._store
        total = 0
        for key in store.list_prefix(self._prefix):
            size = store.size(key)
            if size is None:
                value = store.get(key)
                size = 0 if value is None else len(value)
            total += size
        return total

    def with_config(self, config: Any) -> Array:
        """This array opened again with other run-time settings: a dict (or an object
        with ``to_dict()``, as zarr-python's ArrayConfig) of ``write_empty_chunks``
        (True or False), ``order`` (only "C") and ``read_missing_chunks`` (only True:
        missing chunks read as the fill value); missing keys keep this array's.
        ArgumentError for another key or value."""
        again = Array(self._store, self._path, self._metadata, read_only=self._read_only,
                      write_empty_chunks=array_config(config, self._write_empty_chunks))
        again._mirrors = self._mirrors
        return again

    @property
    def write_empty_chunks(self) -> bool:
        """True if chunks holding only the fill value are written (else deleted)."""
        return self._write_empty_chunks

    @property
    def info(self) -> ArrayInfo:
        """A summary of the array (``print(a.info)``), from its metadata."""
        return ArrayInfo(self)

    def info_complete(self) -> ArrayInfo:
        """``info`` with what the store holds: bytes stored, the storage ratio and the
        chunks (shards) initialized."""
        return ArrayInfo(self, complete=True)

    # -------------------------------------------------------------- shape

    def resize(self, new_shape: Any) -> None:
        """Change the shape to ``new_shape`` (an int, or one int per dimension).

        On a shrink, the part beyond the new shape of every chunk (shard) the new
        shape cuts is overwritten with the fill value (a chunk left all fill is
        deleted, unless ``write_empty_chunks``), and the chunks (shards) wholly
        outside it are deleted: a later grow shows the fill value there, in zarrc and
        in any library reading the store (zarr-python 3 keeps the old values of cut
        chunks instead; see zarrc.core.resize).  Then the metadata document is replaced in
        one store write, and the consolidated metadata of the groups above updated.
        Other Array objects open on the same array keep the shape they read.  Raises
        StoreError if the array is read-only or, before anything changes, if the
        store cannot delete a stored chunk that must go (zip); ArgumentError (a
        ValueError) for a wrong rank or a negative length.
        """
        self._check_writable()
        new_shape = resize.new_shape_of(new_shape, self.shape, self._path)
        metadata = resize.resized_metadata(self._metadata, new_shape)
        old = self._metadata
        resize.check_deletable(self._store, self._prefix, self._encoding, old, new_shape)
        fill = self._chunked.fill_scalar()
        for region in resize.cut_regions(old.shape, resize.stored_dims(old), new_shape):
            self[region] = fill                      # (the old shape still in force)
        resize.delete_outside(self._store, self._prefix, self._encoding, old, new_shape)
        self._set_metadata(metadata)
        self._prepare()

    def append(self, data: Any, axis: int = 0) -> tuple[int, ...]:
        """Grow the array by ``data.shape[axis]`` along ``axis`` and write ``data``
        there; returns the new shape.  Every other dimension of ``data`` must equal
        the array's (ArgumentError, a ValueError, otherwise).

        The new chunks are stored first, then the metadata with the new shape: a
        reader never sees a shape whose chunks are not yet written (they lie
        outside the old shape, which readers of the old metadata do not read).  A
        failed write leaves the old shape."""
        self._check_writable()
        if not hasattr(data, "shape"):
            data = np.asanyarray(data)
        new_shape, region = resize.append_plan(self.shape, tuple(data.shape), axis, self._path)
        metadata = resize.resized_metadata(self._metadata, new_shape)
        grown = prepare(self._store, self._path, metadata, self._write_empty_chunks).strategy
        engine_api.write(grown, region, data)
        self._set_metadata(metadata)
        self._prepare()
        return new_shape

    # -------------------------------------------------------------- data

    def __getitem__(self, selection: Any) -> Any:
        data = self._engine.read(selection)
        # a 0-d array reads as a numpy scalar, as zarr-python
        return _scalar_of(data) if not self._metadata.shape else data

    def __setitem__(self, selection: Any, value: Any) -> None:
        self._check_writable()
        engine_api.write(self._engine, selection, value)

    def get_basic_selection(self, selection: Any = Ellipsis, *, out: Any = None, prototype: Any = None,
                            fields: Any = None) -> Any:
        """Ints, slices (positive step) and ``...`` (``a[...]``; an int for every dimension
        gives a numpy scalar, as zarr-python).  ``out``: a numpy array
        (or zarr-python NDBuffer) of the result's shape and dtype, filled in place and
        returned; ``fields``: a field or a list of fields of a structured dtype (their
        values only).  ``prototype`` is accepted for zarr-python's signature (numpy
        results only).  Raises SelectionError (an IndexError) for other selections
        when ``out`` or ``fields`` is given, ArgumentError for a mismatched ``out``."""
        if out is None and fields is None:
            # (every dimension indexed by an int: a numpy scalar, as zarr-python)
            return _scalar_of(self[selection])
        data = self._read_planned(self._plan_basic(selection), out, fields)
        return data if out is not None else _scalar_of(data)

    def _plan_basic(self, selection: Any) -> indexing.Plan:
        """The plan of a basic selection (ints, slices, ``...``), else SelectionError."""
        items = selection if isinstance(selection, tuple) else (selection,)
        for item in items:
            if not (item is Ellipsis or isinstance(item, (slice, int, np.integer))) or isinstance(item, bool):
                raise SelectionError(f"unsupported selection item for basic indexing: {item!r}; expected "
                                     "an integer, a slice or Ellipsis")
        dims, _ = indexing.plan_orthogonal(selection, self.shape, self._chunked.chunks)
        return dims

    def set_basic_selection(self, selection: Any, value: Any, *, fields: Any = None,
                            prototype: Any = None) -> None:
        """``a[selection] = value``; ``fields``: one field of a structured dtype (a
        name or a list of one), written alone, the others kept (as
        set_orthogonal_selection).  ``prototype`` is accepted for zarr-python's
        signature.  Raises SelectionError for other selections when ``fields`` is
        given."""
        if fields is None:
            self[selection] = value
            return
        self._write_planned(self._plan_basic(selection), value, fields)

    # -------------------------------------------------------------- orthogonal and block selections

    @property
    def oindex(self) -> OIndex:
        """Orthogonal selection: ``a.oindex[rows, cols] (= value)`` (see
        get_orthogonal_selection)."""
        return OIndex(self)

    @property
    def blocks(self) -> BlockIndex:
        """Block selection: ``a.blocks[i, j] (= value)`` (see get_block_selection)."""
        return BlockIndex(self)

    def get_orthogonal_selection(self, selection: Any, *, out: Any = None, fields: Any = None) -> Any:
        """Per dimension an int, a slice (positive step), an integer list or array (any
        order, repeats, negative indices from the end) or a boolean array of the
        dimension's length, each applied on its own (``a.oindex[[0, 2], [1, 3]]`` is
        a 2 x 2 array).  ``out``: a numpy array of the result's shape and dtype,
        filled in place and returned; ``fields``: a field or a list of fields of a
        structured dtype.  Raises SelectionError (an IndexError) for an index out of
        bounds or of an unsupported kind, ArgumentError for a mismatched ``out``."""
        dims, _ = indexing.plan_orthogonal(selection, self.shape, self._chunked.chunks)
        return self._read_planned(dims, out, fields)

    def set_orthogonal_selection(self, selection: Any, value: Any, *, fields: Any = None) -> None:
        """Write ``value`` (numpy broadcasting) to an orthogonal selection (see
        get_orthogonal_selection); where an index repeats, the last value wins.
        Raises ArgumentError (a ValueError) for a value that does not broadcast."""
        dims, _ = indexing.plan_orthogonal(selection, self.shape, self._chunked.chunks)
        self._write_planned(dims, value, fields)

    def get_block_selection(self, selection: Any, *, out: Any = None, fields: Any = None) -> Any:
        """Per dimension a block number or a slice of block numbers (step 1; negative
        numbers count from the end); the blocks are the chunks (for a sharded array,
        the shards, as zarr-python), edge blocks clipped to the array.  No dimension
        is dropped.  ``out``, ``fields``: as get_orthogonal_selection."""
        dims, _ = indexing.plan_blocks(selection, self.shape, self._chunked.chunks,
                                       self._blocks())
        return self._read_planned(dims, out, fields)

    def set_block_selection(self, selection: Any, value: Any, *, fields: Any = None) -> None:
        """Write ``value`` (numpy broadcasting) to a block selection (see
        get_block_selection)."""
        dims, _ = indexing.plan_blocks(selection, self.shape, self._chunked.chunks,
                                       self._blocks())
        self._write_planned(dims, value, fields)

    @property
    def vindex(self) -> VIndex:
        """Coordinate or mask selection: ``a.vindex[rows, cols] (= value)`` with one
        integer array per dimension, or ``a.vindex[mask]`` (see
        get_coordinate_selection, get_mask_selection)."""
        return VIndex(self)

    def get_coordinate_selection(self, selection: Any, *, out: Any = None, fields: Any = None) -> Any:
        """The points ``(selection[0][k], selection[1][k], ...)``: one integer array (or
        int) per dimension, broadcast together; the result has their broadcast
        shape.  Points may repeat and come in any order; negative indices count from
        the end.  ``out``: a numpy array of the result's shape (or of its number of
        points, 1-d, as zarr-python takes it), filled in place; ``fields``: as
        get_orthogonal_selection.  Raises SelectionError (an IndexError) for an
        index out of bounds or arrays that do not broadcast."""
        points = indexing.plan_coordinate(selection, self.shape, self._chunked.chunks)
        return self._read_points(points, out, fields)

    def set_coordinate_selection(self, selection: Any, value: Any, *, fields: Any = None) -> None:
        """Write ``value`` to the points of a coordinate selection (see
        get_coordinate_selection): one value for all, one per point (in the
        selection's C order, any shape with that many items, as zarr-python), or an
        array that broadcasts to the selection's shape.  Where a point repeats, the
        last value wins."""
        points = indexing.plan_coordinate(selection, self.shape, self._chunked.chunks)
        self._write_planned(points, value, fields)

    def get_mask_selection(self, mask: Any, *, out: Any = None, fields: Any = None) -> Any:
        """The elements where ``mask`` (a boolean array of the array's shape) is True,
        in C order, as a 1-d array.  ``out``, ``fields``: as get_orthogonal_selection."""
        points = indexing.plan_mask_selection(mask, self.shape, self._chunked.chunks)
        return self._read_points(points, out, fields)

    def set_mask_selection(self, mask: Any, value: Any, *, fields: Any = None) -> None:
        """Write ``value`` (one value, or one per True element of ``mask`` in C order)
        where ``mask`` is True."""
        points = indexing.plan_mask_selection(mask, self.shape, self._chunked.chunks)
        self._write_planned(points, value, fields)

    def _read_points(self, points: indexing.Points, out: Any, fields: Any) -> Any:
        """A planned coordinate or mask selection read, shaped as the selection: into
        ``out`` if given (of the selection's shape or 1-d)."""
        if out is None:
            return self._read_planned(points, None, fields).reshape(points.shape)
        out = _as_ndarray(out)
        flat = out.reshape(-1) if out.shape in (points.shape, (points.nsel,)) else out
        if flat.size and not np.may_share_memory(flat, out):      # (out not contiguous)
            flat = np.empty_like(flat)      # (scratch: a failed read leaves out untouched)
            if field_dtype(self.dtype, fields) is None:
                engine_api.read_into(self._engine, points, flat, given=False)
            else:
                self._read_planned(points, flat, fields)
            out[...] = flat.reshape(out.shape)
        else:
            self._read_planned(points, flat, fields)
        return out

    def _read_planned(self, dims: indexing.Plan, out: Any, fields: Any) -> Any:
        if out is not None:
            out = _as_ndarray(out)
        out_dtype = field_dtype(self.dtype, fields)
        if out_dtype is None:
            return engine_api.read_selection(self._engine, dims, out)
        data = engine_api.read_selection(self._engine, dims)
        if out is None:
            out = np.empty(data.shape, out_dtype)
        elif out.shape != data.shape or out.dtype != out_dtype:
            raise ArgumentError(f"out of shape {out.shape} and dtype {out.dtype} does not match the "
                                f"selection: shape {data.shape}, dtype {out_dtype}")
        out[...] = data[fields if isinstance(fields, str) else list(fields)]
        return out

    def _write_planned(self, dims: indexing.Plan, value: Any, fields: Any) -> None:
        self._check_writable()
        if field_dtype(self.dtype, fields) is None:
            engine_api.write(self._engine, dims, value, planned=True)
            return
        if not isinstance(fields, str):
            if len(fields) > 1:
                raise SelectionError(f"fields {fields!r}: a write takes a single field")
            fields = fields[0]
        if isinstance(dims, indexing.Points) and np.ndim(value) > 1:
            value = np.asarray(value).reshape(-1)       # (as engine.batch.points_value)
        with engine_api.hold_all(self._engine, dims):    # (read, then write: one lock)
            data = engine_api.read_selection(self._engine, dims)     # the other fields kept
            try:
                data[fields] = value
            except ValueError:
                raise ArgumentError(f"could not broadcast value of shape {np.shape(value)} to "
                                    f"selection shape {data.shape}") from None
            engine_api.write(self._engine, dims, data, planned=True)

    def __array__(self, dtype: Any = None, copy: Any = None) -> np.ndarray:
        data = np.asarray(self[...])
        return data if dtype is None else data.astype(dtype, copy=False)

    def __len__(self) -> int:
        if not self.shape:
            raise ArgumentTypeError("len() of unsized object (0-d array)")
        return self.shape[0]

    def __iter__(self) -> Iterator[Any]:
        for i in range(len(self)):
            yield self[i]

    def __repr__(self) -> str:
        return f"<Array {self._store!r}{self._path} shape={self.shape} dtype={self.dtype}>"

    @property
    def async_array(self) -> AsyncArray:
        """This array as an AsyncArray (sharing it), as zarr-python's."""
        return AsyncArray(self)

    _async_array = async_array

    def __reduce__(self) -> tuple:
        return (_reopen, (self._store, self._path, self._read_only, self._write_empty_chunks))


def as_store(store: Any, mode: str) -> Store:
    """``store`` if it is a Store, else the store ``make_store`` opens for it in ``mode``."""
    return store if isinstance(store, Store) else make_store(store, mode=mode)


def open_existing(store: Any, zarr_format: int | None = None, config: Any = None) -> Array:
    """The array at the root of ``store`` (a Store, or what ``make_store`` takes,
    opened "r+"), in ``zarr_format`` (None: either), with the run-time settings
    ``config``: ``AsyncArray.open``.  ArrayNotFoundError if there is none (or only one
    of the other format), ExpectedArrayError if a group is there."""
    s = as_store(store, "r+")
    md = node_metadata.read(s, "/")
    if md is None or (zarr_format is not None and md.zarr_format != zarr_format):
        raise ArrayNotFoundError(f"no array at / in {s!r}" + (f" in Zarr format {zarr_format}" if zarr_format
                                                               else ""))
    if md.node_type != "array":
        raise ExpectedArrayError(f"/ in {s!r} is a group, not an array")
    array = Array(s, "/", md)
    return array if config is None else array.with_config(config)


def array_config(config: Any, write_empty_chunks: bool | None) -> bool | None:
    """``write_empty_chunks`` as the array config ``config`` (None, a dict, or an object
    with ``to_dict()`` as zarr-python's ArrayConfig) sets it (else as given): see
    Array.with_config.  ArgumentError for settings zarrc does not take."""
    if config is None:
        return write_empty_chunks
    if hasattr(config, "to_dict") and not isinstance(config, Mapping):
        config = config.to_dict()
    if not isinstance(config, Mapping):
        raise ArgumentTypeError(f"config must be a dict of array settings, got {config!r}")
    for key, value in config.items():
        if key == "write_empty_chunks" and isinstance(value, bool):
            write_empty_chunks = value
        elif key.startswith("sharding_coalesce_") and isinstance(value, int):
            pass                    # (zarr-python's shard read tuning: zarrc plans its own reads)
        elif (key, value) not in (("order", "C"), ("read_missing_chunks", True)):
            raise ArgumentError(f"array config {key!r}={value!r} is not supported (zarrc takes "
                                "write_empty_chunks=True/False, order='C', read_missing_chunks=True)")
    return write_empty_chunks


def _scalar_of(data: Any) -> Any:
    """``data``, or the numpy scalar a 0-d ndarray holds."""
    return data[()] if isinstance(data, np.ndarray) and data.ndim == 0 else data


def _reopen(store: Store, path: str, read_only: bool, write_empty_chunks: bool) -> Array:
    md = node_metadata.read(store, path)
    if md is None or md.node_type != "array":
        from zarrc.errors import ArrayNotFoundError
        raise ArrayNotFoundError(f"no array at {path} in {store!r}")
    return Array(store, path, md, read_only=read_only, write_empty_chunks=write_empty_chunks)


def _as_ndarray(out: Any) -> np.ndarray:
    """``out`` of a getter as a numpy array (a zarr-python NDBuffer's), else
    ArgumentTypeError."""
    if not isinstance(out, np.ndarray):
        as_array = getattr(out, "as_ndarray_like", None)     # a zarr-python NDBuffer
        out = as_array() if as_array is not None else out
        if not isinstance(out, np.ndarray):
            raise ArgumentTypeError(f"out must be a numpy array, got {type(out).__name__}")
    return out


@indexing.names_selection_errors("__getitem__", "__setitem__")
class VIndex:
    """``a.vindex``: coordinate or mask selection by indexing (zarr-python's rules:
    one boolean array of the array's shape is a mask, one integer array or int per
    dimension a coordinate selection)."""

    def __init__(self, array: Array) -> None:
        self._array = array

    def __getitem__(self, selection: Any) -> Any:
        fields, selection = pop_fields(selection)
        a = self._array
        points = indexing.plan_vindex(selection, a.shape, a._chunked.chunks)
        return a._read_points(points, None, fields)

    def __setitem__(self, selection: Any, value: Any) -> None:
        fields, selection = pop_fields(selection)
        a = self._array
        a._write_planned(indexing.plan_vindex(selection, a.shape, a._chunked.chunks), value, fields)


@indexing.names_selection_errors("__getitem__", "__setitem__")
class OIndex:
    """``a.oindex``: orthogonal selection by indexing (get/set_orthogonal_selection)."""

    def __init__(self, array: Array) -> None:
        self._array = array

    def __getitem__(self, selection: Any) -> Any:
        fields, selection = pop_fields(selection)
        return self._array.get_orthogonal_selection(selection, fields=fields)

    def __setitem__(self, selection: Any, value: Any) -> None:
        fields, selection = pop_fields(selection)
        self._array.set_orthogonal_selection(selection, value, fields=fields)


@indexing.names_selection_errors("__getitem__", "__setitem__")
class BlockIndex:
    """``a.blocks``: block selection by indexing (get/set_block_selection)."""

    def __init__(self, array: Array) -> None:
        self._array = array

    def __getitem__(self, selection: Any) -> Any:
        fields, selection = pop_fields(selection)
        return self._array.get_block_selection(selection, fields=fields)

    def __setitem__(self, selection: Any, value: Any) -> None:
        fields, selection = pop_fields(selection)
        self._array.set_block_selection(selection, value, fields=fields)


def pop_fields(selection: Any) -> tuple[Any, Any]:
    """(fields, the rest): the field names (str items) of a selection taken out,
    as zarr-python's indexers do."""
    if isinstance(selection, str):
        return selection, ()
    if not isinstance(selection, tuple):
        return None, selection
    names = [s for s in selection if isinstance(s, str)]
    rest = tuple(s for s in selection if not isinstance(s, str))
    return (names[0] if len(names) == 1 else names or None), (rest[0] if len(rest) == 1 else rest)


def field_dtype(dtype: np.dtype, fields: Any) -> np.dtype | None:
    """The dtype of ``fields`` (a name or a list of names) of a structured ``dtype``
    (several: packed, in the order given), or None when no fields are given.
    Raises SelectionError for fields the dtype does not have."""
    if fields is None:
        return None
    if not isinstance(fields, (str, list, tuple)):
        raise SelectionError(f"fields must be a string or a list of strings, got {type(fields).__name__}")
    if not fields:
        return None
    if dtype.names is None:
        raise SelectionError(f"fields {fields!r}: the array's dtype {dtype} has no fields")
    try:
        if isinstance(fields, str):
            return dtype[fields]
        return np.dtype([(f, dtype[f]) for f in fields])
    except KeyError:
        raise SelectionError(f"fields {fields!r}: no such field in {dtype}") from None


class ArrayInfo:
    """A summary of an array (``repr`` prints it; ``complete``: with what the
    store holds, read once here)."""

    def __init__(self, array: Array, complete: bool = False) -> None:
        self._array = array
        a = array
        rows: list[tuple[str, Any]] = [
            ("Type", "Array"), ("Zarr format", a.zarr_format), ("Data type", a.metadata.data_type),
            ("Fill value", a.fill_value), ("Shape", a.shape)]
        if a._sharding() is not None:
            rows.append(("Shard shape", "<variable>" if a._rectilinear() is not None else a.shards))
        rows += [
            ("Chunk shape", "<variable>" if a._sharding() is None and a._rectilinear() is not None
             else a.chunks), ("Order", a.order),
            ("Read-only", a.read_only), ("Store type", type(a.store).__name__),
            ("Filters", a.filters), ("Serializer", a.serializer), ("Compressors", a.compressors),
            ("No. bytes", a.nbytes),
        ]
        if complete:
            stored = a.nbytes_stored()
            rows += [("No. bytes stored", stored)]
            if stored:
                rows += [("Storage ratio", round(a.nbytes / stored, 1))]
            what = "Chunks" if a.shards is None else "Shards"
            rows += [(f"{what} Initialized", a._nshards_initialized())]
        self.rows = rows

    def __repr__(self) -> str:
        return "\n".join(f"{k:<18}: {v}" for k, v in self.rows)


class AsyncArray(AsyncNode):
    """A Zarr array with coroutine methods, as zarr-python's AsyncArray:
    ``await a.getitem(sel)``, ``await a.setitem(sel, value)``,
    ``await a.get_orthogonal_selection(...)``, ``await a.oindex.getitem(...)``,
    ``await a.resize(...)``; properties as the sync Array's.  ``AsyncArray(arr)``
    wraps a zarrc Array (ArgumentTypeError for anything else); ``AsyncArray.open``
    opens one."""

    def __init__(self, array: Array) -> None:
        if not isinstance(array, Array):
            raise ArgumentTypeError(f"AsyncArray wraps a zarrc Array, got {type(array).__name__} {array!r}")
        self._array = array
        self._node = array

    @classmethod
    async def open(cls, store: Any, zarr_format: int | None = 3, *, config: Any = None) -> AsyncArray:
        """The existing array at the root of ``store`` (a path, a dict or a Store), in
        ``zarr_format`` (None: either), as zarr-python's ``AsyncArray.open``.
        NodeNotFoundError if there is none (or only one of the other format)."""
        return cls(await run_sync(open_existing, store, zarr_format, config))

    # -------------------------------------------------------------- properties

    shape = forward("shape", "The length of each dimension.")
    dtype = forward("dtype", "The numpy data type of the elements.")
    chunks = forward("chunks", "The chunk shape (inside shards, for a sharded array).")
    shards = forward("shards", "The shard shape, or None if the array is not sharded.")
    ndim = forward("ndim", "The number of dimensions.")
    size = forward("size", "The number of elements.")
    nbytes = forward("nbytes", "The bytes of the elements, uncompressed.")
    order = forward("order", "The memory order of the chunks ('C' or 'F').")
    fill_value = forward("fill_value", "The value of elements never written.")
    dimension_names = forward("dimension_names", "The names of the dimensions (v3's, v2's _ARRAY_DIMENSIONS "
                              "or NCZarr's), or None.")
    cdata_shape = forward("cdata_shape", "The number of chunks along each dimension.")
    nchunks = forward("nchunks", "The number of chunks.")
    compressors = forward("compressors", "The bytes-to-bytes codecs (v2: the compressor).")
    compressor = forward("compressor", "A v2 array's compressor.")
    filters = forward("filters", "The array-to-array codecs (v2: the filters).")
    serializer = forward("serializer", "The array-to-bytes codec (v3).")
    write_empty_chunks = forward("write_empty_chunks", "True if all-fill chunks are stored.")

    def with_config(self, config: Any) -> AsyncArray:
        """This array with other run-time settings (see ``Array.with_config``)."""
        return AsyncArray(self._array.with_config(config))

    async def nchunks_initialized(self) -> int:
        """How many chunks are in the store (see ``Array.nchunks_initialized``)."""
        return await run_sync(lambda: self._array.nchunks_initialized)

    async def nbytes_stored(self) -> int:
        """The bytes the store holds for this array (chunks and metadata)."""
        return await run_sync(self._array.nbytes_stored)

    # -------------------------------------------------------------- data

    async def getitem(self, selection: Any, *, prototype: Any = None) -> Any:
        """The values at ``selection`` (a basic selection: integers, slices,
        ``...``), a numpy array (or scalar), as ``arr[selection]``."""
        return await run_sync(self._array.__getitem__, selection)

    async def setitem(self, selection: Any, value: Any, prototype: Any = None) -> None:
        """Write ``value`` (broadcast) at ``selection``, as ``arr[selection] = value``."""
        await run_sync(self._array.__setitem__, selection, value)

    async def get_orthogonal_selection(self, selection: Any, *, out: Any = None, fields: Any = None,
                                       prototype: Any = None) -> Any:
        """As ``Array.get_orthogonal_selection``."""
        return await run_sync(self._array.get_orthogonal_selection, selection, out=out, fields=fields)

    async def get_mask_selection(self, mask: Any, *, out: Any = None, fields: Any = None,
                                 prototype: Any = None) -> Any:
        """As ``Array.get_mask_selection``."""
        return await run_sync(self._array.get_mask_selection, mask, out=out, fields=fields)

    async def get_coordinate_selection(self, selection: Any, *, out: Any = None, fields: Any = None,
                                       prototype: Any = None) -> Any:
        """As ``Array.get_coordinate_selection``."""
        return await run_sync(self._array.get_coordinate_selection, selection, out=out, fields=fields)

    @property
    def oindex(self) -> AsyncOIndex:
        """Orthogonal selection: ``await a.oindex.getitem((rows, cols))``."""
        return AsyncOIndex(self)

    @property
    def vindex(self) -> AsyncVIndex:
        """Coordinate or mask selection: ``await a.vindex.getitem((xs, ys))``."""
        return AsyncVIndex(self)

    # -------------------------------------------------------------- shape

    async def resize(self, new_shape: Any, delete_outside_chunks: bool = True) -> None:
        """As ``Array.resize`` (chunks outside the new shape are deleted:
        ``delete_outside_chunks=False`` is refused with ArgumentError, zarrc has
        no resize that keeps them)."""
        if delete_outside_chunks is not True:
            raise ArgumentError(f"resize: delete_outside_chunks={delete_outside_chunks!r} is not supported "
                                "(zarrc always deletes the chunks outside the new shape)")
        await run_sync(self._array.resize, new_shape)

    async def append(self, data: Any, axis: int = 0) -> tuple[int, ...]:
        """As ``Array.append``: grow along ``axis`` and write ``data``; the new shape."""
        return await run_sync(self._array.append, data._array if isinstance(data, AsyncArray) else data, axis)

    def __reduce__(self) -> tuple:
        return AsyncArray, (self._array,)


class AsyncOIndex:
    """``a.oindex`` of an AsyncArray: ``await a.oindex.getitem(selection)``."""

    def __init__(self, array: AsyncArray) -> None:
        self.array = array

    async def getitem(self, selection: Any) -> Any:
        """The orthogonal selection ``selection`` (as ``arr.oindex[selection]``)."""
        return await run_sync(self.array._array.oindex.__getitem__, selection)


class AsyncVIndex:
    """``a.vindex`` of an AsyncArray: ``await a.vindex.getitem(selection)``."""

    def __init__(self, array: AsyncArray) -> None:
        self.array = array

    async def getitem(self, selection: Any) -> Any:
        """The coordinate or mask selection ``selection`` (as ``arr.vindex[selection]``)."""
        return await run_sync(self.array._array.vindex.__getitem__, selection)

