"""The strategy of an array on a rectilinear chunk grid (``RectilinearStrategy``).

A rectilinear grid is cut, per dimension, into its runs of equal edges
(``RectilinearChunkGrid.runs``); a product of runs, one per dimension, is a *part*:
a regular grid of the run's edges over a box of the array, stored under the
array's own keys (chunk coordinates offset by the part's first chunk).  Each part
gets the strategy of a regular array (prepared by ``engine.prepare``, lazily, once),
so chunks are decoded and encoded by the same native batches as a regular array's.

A selection is planned once for the whole array (``zarrc.core.indexing`` over the
grid's ``Edges``: a boundary search per dimension), and each dimension's rows are
split among its runs by one more search; the parts' plans keep the output
positions, so every part reads into (writes from) the caller's one array.  Python
work is per call and per touched part, not per chunk: a grid of few distinct edge
lengths (a regular grid with a short last chunk, dask-style chunks) has few parts.
Coordinate and mask selections (``indexing.GridPoints``) are grouped by part and
planned as each part's ``Points``.
"""

from __future__ import annotations

import itertools
from collections.abc import Callable, Iterator
from typing import Any

import numpy as np

from zarrc.core import indexing
from zarrc.core.chunk_grid import Edges, RectilinearChunkGrid
from zarrc.engine.state import ChunkedArray
from zarrc.engine.strategy import Strategy

# part (one run number per dimension) -> (the regular array's shape, its chunk shape,
# its first chunk's coordinates in the whole grid) -> the part's strategy
PartFactory = Callable[[tuple[int, ...], tuple[int, ...], tuple[int, ...]], Strategy]


class RectilinearStrategy(Strategy):
    """Reads and writes an array on a rectilinear ``grid`` through the strategies of
    its regular parts (``make_part``).  ``arr.chunks`` is the planning grid: per
    dimension an int or an ``Edges`` (unsharded: the grid's own dimensions), or the
    inner chunk shape of a sharded array (its shards' edges are multiples of it, so
    the inner chunks form a regular grid)."""

    locks_per_part = True

    def __init__(self, arr: ChunkedArray, grid: RectilinearChunkGrid, make_part: PartFactory,
                 inner: tuple[int, ...] | None = None) -> None:
        super().__init__(arr)
        self.grid = grid
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
        for a, b in zip(cuts, np.r_[cuts[1:], ids.size]):
            key = tuple(int(i) for i in np.unravel_index(int(ids[a]), nruns))
            at = order[a:b]
            local = tuple(flat[d][at] - self.run_start[d][key[d]] for d in range(len(flat)))
            part = self.part(key)
            out.append((key, at, indexing.plan_coordinate(local, part.arr.shape, part.arr.chunks)))
        return out

    def read_into(self, dims: indexing.Plan, out: np.ndarray) -> None:
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
        """Unlocked writes of each part (engine.api.write goes through write_parts)."""
        for part, sub, part_value in self.write_parts(dims, value):
            part.write_from(sub, part_value)


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
