"""A v3 codec chain run in Python, one whole chunk at a time: for chains the native
pipeline cannot run (variable-length items, whose array->bytes codec is
``vlen-utf8`` or ``vlen-bytes``).  Used by the engine's Python path
(zarrc.engine_python)."""

from __future__ import annotations

import math
from typing import Any

import numpy as np

from zarrc.errors import CodecError, ZarrcError


class ChainChunkCodec:
    """``decode(raw) -> ndarray`` (shape ``chunks``, dtype ``dtype``) and
    ``encode(chunk) -> bytes`` through every codec of ``chain`` (a CodecChain):
    bytes->bytes codecs in reverse, the array->bytes codec, then the transposes
    undone.  Raises CodecError for data a codec rejects or of the wrong size."""

    def __init__(self, chain: Any, chunks: tuple[int, ...], dtype: np.dtype) -> None:
        self.chain = chain
        self.chunks = tuple(chunks)
        self.dtype = np.dtype(dtype)
        self.perm = chain.stored_order(len(self.chunks))
        self.stored_shape = tuple(self.chunks[p] for p in self.perm)
        self.inverse = tuple(int(i) for i in np.argsort(self.perm))

    def decode(self, raw: Any) -> np.ndarray:
        data = raw
        try:
            for codec in reversed(self.chain.bytes_to_bytes):
                data = codec.decode(data)
            items = self.chain.array_to_bytes.decode(data)
        except ZarrcError:
            raise
        except (ValueError, TypeError, RuntimeError) as exc:
            raise CodecError(f"{exc}") from None
        items = np.asarray(items, dtype=self.dtype).reshape(-1)
        n = math.prod(self.chunks)
        if items.size != n:
            raise CodecError(f"chunk decodes to {items.size} items, expected {n} "
                             f"(chunk shape {list(self.chunks)})")
        return items.reshape(self.stored_shape).transpose(self.inverse)

    def encode(self, chunk: np.ndarray) -> bytes:
        data: Any = self.chain.array_to_bytes.encode(np.ascontiguousarray(chunk.transpose(self.perm)))
        for codec in self.chain.bytes_to_bytes:
            data = codec.encode(data)
        return bytes(data)
