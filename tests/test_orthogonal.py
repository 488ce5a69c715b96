"""Orthogonal and block selections and ``a[...]`` with index arrays, against
zarr-python in the same test: the same data in both libraries (zarrc opens
zarr-python's directory, or holds a copy in a memory or zip store), every read
compared bit for bit with dtype, every write done by both to their own copy and
the full contents compared.  v2, v3, sharded and nested-sharded arrays, 1-d to 4-d,
all with edge chunks."""

from __future__ import annotations

import numpy as np
import pytest
from interop.support import assert_bit_equal, sample
from selection_pairs import LAYOUTS, Pair, both_raise, create, pair  # noqa: F401  (pair: the fixture)

import zarrc
from zarrc.errors import ArgumentError, SelectionError
from zarrc.stores import MemoryStore


def orthogonal_selections(shape, rng, repeats: bool = True) -> list[tuple]:
    """Mixed per-dimension selections: ints (negative too), slices with steps,
    integer arrays (unsorted, negative, repeated unless not ``repeats``) and boolean
    arrays."""
    out = []
    for k in range(6):
        sel = []
        for d, n in enumerate(shape):
            kind = (k + d) % 4 if k < 4 else (2 + d) % 4 if k == 4 else 2
            if kind == 0:
                sel.append(int(rng.integers(-n, n)))
            elif kind == 1:
                sel.append(slice(int(rng.integers(0, n)), None, int(rng.integers(1, 4))))
            elif kind == 2:
                if repeats:
                    idx = rng.integers(-n, n, size=min(12, 2 * n))
                else:
                    idx = rng.permutation(n)[:12]
                    idx[rng.random(len(idx)) < 0.5] -= n
                sel.append(idx if k % 2 else idx.tolist())
            else:
                sel.append(rng.random(n) < 0.5)
        out.append(tuple(sel))
    if len(shape) > 1:       # (zarr-python fails on an Ellipsis that stands for nothing)
        out.append((Ellipsis, [shape[-1] - 1, 0]))
    return out


def test_orthogonal_reads(pair) -> None:
    rng = np.random.default_rng(pair.ndim)
    for i, sel in enumerate(orthogonal_selections(pair.data.shape, rng)):
        pair.check_read(lambda x, i=i, sel=sel: x.oindex[sel] if i % 2 else x.get_orthogonal_selection(sel))


def test_block_reads(pair) -> None:
    ndim = pair.ndim
    sels = [(0,) * ndim, (-1,) * ndim, (slice(1, None),) + (slice(None),) * (ndim - 1),
            (slice(-2, -1),) * ndim, (Ellipsis, 0), (slice(0, 100),) * ndim]
    for i, sel in enumerate(sels):
        pair.check_read(lambda x, i=i, sel=sel: x.blocks[sel] if i % 2 else x.get_block_selection(sel))


def test_getitem_index_arrays(pair) -> None:
    """``a[...]`` with index arrays, routed as zarr-python routes them."""
    n = pair.data.shape[0]
    idx = [3, 0, -1, 3, n - 2]
    sels: list = [idx, np.array(idx), (idx,) + (slice(1, None),) * (pair.ndim - 1)]
    if pair.ndim == 1:
        sels += [np.array([[1, 2], [4, 1]]), pair.data.real > 0, list(pair.data.real > 0)]
    else:       # one index array among ints: a coordinate selection that is an orthogonal one
        sels += [(np.array(idx),) + (-1,) * (pair.ndim - 1), (1,) * (pair.ndim - 1) + ([2, 0, 1],)]
    for sel in sels:
        pair.check_read(lambda x, sel=sel: x[sel])


def test_orthogonal_writes(pair) -> None:
    """Writes without repeated indices: zarr-python's order for repeats depends on
    numpy's (unstable) argsort, so repeats are checked against numpy below."""
    rng = np.random.default_rng(10 + pair.ndim)
    for i, sel in enumerate(orthogonal_selections(pair.data.shape, rng, repeats=False)):
        shape = pair.a.oindex[sel].shape
        value = sample(LAYOUTS[pair.layout], shape, seed=i)
        pair.check_write(lambda x, sel=sel, value=value: x.oindex.__setitem__(sel, value))


def numpy_oindex_set(target: np.ndarray, sel: tuple, value) -> None:
    """``target.oindex[sel] = value`` in numpy (np.ix_; repeats: the last value wins)."""
    if sel and sel[0] is Ellipsis:
        sel = (slice(None),) * (target.ndim - len(sel) + 1) + sel[1:]
    items = []
    for s, n in zip(sel, target.shape):
        s = np.asarray(s) if isinstance(s, list) else s
        if isinstance(s, (int, np.integer)):
            items.append(np.array([s]))
        elif isinstance(s, slice):
            items.append(np.arange(n)[s])
        else:
            items.append(np.flatnonzero(s) if s.dtype == bool else s)
    shape = [len(i) for i in items]
    kept = [n for n, s in zip(shape, sel) if not isinstance(s, (int, np.integer))]
    target[np.ix_(*items)] = np.broadcast_to(value, kept).reshape(shape)


def test_repeated_indices_last_wins(pair) -> None:
    """Where an index repeats, the last value wins, as numpy assigns; a scalar
    value is broadcast."""
    rng = np.random.default_rng(20 + pair.ndim)
    expected = pair.data.copy()
    for i, sel in enumerate(orthogonal_selections(pair.data.shape, rng)):
        value = sample(LAYOUTS[pair.layout], pair.a.oindex[sel].shape, seed=40 + i) if i % 3 else 7
        pair.a.oindex[sel] = value
        numpy_oindex_set(expected, sel, value)
        assert_bit_equal(pair.a[...], expected, f"{pair.layout} {pair.ndim}-d {pair.kind} {sel}")


