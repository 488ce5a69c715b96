"""The strategy of an array on a rectilinear chunk grid (``RectilinearStrategy``).

Unsharded, with a native chain, the array is read and written through its whole
grid (``ShapeChains``): the kernels' planners search each rectilinear dimension's
boundaries (``plan_basic`` / ``plan_points`` given ``bounds``: the cumulative
edges; a regular dimension keeps its chunk length), and each chunk is decoded and
encoded with the chain prepared for its own shape (once per shape).  Whatever the
chunk shapes, a selection is one batch: each task carries its shape's class, and the
batch runs it with that class's chain (``_Batch.set_shapes``: a view of the batch
per shape, made in C), so no Python runs per chunk or per shape.  Ints and slices
of plain chunk files are read by the grid's one-call ``BasicReader``; other
selections, planned on the grid (``zarrc.core.indexing`` over the ``Edges``;
coordinates and masks grouped by chunk in the kernels, ``GridPoints``), read as one
ReadBatch (``ShapeChains.of``: each task's class by numpy); writes go to the native
strategy's ``write_batch`` with the same classes, locked by engine.api.write as a
regular array's.

Sharded (nested too) with a native inner chain, the array is not this strategy's:
engine.prepare gives it the sharded strategy over the whole grid (its top level's
shards located by a boundary search, ``ShardLevel.offsets``; the levels inside are
regular); with codecs only Python runs, the Python strategy over the whole grid
(engine.python.GridCodecs: a codec per chunk shape).  Else (a 0-d array) the grid
is cut, per dimension, into its
runs of equal edges (``RectilinearChunkGrid.runs``); a product of runs, one per
dimension, is a *part*: a regular grid of the run's edges over a box of the array,
stored under the array's own keys (chunk coordinates offset by the part's first
chunk).  Each part gets the strategy of a regular array (prepared by
``engine.prepare``, lazily, once).  A selection planned on the whole grid is split
among the parts by one more search per dimension, output positions kept; points
are regrouped by part (``GridPoints.flat``); boxes (ints and slices of step 1) are
split per dimension among the runs, each touched part reading its share with its
own one-call reader where it has one, the touched parts at once, largest first.
"""

from __future__ import annotations

import itertools
from collections.abc import Callable, Iterator
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
from zarrc.runtime.config import config
from zarrc.runtime.threads import PARALLEL_MIN_BYTES, counted_call, run_each

# part (one run number per dimension) -> (the regular array's shape, its chunk shape,
# its first chunk's coordinates in the whole grid) -> the part's strategy
# ShapeChains keeps its chains in a table by shape key up to this many keys
KEY_TABLE_MAX = 1 << 16

PartFactory = Callable[[tuple[int, ...], tuple[int, ...], tuple[int, ...]], Strategy]


