"""zarrc.core.indexing: selections -> per-dimension chunk projections (no I/O)."""

from __future__ import annotations

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

import zarrc
from zarrc.core import indexing
from zarrc.core.indexing import CHUNK, COUNT, IDX, OUT_START, START, STEP
from zarrc.errors import SelectionError


def pairs(proj: indexing.DimProjection, chunk: int) -> list[tuple[int, int]]:
    """(array element, output position) of every selected element, row by row."""
    result = []
    for row in np.asarray(proj.table, dtype=np.int64).reshape(-1, 6):
        c, start, step, count, out0, ix = (int(v) for v in row)
        for k in range(count):
            if ix < 0:
                result.append((c * chunk + start + k * step, out0 + k))
            else:
                result.append((c * chunk + int(proj.local[ix + k]), int(proj.out[ix + k])))
    return result


def check_full(proj: indexing.DimProjection, size: int, chunk: int) -> None:
    """``full`` is True exactly for the rows that select their whole in-bounds chunk."""
    table = np.asarray(proj.table, dtype=np.int64).reshape(-1, 6)
    assert len(proj.full) == len(table)
    for row, full in zip(table, proj.full):
        c = int(row[CHUNK])
        extent = min(chunk, size - c * chunk)
        whole = (row[IDX] < 0 and row[START] == 0 and row[COUNT] == extent
                 and (row[STEP] == 1 or extent == 1))
        if row[IDX] < 0:
            assert bool(full) == bool(whole), (row, full)
        else:
            assert not full or whole


# ------------------------------------------------------------------ slices

@st.composite
def slice_case(draw):
    size = draw(st.integers(0, 300))
    chunk = draw(st.integers(1, 40))
    start = draw(st.integers(0, size))
    stop = draw(st.integers(start, size))
    step = draw(st.integers(1, size + 2))
    return start, stop, step, size, chunk


