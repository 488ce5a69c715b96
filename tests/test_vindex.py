"""Coordinate and mask selections (``vindex``, ``get/set_coordinate_selection``,
``get/set_mask_selection``, ``a[...]`` with pure fancy indices) against zarr-python
in the same test: reads compared bit for bit with dtype, writes done by both to
their own copy and the full contents compared.  v2, v3, sharded and nested-sharded
arrays, 1-d to 4-d with edge chunks, on local, memory and zip stores
(tests/selection_pairs.py); repeated points, plan paths, chunk layouts and the
Python strategy against numpy."""

from __future__ import annotations

import numpy as np
import pytest
from interop.support import assert_bit_equal, sample
from selection_pairs import LAYOUTS, Pair, both_raise, create, pair  # noqa: F401  (pair: the fixture)

import zarrc
from zarrc.errors import ArgumentError
from zarrc.stores import MemoryStore

# (a zip store keeps each rewritten chunk twice and says so)


def coordinate_selections(shape, rng, repeats: bool = True) -> list[tuple]:
    """Coordinate selections: 1-d arrays (unsorted, negative, repeated unless not
    ``repeats``), lists, ints among arrays, 2-d arrays broadcast against 1-d ones."""
    n = 2 * max(shape)
    ndim = len(shape)

    def column(d, size):
        return rng.integers(-shape[d], shape[d], size=size)

    sels = []
    if repeats:
        sels.append(tuple(column(d, n) for d in range(ndim)))
        sels.append(tuple(column(d, 5).tolist() for d in range(ndim)))
        sels.append(tuple(int(column(d, 1)[0]) if d % 2 else column(d, 7) for d in range(ndim)))
        # a (3, 1) array against (4,) arrays: points of shape (3, 4)
        sels.append(tuple(column(d, 3).reshape(3, 1) if d == 0 else column(d, 4) for d in range(ndim)))
        sels.append(tuple(column(d, 12).reshape(3, 4) for d in range(ndim)))
    else:
        flat = rng.permutation(int(np.prod(shape)))[:n]        # distinct points
        cols = [i - shape[d] * (rng.random(len(i)) < 0.5) for d, i in enumerate(np.unravel_index(flat, shape))]
        sels.append(tuple(cols))
        # (the same points made distinct by construction, 2-d)
        m = len(cols[0]) // 2 * 2
        sels.append(tuple(c[:m].reshape(2, -1) for c in cols))
    sels.append(tuple(np.array([], int) for _ in range(ndim)))
    return sels


def masks(shape, rng) -> list[np.ndarray]:
    return [rng.random(shape) < 0.3, np.zeros(shape, bool), np.ones(shape, bool),
            rng.random(shape) < 0.02]


def test_coordinate_reads(pair) -> None:
    rng = np.random.default_rng(pair.ndim)
    for i, sel in enumerate(coordinate_selections(pair.data.shape, rng)):
        pair.check_read(lambda x, sel=sel: x.vindex[sel])
        pair.check_read(lambda x, sel=sel: x.get_coordinate_selection(sel))
        if i < 4:       # (a[...] with as many index arrays as dimensions: zarr-python's vindex)
            pair.check_read(lambda x, sel=sel: x[sel])


def test_mask_reads(pair) -> None:
    rng = np.random.default_rng(30 + pair.ndim)
    for mask in masks(pair.data.shape, rng):
        pair.check_read(lambda x, mask=mask: x.vindex[mask])
        pair.check_read(lambda x, mask=mask: x.get_mask_selection(mask))
        pair.check_read(lambda x, mask=mask: x[mask])


def test_coordinate_writes(pair) -> None:
    """Points without repeats (zarr-python orders repeated points with numpy's
    unstable argsort; repeats are checked against numpy below)."""
    rng = np.random.default_rng(40 + pair.ndim)
    dt = LAYOUTS[pair.layout]
    for i, sel in enumerate(coordinate_selections(pair.data.shape, rng, repeats=False)):
        shape = pair.a.vindex[sel].shape
        value = sample(dt, shape, seed=i)
        pair.check_write(lambda x, sel=sel, value=value: x.vindex.__setitem__(sel, value))
        pair.check_write(lambda x, sel=sel: x.set_coordinate_selection(sel, 9))
    sel = coordinate_selections(pair.data.shape, rng, repeats=False)[0]
    value = sample(dt, (len(sel[0]),), seed=50)
    pair.check_write(lambda x: x.__setitem__(sel, value))


