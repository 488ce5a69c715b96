"""Rectilinear chunk grids (chunk-grids/rectilinear): metadata, every selection kind
against numpy on random grids, writes, resize / append, sharding over a
rectilinear grid, the xarray backend.  Interop with zarr-python 3.4 is in
tests/interop/test_rectilinear_zarr34.py."""

from __future__ import annotations

import json

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

import zarrc
from zarrc.core.chunk_grid import Edges, RectilinearChunkGrid
from zarrc.engine.python import PythonStrategy
from zarrc.errors import MetadataError
from zarrc.metadata import rectilinear
from zarrc.metadata.v3 import ArrayMetadataV3


def doc(shape, chunk_shapes, codecs=None, kind="inline"):
    config = {"chunk_shapes": chunk_shapes}
    if kind is not None:
        config["kind"] = kind
    return {"zarr_format": 3, "node_type": "array", "shape": shape, "data_type": "int32",
            "chunk_grid": {"name": "rectilinear", "configuration": config},
            "chunk_key_encoding": {"name": "default"}, "fill_value": 0,
            "codecs": codecs or [{"name": "bytes", "configuration": {"endian": "little"}}]}


# ------------------------------------------------------------------ metadata

def test_spec_example_parses_and_expands():
    md = ArrayMetadataV3.from_json(doc([6, 6, 6, 6, 6], [4, [1, 2, 3], [[4, 2]], [[1, 3], 3], [4, 4, 4]]))
    assert md.chunk_edges == (4, (1, 2, 3), (4, 4), (1, 1, 1, 3), (4, 4, 4))
    assert md.chunk_shape == (4, 1, 4, 1, 4)
    grid = RectilinearChunkGrid(md.shape, md.chunk_edges)
    assert grid.grid_shape == (2, 3, 2, 4, 2)
    assert grid.chunk_sizes() == ((4, 2), (1, 2, 3), (4, 2), (1, 1, 1, 3), (4, 2))


def test_round_trip_writes_zarr_python_form():
    md = ArrayMetadataV3.from_json(doc([6, 100, 6], [4, [[10, 9], 5, 5], [1, 2, 3]]))
    grid_json = md.to_json()["chunk_grid"]
    # run-length encoded only where shorter; bare ints kept
    assert grid_json == {"name": "rectilinear", "configuration": {
        "kind": "inline", "chunk_shapes": [4, [[10, 9], [5, 2]], [1, 2, 3]]}}
    again = ArrayMetadataV3.from_json(json.loads(md.to_bytes()))
    assert again == md and again.chunk_edges == md.chunk_edges


def test_run_length():
    assert rectilinear.run_length([10, 10, 10, 5]) == [[10, 3], 5]
    assert rectilinear.run_length([1, 2, 3]) == [1, 2, 3]
    assert rectilinear.run_length([]) == []


@pytest.mark.parametrize("shape, shapes, kind, field", [
    ([10, 6], [[5, 4], [3, 3]], "inline", r"chunk_shapes\[0\]\" \[5, 4\] sums to 9"),
    ([10, 6], [[5, 5], [3, 0, 3]], "inline", r"chunk_shapes\[1\].* not a positive integer"),
    ([10, 6], [[5, 5], [3, -3]], "inline", r"chunk_shapes\[1\].* not a positive integer"),
    ([10, 6], [[5, 5], [3, 3.0]], "inline", r"chunk_shapes\[1\].* not a positive integer"),
    ([10, 6], [[5, 5], [3, True]], "inline", r"chunk_shapes\[1\].* not a positive integer"),
    ([10, 6], [[5, 5]], "inline", r"chunk_shapes\" .* has 1 dimensions but shape \[10, 6\] has 2"),
    ([10, 6], [[5, 5], [[3, 2, 1]]], "inline", r"chunk_shapes\[1\].* not \[length, count\]"),
    ([10, 6], [[5, 5], [[3, 0]]], "inline", r"chunk_shapes\[1\].* run-length count"),
    ([10, 6], [[5, 5], []], "inline", r"chunk_shapes\[1\].* non-empty array"),
    ([10, 6], [[5, 5], "3"], "inline", r"chunk_shapes\[1\]"),
    ([10, 6], [[5, 5], 0], "inline", r"chunk_shapes\[1\].* not a positive integer"),
    ([10, 6], [[5, 5], [3, 3]], "external", r"\"chunk_grid.configuration.kind\" \"external\" must be \"inline\""),
    ([10, 6], [[5, 5], [3, 3]], None, r"\"chunk_grid.configuration.kind\" null must be"),
    ([10, 6], {"a": 1}, "inline", r"chunk_shapes\" .* must be an array"),
])
def test_malformed_grids_are_refused_naming_the_field(shape, shapes, kind, field):
    with pytest.raises(MetadataError, match=field):
        ArrayMetadataV3.from_json(doc(shape, shapes, kind=kind))


