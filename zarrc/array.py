"""The Array: a thin user-facing object over metadata, a store and the engine."""

from __future__ import annotations

import math
import os
from collections.abc import Iterator
from typing import Any

import numpy as np

from zarrc import engine, node_metadata
from zarrc.chunk_grid import RegularChunkGrid
from zarrc.chunk_key import ChunkKeyEncoding
from zarrc.codecs.chain import CodecChain, native_chain
from zarrc.codecs.chunk_codec import ChainChunkCodec
from zarrc.codecs.numcodecs_compat import V2ChunkCodec, native_steps, numcodecs_codec
from zarrc.errors import MetadataError, ZarrcError
from zarrc.metadata.dtypes_v2 import object_codec_id
from zarrc.metadata.names import key_prefix
from zarrc.metadata.v2 import ArrayMetadataV2
from zarrc.metadata.v3 import ArrayMetadataV3
from zarrc.node import Node
from zarrc.point import PointReader
from zarrc.sharded import ShardIndexCache, sharding_levels
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
        md = self._metadata
        self._prefix = prefix = key_prefix(self._path)
        if md.zarr_format == 2:
            encoding = ChunkKeyEncoding("v2", md.dimension_separator)
            chunked = self._prepare_v2(md)
        else:
            encoding = ChunkKeyEncoding.from_metadata(md)
            chunked = self._prepare_v3(md)
        chunked.chunk_keys = lambda coords: encoding.encode_many(coords, prefix)
        chunked.path_head = self._path_head(encoding, len(md.shape))
        chunked.path_separator = encoding.separator.encode()
        chunked.basic = engine.basic_reader(chunked)
        self._chunked = chunked
        self._encoding = encoding
        self._point = self._point_reader(md, chunked, encoding)

    def _path_head(self, encoding: ChunkKeyEncoding, ndim: int) -> bytes | None:
        """For a store of plain files: the bytes that, followed by a chunk's
        coordinates joined by the separator, make its file's path (the engine then
        builds paths natively); None if chunk paths are not of that form."""
        local_path = getattr(self._store, "local_path", None)
        if local_path is None or ndim == 0:
            return None
        sep = encoding.separator
        try:
            probes = [(local_path(encoding.encode(c, self._prefix)), sep.join(map(str, c)))
                      for c in ((0,) * ndim, tuple(range(10, 10 + ndim)))]
        except (ZarrcError, OSError, TypeError, ValueError, NotImplementedError):
            return None
        heads = set()
        for path, tail in probes:
            if not isinstance(path, str) or not path.endswith(tail):
                return None
            heads.add(path[:-len(tail)])
        return os.fsencode(heads.pop()) if len(heads) == 1 else None

    def _point_reader(self, md: Any, chunked: engine.ChunkedArray, encoding: ChunkKeyEncoding) -> Any:
        """A PointReader for single-element reads, if the chunks allow one."""
        if chunked.levels or chunked.chain is None or not md.shape:
            return None
        ndim = len(md.shape)
        if md.zarr_format == 2:
            steps = [s[0] for s in native_steps(md.compressor, md.filters, md.dtype)]
            perm = tuple(reversed(range(ndim))) if md.order == "F" else tuple(range(ndim))
        else:
            steps = [c.name for c in self._inner_chain.bytes_to_bytes]
            perm = self._inner_chain.stored_order(ndim)
        kind = {(): "raw", ("blosc",): "blosc"}.get(tuple(steps))
        if kind is None or chunked.basic is not None:
            return None          # (the native BasicReader reads one element of a file faster)
        prefix = self._prefix
        return PointReader(chunked, kind, perm, lambda coords: encoding.encode(coords, prefix))

    def _prepare_v3(self, md: ArrayMetadataV3) -> engine.ChunkedArray:
        chain = CodecChain(md.codecs)
        dtype = md.dtype
        levels, inner, chunks = sharding_levels(chain, tuple(max(c, 1) for c in md.chunk_shape))
        self._codec_chain = chain
        self._inner_chain = inner
        common = {"shape": md.shape, "chunks": chunks, "dtype": dtype, "chunk_keys": None,
                  "store": self._store, "name": self._path,
                  "write_empty_chunks": self._write_empty_chunks}
        if dtype.kind == "O":
            if levels:
                raise MetadataError(f"array {self._path}: sharding of variable-length data types "
                                    "is not supported")
            return engine.ChunkedArray(**common, fill=b"", chain=None, fill_object=md.fill_value,
                                       codec=ChainChunkCodec(chain, chunks, dtype))
        return engine.ChunkedArray(
            **common, fill=np.asarray(md.fill_value, dtype=dtype).tobytes(),
            chain=inner.prepare(chunks, dtype),
            levels=tuple(levels), shard_cache=ShardIndexCache() if levels else None)

    def _prepare_v2(self, md: ArrayMetadataV2) -> engine.ChunkedArray:
        self._codec_chain = self._inner_chain = None
        dtype, chunks = md.dtype, md.chunks
        chunked = engine.ChunkedArray(
            shape=md.shape, chunks=chunks, dtype=dtype, fill=fill_bytes_v2(md), chain=None,
            chunk_keys=None, store=self._store, name=self._path,
            write_empty_chunks=self._write_empty_chunks, fill_object=fill_object_v2(md))
        steps = native_steps(md.compressor, md.filters, dtype)
        if steps is None:
            chunked.codec = V2ChunkCodec(md.compressor, md.filters, chunks, dtype, md.order)
        else:
            axes = range(len(chunks))
            order = tuple(reversed(axes)) if md.order == "F" else tuple(axes)
            chunked.chain = native_chain(steps, chunks, dtype.itemsize, 0, order)
        return chunked

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

    # -------------------------------------------------------------- data

    def __getitem__(self, selection: Any) -> Any:
        point = self._point
        if point is not None:        # single elements: the fast path
            if type(selection) is int and len(point.dims) == 1:
                selection = (selection,)
            if (type(selection) is tuple and len(selection) == len(point.dims)
                    and type(selection[0]) is int and all(type(i) is int for i in selection)):
                item = point.read(selection)
                if item is not None:
                    return item
        return engine.read(self._chunked, selection)

    def __setitem__(self, selection: Any, value: Any) -> None:
        self._check_writable()
        engine.write(self._chunked, selection, value)

    def get_basic_selection(self, selection: Any = Ellipsis) -> Any:
        return self[selection]

    def set_basic_selection(self, selection: Any, value: Any) -> None:
        self[selection] = value

    def __array__(self, dtype: Any = None, copy: Any = None) -> np.ndarray:
        data = np.asarray(self[...])
        return data if dtype is None else data.astype(dtype, copy=False)

    def __len__(self) -> int:
        if not self.shape:
            raise TypeError("len() of unsized object (0-d array)")
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


def fill_bytes_v2(md: ArrayMetadataV2) -> bytes:
    """The fill value of a v2 array as one item of bytes; when undefined (null), what
    zarr-python 3 reads: NaT for datetimes and timedeltas, else zeros."""
    if md.dtype.kind == "O":
        return b""
    if md.fill_value is None:
        if md.dtype.kind in "mM":
            return np.array("NaT", dtype=md.dtype).tobytes()
        return bytes(md.dtype.itemsize)
    if isinstance(md.fill_value, (bytes, bytearray)):
        return bytes(md.fill_value).ljust(md.dtype.itemsize, b"\0")
    return np.array(md.fill_value, dtype=md.dtype).tobytes()


def fill_object_v2(md: ArrayMetadataV2) -> Any:
    """The fill value of a v2 object array ("" / b"" when undefined, as zarr-python)."""
    if md.dtype.kind != "O":
        return None
    if md.fill_value is not None:
        return md.fill_value
    return {"vlen-utf8": "", "vlen-bytes": b""}.get(object_codec_id(md.filters))


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