def test_mask_writes(pair) -> None:
    rng = np.random.default_rng(50 + pair.ndim)
    dt = LAYOUTS[pair.layout]
    for i, mask in enumerate(masks(pair.data.shape, rng)):
        value = sample(dt, (int(mask.sum()),), seed=60 + i)
        pair.check_write(lambda x, mask=mask, value=value: x.vindex.__setitem__(mask, value))
        pair.check_write(lambda x, mask=mask: x.set_mask_selection(mask, 3))
    mask = masks(pair.data.shape, rng)[0]
    value = sample(dt, (int(mask.sum()),), seed=70)
    pair.check_write(lambda x: x.__setitem__(mask, value))


def test_repeated_points_last_wins(pair) -> None:
    """Where a point repeats, the last value wins, as numpy assigns; values given
    per point in any shape with as many items (zarr-python flattens them), or
    broadcast to the selection's shape."""
    rng = np.random.default_rng(60 + pair.ndim)
    expected = pair.data.copy()
    for i, sel in enumerate(coordinate_selections(pair.data.shape, rng)):
        shape = np.broadcast_shapes(*[np.shape(s) for s in sel])
        value = sample(LAYOUTS[pair.layout], shape, seed=80 + i) if i % 3 else 7
        pair.a.vindex[sel] = value
        expected[tuple(np.asarray(s) for s in sel)] = value
        assert_bit_equal(pair.a[...], expected, f"{pair.layout} {pair.ndim}-d {pair.kind} {i}")


@pytest.mark.parametrize("shape,chunks,npoints", [
    ((300, 200), (7, 9), 20000),        # a small grid: points grouped by a counting sort
    ((2000, 3000), (1, 1), 3000),       # 6 million chunks, few points: a radix sort
    ((70000,), (1,), 100),
])
def test_plan_paths_against_numpy(shape, chunks, npoints) -> None:
    rng = np.random.default_rng(7)
    a = zarrc.create_array(MemoryStore(), shape=shape, chunks=chunks, dtype="int64", fill_value=-1)
    expected = np.full(shape, -1, np.int64)
    sel = tuple(rng.integers(0, n, npoints) for n in shape)
    value = rng.integers(0, 1 << 40, npoints)
    a.vindex[sel] = value
    expected[sel] = value
    assert_bit_equal(a.vindex[sel], expected[sel])
    assert_bit_equal(a.vindex[tuple(s[::-1] for s in sel)], expected[tuple(s[::-1] for s in sel)])
    if len(shape) == 2 and shape[0] * shape[1] < 10 ** 6:
        assert_bit_equal(a[...], expected)
        mask = expected % 3 == 0
        assert_bit_equal(a[mask], expected[mask])


def same(actual: np.ndarray, expected: np.ndarray, what: str = "") -> None:
    """assert_bit_equal, or for object items (variable-length strings) equal items."""
    if expected.dtype == object:
        assert actual.dtype == object and actual.shape == expected.shape, what
        assert actual.tolist() == expected.tolist(), what
    else:
        assert_bit_equal(actual, expected, what)


@pytest.mark.parametrize("layout", ["transpose", "F", "blosc", "zstd", "vlen"])
def test_chunk_layouts_and_codecs(layout) -> None:
    """Points in chunks stored transposed (v3 transpose codec, v2 order F), read in
    part by blosc and zstd partial decodes, and in the Python strategy (variable-
    length strings), against numpy."""
    rng = np.random.default_rng(8)
    shape, chunks = (37, 23, 11), (8, 5, 4)
    kw: dict = {"shape": shape, "chunks": chunks, "dtype": "int32"}
    if layout == "transpose":
        kw["filters"] = [{"name": "transpose", "configuration": {"order": [2, 0, 1]}}]
    elif layout == "F":
        kw.update(order="F", zarr_format=2)
    elif layout == "blosc":
        kw["compressors"] = [{"name": "blosc", "configuration": {"cname": "lz4", "clevel": 5,
                                                                  "shuffle": "shuffle", "typesize": 4,
                                                                  "blocksize": 64}}]
    elif layout == "zstd":
        kw["compressors"] = [{"name": "zstd", "configuration": {"level": 1, "checksum": False}}]
    else:
        kw.update(dtype=str, fill_value="")
    a = zarrc.create_array(MemoryStore(), **kw)
    data = (rng.integers(0, 1000, shape).astype(str).astype(object) if layout == "vlen"
            else rng.integers(-1000, 1000, shape).astype("int32"))
    a[...] = data
    for size in (1, 3, 500):
        sel = tuple(rng.integers(0, n, size) for n in shape)
        same(a.vindex[sel], data[sel], f"{layout} {size}")
    mask = rng.random(shape) < 0.1
    same(a[mask], data[mask], layout)
    sel = tuple(rng.integers(0, n, 300) for n in shape)
    value = data[tuple(s[::-1] for s in sel)]
    a.vindex[sel] = value
    data[sel] = value
    a[mask] = data[mask][::-1]
    data[mask] = data[mask][::-1]
    same(a[...], data, layout)