def test_malformed_grid_refused_when_opened():
    store = {}
    a = zarrc.create_array(store, name="a", shape=(10, 6), chunks=[[5, 5], [3, 3]], dtype="i4")
    del a
    d = json.loads(store["a/zarr.json"].to_bytes() if hasattr(store["a/zarr.json"], "to_bytes")
                   else store["a/zarr.json"])
    d["chunk_grid"]["configuration"]["chunk_shapes"] = [[5, 4], [3, 3]]
    store["a/zarr.json"] = json.dumps(d).encode()
    with pytest.raises(MetadataError, match=r"/a.*chunk_shapes\[0\]"):
        zarrc.open_array(store, path="a")


def test_sharding_needs_inner_chunks_dividing_every_shard_edge():
    codecs = [{"name": "sharding_indexed", "configuration": {
        "chunk_shape": [5], "codecs": [{"name": "bytes", "configuration": {"endian": "little"}}],
        "index_codecs": [{"name": "bytes", "configuration": {"endian": "little"}}, {"name": "crc32c"}]}}]
    d = doc([30], [[10, 20]], codecs)
    ArrayMetadataV3.from_json(d)
    d["chunk_grid"]["configuration"]["chunk_shapes"] = [[10, 12, 8]]
    with pytest.raises(MetadataError):
        ArrayMetadataV3.from_json(d)


def test_edges_boundary_search():
    e = Edges([5, 25, 30], 55)
    assert e.nchunks == 3 and e.sizes() == (5, 25, 25)
    assert e.chunk_of(np.array([0, 4, 5, 29, 30, 54])).tolist() == [0, 0, 1, 1, 2, 2]
    assert Edges([4, 4, 4, 4], 9).nchunks == 3


# ------------------------------------------------------------------ creation

def test_create_array_with_lists_and_ints():
    a = zarrc.create_array({}, shape=(60, 100), chunks=[[5, 25, 30], 30], dtype="i4")
    assert a.metadata.to_json()["chunk_grid"]["configuration"]["chunk_shapes"] == [[5, 25, 30], 30]
    assert a.write_chunk_sizes == a.read_chunk_sizes == ((5, 25, 30), (30, 30, 30, 10))
    assert a.cdata_shape == (3, 4) and a.nchunks == 12
    with pytest.raises(NotImplementedError, match="read_chunk_sizes"):
        a.chunks
    a[:] = 1
    assert a.nchunks_initialized == 12
    assert "<variable>" in repr(a.info)


@pytest.mark.parametrize("chunks, error", [
    ([[5, 25, 31], 30], ValueError),        # does not sum to the length
    ([[5, 0, 55], 30], ValueError),
    ([[5, 25, 30]], ValueError),             # rank
    ([[5, 25, 30.0], 30], TypeError),
])
def test_create_array_refuses_bad_lists(chunks, error):
    with pytest.raises(error):
        zarrc.create_array({}, shape=(60, 100), chunks=chunks, dtype="i4")


# ------------------------------------------------------------------ selections

@st.composite
def grids(draw):
    ndim = draw(st.integers(1, 3))
    shape, edges = [], []
    for _ in range(ndim):
        if draw(st.booleans()) and ndim > 1:
            n = draw(st.integers(1, 23))
            shape.append(n)
            edges.append(draw(st.integers(1, 9)))
            continue
        parts = draw(st.lists(st.integers(1, 9), min_size=1, max_size=6))
        shape.append(sum(parts))
        edges.append(parts)
    return tuple(shape), edges


def _array(shape, edges, store=None, **kwargs):
    a = zarrc.create_array({} if store is None else store, shape=shape, chunks=edges, dtype="i4",
                           fill_value=-7, **kwargs)
    data = np.arange(int(np.prod(shape)), dtype="i4").reshape(shape)
    a[...] = data
    return a, data


def _slice(draw, n):
    start = draw(st.one_of(st.none(), st.integers(-n - 2, n + 2)))
    stop = draw(st.one_of(st.none(), st.integers(-n - 2, n + 2)))
    step = draw(st.one_of(st.none(), st.integers(1, 7)))
    return slice(start, stop, step)


