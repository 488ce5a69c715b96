"""A v3 codec chain run in Python, one whole chunk at a time: for chains the native
pipeline cannot run (variable-length items, whose array->bytes codec is
``vlen-utf8`` or ``vlen-bytes``; numcodecs codecs zarrc has no kernel for, outside
or inside a sharding codec).  Used by the engine's Python path (zarrc.engine.python),
which runs it on the worker pool, a chunk per task."""

from __future__ import annotations

import math
from typing import Any

import numpy as np

from zarrc.codecs.bounded import VLEN_NOTE, codec_id, decode_within, encoded_bound, vlen_limit
from zarrc.codecs.bytes import Bytes
from zarrc.codecs.numcodecs_v3 import NumcodecsCodec
from zarrc.codecs.packbits import PackBits
from zarrc.codecs.sharding import ShardingIndexed
from zarrc.codecs.transpose import Transpose
from zarrc.codecs.zfp import Zfp
from zarrc.errors import CodecError, ZarrcError
from zarrc.metadata.dtypes import byte_swap_unit
from zarrc.metadata.dtypes_ml import ml_name


def runs_natively(chain: Any, dtype: np.dtype | None = None) -> bool:
    """Whether the kernels' Chain can run ``chain`` (a CodecChain) for items of
    ``dtype``: its array -> array codecs transposes or value codecs (``value_step``:
    scale_offset, cast_value, bitround), its array -> bytes codec
    ``bytes`` or ``packbits`` (for a type it packs, and no value codecs; or sharding whose inner chain runs natively), each bytes -> bytes codec
    with a native step; not a struct stored in the other byte order whose fields
    swap in units of different sizes (the kernels swap one unit size per item)."""
    if not all(isinstance(c, Transpose) or hasattr(c, "value_step") for c in chain.array_to_array):
        return False
    if any(c.native_step(1) is None for c in chain.bytes_to_bytes):
        return False
    a2b = chain.array_to_bytes
    if isinstance(a2b, ShardingIndexed):
        return runs_natively(a2b.inner, dtype)
    has_values = any(hasattr(c, "value_step") for c in chain.array_to_array)
    if isinstance(a2b, Bytes) and dtype is not None:
        stored = np.dtype(dtype)
        for c in chain.array_to_array:
            if hasattr(c, "value_step"):
                stored = c.value_step(stored)[1]
        if a2b.swaps(stored.itemsize):
            return byte_swap_unit(stored) is not None
    if isinstance(a2b, PackBits):
        return not has_values and (dtype is None or a2b.array_step(dtype) is not None)
    return not isinstance(a2b, (NumcodecsCodec, Zfp))


def innermost(chain: Any) -> Any:
    """The chain of ``chain``'s innermost chunks (inside its sharding codecs)."""
    while isinstance(chain.array_to_bytes, ShardingIndexed):
        chain = chain.array_to_bytes.inner
    return chain


def _stored(dtype: np.dtype, codec: Bytes) -> np.dtype:
    """``dtype`` in the byte order of the ``bytes`` codec ``codec`` (a struct's every
    field, UTF-32 strings in 4-byte units)."""
    if dtype.itemsize > 1 and (dtype.kind in "iufcmMU" or dtype.fields is not None):
        return dtype.newbyteorder(">" if codec.endian == "big" else "<")
    return dtype


def _swaps_ml(dtype: np.dtype, codec: Bytes) -> bool:
    """Whether items of an ml_dtypes type (bfloat16) are stored in the other byte
    order (numpy has no byte order for them: they are swapped explicitly)."""
    return ml_name(dtype) is not None and codec.swaps(dtype.itemsize)


def as_dtype(arr: np.ndarray, dtype: np.dtype) -> np.ndarray:
    """A numcodecs filter's output as ``dtype``: values converted within a kind, bits kept
    across kinds of one size (bitround rounds floats as integers of their bits)."""
    if arr.dtype == dtype:
        return arr
    if arr.dtype.kind != dtype.kind and arr.dtype.itemsize == dtype.itemsize:
        return np.ascontiguousarray(arr).view(dtype)
    return arr.astype(dtype)