def test_block_and_getitem_writes(pair) -> None:
    ndim, dt = pair.ndim, LAYOUTS[pair.layout]
    for i, sel in enumerate([(-1,) * ndim, (slice(0, 2),) + (Ellipsis,), (Ellipsis, slice(-1, None))]):
        value = sample(dt, pair.a.blocks[sel].shape, seed=20 + i)
        pair.check_write(lambda x, sel=sel, value=value: x.blocks.__setitem__(sel, value))
    pair.check_write(lambda x: x.set_block_selection((0,) * ndim, 3))
    sel = ([4, 1, -1],) + (slice(None, None, 2),) * (ndim - 1)
    value = sample(dt, pair.a[sel].shape, seed=30)
    pair.check_write(lambda x: x.__setitem__(sel, value))
    if ndim > 1:
        pair.check_write(lambda x: x.__setitem__((np.array([2, 0]),) + (1,) * (ndim - 1), 5))


def test_out_filled_in_place(tmp_path) -> None:
    p = Pair(str(tmp_path), "sharded", 2, "local")
    sel = ([5, 1, 5], np.array([True, False] * 5 + [True]))
    out = np.zeros((6, 6), np.uint16)[::2]           # any strides
    assert p.a.get_orthogonal_selection(sel, out=out) is out
    assert_bit_equal(out, p.z.oindex[sel])
    out = np.empty((5, 6), np.uint16)
    assert p.a.get_block_selection((1, 0), out=out) is out
    assert_bit_equal(out, p.z.blocks[1, 0])
    with pytest.raises(ValueError):                  # (an ArgumentError)
        p.a.get_orthogonal_selection(sel, out=np.empty((3, 4), np.uint16))
    with pytest.raises(ArgumentError):
        p.a.get_orthogonal_selection(sel, out=np.empty((3, 6), np.int64))


def test_duplicates_last_wins_many(tmp_path) -> None:
    """Many repeated indices over several chunks: the last value of each wins, as
    numpy assigns (in every strategy: plain, sharded, nested)."""
    rng = np.random.default_rng(5)
    for layout in LAYOUTS:
        a = create(zarrc, MemoryStore(), layout, 2)
        idx = rng.integers(0, 13, 200)
        value = rng.integers(1, 1000, (200, 11)).astype(a.dtype)
        a.oindex[idx, :] = value
        expected = np.zeros(a.shape, a.dtype)
        expected[idx, :] = value
        assert_bit_equal(a[...], expected, layout)


def test_errors_as_zarr_python(tmp_path) -> None:
    p = Pair(str(tmp_path), "v3", 2, "local")
    bad = [lambda x: x.oindex[[0, 13], :], lambda x: x.oindex[[-14], 0],
           lambda x: x.oindex[np.ones(12, bool), 0], lambda x: x.oindex[::-1, 0],
           lambda x: x.oindex[np.array([1.0]), 0], lambda x: x.oindex[np.ones((2, 2), int), 0],
           lambda x: x.blocks[4, 0], lambda x: x.blocks[-5, 0], lambda x: x.blocks[0:2:2, 0],
           lambda x: x.blocks[[0, 1], 0], lambda x: x.blocks[0, 0, 0], lambda x: x[[0, 1], [0, 1], 0],
           lambda x: x[..., [0, 1], 0]]
    both_raise(p, bad)
    for x in (p.z, p.a):
        with pytest.raises(ValueError):
            x.oindex[[1, 2], 0] = np.zeros((2, 2))


def test_fields_of_structured_dtype() -> None:
    """``fields=`` (and field names in the selection) on a v2 structured array,
    against numpy (zarr-python 3.1 cannot read fields of such arrays)."""
    dt = np.dtype([("a", "<i4"), ("b", "<f8"), ("c", "u1")])
    data = np.zeros(9, dt)
    data["a"], data["b"], data["c"] = np.arange(9), np.arange(9) / 4, 200 - np.arange(9)
    a = zarrc.create_array({}, shape=(9,), chunks=(4,), dtype=dt, zarr_format=2)
    a[...] = data
    assert_bit_equal(a.get_orthogonal_selection([7, 1, 1], fields="b"), data["b"][[7, 1, 1]])
    both = a.oindex[[8, 0], "c", "a"]
    assert both.dtype == np.dtype([("c", "u1"), ("a", "<i4")])
    assert both.tolist() == [(192, 8), (200, 0)]
    assert_bit_equal(a.blocks[1, "a"], data["a"][4:8])
    a.set_orthogonal_selection([2, 2, 5], [1.5, 2.5, 3.5], fields="b")
    a.blocks[-1, "c"] = 9
    data["b"][[2, 5]] = [2.5, 3.5]
    data["c"][8] = 9
    assert_bit_equal(a[...], data)
    with pytest.raises(SelectionError):
        a.get_orthogonal_selection([0], fields="nope")
    with pytest.raises(SelectionError):
        a.set_orthogonal_selection([0], 1, fields=["a", "b"])
    with pytest.raises(SelectionError):
        zarrc.create_array({}, shape=(3,), chunks=(2,), dtype="i4").get_orthogonal_selection([0], fields="a")
