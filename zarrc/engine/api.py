"""The engine's public calls on planned selections, on top of the strategies: each
hands the call to the array's prepared strategy (zarrc.engine.prepare chose it),
checking the operands first; writes go through zarrc.engine.locked (the locks of
partial writes).  A selection not yet planned is the strategy's own ``read`` /
``write`` (``Array.__getitem__`` / ``__setitem__`` call them)."""

from __future__ import annotations

from typing import Any

import numpy as np

from zarrc.core import indexing
from zarrc.engine import locked
from zarrc.engine.batch import broadcast_value, check_operand, points_value
from zarrc.engine.strategy import Strategy
from zarrc.errors import ArgumentError


def read_into(strategy: Strategy, dims: indexing.Plan, out: np.ndarray) -> None:
    """Read the elements the projections select into ``out`` (writable, shape: ``nsel``
    of each dimension not dropped, dtype ``arr.dtype``, any strides).  Raises
    ArgumentError for a mismatched ``out``, CodecError / ChecksumError / StoreError
    for chunks that cannot be read."""
    check_operand(strategy.arr, dims, out, "out")
    if not out.flags.writeable:
        raise ArgumentError("out is read-only")
    if out.size:
        strategy.read_into(dims, out)


def write_from(strategy: Strategy, dims: indexing.Plan, value: np.ndarray) -> None:
    """Write ``value`` (native-order ``arr.dtype``, shape: ``nsel`` of each dimension
    not dropped, any strides, 0 for broadcast) to the elements the projections select:
    the write counterpart of :func:`read_into`."""
    check_operand(strategy.arr, dims, value, "value")
    if value.size == 0:
        return
    locked.write_from(strategy, dims, value)


def read_selection(strategy: Strategy, dims: indexing.Plan,
                   out: np.ndarray | None = None) -> np.ndarray:
    """The elements a planned selection (indexing.plan_orthogonal, plan_blocks, ...)
    selects: a new array, or ``out`` filled in place and returned (see read_into)."""
    if out is None:
        out = np.empty(indexing.dims_shape(dims), strategy.arr.dtype)
    read_into(strategy, dims, out)
    return out


def write_selection(strategy: Strategy, dims: indexing.Plan, value: Any) -> None:
    """Write ``value`` (numpy broadcasting to the selection's shape, cast to the
    array's dtype) to a planned selection.  Raises ArgumentError (a ValueError) for
    a value that does not broadcast."""
    arr = strategy.arr
    if isinstance(dims, indexing.Points):
        value = points_value(arr, dims, value)
    else:
        value = broadcast_value(arr, value, indexing.dims_shape(dims))
    if value.size:
        locked.write_from(strategy, dims, value)
