"""Preparation: an array's metadata and store -> its prepared state
(engine.state.ChunkedArray) and the one strategy that reads and writes it,
chosen here, once, when the array is opened:

- codecs only Python runs (variable-length items, numcodecs-only v2 codecs):
  ``PythonStrategy``; also sharded arrays with codecs before or after
  ``sharding_indexed``, or variable-length items in it, whose chunks for the
  Python strategy are whole shards (engine.sharding.codec);
- else the kernels' chain: ``NativeStrategy``, or ``ShardedStrategy`` for a
  sharded array; in front of it ``BasicStrategy`` when the store declares a
  file layout (``Store.file_prefix``) and the chunks (or one level of shards)
  are plain files, else ``PointStrategy`` when single elements can be read
  without decoding a whole chunk (no bytes->bytes codec, or one blosc).
"""

from __future__ import annotations

import dataclasses
from collections.abc import Callable
from dataclasses import dataclass
from typing import Any

import numpy as np

from zarrc.codecs._base import NativeStep
from zarrc.codecs.chain import CodecChain, native_chain
from zarrc.codecs.chunk_codec import ChainChunkCodec, innermost, runs_natively
from zarrc.codecs.numcodecs_compat import V2ChunkCodec, native_steps
from zarrc.core.chunk_grid import Edges, RectilinearChunkGrid
from zarrc.core.chunk_key import ChunkKeyEncoding
from zarrc.engine.basic import BasicStrategy, takes_basic
from zarrc.engine.native import NativeStrategy
from zarrc.engine.point import PointStrategy
from zarrc.engine.python import GridCodecs, PythonStrategy
from zarrc.engine.rectilinear import RectilinearStrategy, ShapeChains, planning_chunks
from zarrc.engine.sharding.codec import chunk_codec, listed_chain, needs_whole_shards
from zarrc.engine.sharding.index import ShardIndexCache, ShardLevel, sharding_levels
from zarrc.engine.sharding.strategy import ShardedStrategy
from zarrc.engine.state import ChunkedArray
from zarrc.engine.strategy import Strategy
from zarrc.metadata.common import error_context
from zarrc.metadata.dtypes_v2 import object_codec_id
from zarrc.metadata.fill_value import fill_bytes
from zarrc.metadata.names import key_prefix
from zarrc.metadata.v2 import ArrayMetadataV2
from zarrc.metadata.v2 import where as where_v2
from zarrc.metadata.v3 import ArrayMetadataV3
from zarrc.metadata.v3 import where as where_v3

ChunkKeys = Callable[[np.ndarray], list[str]]      # chunk coordinates -> store keys


@dataclass
class Prepared:
    """An array prepared for the engine.

    strategy : reads and writes it (``strategy.arr``: the prepared state).
    encoding : its chunk key encoding.
    codec_chain : the v3 codec chain (None for v2); ``inner_chain`` the chain of
        its innermost chunks (of the inner chunks, for a sharded array).
    """

    strategy: Strategy
    encoding: ChunkKeyEncoding
    codec_chain: CodecChain | None
    inner_chain: CodecChain | None


def prepare(store: Any, path: str, md: ArrayMetadataV3 | ArrayMetadataV2,
            write_empty_chunks: bool = False) -> Prepared:
    """Prepare the array at ``path`` of ``store`` with metadata ``md``.  Raises
    MetadataError for codecs the engine cannot run together.  A rectilinear array
    is read and written over its whole grid (``_prepare_rectilinear``)."""
    prefix = key_prefix(path)
    encoding = ChunkKeyEncoding.from_metadata(md)
    if md.zarr_format == 3 and md.chunk_edges is not None:
        return _prepare_rectilinear(store, path, md, write_empty_chunks, encoding)

    def chunk_keys(coords: np.ndarray) -> list[str]:
        return encoding.encode_many(coords, prefix)

    v2_steps = None
    if md.zarr_format == 2:
        with error_context(where_v2(".zarray", path)):     # (its compressor and filters named)
            v2_steps = native_steps(md.compressor, md.filters, md.dtype)     # (None: numcodecs runs them)
            chunked = _prepare_v2(md, v2_steps, store, path, write_empty_chunks, chunk_keys)
        codec_chain = inner_chain = None
    else:
        with error_context(where_v3(path)):
            codec_chain = CodecChain(md.codecs)
            chunked, inner_chain = _prepare_v3(md, codec_chain, store, path, write_empty_chunks, chunk_keys)
    chunked.prefix = prefix
    chunked.files = store.file_prefix(prefix)
    if chunked.files is not None and md.shape:
        chunked.path_head = chunked.files + encoding.lead.encode()
    chunked.path_separator = encoding.separator.encode()
    strategy = _strategy(chunked, md, encoding, inner_chain, v2_steps)
    return Prepared(strategy, encoding, codec_chain, inner_chain)


