"""The sharded strategy: the native strategy for arrays with ``sharding_indexed``
(nested too), whose reads and writes go through engine.sharding.reads and
engine.sharding.writes."""

from __future__ import annotations

from collections.abc import Callable
from contextlib import AbstractContextManager
from typing import Any

import numpy as np

from zarrc.core import indexing
from zarrc.engine.native import NativeStrategy
from zarrc.engine.sharding.reads import read_planned
from zarrc.engine.sharding.writes import write_from
from zarrc.runtime.threads import counted_call


class ShardedStrategy(NativeStrategy):
    """The native strategy for a sharded array (``arr.levels``): planned chunks are
    located through the shard indexes; writes rebuild each touched shard once,
    taking the locks of partial writes themselves (``locks_late``)."""

    locks_late = True

    def read_planned(self, table: np.ndarray, local: np.ndarray, outidx: np.ndarray,
                     tasks: np.ndarray, coords: np.ndarray, out: np.ndarray,
                     strides: tuple[int, ...]) -> None:
        read_planned(self.arr, table, local, outidx, tasks, coords, out, strides)

    @counted_call
    def write_from(self, dims: indexing.Plan, value: np.ndarray,
                   hold: Callable[[], AbstractContextManager[Any]] | None = None) -> None:
        """Write a planned selection (sharding.writes); ``hold``: the locks of the
        shards written in part (engine.api.write), taken as late as the write allows."""
        write_from(self.arr, dims, value, hold)
