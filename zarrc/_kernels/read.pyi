"""Reads: ReadBatch and BasicReader (see read.pyx).  run() releases the GIL."""

from typing import Any

import numpy as np

from zarrc._kernels.batch import _Batch
from zarrc._kernels.chain import Chain

STREAM_MIN_BYTES: int

class ReadBatch(_Batch):
    def __init__(self, chain: Chain, table: np.ndarray, local: np.ndarray, outidx: np.ndarray,
                 tasks: np.ndarray, out: Any, out_strides: tuple[int, ...], fill: bytes,
                 sources: list[Any] | tuple[Any, ...],
                 shapes: tuple[np.ndarray, list[Chain]] | None = None) -> None: ...

class BasicReader:
    def __init__(self, chain: Chain, shape: tuple[int, ...], chunks: tuple[int, ...], dtype: np.dtype,
                 fill: bytes, head: bytes, separator: bytes, parallel_min_bytes: int,
                 run_batch: Any, raise_error: Any, shard_shape: tuple[int, ...] | None = None,
                 indexes: dict | None = None, index_of: Any = None, max_open: int = 64,
                 damaged: Any = None, bounds: tuple[np.ndarray | None, ...] | None = None,
                 classes: tuple[np.ndarray | None, ...] | None = None, chain_of: Any = None,
                 shard_starts: tuple[np.ndarray | None, ...] | None = None) -> None: ...
    def read(self, selection: Any, out: np.ndarray | None = None) -> np.ndarray | None: ...

def blosc_rows(enabled: bool | None = None) -> bool: ...
def block_split_min(n: int | None = None) -> int: ...

def set_max_output(nbytes: int) -> None: ...