@settings(max_examples=300, derandomize=True, database=None, deadline=None)
@given(slice_case())
def test_project_slice_selects_the_range(case):
    start, stop, step, size, chunk = case
    proj = indexing.project_slice(start, stop, step, size, chunk)
    expected = list(range(start, stop, step))
    got = pairs(proj, chunk)
    assert [e for e, _ in got] == expected
    assert [o for _, o in got] == list(range(len(expected)))
    assert proj.nsel == len(expected) and not proj.dropped
    assert all(0 <= e - c * chunk < chunk for (e, _), c in
               zip(got, [e // chunk for e, _ in got]))
    check_full(proj, size, chunk)


@settings(max_examples=200, derandomize=True, database=None, deadline=None)
@given(slice_case())
def test_project_slice_python_and_numpy_paths_agree(case):
    """Few chunks are projected in plain Python, many with numpy: same table."""
    start, stop, step, size, chunk = case
    small = indexing.project_slice(start, stop, step, size, chunk)
    saved = indexing.SMALL
    indexing.SMALL = 0                     # force the numpy path
    try:
        big = indexing.project_slice(start, stop, step, size, chunk)
    finally:
        indexing.SMALL = saved
    cols = [CHUNK, START, COUNT, OUT_START]           # (STEP is free where COUNT is 1)
    np.testing.assert_array_equal(np.asarray(small.table, np.int64).reshape(-1, 6)[:, cols],
                                  np.asarray(big.table, np.int64).reshape(-1, 6)[:, cols])
    assert list(map(bool, small.full)) == list(map(bool, big.full))
    assert pairs(small, chunk) == pairs(big, chunk)


def test_project_slice_many_chunks_uses_arrays():
    proj = indexing.project_slice(3, 1000, 7, 1000, 2)       # > SMALL chunks
    assert isinstance(proj.table, np.ndarray)
    assert [e for e, _ in pairs(proj, 2)] == list(range(3, 1000, 7))
    proj = indexing.project_slice(0, 500, 1, 500, 1)          # chunks of one element
    assert all(proj.full) and len(proj.table) == 500


def test_project_slice_empty():
    proj = indexing.project_slice(5, 5, 1, 10, 3)
    assert proj.nsel == 0 and len(proj.table) == 0


def test_project_int():
    proj = indexing.project_int(7, 10, 3)
    assert pairs(proj, 3) == [(7, 0)] and proj.dropped and proj.nsel == 1
    assert list(proj.full) == [False]
    assert list(indexing.project_int(9, 10, 3).full) == [True]     # edge chunk of length 1
    assert list(indexing.project_int(4, 10, 1).full) == [True]     # chunks of one element


# ------------------------------------------------------------------ integer arrays

@settings(max_examples=200, derandomize=True, database=None, deadline=None)
@given(st.data())
def test_project_indices_any_order_and_repeats(data):
    size = data.draw(st.integers(1, 200))
    chunk = data.draw(st.integers(1, 30))
    idx = data.draw(st.lists(st.integers(0, size - 1), max_size=60))
    proj = indexing.project_indices(np.array(idx, dtype=np.int64), size, chunk)
    assert proj.nsel == len(idx) and not proj.dropped
    got = pairs(proj, chunk)
    assert sorted(o for _, o in got) == list(range(len(idx)))     # every output once
    assert all(idx[o] == e for e, o in got)
    table = np.asarray(proj.table).reshape(-1, 6)
    assert len(set(table[:, CHUNK].tolist())) == len(table)       # one row per chunk
    assert all(0 <= loc < chunk for loc in (proj.local if proj.local is not None else []))
    check_full(proj, size, chunk)


def test_project_indices_keeps_order_of_repeats_within_a_chunk():
    proj = indexing.project_indices(np.array([5, 1, 5, 0]), 10, 4)
    got = pairs(proj, 4)
    # element 5 goes to outputs 0 and 2 in that order (a later write wins, as in numpy)
    assert [o for e, o in got if e == 5] == [0, 2]


# ------------------------------------------------------------------ normalisation and plan

@pytest.mark.parametrize("sel, shape, expected", [
    (Ellipsis, (3, 4), [slice(0, 3, 1), slice(0, 4, 1)]),
    ((), (3, 4), [slice(0, 3, 1), slice(0, 4, 1)]),
    (1, (3, 4), [1, slice(0, 4, 1)]),
    (-1, (3, 4), [2, slice(0, 4, 1)]),
    ((Ellipsis, -4), (3, 4), [slice(0, 3, 1), 0]),
    ((0, Ellipsis, 2), (2, 3, 4), [0, slice(0, 3, 1), 2]),
    ((slice(None, None, 2),), (5,), [slice(0, 5, 2)]),
    ((slice(-2, None),), (5,), [slice(3, 5, 1)]),
    ((slice(10, 20),), (5,), [slice(5, 5, 1)]),
    ((slice(-20, 2),), (5,), [slice(0, 2, 1)]),
    ((np.int64(2), np.uint8(1)), (3, 4), [2, 1]),
    ((np.array(2),), (3,), [2]),
    (Ellipsis, (), []),
    ((), (), []),
    ((Ellipsis, slice(None)), (0,), [slice(0, 0, 1)]),
])
def test_normalize_selection(sel, shape, expected):
    assert indexing.normalize_selection(sel, shape) == expected


@pytest.mark.parametrize("sel, shape", [
    (3, (3,)), (-4, (3,)), (0, (0,)), ((0, 0), (3,)), ((0, 0, Ellipsis), (3,)), (0, ()),
    (slice(None, None, 0), (3,)), (slice(None, None, -1), (3,)),
    (slice(1.5, 2), (3,)), (slice("a", None), (3,)), (slice(None, None, 1.0), (3,)),
    ((Ellipsis, Ellipsis), (3, 3)), ("a", (3,)), (1.0, (3,)), (None, (3,)), ([0, 1], (3,)),
    (np.array([0, 1]), (3,)), (True, (3,)), (np.bool_(False), (3,)), ({0: 1}, (3,)),
])
def test_bad_selections_raise_selection_error(sel, shape):
    with pytest.raises(SelectionError) as info:
        indexing.normalize_selection(sel, shape)
    assert isinstance(info.value, IndexError)


@settings(max_examples=200, derandomize=True, database=None, deadline=None)
@given(st.data())
def test_plan_output_shape_matches_numpy(data):
    ndim = data.draw(st.integers(0, 3))
    shape = tuple(data.draw(st.lists(st.integers(0, 9), min_size=ndim, max_size=ndim)))
    chunks = tuple(data.draw(st.lists(st.integers(1, 4), min_size=ndim, max_size=ndim)))
    sel = []
    for n in shape:
        if n and data.draw(st.booleans()):
            sel.append(data.draw(st.integers(-n, n - 1)))
        else:
            sel.append(slice(data.draw(st.none() | st.integers(-12, 12)),
                             data.draw(st.none() | st.integers(-12, 12)),
                             data.draw(st.none() | st.integers(1, 5))))
    sel = tuple(sel[:data.draw(st.integers(0, ndim))])
    dims, out_shape = indexing.plan(sel, shape, chunks)
    assert out_shape == np.empty(shape)[sel].shape
    assert len(dims) == ndim


# ---------------------------------------------------------- selections too large to plan

def _huge():
    from zarrc.storage import MemoryStore
    store = MemoryStore()
    return (zarrc.create_array(store, name="huge", shape=(2**62,), chunks=(2**20,), dtype="u1"),
            zarrc.create_array(store, name="wide", shape=(2**62, 2**40), chunks=(2**20, 2**10),
                               dtype="u1"))


@pytest.mark.parametrize("select", [
    lambda h, w: h[:], lambda h, w: h[::3], lambda h, w: h.get_basic_selection(slice(1, None)),
    lambda h, w: w[:, 0], lambda h, w: w.oindex[:, [0, 1]], lambda h, w: w.blocks[:, 0],
    lambda h, w: w.get_orthogonal_selection((slice(None), 0)), lambda h, w: h.__setitem__(slice(None), 1),
    lambda h, w: w.vindex[[0, 1], [0, 1]], lambda h, w: w.get_coordinate_selection(([0], [0])),
])
def test_a_selection_too_large_to_plan_is_a_selection_error_naming_the_array(select):
    # their plans' tables (one row per chunk touched: 2**42 of them) cannot be
    # allocated, or (coordinate selections) the array's 2**102 elements have no
    # 64-bit flat index: numpy's MemoryError, the kernels' ValueError before
    from zarrc.errors import SelectionTooLargeError
    huge, wide = _huge()
    with pytest.raises(SelectionTooLargeError, match=r"^array (huge|wide): ") as info:
        select(huge, wide)
    assert isinstance(info.value, IndexError) and isinstance(info.value, MemoryError)
    assert isinstance(info.value, ValueError) and isinstance(info.value, zarrc.errors.ZarrcError)
    text = str(info.value)
    assert "of an array of shape (4611686018427387904" in text
    assert "points" in text or "block selection" in text or "elements" in text


def test_the_selection_size_is_in_the_message():
    from zarrc.errors import SelectionTooLargeError
    huge, wide = _huge()
    with pytest.raises(SelectionTooLargeError, match=r"a selection of 4611686018427387904 elements "
                       r"\(4611686018427387904 x 1\)"):
        wide[:, 0]
    assert huge[5:8].tolist() == [0, 0, 0] and wide[2**62 - 1, 2**40 - 2:].tolist() == [0, 0]
