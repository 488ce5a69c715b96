"""The points planners on rectilinear dimensions (plan.pyx plan_points / plan_mask
given ``bounds``): each point's chunk found by a binary search of the boundaries
(fewer than TABLE_MIN_POINTS points, or more chunks than the table room) or through
the dimension's buckets (fine ones, a chunk's first bucket or the next; coarse ones,
searched within, where short chunks would make the table too large), checked
against numpy's searchsorted: the chunks touched, each point's chunk, local index
in its chunk's own shape and output position, in order."""

from __future__ import annotations

import numpy as np
import pytest

from zarrc._kernels import plan as kplan


def offsets(edges: list[int]) -> np.ndarray:
    return np.concatenate([[0], np.cumsum(edges)]).astype(np.int64)


def expected(points: list[np.ndarray], bounds: list[np.ndarray | None], chunks: tuple[int, ...],
             grids: list[int]) -> tuple[np.ndarray, np.ndarray]:
    """Each point's (chunk key over the grid, local index in its chunk's own shape)."""
    key = np.zeros(len(points[0]), np.int64)
    loc = np.zeros(len(points[0]), np.int64)
    for v, b, c, grid in zip(points, bounds, chunks, grids):
        if b is None:
            k, start, extent = v // c, v // c * c, c
        else:
            k = np.searchsorted(b, v, side="right") - 1
            start, extent = b[k], b[k + 1] - b[k]
        key = key * grid + k
        loc = loc * extent + (v - start)
    return key, loc


def check(planned: tuple, points: list[np.ndarray], shape: tuple[int, ...], bounds: list[np.ndarray | None],
          chunks: tuple[int, ...]) -> None:
    table, local, outidx, _, coords = planned
    grids = [len(b) - 1 if b is not None else -(-n // c) for b, n, c in zip(bounds, shape, chunks)]
    key, loc = expected(points, bounds, chunks, grids)
    order = np.argsort(key, kind="stable")
    touched = np.unique(key)
    assert np.array_equal(np.ravel_multi_index(coords.T, grids), touched)
    assert np.array_equal(outidx, order)
    assert np.array_equal(local, loc[order])
    counts = table[:len(touched), kplan.COL_COUNT]
    assert np.array_equal(counts, np.bincount(np.searchsorted(touched, key), minlength=len(touched)))


GRIDS = {
    # (shape, per dimension: edges, or an int for a regular dimension; or an int:
    # random edges of that mean length)
    "short first and last": ((203,), [[1] + [20, 37, 25, 40] * 5 + [1]]),
    "random edges": ((4000, 4000), 40),
    "random edges, more chunks than a count (radix sort)": ((3000, 3000), 10),
    "tiny chunks in a long dimension": ((1_000_000,), [[1] * 1000 + [99_900] * 10]),
    "regular and rectilinear": ((90, 60, 31), [[7, 30, 50, 3], 8, [1, 2, 3, 25]]),
    "edges past the end": ((150, 40), [[10, 3, 40, 60, 50, 20, 7], [2, 3, 30, 5, 9]]),
}


def grid_of(name: str) -> tuple[tuple[int, ...], list[np.ndarray | None], tuple[int, ...]]:
    shape, dims = GRIDS[name]
    if isinstance(dims, int):           # random edges, ``dims`` elements long on average
        rng = np.random.default_rng(1)
        dims = [list(np.diff(np.unique(np.r_[0, rng.choice(np.arange(1, n), n // dims, replace=False), n])))
                for n in shape]
    bounds = [offsets(d) if isinstance(d, list) else None for d in dims]
    chunks = tuple(1 if isinstance(d, list) else d for d in dims)
    return shape, bounds, chunks


@pytest.mark.parametrize("name", list(GRIDS))
@pytest.mark.parametrize("n", [0, 1, kplan.TABLE_MIN_POINTS - 1, kplan.TABLE_MIN_POINTS, 5000])
def test_coordinates(name: str, n: int) -> None:
    shape, bounds, chunks = grid_of(name)
    rng = np.random.default_rng(n)
    points = [rng.integers(0, s, n).astype(np.int64) for s in shape]
    planned = kplan.plan_points(points, shape, chunks, tuple(bounds))
    check(planned, points, shape, bounds, chunks)
    if n:                       # negative indices count from the end
        neg = [p - s for p, s in zip(points, shape)]
        again = kplan.plan_points(neg, shape, chunks, tuple(bounds))
        for a, b in zip(again, planned):
            assert np.array_equal(a, b)


@pytest.mark.parametrize("name", [k for k, (shape, _) in GRIDS.items() if np.prod(shape) <= 16_000_000])
@pytest.mark.parametrize("n", [1, kplan.TABLE_MIN_POINTS - 1, 3000])
def test_mask(name: str, n: int) -> None:
    shape, bounds, chunks = grid_of(name)
    rng = np.random.default_rng(n)
    mask = np.zeros(shape, bool)
    mask[tuple(rng.integers(0, s, n) for s in shape)] = True
    points = [a.astype(np.int64) for a in np.nonzero(mask)]
    planned = kplan.plan_mask(mask, shape, chunks, tuple(bounds))
    check(planned, points, shape, bounds, chunks)


def test_out_of_bounds() -> None:
    shape, bounds, chunks = grid_of("regular and rectilinear")
    points = [np.full(400, 5, np.int64), np.full(400, 5, np.int64), np.full(400, 5, np.int64)]
    points[2][300] = 31
    assert kplan.plan_points(points, shape, chunks, tuple(bounds)) == (2, 300)
