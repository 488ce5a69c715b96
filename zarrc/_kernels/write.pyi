"""Writes: WriteBatch (see write.pyx).  run() releases the GIL."""

from typing import Any

import numpy as np

from zarrc._kernels.batch import _Batch
from zarrc._kernels.chain import Chain

STORED: int
DELETED: int

class WriteBatch(_Batch):
    def __init__(self, chain: Chain, table: np.ndarray, local: np.ndarray, outidx: np.ndarray,
                 tasks: np.ndarray, value: Any, value_strides: tuple[int, ...], fill: bytes,
                 sources: list[Any] | tuple[Any, ...], temp_tag: bytes | None = None, write_empty: bool = False,
                 commit_now: bool = False, shapes: tuple[np.ndarray, list[Chain]] | None = None) -> None: ...
    def discard(self) -> None: ...
    def start_commit(self) -> None: ...
    def adopt(self, spent: WriteBatch) -> None: ...
    def shard(self, task_of_chunk: np.ndarray, old_parts: list[Any] | tuple[Any, ...] | None, index_at_start: bool,
              index_big_endian: bool, index_crc: bool) -> bytes | None: ...
    def write_shard(self, path: bytes, temp_tag: bytes, task_of_chunk: np.ndarray, old_parts: list[Any] | tuple[Any, ...] | None,
                    index_at_start: bool, index_big_endian: bool, index_crc: bool,
                    stage: bool = False) -> bool: ...
    def outcome(self, t: int) -> int: ...
    def encoded(self, t: int) -> bytes | None: ...