def shard_bound(codec: ShardingIndexed, shape: tuple[int, ...], dtype: np.dtype) -> int | None:
    """The most bytes a shard of ``shape`` may be (its inner chunks at their bound, as
    ChainChunkCodec._limits bounds a chunk, items taken as 8 bytes or more since the
    inner codecs may widen them, those of variable-length items
    ``zarrc.config.vlen_chunk_bytes``, and its index), or None (nested sharding, an
    inner codec without a bound)."""
    inner = codec.inner
    if isinstance(inner.array_to_bytes, ShardingIndexed):
        return None
    raw = math.prod(codec.chunk_shape) * max(dtype.itemsize, 8)
    size: int | None = raw if isinstance(inner.array_to_bytes, Bytes) else 4 * raw + (1 << 20)
    if dtype.kind == "O":       # (variable-length items: as many bytes as the setting allows now)
        size = vlen_limit()
    for c in inner.bytes_to_bytes:
        size, _ = encoded_bound(c, size, False)
    if size is None:
        return None
    nchunks = math.prod(-(-s // c) for s, c in zip(shape, codec.chunk_shape))
    return nchunks * size + codec.index_format.nbytes(nchunks)


def decode_bounded(codecs: Any, limits: list[tuple[int | None, bool]], data: Any, note: str = "") -> Any:
    """``data`` through the bytes -> bytes ``codecs`` in reverse, each decode bounded
    by its entry of ``limits`` (encode order; see ChainChunkCodec._limits; ``note``:
    what sets them, for the errors)."""
    for codec, (limit, exact) in zip(reversed(codecs), reversed(limits)):
        if limit is None:
            data = codec.decode(data)
        else:
            data = decode_within(codec, data, limit, exact, getattr(codec, "name", "codec"), note=note)
    return data


def carried(codecs: Any, size: int | None, exact: bool) -> list[tuple[int | None, bool]]:
    """The bound of each bytes -> bytes codec's decode (encode order) when the first one
    decodes to ``size`` bytes (``exact``ly, or at most)."""
    out = []
    for codec in codecs:
        out.append((size, exact))
        size, exact = encoded_bound(codec, size, exact)
    return out


class ChainChunkCodec:
    """``decode(raw) -> ndarray`` (shape ``chunks``, dtype ``dtype``) and
    ``encode(chunk) -> bytes`` through every codec of ``chain`` (a CodecChain):
    bytes->bytes codecs in reverse, the array->bytes codec, then the array -> array
    codecs undone (transposes, numcodecs filters, which may change the data type and
    shape).  ``fill``: the fill value's bytes.  A ``sharding_indexed`` array->bytes
    codec is run by what ``array_to_bytes(codec, stored shape, stored dtype)`` makes
    (the engine's ShardCodec: ``decode(raw) -> ndarray``, ``encode(array) -> bytes``).
    Raises CodecError for data a codec rejects or of the wrong size."""

    def __init__(self, chain: Any, chunks: tuple[int, ...], dtype: np.dtype, fill: bytes = b"",
                 array_to_bytes: Any = None) -> None:
        self.chain = chain
        self.chunks = tuple(chunks)
        self.dtype = np.dtype(dtype)
        # (codec, shape and data type it receives on encode) for each array -> array codec
        self.stages: list[tuple[Any, tuple[int, ...], np.dtype]] = []
        shape, dt = self.chunks, self.dtype
        for codec in chain.array_to_array:
            self.stages.append((codec, shape, dt))
            if isinstance(codec, Transpose):
                shape = tuple(shape[p] for p in codec.order)
            else:
                dt, shape = codec.encoded(dt, shape)
        self.stored_shape, self.stored_dtype = shape, dt
        a2b = chain.array_to_bytes
        self.shard = None
        if isinstance(a2b, ShardingIndexed):
            if array_to_bytes is None:
                raise CodecError("sharding_indexed in a chain run in Python needs the engine's shard codec")
            self.shard = array_to_bytes(a2b, shape, dt)
        # variable-length items (in a shard too): bounded by zarrc.config.vlen_chunk_bytes,
        # read per chunk
        self.variable = dt.kind == "O"
        self.limits = self._limits()

    def decode(self, raw: Any) -> np.ndarray:
        data = raw
        try:
            if self.variable:
                data = decode_bounded(self.chain.bytes_to_bytes, self._limits(), data, VLEN_NOTE)
            else:
                data = decode_bounded(self.chain.bytes_to_bytes, self.limits, data)
            arr = self._to_array(data)
            for codec, shape, dt in reversed(self.stages):
                if isinstance(codec, Transpose):
                    arr = arr.transpose(tuple(int(i) for i in np.argsort(codec.order)))
                elif hasattr(codec, "decode_array"):     # (cast_value: decodes to the chunk's type)
                    arr = codec.decode_array(arr, dt).reshape(shape)
                else:
                    arr = self._sized(codec.decode(arr), shape, dt)
        except ZarrcError:
            raise
        except (ValueError, TypeError, RuntimeError) as exc:
            raise CodecError(f"{exc}") from None
        return arr

    def _limits(self) -> list[tuple[int | None, bool]]:
        """(the most bytes each bytes -> bytes codec's decode may give, whether exactly
        that many), in encode order (codecs.bounded): the ``bytes`` codec's chunk of
        fixed-size items exactly, an array -> bytes codec that compresses (numcodecs'
        pcodec, zfpy; zfp) at most 4 times the chunk plus 1 MiB, variable-length items
        at most ``zarrc.config.vlen_chunk_bytes`` (a shard's inner chunks of them too),
        through each codec after it by ``encoded_bound``; None where nothing bounds it
        (nested sharding, unknown codecs)."""
        a2b = self.chain.array_to_bytes
        raw = math.prod(self.stored_shape) * self.stored_dtype.itemsize
        size: int | None = None
        exact = False
        if self.stored_dtype.kind != "O" and self.shard is None:
            if isinstance(a2b, Bytes):
                size, exact = raw, True
            elif isinstance(a2b, (NumcodecsCodec, Zfp, PackBits)):
                size = 4 * raw + (1 << 20)
        elif isinstance(a2b, ShardingIndexed):
            size = shard_bound(a2b, self.stored_shape, self.stored_dtype)
        elif self.variable:
            size = vlen_limit()
        return carried(self.chain.bytes_to_bytes, size, exact)

    def _sized(self, items: Any, shape: tuple[int, ...], dtype: np.dtype) -> np.ndarray:
        if dtype.kind == "O":
            items = np.asarray(items, dtype=object).reshape(-1)
        else:
            items = as_dtype(np.asarray(items).reshape(-1), dtype)
        n = math.prod(shape)
        if items.size != n:
            raise CodecError(f"chunk decodes to {items.size} items, expected {n} "
                             f"(chunk shape {list(shape)})")
        return items.reshape(shape)

    def _to_array(self, data: Any) -> np.ndarray:
        """The array -> bytes codec's decode: bytes -> the stored array."""
        a2b = self.chain.array_to_bytes
        shape, dt = self.stored_shape, self.stored_dtype
        if self.shard is not None:
            return self.shard.decode(data)
        if isinstance(a2b, Bytes):
            stored = _stored(dt, a2b)
            view = memoryview(data).cast("B")
            if view.nbytes != math.prod(shape) * dt.itemsize:
                raise CodecError(f"chunk holds {view.nbytes} bytes, {math.prod(shape) * dt.itemsize} "
                                 f"expected (chunk shape {list(shape)}, {dt.str})")
            arr = np.frombuffer(view, dtype=stored).astype(dt, copy=False).reshape(shape)
            return arr.byteswap() if _swaps_ml(dt, a2b) else arr
        if isinstance(a2b, PackBits):
            return a2b.unpack(data, shape, dt)
        if isinstance(a2b, Zfp):      # (no header: the chunk's shape and type come from here)
            return a2b.decode_array(data, shape, dt)
        if codec_id(a2b) in ("zfpy", "pcodec"):     # (would allocate what the stream claims)
            return self._sized(decode_within(a2b, data, math.prod(shape) * dt.itemsize, True, a2b.name,
                                             dtype=dt), shape, dt)
        return self._sized(a2b.decode(data), shape, dt)

    def encode(self, chunk: np.ndarray) -> bytes:
        arr: Any = chunk
        for i, (codec, _shape, _dt) in enumerate(self.stages):
            if isinstance(codec, Transpose):
                arr = arr.transpose(codec.order)
            else:
                after = self.stages[i + 1][2] if i + 1 < len(self.stages) else self.stored_dtype
                arr = as_dtype(codec.encode(arr), after)
        a2b = self.chain.array_to_bytes
        if self.shard is not None:
            data: Any = self.shard.encode(np.asarray(arr).reshape(self.stored_shape))
        elif isinstance(a2b, Bytes):
            dt = _stored(self.stored_dtype, a2b)
            flat = np.ascontiguousarray(np.asarray(arr).reshape(self.stored_shape), dtype=dt)
            data = (flat.byteswap() if _swaps_ml(dt, a2b) else flat).tobytes()
        elif isinstance(a2b, PackBits):
            data = a2b.pack(np.asarray(arr, dtype=self.stored_dtype).reshape(self.stored_shape))
        else:
            data = a2b.encode(np.ascontiguousarray(arr))
        for codec in self.chain.bytes_to_bytes:
            data = codec.encode(data)
        return bytes(data)


__all__ = ["ChainChunkCodec", "carried", "decode_bounded", "innermost", "runs_natively", "shard_bound"]
