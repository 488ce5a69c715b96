"""The strategy of an unsharded array on a rectilinear chunk grid with a native
chain (``RectilinearStrategy``), read and written through its whole grid
(``ShapeChains``): the kernels' planners search each rectilinear dimension's
boundaries (``plan_basic`` / ``plan_points`` given ``bounds``: the cumulative
edges; a regular dimension keeps its chunk length), and each chunk is decoded and
encoded with the chain prepared for its own shape (once per shape).  Whatever the
chunk shapes, a selection is one batch: each task carries its shape's class, and the
batch runs it with that class's chain (``_Batch.set_shapes``: a view of the batch
per shape, made in C), so no Python runs per chunk or per shape.  Ints and slices
of plain chunk files are read by the grid's one-call ``BasicReader``; other
selections, planned on the grid (``zarrc.core.indexing`` over the ``Edges``;
coordinates and masks grouped by chunk in the kernels, on its boundaries), read as one
ReadBatch (``ShapeChains.of``: each task's class by numpy); writes go to the native
strategy's ``write_batch`` with the same classes, locked by engine.api.write as a
regular array's.

The other rectilinear arrays are not this strategy's (engine.prepare): sharded ones
(nested too) with a native inner chain get the sharded strategy over the whole grid
(its top level's shards located by a boundary search, ``ShardLevel.offsets``; the
levels inside are regular); codecs only Python runs, the Python strategy over the
whole grid (engine.python.GridCodecs: a codec per chunk shape); a 0-d array, the
strategy of its one chunk.
"""

from __future__ import annotations

from collections.abc import Callable
from contextlib import closing
from typing import Any

import numpy as np

from zarrc._kernels.chain import Chain
from zarrc._kernels.read import BasicReader, ReadBatch
from zarrc.core import indexing
from zarrc.core.chunk_grid import Edges, RectilinearChunkGrid
from zarrc.engine import batch as b
from zarrc.engine.native import write_batch
from zarrc.engine.state import ChunkedArray
from zarrc.engine.strategy import Strategy
from zarrc.errors import StoreError
from zarrc.runtime.threads import PARALLEL_MIN_BYTES, counted_call

# ShapeChains keeps its chains in a table by shape key up to this many keys
KEY_TABLE_MAX = 1 << 16


