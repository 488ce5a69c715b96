"""zarrc's one Python shard codec: whole shards decoded and encoded at once, for
sharded arrays whose codecs the sharded strategy cannot run one inner chunk at a
time:

- bytes->bytes codecs after ``sharding_indexed`` (zarr-python writes
  ``[sharding_indexed, zstd]`` for a sharding serializer with compressors): the
  whole shard is compressed, so it is the unit of decoding;
- array->array codecs before it (GDAL writes ``[transpose, sharding_indexed]``):
  the shard is transposed first, and the inner chunk grid is over the transposed
  shard;
- variable-length items (``vlen-utf8`` / ``vlen-bytes``) in the inner chunks;
- codecs the kernels have no step for (numcodecs codecs) inside or around it:
  a numcodecs filter before it is run by a ChainChunkCodec that hands the
  sharding step to a ShardCodec (``array_to_bytes``);

and any nesting of these.  Such an array is run by the Python strategy
(engine.python) over its grid of shards, with a :class:`ShardCodec` as its
codec: each touched shard is fetched and decoded once per call.  Inner chunks of
numeric items are decoded (encoded) by the kernels' chain in one native batch
per shard; variable-length inner chunks and sub-shards are run one at a time in
Python (a loop per inner chunk of these rare layouts, never per element).  A
write re-encodes each touched shard whole and stores it with one ``Store.set``,
which replaces it atomically: a reader sees the old shard or the new one.
"""

from __future__ import annotations

import math
from typing import Any

import numpy as np

from zarrc._kernels.chain import Chain
from zarrc._kernels.read import ReadBatch
from zarrc._kernels.write import WriteBatch
from zarrc.codecs.bounded import VLEN_NOTE
from zarrc.codecs.chain import CodecChain
from zarrc.codecs.chunk_codec import ChainChunkCodec, carried, decode_bounded, runs_natively, shard_bound
from zarrc.codecs.shard_index import EMPTY, DamagedShardError, damaged_error
from zarrc.codecs.sharding import ShardingIndexed
from zarrc.codecs.transpose import Transpose
from zarrc.core import indexing
from zarrc.engine import batch as b
from zarrc.engine.python import is_fill
from zarrc.engine.sharding.index import ShardLevel
from zarrc.errors import ZarrcError


def needs_whole_shards(chain: CodecChain, dtype: np.dtype) -> bool:
    """Whether ``chain`` is sharded in a way only whole shards can run: a codec
    before or after a ``sharding_indexed`` (at any level of nesting), or
    variable-length items inside one."""
    if not isinstance(chain.array_to_bytes, ShardingIndexed):
        return False
    while isinstance(chain.array_to_bytes, ShardingIndexed):
        if chain.array_to_array or chain.bytes_to_bytes:
            return True
        chain = chain.array_to_bytes.inner
    return np.dtype(dtype).kind == "O"


def listed_chain(chain: CodecChain) -> CodecChain:
    """The chain whose codecs the array lists as its filters and compressors (as
    zarr-python does): inside each ``sharding_indexed`` with no codec around it,
    down to the first level that has one (or the innermost chain)."""
    while (isinstance(chain.array_to_bytes, ShardingIndexed)
           and not (chain.array_to_array or chain.bytes_to_bytes)):
        chain = chain.array_to_bytes.inner
    return chain


def chunk_codec(chain: CodecChain, shape: tuple[int, ...], dtype: np.dtype, fill: bytes,
                fill_object: Any, write_empty: bool) -> Any:
    """The Python chunk codec (``decode(raw) -> ndarray``, ``encode(chunk) -> bytes
    | None``) of chunks of ``shape`` encoded by ``chain``: a ShardCodec for a sharded
    chain, else (variable-length items) a ChainChunkCodec."""
    if not isinstance(chain.array_to_bytes, ShardingIndexed):
        return ChainChunkCodec(chain, shape, dtype, fill)
    if all(isinstance(c, Transpose) for c in chain.array_to_array):
        return ShardCodec(chain, shape, dtype, fill, fill_object, write_empty)

    def sharding_step(codec: ShardingIndexed, stored_shape: tuple[int, ...],
                      stored_dtype: np.dtype) -> ShardCodec:
        # (after numcodecs filters, which may change the data type: the fill value
        # converted to it)
        stored_fill = np.frombuffer(fill, dtype).astype(stored_dtype).tobytes() if dtype.kind != "O" else fill
        return ShardCodec(CodecChain([codec]), stored_shape, stored_dtype, stored_fill, fill_object,
                          write_empty)

    return ChainChunkCodec(chain, shape, dtype, fill, array_to_bytes=sharding_step)