@settings(max_examples=60, deadline=None)
@given(st.data())
def test_basic_and_orthogonal_selections_match_numpy(data):
    shape, edges = data.draw(grids())
    a, ref = _array(shape, edges)
    sel = []
    for n in shape:
        kind = data.draw(st.sampled_from(["int", "slice", "ints", "mask"]))
        if kind == "int":
            sel.append(data.draw(st.integers(-n, n - 1)))
        elif kind == "slice":
            sel.append(_slice(data.draw, n))
        elif kind == "ints":
            sel.append(np.array(data.draw(st.lists(st.integers(-n, n - 1), min_size=1, max_size=8))))
        else:
            sel.append(np.array(data.draw(st.lists(st.booleans(), min_size=n, max_size=n))))
    basic = tuple(s if isinstance(s, (int, slice)) else slice(None) for s in sel)
    np.testing.assert_array_equal(a[basic], ref[basic])
    np.testing.assert_array_equal(a[(Ellipsis,) + basic[1:]], ref[(Ellipsis,) + basic[1:]])
    expect = ref[np.ix_(*[np.arange(n)[s] if not isinstance(s, int) else [s] for s, n in zip(sel, shape)])]
    expect = expect.reshape([m for m, s in zip(expect.shape, sel) if not isinstance(s, int)])
    np.testing.assert_array_equal(a.oindex[tuple(sel)], expect)
    # writes: the same selection, then the whole array compared
    value = -np.arange(expect.size, dtype="i4").reshape(expect.shape) - 100
    a.oindex[tuple(sel)] = value
    ref2 = ref.copy()
    idx = np.ix_(*[np.arange(n)[s] if not isinstance(s, int) else [s] for s, n in zip(sel, shape)])
    ref2[idx] = value.reshape(ref2[idx].shape)
    np.testing.assert_array_equal(a[...], ref2)


@settings(max_examples=40, deadline=None)
@given(st.data())
def test_points_and_masks_match_numpy(data):
    shape, edges = data.draw(grids())
    a, ref = _array(shape, edges)
    k = data.draw(st.integers(1, 12))
    coords = tuple(np.array(data.draw(st.lists(st.integers(-n, n - 1), min_size=k, max_size=k)))
                   for n in shape)
    np.testing.assert_array_equal(a.vindex[coords], ref[coords])
    np.testing.assert_array_equal(a.get_coordinate_selection(coords), ref[coords])
    rng = np.random.default_rng(data.draw(st.integers(0, 2**32 - 1)))
    mask = rng.random(shape) < data.draw(st.sampled_from([0.0, 0.1, 0.5, 1.0]))
    np.testing.assert_array_equal(a.vindex[mask], ref[mask])
    np.testing.assert_array_equal(a.get_mask_selection(mask), ref[mask])
    a.vindex[mask] = -1
    ref[mask] = -1
    a.vindex[coords] = np.arange(k, dtype="i4") + 1000
    ref[coords] = np.arange(k, dtype="i4") + 1000
    np.testing.assert_array_equal(a[...], ref)


def test_block_indexing_uses_the_rectilinear_blocks():
    a, ref = _array((60, 100), [[5, 25, 30], 30])
    np.testing.assert_array_equal(a.blocks[1, 1], ref[5:30, 30:60])
    np.testing.assert_array_equal(a.blocks[-1, -1], ref[30:60, 90:100])
    np.testing.assert_array_equal(a.blocks[1:, :2], ref[5:, :60])
    a.blocks[2, 0] = 0
    ref[30:60, 0:30] = 0
    np.testing.assert_array_equal(a[:], ref)


def test_chunks_are_stored_under_the_grid_keys(tmp_path):
    a, ref = _array((60, 100), [[5, 25, 30], [40, 60]], store=str(tmp_path), compressors=None)
    keys = sorted(str(p.relative_to(tmp_path)) for p in tmp_path.rglob("c/*/*"))
    assert keys == [f"c/{i}/{j}" for i in range(3) for j in range(2)]
    # chunk (1, 1) holds 25 x 60 elements, raw
    raw = np.frombuffer((tmp_path / "c/1/1").read_bytes(), "<i4")
    assert raw.size == 25 * 60
    np.testing.assert_array_equal(raw.reshape(25, 60), ref[5:30, 40:100])


def test_missing_chunks_read_as_fill_and_empty_chunks_are_not_stored(tmp_path):
    a = zarrc.create_array(str(tmp_path), shape=(30,), chunks=[[10, 5, 15]], dtype="i4", fill_value=3)
    a[10:15] = 9
    assert sorted(p.name for p in (tmp_path / "c").iterdir()) == ["1"]
    np.testing.assert_array_equal(a[:], np.r_[[3] * 10, [9] * 5, [3] * 15])
    a[10:15] = 3
    assert not list((tmp_path / "c").iterdir())


