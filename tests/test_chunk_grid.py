"""RegularChunkGrid: grid shape, clipped chunk extents, vectorised helpers."""

from __future__ import annotations

import itertools

import numpy as np
import pytest
from hypothesis import given
from hypothesis import strategies as st

from zarrc.core.chunk_grid import RegularChunkGrid
from zarrc.errors import MetadataError, SelectionError
from zarrc.metadata import ArrayMetadataV3


def test_spec_example():
    grid = RegularChunkGrid((10, 200, 3000), (5, 20, 400))
    assert grid.grid_shape == (2, 10, 8) and grid.nchunks == 160 and grid.ndim == 3
    chunk, within = grid.chunk_of([[7, 150, 900]])
    assert chunk.tolist() == [[1, 7, 2]] and within.tolist() == [[2, 10, 100]]
    assert grid.chunk_extent((1, 9, 7)) == (slice(5, 10), slice(180, 200), slice(2800, 3000))
    assert grid.chunk_data_shape((1, 9, 7)) == (5, 20, 200)


def test_zero_length_and_0d():
    empty = RegularChunkGrid((10, 0), (5, 3))
    assert empty.grid_shape == (2, 0) and empty.nchunks == 0
    assert list(empty) == [] and empty.all_chunk_coords().shape == (0, 2)
    assert RegularChunkGrid((0,), (0,)).grid_shape == (0,)
    scalar = RegularChunkGrid((), ())
    assert scalar.grid_shape == () and scalar.nchunks == 1 and list(scalar) == [()]
    assert scalar.chunk_extent(()) == () and scalar.all_chunk_coords().shape == (1, 0)
    assert scalar.chunks_in_region((), ()).shape == (1, 0)


@pytest.mark.parametrize(("shape", "chunks"), [((10,), (5, 5)), ((10,), (0,)), ((-1,), (1,)), ((4,), (-2,))])
def test_invalid_grids(shape, chunks):
    with pytest.raises(MetadataError):
        RegularChunkGrid(shape, chunks)


def test_out_of_grid_coordinates():
    grid = RegularChunkGrid((10, 6), (5, 3))
    for coords in [(2, 0), (0, -1), (0,), (0, 0, 0)]:
        with pytest.raises(SelectionError):
            grid.chunk_extent(coords)
    with pytest.raises(SelectionError):
        grid.chunk_extents(np.array([[0, 0], [2, 0]]))


def test_from_metadata_and_equality():
    meta = ArrayMetadataV3.create((10, 6), "i4", (5, 3))
    grid = RegularChunkGrid.from_metadata(meta)
    assert grid == RegularChunkGrid((10, 6), (5, 3)) and hash(grid) == hash(RegularChunkGrid((10, 6), (5, 3)))
    assert grid != RegularChunkGrid((10, 6), (5, 2))
    assert repr(grid) == "RegularChunkGrid(shape=(10, 6), chunk_shape=(5, 3))"


def test_chunks_in_region():
    grid = RegularChunkGrid((10, 7), (4, 3))
    assert grid.chunks_in_region((0, 0), (10, 7)).tolist() == [list(c) for c in grid]
    assert grid.chunks_in_region((3, 2), (5, 4)).tolist() == [[0, 0], [0, 1], [1, 0], [1, 1]]
    assert grid.chunks_in_region((4, 6), (8, 100)).tolist() == [[1, 2]]
    assert grid.chunks_in_region((5, 5), (5, 7)).shape == (0, 2)
    assert grid.chunks_in_region((-5, 0), (1, 1)).tolist() == [[0, 0]]


shapes = st.lists(st.integers(0, 12), min_size=0, max_size=4)


@given(shapes, st.data())
def test_extents_tile_the_array(shape, data):
    chunks = [data.draw(st.integers(1, 6)) for _ in shape]
    grid = RegularChunkGrid(shape, chunks)
    coords = grid.all_chunk_coords()
    assert (
        [tuple(c) for c in coords.tolist()]
        == list(grid)
        == list(itertools.product(*map(range, grid.grid_shape)))
    )
    assert len(coords) == grid.nchunks
    covered = np.zeros(shape, dtype=np.int64)
    starts, stops = grid.chunk_extents(coords)
    for c, lo, hi in zip(coords.tolist(), starts.tolist(), stops.tolist()):
        extent = grid.chunk_extent(c)
        assert [(s.start, s.stop) for s in extent] == list(zip(lo, hi))
        covered[extent] += 1
    assert (covered == 1).all()  # every element in exactly one chunk
    if grid.nchunks and shape:
        points = np.array([[data.draw(st.integers(0, n - 1)) for n in shape]])
        chunk, within = grid.chunk_of(points)
        lo, hi = grid.chunk_extents(chunk)
        assert (lo <= points).all() and (points < hi).all() and ((points - lo) == within).all()