def _prepare_rectilinear(store: Any, path: str, md: ArrayMetadataV3, write_empty_chunks: bool,
                         encoding: ChunkKeyEncoding) -> Prepared:
    """A rectilinear array (engine.rectilinear): unsharded with a native chain, read
    and written through the whole grid (ShapeChains: a chain per chunk shape; the
    whole grid's BasicReader for plain chunk files); sharded with a native
    chain, nested too, by the sharded strategy over the whole grid (its top
    ShardLevel's ``offsets``: the shards' cumulative edges; one level of shard files
    behind the BasicReader, given where each shard starts); codecs only Python runs
    by the Python strategy over the whole grid (``GridCodecs``: each chunk shape's
    codec, prepared as a one-chunk regular array's when first met); a 0-d array as
    its one chunk."""
    assert md.chunk_edges is not None
    grid = RectilinearChunkGrid(md.shape, md.chunk_edges)

    # the first chunk, prepared as a regular array, tells the codec chains and the inner chunks
    one = prepare(store, path, dataclasses.replace(md, shape=tuple(max(1, c) for c in md.chunk_shape),
                                                   chunk_edges=None), write_empty_chunks)
    sample = one.strategy.arr
    if not md.shape:             # (0-d: the array is its one chunk)
        return one
    prefix = key_prefix(path)
    if sample.levels and sample.chain is not None and sample.codec is None:
        # sharded (nested too), a native chain: the sharded strategy over the whole
        # grid, its top level's shards located by a boundary search (ShardLevel.offsets;
        # the levels inside are regular: their shapes are the codecs' chunk_shape)
        top = sample.levels[0]
        level = ShardLevel(top.codec, tuple(int(d.edges.max()) if isinstance(d, Edges) else d for d in grid.dims),
                           top.inner_shape, tuple(d.offsets if isinstance(d, Edges) else None for d in grid.dims))
        sharded = ChunkedArray(
            shape=md.shape, chunks=sample.chunks, dtype=sample.dtype, fill=sample.fill, chain=sample.chain,
            chunk_keys=lambda coords: encoding.encode_many(coords, prefix), store=store, name=path,
            write_empty_chunks=write_empty_chunks, levels=(level, *sample.levels[1:]), shard_cache=ShardIndexCache(),
            fill_object=sample.fill_object, prefix=prefix, files=store.file_prefix(prefix),
            path_separator=encoding.separator.encode())
        if sharded.files is not None:
            sharded.path_head = sharded.files + encoding.lead.encode()
        native = ShardedStrategy(sharded)
        return Prepared(BasicStrategy(native) if takes_basic(sharded) else native, encoding, one.codec_chain,
                        one.inner_chain)
    if sample.codec is not None:
        # codecs only Python runs: the Python strategy over the whole grid, planned on
        # its boundaries, with the codec of each chunk shape (made once per shape)
        def codec_of(shape: tuple[int, ...]) -> Any:
            return prepare(store, path, dataclasses.replace(md, shape=shape, chunk_shape=shape, chunk_edges=None),
                           write_empty_chunks).strategy.arr.codec
        python = ChunkedArray(
            shape=md.shape, chunks=grid.dims, dtype=sample.dtype, fill=sample.fill,  # type: ignore[arg-type]
            chain=None, chunk_keys=lambda coords: encoding.encode_many(coords, prefix), store=store, name=path,
            write_empty_chunks=write_empty_chunks, codec=GridCodecs(grid.dims, codec_of),
            fill_object=sample.fill_object, prefix=prefix, files=store.file_prefix(prefix),
            path_separator=encoding.separator.encode())
        return Prepared(PythonStrategy(python), encoding, one.codec_chain, one.inner_chain)
    # unsharded, a native chain: read and written through the whole grid (engine.rectilinear)
    assert sample.chain is not None and not sample.levels
    chunked = ChunkedArray(
        shape=md.shape, chunks=planning_chunks(grid), dtype=sample.dtype, fill=sample.fill,  # type: ignore[arg-type]
        chain=None, chunk_keys=lambda coords: encoding.encode_many(coords, prefix), store=store,
        name=path, write_empty_chunks=write_empty_chunks, fill_object=sample.fill_object, prefix=prefix,
        files=store.file_prefix(prefix), path_separator=encoding.separator.encode())
    inner_chain, dtype = one.inner_chain, sample.dtype
    assert inner_chain is not None
    shapes = ShapeChains(grid, lambda shape: inner_chain.prepare(shape, dtype))
    reader = None
    if chunked.files is not None:
        chunked.path_head = chunked.files + encoding.lead.encode()
        reader = shapes.reader(chunked)
    return Prepared(RectilinearStrategy(chunked, shapes, reader), encoding, one.codec_chain, one.inner_chain)


def _strategy(chunked: ChunkedArray, md: Any, encoding: ChunkKeyEncoding,
              inner_chain: CodecChain | None, v2_steps: list[NativeStep] | None) -> Strategy:
    """The strategy for ``chunked`` (see the module docstring)."""
    if chunked.codec is not None:
        return PythonStrategy(chunked)
    native = ShardedStrategy(chunked) if chunked.levels else NativeStrategy(chunked)
    if takes_basic(chunked):
        return BasicStrategy(native)
    if chunked.levels or not md.shape:
        return native
    point = _point_layout(md, inner_chain, v2_steps)
    if point is None:
        return native
    prefix = chunked.prefix
    return PointStrategy(native, *point, lambda coords: encoding.encode(coords, prefix))