class RectilinearStrategy(Strategy):
    """Reads and writes an unsharded array with a native chain on a rectilinear grid
    through the whole grid (``shapes``: the chain of each chunk shape; ``reader``:
    the grid's one-call BasicReader, for plain chunk files).  ``arr.chunks`` is the
    planning grid: per dimension an int or an ``Edges``."""

    def __init__(self, arr: ChunkedArray, shapes: ShapeChains, reader: BasicReader | None = None) -> None:
        super().__init__(arr)
        self.shapes = shapes
        self.reader = reader

    def read(self, selection: Any) -> Any:
        """``arr[selection]``: ints and slices by the whole grid's one-call native
        reader (``reader``: plain chunk files), anything else by the general path."""
        if self.reader is not None:
            out = self._read_grid(selection, None)
            if out is not None:
                return out
        return self.read_general(selection)

    def _read_grid(self, selection: Any, out: np.ndarray | None) -> np.ndarray | None:
        assert self.reader is not None
        try:
            return self.reader.read(selection, out)
        except OSError as exc:
            if isinstance(exc, StoreError):
                raise
            raise StoreError(f"cannot read {exc.filename} of {self.arr.name}: {exc.strerror}") from None

    def read_basic_into(self, selection: Any, out: np.ndarray) -> bool:
        return self.reader is not None and self._read_grid(selection, out) is not None

    def read_into(self, dims: indexing.Plan, out: np.ndarray) -> None:
        self._read_grid_planned(dims, out)

    @counted_call
    def _read_grid_planned(self, dims: indexing.Plan, out: np.ndarray) -> None:
        """A planned selection read through the whole grid (unsharded, native chain):
        coordinate and mask selections grouped by chunk in the kernels (plan_points
        on the grid's boundaries), projections as planned (chunk numbers of the whole
        grid); one ReadBatch, each task with its shape's chain.  On a store whose reads wait on a network,
        in windows of ``fetch_window`` chunks, as a regular array's
        (NativeStrategy._read_streamed): the windows after the one decoding already
        being fetched (batch.fetched_ahead)."""
        arr = self.arr
        table, local, outidx, tasks, coords = b.planned(dims)
        if not len(tasks):
            return
        strides = b.array_strides(dims, out.strides)
        window = arr.store.fetch_window if arr.path_head is None and arr.files is None else None
        if not window or len(tasks) <= window:
            sources, _ = b.chunk_sources(arr, coords)
            self._read_shapes(table, local, outidx, tasks, coords, out, strides, sources)
            return
        with closing(b.fetched_windows(arr, coords, window)) as windows:
            for lo, hi, sources, _ in windows:
                self._read_shapes(table, local, outidx, tasks[lo:hi], coords[lo:hi], out, strides, sources)

    def _read_shapes(self, table: np.ndarray, local: np.ndarray, outidx: np.ndarray, tasks: np.ndarray,
                     coords: np.ndarray, out: np.ndarray, strides: tuple[int, ...], sources: Any) -> None:
        """Tasks ``tasks`` (chunks ``coords``, batch ``sources``) read as one ReadBatch,
        each chunk with its shape's chain (ShapeChains.of: numpy, no Python per chunk
        or per shape once the shapes' chains are made)."""
        arr = self.arr
        shapes, chains = self.shapes.of(coords)
        batch = ReadBatch(chains[0], table, local, outidx, tasks, out, strides, arr.fill, sources, shapes)
        work = batch.chunk_bytes() if chains[0].ncodecs else out.nbytes
        b.run_batch(batch, len(tasks), work)
        b.raise_task_error(batch, arr, lambda: arr.chunk_keys(coords))

    def write_from(self, dims: indexing.Plan, value: np.ndarray, *hold: Any) -> None:
        """The tasks of each chunk shape written by the native strategy's batches
        (engine.native.write_batch) with that shape's chain, the caller holding the
        locks."""
        table, local, outidx, tasks, coords = b.planned(dims)
        strides = b.array_strides(dims, value.strides)
        per_batch = max(1, b.WRITE_BATCH_BYTES // max(1, self.shapes.largest(coords)))
        for lo in range(0, len(tasks), per_batch):
            write_batch(self.arr, table, local, outidx, tasks[lo:lo + per_batch], coords[lo:lo + per_batch],
                        value, strides, self.shapes.of)


class ShapeChains:
    """The chunk shapes of an unsharded rectilinear grid and the codec chain of each
    (``chain_of(shape)``, asked once per shape): per dimension the boundaries the
    kernels' planners search (``bounds``: the cumulative edges, None for a regular
    dimension) and each chunk's edge as a class number (``classes``), whose mixed
    radix over the dimensions is a chunk's shape key."""

    def __init__(self, grid: RectilinearChunkGrid, chain_of: Callable[[tuple[int, ...]], Chain]) -> None:
        self.dims = grid.dims
        self.bounds = tuple(d.offsets if isinstance(d, Edges) else None for d in grid.dims)
        self.classes = tuple(np.unique(d.edges, return_inverse=True)[1].astype(np.int64).reshape(-1)
                             if isinstance(d, Edges) else None for d in grid.dims)
        self.radix = [int(c.max()) + 1 if c is not None and len(c) else 1 for c in self.classes]
        self._chain_of = chain_of
        self._chains: dict[tuple[int, ...], Chain] = {}
        # chains by shape key, where the keys are few enough for a table
        nkeys = int(np.prod(self.radix, dtype=object))
        self._by_key = np.full(nkeys, None, object) if nkeys <= KEY_TABLE_MAX else None

    def chain(self, coords: Any) -> Chain:
        """The chain of chunk ``coords``' shape."""
        shape = tuple(int(d.edges[c]) if isinstance(d, Edges) else d for d, c in zip(self.dims, coords))
        chain = self._chains.get(shape)
        if chain is None:
            chain = self._chains[shape] = self._chain_of(shape)
        return chain

    def of(self, coords: np.ndarray) -> tuple[tuple[np.ndarray, list[Chain]] | None, list[Chain]]:
        """(a batch's ``shapes`` argument: each task's class and the chain of each
        class, or None when every chunk ``coords`` is of one shape; those chains).
        numpy only, once every shape's chain is made (kept by shape key)."""
        key = self._keys(coords)
        if not len(key) or (key == key[0]).all():
            return None, [self.chain(coords[0] if len(coords) else (0,) * len(self.dims))]
        uniq, first, inverse = np.unique(key, return_index=True, return_inverse=True)
        if self._by_key is not None:
            got = self._by_key[uniq]
            missing = np.flatnonzero(np.equal(got, None))  # type: ignore[call-overload]
            for at in missing.tolist():     # (shapes not seen before)
                got[at] = self._by_key[uniq[at]] = self.chain(coords[first[at]])
            chains = got.tolist()
        else:
            chains = [self.chain(coords[f]) for f in first.tolist()]
        return (inverse.astype(np.int64, copy=False).reshape(-1), chains), chains

    def largest(self, coords: np.ndarray) -> int:
        """The decoded bytes of the largest of chunks ``coords``."""
        _, chains = self.of(coords)
        return max(c.chunk_nbytes for c in chains)

    def _keys(self, coords: np.ndarray) -> np.ndarray:
        """Each chunk's shape key (the mixed radix of its dimensions' classes)."""
        key = np.zeros(len(coords), np.int64)
        for d, cls in enumerate(self.classes):
            if cls is not None:
                key = key * self.radix[d] + cls[coords[:, d]]
        return key

    def reader(self, arr: ChunkedArray) -> BasicReader:
        """The one-call native reader of ints and slices over the whole grid of ``arr``,
        an array of plain chunk files (``arr.path_head`` set): the kernels' planner
        searches each rectilinear dimension's boundaries, and the chunks of each
        shape are decoded with that shape's chain."""
        assert arr.path_head is not None
        chunks = tuple(int(d.edges[0]) if isinstance(d, Edges) else max(1, d) for d in self.dims)

        def raise_error(batch: ReadBatch, coords: np.ndarray) -> None:
            b.raise_task_error(batch, arr, lambda: arr.chunk_keys(coords))

        return BasicReader(self.chain((0,) * len(self.dims)), arr.shape, chunks, arr.dtype, arr.fill,
                           arr.path_head, arr.path_separator, PARALLEL_MIN_BYTES, b.run_batch, raise_error,
                           bounds=self.bounds, classes=self.classes, chain_of=self.chain)


def planning_chunks(grid: RectilinearChunkGrid) -> tuple[int | Edges, ...]:
    """The chunks a rectilinear array's selections are planned on (see the class):
    a rectilinear dimension's Edges, a regular one's length; the first dimension as
    Edges when none is (coordinate and mask selections are then planned as
    ``Points`` grouped on its boundaries, as on any rectilinear grid)."""
    dims: list[int | Edges] = list(grid.dims)
    if dims and not any(isinstance(d, Edges) for d in dims):
        n, c = grid.shape[0], dims[0]
        assert isinstance(c, int)
        dims[0] = Edges(np.full(max(1, -(-n // c)), c, np.int64), n)
    return tuple(dims)
