"""Fused per-chunk read/write workers (see pipeline.pyx).  run() releases the GIL."""

from typing import Any

import numpy as np

STORED: int
DELETED: int
CHECKSUM: int
IO: int

class TaskError(Exception):
    code: int
    expected: int
    actual: int
    def __init__(self, message: str, code: int, expected: int, actual: int) -> None: ...

class Chain:
    chunk_nbytes: int
    itemsize: int
    nitems: int
    swap_unit: int
    c_layout: bool
    ncodecs: int
    def __init__(self, steps: list[tuple[Any, ...]], chunk_shape: tuple[int, ...], itemsize: int,
                 swap_unit: int = 0, order: Any = None) -> None: ...
    def decode_chunk(self, data: Any) -> bytes: ...
    def encode_chunk(self, data: Any) -> bytes: ...

class ReadBatch:
    chain: Chain
    ntasks: int
    def __init__(self, chain: Chain, table: np.ndarray, local: np.ndarray, outidx: np.ndarray,
                 tasks: np.ndarray, out: Any, out_strides: tuple[int, ...], fill: bytes,
                 sources: list[Any]) -> None: ...
    def run(self) -> None: ...
    def first_error(self) -> tuple[int, Exception] | None: ...

class BasicReader:
    def __init__(self, chain: Chain, shape: tuple[int, ...], chunks: tuple[int, ...], dtype: np.dtype,
                 fill: bytes, head: bytes, separator: bytes, parallel_min_bytes: int,
                 run_batch: Any, raise_error: Any, shard_shape: tuple[int, ...] | None = None,
                 indexes: dict | None = None, index_of: Any = None) -> None: ...
    def read(self, selection: Any) -> np.ndarray | None: ...

class WriteBatch:
    chain: Chain
    ntasks: int
    def __init__(self, chain: Chain, table: np.ndarray, local: np.ndarray, outidx: np.ndarray,
                 tasks: np.ndarray, value: Any, value_strides: tuple[int, ...], fill: bytes,
                 sources: list[Any], tmp_suffix: bytes = b".tmp", write_empty: bool = False,
                 commit_now: bool = False) -> None: ...
    def run(self) -> None: ...
    def first_error(self) -> tuple[int, Exception] | None: ...
    def start_commit(self) -> None: ...
    def shard(self, task_of_chunk: np.ndarray, old_parts: list[Any], index_at_start: bool,
              index_big_endian: bool, index_crc: bool) -> bytes | None: ...
    def write_shard(self, path: bytes, tmp_suffix: bytes, task_of_chunk: np.ndarray, old_parts: list[Any],
                    index_at_start: bool, index_big_endian: bool, index_crc: bool) -> bool: ...
    def outcome(self, t: int) -> int: ...
    def encoded(self, t: int) -> bytes | None: ...

def mark_pool_thread() -> None: ...
def count_calls(delta: int) -> int: ...
STREAM_MIN_BYTES: int
