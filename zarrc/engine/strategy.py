"""The strategy interface: how one prepared array is read and written.

Each array gets one strategy object when it is prepared (zarrc.engine.prepare
chooses it): ``native.NativeStrategy`` (the kernels' chain, unsharded),
``sharded.ShardedStrategy`` (the kernels' chain, sharded), ``basic.BasicStrategy``
(plain chunk or shard files read by the native BasicReader, in front of one of
those two), ``python.PythonStrategy`` (codecs only Python can run) and
``point.PointStrategy`` (single elements, in front of a native strategy).
``Array.__getitem__`` calls its ``read``; every write enters the engine through
zarrc.engine.api.write, which calls its ``write_from``; no strategy asks per call
what kind of array it serves, and none calls back up into the engine.
"""

from __future__ import annotations

from typing import Any

import numpy as np

from zarrc.core import indexing
from zarrc.engine.batch import new_output, refuse_huge_read
from zarrc.engine.state import ChunkedArray


class Strategy:
    """How one array is read and written.  ``arr``: its prepared state.

    ``read(selection)``: ``arr[selection]`` as a new numpy array.
    ``read_into(dims, out)`` / ``write_from(dims, value)``: a planned selection
    (zarrc.core.indexing projections), operands already checked; writes are called
    by zarrc.engine.api.write only, holding the locks of the chunks (shards) written
    in part, or, when ``locks_late``, as ``write_from(dims, value, hold)``: the
    strategy takes them itself (``hold()``, a context manager) as late as a
    consistent read-modify-write allows.
    """

    locks_late = False

    def __init__(self, arr: ChunkedArray) -> None:
        self.arr = arr

    def read_general(self, selection: Any) -> np.ndarray:
        """``read`` by the general path: indexing.plan_item (``a[...]`` as zarr-python
        reads it: basic, orthogonal, ...), then ``read_into``."""
        arr = self.arr
        refuse_huge_read(selection, arr.shape, arr.dtype)
        dims, out_shape = indexing.plan_item(selection, arr.shape, arr.chunks)
        out = new_output(out_shape, arr.dtype)
        if out.size:
            self.read_into(dims, out.reshape(indexing.dims_shape(dims)))
        return out

    read = read_general

    def read_into(self, dims: indexing.Plan, out: np.ndarray) -> None:
        raise NotImplementedError

    def read_basic_into(self, selection: Any, out: np.ndarray) -> bool:
        """Read a selection of ints and slices (positive steps) into ``out`` (the
        selection's shape, ``arr.dtype``, writable) by a shortcut that plans and reads
        in one native call; False, with nothing read, where there is none for this
        array or selection (the caller plans it and calls ``read_into``)."""
        return False

    def write_from(self, dims: indexing.Plan, value: np.ndarray, *hold: Any) -> None:
        """Write ``value`` (exact: the plan's shape, ``arr.dtype``) to the planned
        selection ``dims``; returns None.  ``hold``: given only to a strategy with
        ``locks_late``, see the class."""
        raise NotImplementedError