def test_out_filled_in_place(tmp_path) -> None:
    p = Pair(str(tmp_path), "sharded", 2, "local")
    sel = (np.array([[5, 1, 5], [0, 12, -1]]), np.array([0, 10, 3]))
    for out in (np.zeros((2, 3), np.uint16), np.zeros(6, np.uint16), np.zeros((2, 6), np.uint16)[:, ::2]):
        assert p.a.get_coordinate_selection(sel, out=out) is out
        assert_bit_equal(out.reshape(2, 3), p.z.vindex[sel])
    mask = p.data % 3 == 0
    out = np.empty(int(mask.sum()), np.uint16)
    assert p.a.get_mask_selection(mask, out=out) is out
    assert_bit_equal(out, p.z.get_mask_selection(mask))
    with pytest.raises(ValueError):                  # (an ArgumentError)
        p.a.get_coordinate_selection(sel, out=np.empty((3, 2), np.uint16))
    with pytest.raises(ArgumentError):
        p.a.get_mask_selection(mask, out=np.empty(int(mask.sum()), np.int64))


def test_errors_as_zarr_python(tmp_path) -> None:
    p = Pair(str(tmp_path), "v3", 2, "local")
    bad = [lambda x: x.vindex[[0, 13], [0, 0]], lambda x: x.vindex[[-14], [0]],
           lambda x: x.vindex[[0, 1], [0, 11]],
           lambda x: x.vindex[[0, 1]], lambda x: x.vindex[0:2, [0, 1]],
           lambda x: x.vindex[np.ones((13, 10), bool)], lambda x: x.vindex[np.array([1.5]), [0]],
           lambda x: x.get_mask_selection(np.ones((13, 10), bool)),
           lambda x: x.get_coordinate_selection(([0, 1],)),
           lambda x: x[np.ones((13, 11), bool)[:, :10]]]
    both_raise(p, bad)
    for x in (p.z, p.a):
        with pytest.raises(ValueError):             # (zarrc: an ArgumentError)
            x.vindex[[0, 1, 2], [0, 1]]
        with pytest.raises(ValueError):
            x.vindex[[1, 2, 3], [0, 1, 2]] = np.zeros(2)
        with pytest.raises(IndexError):
            x.vindex[[1, 13], [0, 0]] = 1
    assert_bit_equal(p.a[...], p.z[...])       # (the failed writes changed nothing)


def test_fields_of_structured_dtype() -> None:
    """``fields=`` (and field names in the selection) with coordinate and mask
    selections of a v2 structured array, against numpy."""
    dt = np.dtype([("a", "<i4"), ("b", "<f8")])
    data = np.zeros((6, 5), dt)
    data["a"], data["b"] = np.arange(30).reshape(6, 5), np.arange(30).reshape(6, 5) / 4
    a = zarrc.create_array({}, shape=(6, 5), chunks=(4, 2), dtype=dt, zarr_format=2)
    a[...] = data
    sel = ([5, 0, 5], [4, 1, 4])
    assert_bit_equal(a.get_coordinate_selection(sel, fields="b"), data["b"][sel])
    assert_bit_equal(a.vindex[sel + ("a",)], data["a"][sel])
    mask = data["a"] % 4 == 1
    assert a.get_mask_selection(mask, fields=["b"]).tolist() == data[["b"]][mask].tolist()
    a.set_coordinate_selection(([1, 2], [1, 2]), [1.5, 2.5], fields="b")
    a.vindex[mask, "a"] = -1
    data["b"][[1, 2], [1, 2]] = [1.5, 2.5]
    data["a"][mask] = -1
    assert_bit_equal(a[...], data)