# ------------------------------------------------------------------ resize, append

def test_resize_grows_by_one_edge_and_shrink_keeps_edges(tmp_path):
    a, ref = _array((30, 7), [[10, 5, 15], 4], store=str(tmp_path))
    a.resize((42, 7))
    assert a.metadata.chunk_edges == ((10, 5, 15, 12), 4)
    np.testing.assert_array_equal(a[:30], ref)
    assert (a[30:] == -7).all()
    a.resize((12, 7))
    assert a.metadata.chunk_edges == ((10, 5, 15, 12), 4)
    stored = sorted(str(p.relative_to(tmp_path / "c")) for p in (tmp_path / "c").rglob("*") if p.is_file())
    assert stored == ["0/0", "0/1", "1/0", "1/1"]   # chunks beyond the new shape: gone
    a.resize((30, 7))
    np.testing.assert_array_equal(a[:12], ref[:12])
    assert (a[12:] == -7).all()           # the cut chunk cleared beyond the shrink


def test_append_adds_an_edge_of_the_data_length():
    a, ref = _array((30, 7), [[10, 5, 15], 4])
    extra = np.full((8, 7), 5, "i4")
    assert a.append(extra) == (38, 7)
    assert a.metadata.chunk_edges == ((10, 5, 15, 8), 4)
    np.testing.assert_array_equal(a[:], np.concatenate([ref, extra]))
    a.append(np.ones((38, 3), "i4"), axis=1)
    assert a.metadata.chunk_edges == ((10, 5, 15, 8), 4)
    assert a.shape == (38, 10)


def test_points_and_masks_with_codecs_only_python_runs():
    """Codecs only Python runs: points and masks planned on the grid's boundaries,
    read and written by the Python strategy over the whole grid."""
    shape = (30, 17)
    a, ref = _array(shape, [[3, 10, 17], [2, 2, 13]],
                    compressors=[{"name": "numcodecs.bz2", "configuration": {"level": 1}}])
    assert type(a._engine) is PythonStrategy
    mask = np.random.default_rng(0).random(shape) < 0.3
    coords = (np.array([29, 0, 5, 13, -1]), np.array([16, 0, 3, 2, 4]))
    np.testing.assert_array_equal(a.vindex[mask], ref[mask])
    np.testing.assert_array_equal(a.vindex[coords], ref[coords])
    a.vindex[mask] = -np.arange(mask.sum(), dtype="i4")
    ref[mask] = -np.arange(mask.sum(), dtype="i4")
    a.vindex[coords] = 1000
    ref[coords] = 1000
    np.testing.assert_array_equal(a[...], ref)


# ------------------------------------------------------------------ sharding

@settings(max_examples=25, deadline=None)
@given(st.data())
def test_sharded_rectilinear_matches_numpy(data):
    inner = data.draw(st.integers(1, 4))
    mult = data.draw(st.lists(st.integers(1, 4), min_size=1, max_size=5))
    shape = (sum(mult) * inner, 6)
    a = zarrc.create_array({}, shape=shape, chunks=(inner, 3), shards=[[m * inner for m in mult], 6],
                           dtype="i4", fill_value=0)
    ref = np.arange(np.prod(shape), dtype="i4").reshape(shape)
    a[...] = ref
    s = _slice(data.draw, shape[0])
    np.testing.assert_array_equal(a[s, 1:5], ref[s, 1:5])
    a[s, ::2] = -1
    ref[s, ::2] = -1
    np.testing.assert_array_equal(a[...], ref)
    pts = (np.array([0, shape[0] - 1]), np.array([5, 0]))
    np.testing.assert_array_equal(a.vindex[pts], ref[pts])
    assert a.chunks == (inner, 3)
    assert a.write_chunk_sizes[0] == tuple(m * inner for m in mult)
    with pytest.raises(NotImplementedError):
        a.shards
    assert a.nchunks_initialized == sum(mult) * 2         # every inner chunk stored, as zarr-python
    assert "<variable>" in repr(a.info)


# ------------------------------------------------------------------ xarray

def test_xarray_backend_gives_the_grid_as_dask_chunks(tmp_path):
    xr = pytest.importorskip("xarray")
    pytest.importorskip("dask")
    a = zarrc.create_array(str(tmp_path), name="v", shape=(60, 100), chunks=[[5, 25, 30], 30],
                           dtype="f8", dimension_names=["y", "x"])
    ref = np.arange(6000.0).reshape(60, 100)
    a[:] = ref
    ds = xr.open_dataset(str(tmp_path), engine="zarrc", chunks={})
    assert ds.v.encoding["preferred_chunks"] == {"y": (5, 25, 30), "x": 30}
    assert ds.v.chunks == ((5, 25, 30), (30, 30, 30, 10))
    np.testing.assert_array_equal(ds.v.values, ref)
    np.testing.assert_array_equal(ds.v[7:40:3, ::9].values, ref[7:40:3, ::9])


