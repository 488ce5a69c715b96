"""The engine's public calls, on top of the strategies: each hands the call to the
array's prepared strategy (zarrc.engine.prepare chose it), checking the operands
first.  ``write`` is the one way a write enters the engine: it plans the selection
if it is not planned, broadcasts and checks the value, takes the locks of the
stored chunks (shards) written in part (zarrc.engine.locked) and calls the
strategy's ``write_from`` once; nothing below it calls back up.  An unplanned read
is the strategy's own ``read`` (``Array.__getitem__`` calls it)."""

from __future__ import annotations

from contextlib import AbstractContextManager
from typing import Any

import numpy as np

from zarrc.core import indexing
from zarrc.engine import locked
from zarrc.engine.batch import broadcast_value, check_operand, new_output, points_value
from zarrc.engine.strategy import Strategy
from zarrc.errors import ArgumentError, ZarrcError, mark_partly_written


def read_into(strategy: Strategy, dims: indexing.Plan, out: np.ndarray, *, given: bool = True) -> None:
    """Read the elements the projections select into ``out`` (writable, shape: ``nsel``
    of each dimension not dropped, dtype ``arr.dtype``, any strides).  Raises
    ArgumentError for a mismatched ``out`` (``out`` untouched), CodecError /
    ChecksumError / StoreError for chunks that cannot be read: chunks are decoded
    straight into ``out``, so those read before the failure are there, and such an
    error of a ``given`` (the caller's) ``out`` has ``destination_partly_written``
    set (``errors.mark_partly_written``)."""
    check_operand(strategy.arr, dims, out, "out")
    if not out.flags.writeable:
        raise ArgumentError("out is read-only")
    if out.size:
        try:
            strategy.read_into(dims, out)
        except ZarrcError as e:
            if given:
                mark_partly_written(e)
            raise


def read_selection(strategy: Strategy, dims: indexing.Plan,
                   out: np.ndarray | None = None) -> np.ndarray:
    """The elements a planned selection (indexing.plan_orthogonal, plan_blocks, ...)
    selects: a new array, or ``out`` filled in place and returned (see read_into)."""
    given = out is not None
    if out is None:
        out = new_output(indexing.dims_shape(dims), strategy.arr.dtype)
    read_into(strategy, dims, out, given=given)
    return out


def write(strategy: Strategy, selection: Any, value: Any, *, planned: bool = False,
          exact: bool = False) -> None:
    """``arr[selection] = value``: the engine's one write entry.  Returns None.

    selection : anything ``a[...]`` takes, planned here as zarr-python reads it
        (indexing.plan_item), or with ``planned`` a plan (``indexing.Plan``:
        indexing.plan_orthogonal, plan_blocks, plan_coordinate, ...).
    value : broadcast to the selection's shape and cast to the array's dtype as
        numpy assignment does (a coordinate or mask selection: one item, one per
        point in C order, or an array broadcasting to the selection's shape); with
        ``exact`` (only with ``planned``), already of the selection's shape and the
        array's native-order dtype, any strides (0 for broadcast), taken as it is.

    The stored chunks (shards) written only in part are locked around their
    read-modify-write (engine.locked, setting ``write_locking``; the sharded
    strategy takes the locks itself, as late as it can: ``locks_late``).  Chunks
    left equal to the fill value everywhere are deleted instead of stored (unless
    ``write_empty_chunks``).  Raises SelectionError for a bad selection,
    ArgumentError (a ValueError) for a value that does not broadcast or, with
    ``exact``, does not match; these store nothing.  CodecError / StoreError from
    the chunks."""
    arr = strategy.arr
    if planned:
        dims: indexing.Plan = selection
        shape = indexing.dims_shape(dims)
    else:
        dims, shape = indexing.plan_item(selection, arr.shape, arr.chunks)
    if not exact:
        if isinstance(dims, indexing.Points):
            value = points_value(arr, dims, value)
        else:
            value = broadcast_value(arr, value, shape)
            if not planned and indexing.dims_shape(dims) != shape:
                value = value.reshape(indexing.dims_shape(dims))
    check_operand(arr, dims, value, "value")
    if not value.size:
        return
    _locked_write(strategy, dims, value)


def _locked_write(strategy: Strategy, dims: indexing.Plan, value: np.ndarray) -> None:
    """``strategy.write_from`` holding the locks of the stored keys written in part."""
    arr = strategy.arr
    hold = locked.partial_hold(arr, dims)
    if hold is None:
        strategy.write_from(dims, value)
    elif strategy.locks_late:
        strategy.write_from(dims, value, hold)
    else:
        with hold():
            strategy.write_from(dims, value)


def hold_all(strategy: Strategy, dims: indexing.Plan) -> AbstractContextManager[None]:
    """The locks of every stored key ``dims`` touches (locked.hold_all), to hold for
    a read of the selection followed by a write of it."""
    return locked.hold_all(strategy.arr, dims)


def write_from(strategy: Strategy, dims: indexing.Plan, value: np.ndarray) -> None:
    """``write`` of a planned selection whose ``value`` is exact (native-order
    ``arr.dtype``, shape: ``nsel`` of each dimension not dropped, any strides, 0 for
    broadcast): the write counterpart of :func:`read_into`.  Raises ArgumentError
    for a mismatched ``value``."""
    write(strategy, dims, value, planned=True, exact=True)