class ShardCodec:
    """A whole shard of ``shape`` and ``dtype`` through ``chain`` (array->array
    codecs, ``sharding_indexed``, bytes->bytes codecs): ``decode(raw)`` gives the
    shard's contents (missing inner chunks filled with the fill value: ``fill``, its
    bytes, or ``fill_object`` for variable-length items), ``encode(shard)`` its
    stored bytes (inner chunks all fill value left out unless ``write_empty``).
    Raises CodecError (ChecksumError) for a shard that cannot be decoded, MetadataError
    for an inner chunk shape that does not divide the (transposed) shard shape."""

    def __init__(self, chain: CodecChain, shape: tuple[int, ...], dtype: np.dtype, fill: bytes,
                 fill_object: Any, write_empty: bool) -> None:
        codec = chain.array_to_bytes
        assert isinstance(codec, ShardingIndexed)
        self.dtype = np.dtype(dtype)
        self.shape = tuple(shape)
        self.perm = chain.stored_order(len(self.shape))
        self.inverse = tuple(int(i) for i in np.argsort(self.perm))
        self.stored_shape = tuple(self.shape[p] for p in self.perm)
        self.after = chain.bytes_to_bytes
        self.codec = codec
        self.after_limits = self._after_limits()
        codec.chunks_per_shard(self.stored_shape)     # MetadataError unless the inner shape divides it
        self.level = ShardLevel(codec, self.stored_shape, codec.chunk_shape)
        self.fill, self.fill_object, self.write_empty = fill, fill_object, write_empty
        self.index_format = codec.index_format
        inner = codec.inner
        self.chain: Chain | None = None            # the inner chunks' native chain, if any
        self.inner_codec: Any = None               # else their Python chunk codec
        if (self.dtype.kind != "O" and not isinstance(inner.array_to_bytes, ShardingIndexed)
                and runs_natively(inner, self.dtype)):
            self.chain = inner.prepare(codec.chunk_shape, self.dtype)
            # the plan of a whole shard over its inner chunks, the same for every shard
            dims, _ = indexing.plan(Ellipsis, self.stored_shape, codec.chunk_shape)
            self.plan = b.assemble(dims)
            table, _, _, tasks = self.plan
            coords = b.task_coords(table, tasks)
            self.flat = (np.ravel_multi_index(coords.T, self.level.cps) if coords.shape[1]
                         else np.zeros(len(tasks), np.int64))
            self.task_of_chunk = np.full(self.level.nchunks, -1, np.int64)
            self.task_of_chunk[self.flat] = np.arange(len(tasks))
            c_strides = [self.dtype.itemsize * math.prod(self.stored_shape[d + 1:])
                         for d in range(len(self.stored_shape))]
            self.strides = b.array_strides(dims, tuple(c_strides))
        else:
            self.inner_codec = chunk_codec(inner, codec.chunk_shape, self.dtype, fill, fill_object,
                                           write_empty)
            self.boxes = [tuple(slice(c * n, (c + 1) * n) for c, n in zip(corner, codec.chunk_shape))
                          for corner in np.ndindex(*self.level.cps)]

    # ------------------------------------------------------------ decode

    def _after_limits(self) -> list[tuple[int | None, bool]]:
        """What each codec after the shard may decode to: the shard's inner chunks and
        index at their bound, so that a decompression bomb is refused before it is
        held (variable-length items' by zarrc.config.vlen_chunk_bytes, now)."""
        return carried(self.after, shard_bound(self.codec, self.stored_shape, self.dtype), False)

    def decode(self, raw: Any) -> np.ndarray:
        if self.dtype.kind == "O":      # (the setting read when a shard is decoded)
            data = decode_bounded(self.after, self._after_limits(), raw, VLEN_NOTE)
        else:
            data = decode_bounded(self.after, self.after_limits, raw)
        blob = data if type(data) is bytes else bytes(data)
        table, problems = self.index_format.parse(blob, self.level.nchunks, "decoded shard")
        table[list(problems)] = EMPTY      # (damaged inner chunks: the rest decoded, see below)
        if self.chain is not None:
            stored = self._decode_native(blob, table)
        else:
            stored = self._decode_each(blob, table)
        if problems:
            raise self._damaged(stored.transpose(self.inverse), problems)
        return stored.transpose(self.inverse)

    def _damaged(self, partial: np.ndarray, problems: dict[int, str]) -> DamagedShardError:
        """The error of a shard with damaged index entries (``problems``), carrying the
        other inner chunks' contents (``partial``) and where the damaged ones lie."""
        entry = min(problems)
        exc = DamagedShardError(str(damaged_error("decoded shard", entry, self.level.cps, problems[entry])))
        mask = np.zeros(self.stored_shape, bool)
        inner = self.level.inner_shape
        for i in problems:
            corner = np.unravel_index(i, self.level.cps) if self.level.cps else ()
            mask[tuple(slice(c * n, (c + 1) * n) for c, n in zip(corner, inner))] = True
        exc.partial, exc.damaged, exc.codec = partial, mask.transpose(self.inverse), self
        return exc

    def _decode_native(self, blob: bytes, table: np.ndarray) -> np.ndarray:
        """The inner chunks of the shard held in ``blob`` (index ``table``) decoded
        by the kernels, in one batch."""
        plan_table, local, outidx, tasks = self.plan
        entries = table[self.flat]
        empty = entries[:, 0] == EMPTY
        owner = np.where(empty, -1, 0).astype(np.int64)
        start = np.where(empty, 0, entries[:, 0]).astype(np.int64)
        length = np.where(empty, 0, entries[:, 1]).astype(np.int64)
        out = np.empty(self.stored_shape, self.dtype)
        assert self.chain is not None
        batch = ReadBatch(self.chain, plan_table, local, outidx, tasks, out, self.strides, self.fill,
                          ("ranges", owner, start, length, [blob]))
        b.run_batch(batch, len(tasks))
        self._raise_failed(batch)
        return out

    def _decode_each(self, blob: bytes, table: np.ndarray) -> np.ndarray:
        """The inner chunks decoded one at a time by the inner codec (variable-length
        items, sub-shards)."""
        out = np.empty(self.stored_shape, self.dtype)
        fill = self.fill_object if self.dtype.kind == "O" else np.frombuffer(self.fill, self.dtype)[0]
        for i, box in enumerate(self.boxes):
            off, nb = table[i]
            if off == EMPTY:
                out[box] = fill
                continue
            try:
                out[box] = self.inner_codec.decode(blob[int(off):int(off) + int(nb)])
            except ZarrcError as exc:
                raise type(exc)(f"{self._label(i)}: {exc}") from None
        return out

    def _label(self, i: int) -> str:
        corner = np.unravel_index(i, self.level.cps) if self.level.cps else ()
        return f"inner chunk {tuple(int(c) for c in corner)}"

    def _raise_failed(self, batch: Any) -> None:
        b.raise_batch_error(batch, lambda t: self._label(int(self.flat[t])))

    # ------------------------------------------------------------ encode

    def encode(self, shard: np.ndarray) -> bytes:
        """The stored bytes of a shard (an index with no inner chunk when every inner
        chunk is the fill value and ``write_empty`` is false)."""
        data = self.encode_inner(shard)
        if data is None:
            data = self.index_format.empty(self.level.nchunks)
        return self._after(data)

    def encode_inner(self, shard: np.ndarray) -> bytes | None:
        """The shard's bytes before the bytes->bytes codecs: None if no inner chunk is
        stored (a sub-shard then has no entry in its parent's index)."""
        stored = np.ascontiguousarray(shard.transpose(self.perm))
        if self.chain is not None:
            return self._encode_native(stored)
        parts: list[Any] = []
        for i, box in enumerate(self.boxes):
            part = stored[box]
            try:
                if isinstance(self.inner_codec, ShardCodec):
                    encoded = self.inner_codec.encode_nested(part)
                elif not self.write_empty and is_fill(part, self.fill_object, self.fill):
                    encoded = None
                else:
                    encoded = self.inner_codec.encode(np.ascontiguousarray(part))
            except ZarrcError as exc:
                raise type(exc)(f"{self._label(i)}: {exc}") from None
            parts.append(encoded)
        return self.index_format.assemble(parts)

    def encode_nested(self, shard: np.ndarray) -> bytes | None:
        """As a sub-shard: its stored bytes, or None if no inner chunk is stored."""
        data = self.encode_inner(shard)
        return None if data is None else self._after(data)

    def _after(self, data: Any) -> bytes:
        for c in self.after:
            data = c.encode(data)
        return bytes(data)

    def _encode_native(self, stored: np.ndarray) -> bytes | None:
        plan_table, local, outidx, tasks = self.plan
        assert self.chain is not None
        batch = WriteBatch(self.chain, plan_table, local, outidx, tasks, stored, self.strides, self.fill,
                           [None] * len(tasks), b".tmp", self.write_empty)
        b.run_batch(batch, len(tasks))
        self._raise_failed(batch)
        return batch.shard(self.task_of_chunk, None, *self.index_format.kernel_args())