def _point_layout(md: Any, inner_chain: CodecChain | None,
                  v2_steps: list[NativeStep] | None) -> tuple[str, tuple[int, ...]] | None:
    """(kind, stored axis order) of single-element reads (see PointStrategy), if
    the chunks of this unsharded array allow them (``v2_steps``: a v2 array's
    native steps, as prepare found them)."""
    ndim = len(md.shape)
    if md.zarr_format == 2:
        assert v2_steps is not None       # (the chain is native: no Python codec)
        steps = [s.kind for s in v2_steps]
        perm = tuple(reversed(range(ndim))) if md.order == "F" else tuple(range(ndim))
    else:
        assert inner_chain is not None    # (v3: prepare's codec chain gives it)
        if inner_chain.array_to_bytes.name == "packbits":
            return None                   # an element's bits are not bytes of the chunk
        if any(hasattr(c, "value_step") for c in inner_chain.array_to_array):
            return None                   # (stored items are not the array's)
        steps = [c.name for c in inner_chain.bytes_to_bytes]
        perm = inner_chain.stored_order(ndim)
    kind = {(): "raw", ("blosc",): "blosc"}.get(tuple(steps))
    return None if kind is None else (kind, perm)


def _prepare_v3(md: ArrayMetadataV3, chain: CodecChain, store: Any, path: str,
                write_empty_chunks: bool, chunk_keys: ChunkKeys) -> tuple[ChunkedArray, CodecChain]:
    dtype = md.dtype
    fill = fill_bytes(md.fill_value, dtype)
    if dtype.kind != "O" and not runs_natively(chain, dtype):     # numcodecs codecs, mixed-unit structs
        chunks = tuple(max(c, 1) for c in md.chunk_shape)
        return ChunkedArray(shape=md.shape, chunks=chunks, dtype=dtype, fill=fill, chain=None,
                            chunk_keys=chunk_keys, store=store, name=path,
                            write_empty_chunks=write_empty_chunks,
                            codec=chunk_codec(chain, chunks, dtype, fill, md.fill_value,
                                              write_empty_chunks)), innermost(chain)
    if needs_whole_shards(chain, dtype):     # the Python strategy over whole shards
        shards = tuple(max(c, 1) for c in md.chunk_shape)
        codec = chunk_codec(chain, shards, dtype, fill, md.fill_value, write_empty_chunks)
        return ChunkedArray(shape=md.shape, chunks=shards, dtype=dtype, chunk_keys=chunk_keys,
                            store=store, name=path, write_empty_chunks=write_empty_chunks, fill=fill,
                            chain=None, fill_object=md.fill_value, codec=codec), listed_chain(chain)
    levels, inner, chunks = sharding_levels(chain, tuple(max(c, 1) for c in md.chunk_shape))
    common = {"shape": md.shape, "chunks": chunks, "dtype": dtype, "chunk_keys": chunk_keys,
              "store": store, "name": path, "write_empty_chunks": write_empty_chunks, "fill": fill}
    if dtype.kind == "O":
        return ChunkedArray(**common, chain=None, fill_object=md.fill_value,
                            codec=ChainChunkCodec(chain, chunks, dtype)), inner
    return ChunkedArray(**common, chain=inner.prepare(chunks, dtype), levels=tuple(levels),
                        shard_cache=ShardIndexCache() if levels else None), inner


def _prepare_v2(md: ArrayMetadataV2, steps: list[NativeStep] | None, store: Any, path: str,
                write_empty_chunks: bool, chunk_keys: ChunkKeys) -> ChunkedArray:
    dtype, chunks = md.dtype, md.chunks
    chunked = ChunkedArray(
        shape=md.shape, chunks=chunks, dtype=dtype, fill=fill_bytes(md.fill_value, dtype), chain=None,
        chunk_keys=chunk_keys, store=store, name=path, write_empty_chunks=write_empty_chunks,
        fill_object=fill_object_v2(md))
    if steps is None:
        chunked.codec = V2ChunkCodec(md.compressor, md.filters, chunks, dtype, md.order)
    else:
        axes = range(len(chunks))
        order = tuple(reversed(axes)) if md.order == "F" else tuple(axes)
        chunked.chain = native_chain(steps, chunks, dtype.itemsize, 0, order)
    return chunked


# the fill value of a v2 object array without one, by its object codec (zarr-python's)
_OBJECT_FILLS: dict[str | None, str | bytes] = {"vlen-utf8": "", "vlen-bytes": b""}


def fill_object_v2(md: ArrayMetadataV2) -> Any:
    """The fill value of a v2 object array ("" / b"" when undefined, as zarr-python)."""
    if md.dtype.kind != "O":
        return None
    if md.fill_value is not None:
        return md.fill_value
    return _OBJECT_FILLS.get(object_codec_id(md.filters))