def test_many_chunks_one_call_each(tmp_path) -> None:
    """A coordinate read or write touching every chunk fetches each chunk once and
    a write stores each once (counted on the store), however many points it has."""
    calls: dict = {"get": 0, "set": 0}

    class Counting(MemoryStore):
        def get_many(self, keys):
            calls["get"] += len(keys)
            return super().get_many(keys)

        def set(self, key, value):
            calls["set"] += 1
            super().set(key, value)

    store = Counting()
    a = create(zarrc, store, "v3", 2)
    a[...] = 1
    calls.update(get=0, set=0)
    rng = np.random.default_rng(3)
    sel = (rng.integers(0, 13, 2000), rng.integers(0, 11, 2000))
    a.vindex[sel]
    assert calls["get"] == 4 * 4
    a.vindex[sel] = 5
    assert calls["get"] == 2 * 16 and calls["set"] == 16


@pytest.mark.parametrize("endian", ["little", "big"])
def test_few_points_of_blosc_chunks(endian, tmp_path) -> None:
    """A few points in large blosc chunks of many blocks (only the blocks holding
    them are decoded), in native and swapped byte order, from files and memory."""
    rng = np.random.default_rng(9)
    data = rng.standard_normal((200, 300))
    codecs = [{"name": "bytes", "configuration": {"endian": endian}},
              {"name": "blosc", "configuration": {"cname": "lz4", "clevel": 5, "shuffle": "shuffle",
                                                  "typesize": 8, "blocksize": 2048}}]
    for store in (str(tmp_path / "a.zarr"), MemoryStore()):
        a = zarrc.create_array(store, shape=data.shape, chunks=(100, 150), dtype="float64",
                               serializer=codecs[0], compressors=codecs[1:])
        a[...] = data
        for n in (1, 2, 7, 30, 400):
            sel = (rng.integers(0, 200, n), rng.integers(0, 300, n))
            assert_bit_equal(a.vindex[sel], data[sel], f"{endian} {n}")
        a[20:25, 40:45] = 0         # (a chunk with an all-zero block run is still read right)
        data[20:25, 40:45] = 0
        sel = (np.arange(18, 27), np.arange(38, 47))
        assert_bit_equal(a.vindex[sel], data[sel])


def test_sharded_with_missing_inner_chunks(tmp_path) -> None:
    """Points and orthogonal selections over shards with inner chunks missing and
    shards missing (read as the fill value), against numpy."""
    rng = np.random.default_rng(11)
    for store in (str(tmp_path / "s.zarr"), MemoryStore()):
        a = zarrc.create_array(store, shape=(120, 90), chunks=(6, 5), shards=(24, 30), dtype="int16",
                               fill_value=-3)
        data = np.full(a.shape, -3, np.int16)
        region = (slice(5, 50), slice(7, 61))
        data[region] = rng.integers(0, 100, (45, 54))
        a[region] = data[region]
        sel = (rng.integers(0, 120, 3000), rng.integers(0, 90, 3000))
        assert_bit_equal(a.vindex[sel], data[sel])
        rows, cols = rng.integers(0, 120, 70), rng.integers(0, 90, 80)
        assert_bit_equal(a.oindex[rows, cols], data[np.ix_(rows, cols)])
        a.vindex[sel] = 1
        data[sel] = 1
        assert_bit_equal(a[...], data)


def test_points_of_huge_chunks_plan_64_bit() -> None:
    """Chunks of 2^31 elements or more: the plan's local indices are 64-bit (missing
    chunks: only the points are filled, nothing of chunk size is allocated)."""
    a = zarrc.create_array(MemoryStore(), shape=(1 << 33,), chunks=(1 << 31,), dtype="uint8",
                           fill_value=7)
    points = np.array([0, (1 << 33) - 1, 1 << 31, 5, (1 << 31) - 1])
    plan = zarrc.core.indexing.plan_coordinate((points,), a.shape, (1 << 31,))
    assert plan.local.dtype == np.int64
    assert sorted(plan.local.tolist()) == sorted([0, (1 << 31) - 1, 0, 5, (1 << 31) - 1])
    assert_bit_equal(a.vindex[points], np.full(5, 7, np.uint8))
