"""The basic strategy: int/slice selections of an array of plain chunk files (or
shard files, one level of sharding) with a native chain, read by the kernels'
BasicReader in one native call (plan, output, chunk paths built from the
coordinates, batch), which holds the GIL for a few microseconds.  What it
declines (other selections, more shards than files to hold open) and every
write go to the native or sharded strategy behind it."""

from __future__ import annotations

from typing import Any

import numpy as np

from zarrc._kernels.read import BasicReader, ReadBatch
from zarrc.engine import batch as b
from zarrc.engine.sharding import index as shard_index
from zarrc.engine.sharding import reads as shard_reads
from zarrc.engine.state import ChunkedArray
from zarrc.engine.strategy import Strategy
from zarrc.errors import SelectionTooLargeError, StoreError
from zarrc.runtime.threads import PARALLEL_MIN_BYTES


def basic_reader(arr: ChunkedArray) -> BasicReader:
    """The native reader of int/slice selections of ``arr`` (see takes_basic)."""
    labels = arr.chunk_keys                  # names for errors
    extras: tuple = ()                       # a sharded reader's extra arguments
    options: dict = {}
    if arr.levels:
        def shard_labels(coords: np.ndarray) -> list[str]:
            return shard_reads.chunk_labels(arr, coords)
        labels = shard_labels
        top = arr.levels[0]
        extras = (top.shard_shape, arr.shard_cache.native,
                  lambda shard, fd, size: shard_index.native_index(arr, shard, fd, size),
                  shard_index.MAX_OPEN_SHARDS,
                  lambda shard, entry, fd, size: shard_index.native_damaged(arr, shard, entry, fd, size))
        if top.offsets is not None:         # (a rectilinear grid's shards: the inner chunk each starts at)
            options["shard_starts"] = tuple(None if o is None else np.ascontiguousarray(o // i, np.int64)
                                            for o, i in zip(top.offsets, arr.chunks))

    def raise_error(batch: ReadBatch, coords: np.ndarray) -> None:
        b.raise_task_error(batch, arr, lambda: labels(coords))

    # (the kernel runs a batch worth more threads than the caller's with run_batch:
    # the policy of zarrc.runtime.threads)
    assert arr.chain is not None and arr.path_head is not None      # (takes_basic(arr))
    return BasicReader(arr.chain, arr.shape, arr.chunks, arr.dtype, arr.fill, arr.path_head,
                       arr.path_separator, PARALLEL_MIN_BYTES, b.run_batch, raise_error, *extras, **options)


def takes_basic(arr: ChunkedArray) -> bool:
    """Whether the BasicReader can read ``arr``: plain chunk (or shard, one level
    of sharding) files whose paths are a head + the coordinates, a native chain."""
    return arr.path_head is not None and arr.chain is not None and len(arr.levels) <= 1


class BasicStrategy(Strategy):
    """Basic selections by the BasicReader; the rest, and writes, by ``fallback``
    (the array's native or sharded strategy)."""

    def __init__(self, fallback: Strategy) -> None:
        super().__init__(fallback.arr)
        self.reader = basic_reader(self.arr)
        self.fallback = fallback
        # the fallback's bound methods in place of this class's (a call goes straight
        # to them, no frame of this class in between): instance attributes over
        # methods, which mypy flags as method-assign
        self.read_general = fallback.read_general  # type: ignore[method-assign]  # delegation, see above
        self.read_into = fallback.read_into  # type: ignore[method-assign]  # delegation, see above
        self.write_from = fallback.write_from  # type: ignore[method-assign]  # delegation, see above
        self.locks_late = fallback.locks_late

    def read(self, selection: Any) -> Any:
        """``arr[selection]`` (see NativeStrategy.read)."""
        out = self._read_basic(selection, None)
        if out is not None:
            return out
        # what the BasicReader declines, the native plan would too: the general path
        return self.read_general(selection)

    def read_basic_into(self, selection: Any, out: np.ndarray) -> bool:
        """See Strategy.read_basic_into: the BasicReader, in one native call."""
        return self._read_basic(selection, out) is not None

    def _read_basic(self, selection: Any, out: np.ndarray | None) -> np.ndarray | None:
        try:
            return self.reader.read(selection, out)
        except MemoryError as exc:       # (the output, allocated by the kernel: see batch.new_output)
            if isinstance(exc, SelectionTooLargeError):
                raise
            said = str(exc).startswith("the output of the read")       # (the kernel's own limit)
            raise SelectionTooLargeError(f"{exc}" if said else
                                         f"the output of the read cannot be allocated: {exc}") from None
        except OSError as exc:       # a shard file that cannot be opened (not: is missing)
            if isinstance(exc, StoreError):
                raise
            raise StoreError(f"cannot read {exc.filename} of {self.arr.name}: {exc.strerror}") from None
