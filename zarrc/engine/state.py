"""The prepared state of an array: what the engine's strategies need to know
about it, resolved once when the array is opened (see zarrc.engine.prepare)."""

from __future__ import annotations

import os
from collections.abc import Callable
from dataclasses import dataclass
from typing import Any

import numpy as np

from zarrc._kernels.chain import Chain


@dataclass
class ChunkedArray:
    """What the engine needs to know about an array.

    shape, chunks : array and chunk shape (for a sharded array, the innermost chunks).
    dtype : the in-memory (native byte order) numpy dtype.
    fill : the fill value as ``dtype.itemsize`` bytes, native order
        (``metadata.fill_value.fill_bytes``).
    chain : the codec chain prepared for (chunks, dtype), or None with ``codec``.
    chunk_keys : maps an (n, ndim) int64 array of chunk coordinates to store keys.
    store : the store; ``name`` names the array in error messages.
    prefix : the store key prefix of the array's keys ("temp/").
    files : for a store of plain files (``Store.file_prefix``), the path of key
        ``prefix + rest`` is ``files + rest``; else None.
    path_head, path_separator : chunk (i, j, ...) is the file path_head + b"i" +
        separator + b"j" ... (None: chunk paths are not of that form).
    """

    shape: tuple[int, ...]
    chunks: tuple[int, ...]
    dtype: np.dtype
    fill: bytes
    chain: Chain | None
    chunk_keys: Callable[[np.ndarray], list[str]]
    store: Any
    name: str = "/"
    write_empty_chunks: bool = False
    levels: tuple = ()          # sharding levels (engine.sharding.index.ShardLevel); chunks = innermost
    shard_cache: Any = None     # decoded shard indexes (engine.sharding.index.ShardIndexCache)
    codec: Any = None           # whole-chunk decode/encode in Python (engine.python)
    fill_object: Any = None     # the fill value of object (variable-length) items
    prefix: str = ""
    files: bytes | None = None
    path_head: bytes | None = None
    path_separator: bytes = b"/"

    def key_file(self, key: str) -> bytes:
        """The file of ``key`` (one of the array's keys), for a store of plain files."""
        assert self.files is not None
        return self.files + os.fsencode(key[len(self.prefix):])

    def fill_scalar(self) -> Any:
        """The fill value as an item of ``dtype`` (``fill_object`` for objects)."""
        if self.dtype.kind == "O":
            return self.fill_object
        return np.frombuffer(self.fill, dtype=self.dtype)[0]
