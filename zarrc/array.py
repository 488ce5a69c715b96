"""The Array: a thin user-facing object over metadata, a store and the engine."""

from __future__ import annotations

import math
from collections.abc import Iterator
from typing import Any

import numpy as np

from zarrc import node_metadata, resize
from zarrc.chunk_grid import RegularChunkGrid
from zarrc.codecs.numcodecs_compat import numcodecs_codec
from zarrc.engine.prepare import prepare
from zarrc.errors import ArgumentTypeError, ZarrcError
from zarrc.metadata.v3 import ArrayMetadataV3
from zarrc.node import Node
from zarrc.stores import Store


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
                 read_only: bool = False, write_empty_chunks: bool = False) -> None:
        super().__init__(store, path, metadata, read_only)
        self._write_empty_chunks = write_empty_chunks
        self._prepare()

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

    @property
    def chunks(self) -> tuple[int, ...]:
        """The chunk shape: for a sharded array, the (innermost) inner chunks."""
        return self._chunked.chunks if self._chunked.levels else self._metadata.chunk_shape

    @property
    def shards(self) -> tuple[int, ...] | None:
        """The shard shape of a sharded array, else None."""
        return self._metadata.chunk_shape if self._chunked.levels else None

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
        return self._metadata.dimension_names

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
    def cdata_shape(self) -> tuple[int, ...]:
        """The shape of the chunk grid."""
        return RegularChunkGrid(self.shape, self._metadata.chunk_shape).grid_shape

    @property
    def nchunks(self) -> int:
        return math.prod(self.cdata_shape)

    @property
    def nchunks_initialized(self) -> int:
        """How many of the array's chunks exist in the store."""
        count = 0
        ndim = self.ndim
        grid = self.cdata_shape
        for key in self._store.list_prefix(self._prefix):
            rest = key[len(self._prefix):]
            if rest in node_metadata.METADATA_NAMES:
                continue
            try:
                coords = self._encoding.decode(rest, ndim)
            except ZarrcError:
                continue
            if all(c < g for c, g in zip(coords, grid)):
                count += 1
        return count

    @property
    def info(self) -> ArrayInfo:
        return ArrayInfo(self)

    # -------------------------------------------------------------- shape

    def resize(self, new_shape: Any) -> None:
        """Change the shape to ``new_shape`` (an int, or one int per dimension).

        Chunks (shards) wholly outside the new shape are deleted; chunks it cuts keep
        their values beyond the new edge, which a later grow shows again (as in
        zarr-python).  The metadata document is replaced in one store write;
        consolidated metadata of a parent group is not updated.  Other Array objects
        open on the same array keep the shape they read.  Raises StoreError if the
        array is read-only or the store cannot delete a chunk that must go (zip),
        ArgumentError (a ValueError) for a wrong rank or a negative length.
        """
        self._check_writable()
        new_shape = resize.new_shape_of(new_shape, self.shape, self._path)
        metadata = resize.resized_metadata(self._metadata, new_shape)
        resize.delete_outside(self._store, self._prefix, self._encoding, self._metadata, new_shape)
        self._set_metadata(metadata)
        self._prepare()

    def append(self, data: Any, axis: int = 0) -> tuple[int, ...]:
        """Grow the array by ``data.shape[axis]`` along ``axis`` and write ``data``
        there; returns the new shape.  Every other dimension of ``data`` must equal
        the array's (ArgumentError, a ValueError, otherwise)."""
        self._check_writable()
        if not hasattr(data, "shape"):
            data = np.asanyarray(data)
        new_shape, region = resize.append_plan(self.shape, tuple(data.shape), axis, self._path)
        self.resize(new_shape)
        self[region] = data
        return new_shape

    # -------------------------------------------------------------- data

    def __getitem__(self, selection: Any) -> Any:
        return self._engine.read(selection)

    def __setitem__(self, selection: Any, value: Any) -> None:
        self._check_writable()
        self._engine.write(selection, value)

    def get_basic_selection(self, selection: Any = Ellipsis) -> Any:
        return self[selection]

    def set_basic_selection(self, selection: Any, value: Any) -> None:
        self[selection] = value

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

    def __reduce__(self) -> tuple:
        return (_reopen, (self._store, self._path, self._read_only, self._write_empty_chunks))


def _reopen(store: Store, path: str, read_only: bool, write_empty_chunks: bool) -> Array:
    md = node_metadata.read(store, path)
    if md is None or md.node_type != "array":
        from zarrc.errors import NodeNotFoundError
        raise NodeNotFoundError(f"no array at {path} in {store!r}")
    return Array(store, path, md, read_only=read_only, write_empty_chunks=write_empty_chunks)


class ArrayInfo:
    """A summary of an array (``repr`` prints it)."""

    def __init__(self, array: Array) -> None:
        self._array = array

    def __repr__(self) -> str:
        a = self._array
        rows = [
            ("Type", "Array"), ("Zarr format", a.zarr_format), ("Data type", a.metadata.data_type),
            ("Shape", a.shape), ("Chunk shape", a.chunks), ("Order", a.order),
            ("Read-only", a.read_only), ("Store type", type(a.store).__name__),
            ("Filters", a.filters), ("Serializer", a.serializer), ("Compressors", a.compressors),
            ("No. bytes", a.nbytes),
        ]
        return "\n".join(f"{k:<14}: {v}" for k, v in rows)