def test_field_writes_of_a_structured_array():
    dt = np.dtype([("a", "i4"), ("b", "f8")])
    a = zarrc.create_array({}, shape=(30,), chunks=[[10, 5, 15]], dtype=dt)
    a.set_basic_selection(slice(None), np.arange(30.0), fields="b")
    a.set_basic_selection(slice(8, 17), 7, fields="a")
    a.set_coordinate_selection((np.array([0, 29]),), [1, 2], fields="a")
    ref = np.zeros(30, dt)
    ref["b"] = np.arange(30.0)
    ref["a"][8:17] = 7
    ref["a"][[0, 29]] = [1, 2]
    np.testing.assert_array_equal(a[:], ref)


def test_sharding_rules_at_creation_as_zarr_python():
    # inner chunks are regular: lists go to shards (zarr-python 3.4 refuses alike, ValueError)
    with pytest.raises(ValueError, match="shards"):
        zarrc.create_array({}, shape=(30,), chunks=[[10, 20]], shards=(30,), dtype="i4")
    with pytest.raises(ValueError):        # a shard edge that the inner chunks do not divide
        zarrc.create_array({}, shape=(30,), chunks=(5,), shards=[[10, 12, 8]], dtype="i4")
    a = zarrc.create_array({}, shape=(30,), chunks=(5,), shards=[[10, 15, 5]], dtype="i4")
    assert a.write_chunk_sizes == ((10, 15, 5),) and a.read_chunk_sizes == ((5,) * 6,)


@pytest.mark.parametrize("sharded", [False, True])
def test_boxes_across_runs_and_shards(tmp_path, sharded):
    """Ints and slices against numpy, on a grid with runs and single chunks, across
    part boundaries: unsharded by the whole grid's BasicReader, sharded by the
    sharded strategy over the whole grid; other selections take the general path."""
    if sharded:
        shape = (60, 48, 5)
        a = zarrc.create_array(str(tmp_path / "s"), shape=shape, chunks=(4, 12, 5), dtype="i4",
                               shards=[[20, 16, 24], [24, 12, 12], 5], fill_value=-1)
    else:
        shape = (61, 47, 5)
        a = zarrc.create_array(str(tmp_path / "a"), shape=shape, chunks=[[10, 10, 10, 7, 12, 12], [20, 13, 14], 5],
                               dtype="i4", fill_value=-1)
    want = np.arange(np.prod(shape), dtype="i4").reshape(shape)
    want[40:, 30:] = -1
    a[:40] = want[:40]
    a[40:, :30] = want[40:, :30]
    rng = np.random.default_rng(7)
    sels = [..., (), 3, -1, (slice(None), -shape[1]), (Ellipsis, 2), (5, Ellipsis, 1), (slice(9, 41), slice(19, 34)),
            (slice(-30, None), 20, slice(1, 4)), (np.int64(36), slice(0, 47)), (slice(5, 5),),
            (slice(0, 61, 2),), ([1, 2], slice(None))]
    for _ in range(40):
        lo = rng.integers(0, shape, 3)
        hi = [int(rng.integers(low, n)) + 1 for low, n in zip(lo, shape)]
        sels.append(tuple(slice(int(x), y) for x, y in zip(lo, hi)))
    for sel in sels:
        np.testing.assert_array_equal(a[sel], want[sel], err_msg=str(sel))
    for bad in [(shape[0],), (0, -shape[1] - 1)]:
        with pytest.raises(IndexError):
            a[bad]


def test_a_0d_array_on_a_rectilinear_grid_is_its_one_chunk():
    """A 0-d array whose document names the rectilinear grid (no edges): read and
    written as its one chunk, as a regular 0-d array is (key ``c``)."""
    store = zarrc.storage.MemoryStore()
    zarrc.create_array(store, shape=(), dtype="i4", fill_value=3)
    doc = json.loads(bytes(store.get("zarr.json")))
    doc["chunk_grid"] = {"name": "rectilinear", "configuration": {"kind": "inline", "chunk_shapes": []}}
    store.set("zarr.json", json.dumps(doc).encode())
    a = zarrc.open_array(store)
    assert a[...] == 3
    a[...] = 5
    assert zarrc.open_array(store)[()] == 5 and sorted(store.list_prefix("")) == ["c", "zarr.json"]