class RectilinearStrategy(Strategy):
    """Reads and writes an array on a rectilinear ``grid`` through the strategies of
    its regular parts (``make_part``).  ``arr.chunks`` is the planning grid: per
    dimension an int or an ``Edges`` (unsharded: the grid's own dimensions), or the
    inner chunk shape of a sharded array (its shards' edges are multiples of it, so
    the inner chunks form a regular grid)."""

    locks_per_part = True

    def __init__(self, arr: ChunkedArray, grid: RectilinearChunkGrid, make_part: PartFactory,
                 inner: tuple[int, ...] | None = None, shapes: ShapeChains | None = None,
                 reader: BasicReader | None = None) -> None:
        super().__init__(arr)
        self.grid = grid
        self.shapes = shapes
        self.reader = reader
        # (through the whole grid: engine.api.write locks the whole grid's keys)
        self.locks_per_part = shapes is None
        self._make_part = make_part
        self._parts: dict[tuple[int, ...], Strategy] = {}
        self.runs = grid.runs()
        # per dimension: each run's first element, and its first planning chunk
        self.run_start = [np.array([grid.offset(d, k0) for k0, _, _ in runs], np.int64)
                          for d, runs in enumerate(self.runs)]
        self.run_plan = [starts // inner[d] if inner else np.array([k0 for k0, _, _ in runs], np.int64)
                         for d, (starts, runs) in enumerate(zip(self.run_start, self.runs))]

    def part(self, key: tuple[int, ...]) -> Strategy:
        """The strategy of part ``key`` (one run number per dimension)."""
        strategy = self._parts.get(key)
        if strategy is None:
            shape, chunks, first = [], [], []
            for d, r in enumerate(key):
                k0, k1, edge = self.runs[d][r]
                start = self.grid.offset(d, k0)
                shape.append(min(self.grid.offset(d, k1), self.grid.shape[d]) - start)
                chunks.append(edge)
                first.append(k0)
            strategy = self._parts[key] = self._make_part(tuple(shape), tuple(chunks), tuple(first))
        return strategy

    # ------------------------------------------------------------ planned selections

    def _split(self, dims: list[indexing.DimProjection]) -> list[tuple[tuple[int, ...], list[indexing.DimProjection]]]:
        """Each touched part and its share of the projections (chunk numbers made
        the part's own; output positions kept)."""
        per_dim = []
        for d, proj in enumerate(dims):
            table = np.asarray(proj.table, np.int64).reshape(-1, indexing.PROJECTION_COLS)
            full = np.asarray(proj.full, bool)
            run = np.searchsorted(self.run_plan[d], table[:, indexing.CHUNK], side="right") - 1
            shares = []
            for r in np.unique(run):
                rows = run == r
                sub = table[rows].copy()
                sub[:, indexing.CHUNK] -= self.run_plan[d][r]
                shares.append((int(r), indexing.DimProjection(sub, full[rows], proj.nsel, proj.dropped,
                                                              proj.local, proj.out)))
            per_dim.append(shares)
        return [(tuple(r for r, _ in combo), [p for _, p in combo]) for combo in itertools.product(*per_dim)]

    def _point_parts(self, points: indexing.GridPoints) -> list[tuple[tuple[int, ...], np.ndarray, indexing.Points]]:
        """Each touched part, the positions of its points in the selection, and
        their plan in the part."""
        flat = points.flat
        runs = [np.searchsorted(self.run_start[d], c, side="right") - 1 for d, c in enumerate(flat)]
        nruns = tuple(len(r) for r in self.runs)
        part_id = np.ravel_multi_index(runs, nruns) if runs else np.zeros(points.nsel, np.int64)
        order = np.argsort(part_id, kind="stable")
        ids = part_id[order]
        cuts = np.flatnonzero(np.r_[True, ids[1:] != ids[:-1]]) if ids.size else np.zeros(0, np.int64)
        out = []
        for a, z in zip(cuts, np.r_[cuts[1:], ids.size]):
            key = tuple(int(i) for i in np.unravel_index(int(ids[a]), nruns))
            at = order[a:z]
            local = tuple(flat[d][at] - self.run_start[d][key[d]] for d in range(len(flat)))
            part = self.part(key)
            out.append((key, at, indexing.plan_coordinate(local, part.arr.shape, part.arr.chunks)))
        return out

    # ------------------------------------------------------------ boxes: the parts' native readers

    def read(self, selection: Any) -> Any:
        """``arr[selection]``: ints and slices by the whole grid's one-call native
        reader (``reader``: plain chunk files, unsharded), else a box (ints and slices
        of step 1) by the one-call native reader of each touched part
        (``read_basic_into``) into the one output; anything else by the general path."""
        if self.reader is not None:
            out = self._read_grid(selection, None)
            if out is not None:
                return out
        if self.shapes is not None:
            return self.read_general(selection)
        boxes = self._boxes(selection)
        if boxes is None:
            return self.read_general(selection)
        out = b.new_output(boxes[0], self.arr.dtype)
        self._read_boxes(boxes[1], out)
        return out

    def _read_grid(self, selection: Any, out: np.ndarray | None) -> np.ndarray | None:
        assert self.reader is not None
        try:
            return self.reader.read(selection, out)
        except OSError as exc:
            if isinstance(exc, StoreError):
                raise
            raise StoreError(f"cannot read {exc.filename} of {self.arr.name}: {exc.strerror}") from None

    def read_basic_into(self, selection: Any, out: np.ndarray) -> bool:
        if self.shapes is not None:
            return self.reader is not None and self._read_grid(selection, out) is not None
        boxes = self._boxes(selection)
        if boxes is None or boxes[0] != out.shape or out.dtype != self.arr.dtype:
            return False
        self._read_boxes(boxes[1], out)
        return True

    def _read_boxes(self, parts: list[tuple[tuple[int, ...], tuple[Any, ...], tuple[slice, ...]]],
                    out: np.ndarray) -> None:
        """Each part's share, read into its view of ``out``.  Several parts are read
        at once, the largest first, on the caller and the pool (run_each): a part's
        native batch takes the threads the others leave (spare_threads), so a grid
        of many small parts (one per chunk, for an irregular grid) still keeps every
        core busy."""
        def read_one(item: tuple[tuple[int, ...], tuple[Any, ...], tuple[slice, ...]]) -> None:
            key, local, at = item
            part = self.part(key)
            view = out[tuple(at) + (Ellipsis,)]      # (a view, also of a 0-d out)
            if not part.read_basic_into(local, view):       # (a part without the shortcut)
                dims, _ = indexing.plan_item(local, part.arr.shape, part.arr.chunks)
                target = view.reshape(indexing.dims_shape(dims))     # (unit dimensions: a view)
                part.read_into(dims, target)
                if not np.shares_memory(target, view):
                    view[...] = target.reshape(view.shape)

        if len(parts) == 1 or config.threads <= 1:
            for item in parts:
                read_one(item)
            return
        for key, _, _ in parts:              # (made here, not by pool threads at once)
            self.part(key)
        parts = sorted(parts, key=lambda item: -int(np.prod(out[tuple(item[2]) + (Ellipsis,)].shape)))
        run_each(parts, read_one, min(config.threads, len(parts)))

    def _boxes(self, selection: Any) -> tuple[tuple[int, ...], list[tuple[tuple[int, ...], tuple[Any, ...],
                                                                          tuple[slice, ...]]]] | None:
        """(output shape, [(part, the part's own selection, where in the output)]) of a
        non-empty box selection (ints in bounds, slices of step 1, one Ellipsis), else
        None."""
        shape = self.arr.shape
        sel = selection if isinstance(selection, tuple) else (selection,)
        ellipses = [i for i, s in enumerate(sel) if s is Ellipsis]
        if len(ellipses) > 1:
            return None
        if ellipses:
            i = ellipses[0]
            sel = sel[:i] + (slice(None),) * (len(shape) - len(sel) + 1) + sel[i + 1:]
        if len(sel) > len(shape):
            return None
        sel = sel + (slice(None),) * (len(shape) - len(sel))
        out_shape: list[int] = []
        per_dim: list[list[tuple[int, Any, slice | None]]] = []
        for d, (s, n) in enumerate(zip(sel, shape)):
            starts = self.run_start[d]
            ends = list(starts[1:]) + [n]
            if isinstance(s, slice):
                if s.step not in (None, 1):
                    return None
                lo, hi, _ = s.indices(n)
                if hi <= lo:
                    return None
                out_shape.append(hi - lo)
                r0 = int(np.searchsorted(starts, lo, side="right")) - 1
                r1 = int(np.searchsorted(starts, hi - 1, side="right")) - 1
                dim: list[tuple[int, Any, slice | None]] = []
                for r in range(r0, r1 + 1):
                    a, b, s0 = max(lo, int(starts[r])), min(hi, int(ends[r])), int(starts[r])
                    dim.append((r, slice(a - s0, b - s0), slice(a - lo, b - lo)))
                per_dim.append(dim)
            elif isinstance(s, (int, np.integer)) and not isinstance(s, bool):
                i = int(s) + n if s < 0 else int(s)
                if not 0 <= i < n:
                    return None
                r = int(np.searchsorted(starts, i, side="right")) - 1
                per_dim.append([(r, i - int(starts[r]), None)])
            else:
                return None
        parts = [(tuple(r for r, _, _ in combo), tuple(loc for _, loc, _ in combo),
                  tuple(at for _, _, at in combo if at is not None)) for combo in itertools.product(*per_dim)]
        return tuple(out_shape), parts

    def read_into(self, dims: indexing.Plan, out: np.ndarray) -> None:
        if self.shapes is not None:
            self._read_grid_planned(dims, out)
            return
        if isinstance(dims, indexing.GridPoints):
            flat_out = out.reshape(-1)
            for key, at, pts in self._point_parts(dims):
                got = np.empty(len(at), out.dtype)
                self.part(key).read_into(pts, got)
                flat_out[at] = got
            return
        assert not isinstance(dims, indexing.Points)   # (planning_chunks has an Edges: GridPoints)
        for key, sub in self._split(dims):
            self.part(key).read_into(sub, out)

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
        assert self.shapes is not None
        shapes, chains = self.shapes.of(coords)
        batch = ReadBatch(chains[0], table, local, outidx, tasks, out, strides, arr.fill, sources, shapes)
        work = batch.chunk_bytes() if chains[0].ncodecs else out.nbytes
        b.run_batch(batch, len(tasks), work)
        b.raise_task_error(batch, arr, lambda: arr.chunk_keys(coords))

    def write_parts(self, dims: indexing.Plan, value: np.ndarray
                    ) -> Iterator[tuple[Strategy, indexing.Plan, np.ndarray]]:
        """Each touched part's share of a write: engine.api.write runs each with the
        part's locks, as it does a regular array's write."""
        if isinstance(dims, indexing.GridPoints):
            flat = value.reshape(-1)
            for key, at, pts in self._point_parts(dims):
                yield self.part(key), pts, np.ascontiguousarray(flat[at])
            return
        assert not isinstance(dims, indexing.Points)
        for key, sub in self._split(dims):
            yield self.part(key), sub, value

    def write_from(self, dims: indexing.Plan, value: np.ndarray, *hold: Any) -> None:
        """Through the whole grid (``shapes``): the tasks of each chunk shape written by
        the native strategy's batches (engine.native.write_batch) with that shape's
        chain, the caller holding the locks; else unlocked writes of each part
        (engine.api.write goes through write_parts)."""
        if self.shapes is not None:
            table, local, outidx, tasks, coords = b.planned(dims)
            strides = b.array_strides(dims, value.strides)
            per_batch = max(1, b.WRITE_BATCH_BYTES // max(1, self.shapes.largest(coords)))
            for lo in range(0, len(tasks), per_batch):
                write_batch(self.arr, table, local, outidx, tasks[lo:lo + per_batch], coords[lo:lo + per_batch],
                            value, strides, self.shapes.of)
            return
        for part, sub, part_value in self.write_parts(dims, value):
            part.write_from(sub, part_value)


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


def planning_chunks(grid: RectilinearChunkGrid, inner: tuple[int, ...] | None) -> tuple[int | Edges, ...]:
    """The chunks a rectilinear array's selections are planned on (see the class):
    a rectilinear dimension's Edges (of the inner chunks, for a sharded array), a
    regular one's length; the first dimension as Edges when none is (coordinate and
    mask selections are then planned as ``GridPoints``, which the parts regroup)."""
    dims: list[int | Edges] = list(grid.dims)
    if inner is not None:
        dims = [Edges(np.full(max(1, -(-n // i)), i, np.int64), n) if isinstance(d, Edges) else i
                for d, n, i in zip(grid.dims, grid.shape, inner)]
    if dims and not any(isinstance(d, Edges) for d in dims):
        n, c = grid.shape[0], dims[0]
        assert isinstance(c, int)
        dims[0] = Edges(np.full(max(1, -(-n // c)), c, np.int64), n)
    return tuple(dims)
