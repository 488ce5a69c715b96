"""The strategy interface: how one prepared array is read and written.

Each array gets one strategy object when it is prepared (zarrc.engine.prepare
chooses it): ``native.NativeStrategy`` (the kernels' chain, unsharded),
``sharded.ShardedStrategy`` (the kernels' chain, sharded), ``basic.BasicStrategy``
(plain chunk or shard files read by the native BasicReader, in front of one of
those two), ``python.PythonStrategy`` (codecs only Python can run) and
``point.PointStrategy`` (single elements, in front of a native strategy).
``Array.__getitem__`` and ``__setitem__`` call its ``read`` and ``write``; no
strategy asks per call what kind of array it serves.
"""

from __future__ import annotations

from collections.abc import Callable
from contextlib import AbstractContextManager
from typing import Any

import numpy as np

from zarrc.core import indexing
from zarrc.engine import locked
from zarrc.engine.batch import broadcast_value, check_operand, points_value
from zarrc.engine.state import ChunkedArray


class Strategy:
    """How one array is read and written.  ``arr``: its prepared state.

    ``read(selection)``: ``arr[selection]`` as a new numpy array.
    ``write(selection, value)``: ``arr[selection] = value``.
    ``read_into(dims, out)`` / ``write_from(dims, value)``: a planned selection
    (zarrc.core.indexing projections), operands already checked (see zarrc.engine.api);
    callers go through zarrc.engine.locked.write_from, which holds the locks of the
    chunks (shards) written in part.
    """

    def __init__(self, arr: ChunkedArray) -> None:
        self.arr = arr

    def read_general(self, selection: Any) -> np.ndarray:
        """``read`` by the general path: indexing.plan_item (``a[...]`` as zarr-python
        reads it: basic, orthogonal, ...), then ``read_into``."""
        arr = self.arr
        dims, out_shape = indexing.plan_item(selection, arr.shape, arr.chunks)
        out = np.empty(out_shape, arr.dtype)
        if out.size:
            self.read_into(dims, out.reshape(indexing.dims_shape(dims)))
        return out

    read = read_general

    def write(self, selection: Any, value: Any) -> None:
        """``arr[selection] = value`` (numpy broadcasting).  Chunks left equal to the
        fill value everywhere are deleted instead of stored (unless
        ``write_empty_chunks``).  An error raised here has stored nothing."""
        arr = self.arr
        dims, out_shape = indexing.plan_item(selection, arr.shape, arr.chunks)
        if isinstance(dims, indexing.Points):
            value = points_value(arr, dims, value)
        else:
            value = broadcast_value(arr, value, out_shape)
            shape = indexing.dims_shape(dims)
            if shape != out_shape:
                value = value.reshape(shape)
        check_operand(arr, dims, value, "value")
        if value.size:
            locked.write_from(self, dims, value)       # (the locks of partial writes)

    def read_into(self, dims: indexing.Plan, out: np.ndarray) -> None:
        raise NotImplementedError

    def read_basic_into(self, selection: Any, out: np.ndarray) -> bool:
        """Read a selection of ints and slices (positive steps) into ``out`` (the
        selection's shape, ``arr.dtype``, writable) by a shortcut that plans and reads
        in one native call; False, with nothing read, where there is none for this
        array or selection (the caller plans it and calls ``read_into``)."""
        return False

    def write_from(self, dims: indexing.Plan, value: np.ndarray) -> None:
        raise NotImplementedError

    def write_locked(self, dims: indexing.Plan, value: np.ndarray,
                     hold: Callable[[], AbstractContextManager[Any]]) -> None:
        """``write_from`` holding ``hold()`` (zarrc.engine.locked: the locks of the
        chunks (shards) written in part) throughout; a strategy that can take them
        later in the write overrides this (the sharded one)."""
        with hold():
            self.write_from(dims, value)
