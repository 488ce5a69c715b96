"""zarrc.Array and the open/create API: properties, attributes, pickling, modes."""

from __future__ import annotations

import os
import pickle

import numpy as np
import pytest
from helpers import chunk_keys

import zarrc
from zarrc.errors import ContainsNodeError, NodeNotFoundError, StoreError
from zarrc.metadata.v3 import ArrayMetadataV3
from zarrc.stores import LocalStore, MemoryStore, ZipStore


def test_properties():
    arr = zarrc.create_array({}, path="a/b", shape=(10, 7), chunks=(4, 3), dtype=">i2",
                             fill_value=5, attributes={"units": "K"}, dimension_names=["y", "x"])
    assert arr.shape == (10, 7) and arr.chunks == (4, 3) and arr.ndim == 2
    assert arr.dtype == np.dtype("int16") and arr.dtype.isnative
    assert arr.size == 70 and arr.nbytes == 140 and len(arr) == 10
    assert arr.fill_value == 5 and arr.attrs["units"] == "K"
    assert arr.path == "a/b" and arr.name == "/a/b" and arr.basename == "b"
    assert arr.dimension_names == ("y", "x") and arr.zarr_format == 3 and arr.order == "C"
    assert arr.cdata_shape == (3, 3) and arr.nchunks == 9 and arr.nchunks_initialized == 0
    assert isinstance(arr.metadata, ArrayMetadataV3) and arr.metadata.shape == (10, 7)
    assert not arr.read_only
    np.testing.assert_array_equal(np.asarray(arr), np.full((10, 7), 5))
    assert np.asarray(arr, dtype="float32").dtype == np.float32
    info = repr(arr.info)
    for text in ("Array", "(10, 7)", "(4, 3)", "int16", "MemoryStore", "140"):
        assert text in info
    assert "shape=(10, 7)" in repr(arr)


def test_nchunks_initialized_counts_stored_chunks(store_maker):
    store = store_maker.new()
    arr = zarrc.create_array(store, path="x", shape=(10, 7), chunks=(4, 3), dtype="int32",
                             chunk_key_encoding={"name": "v2", "separator": "."})
    other = zarrc.create_array(store, path="x2", shape=(3,), chunks=(1,), dtype="int8")
    other[...] = 1                                        # a sibling whose name shares the prefix
    arr[0:5, 0:4] = 1
    arr[9, 6] = 2
    assert sorted(chunk_keys(store, "x/")) == ["x/0.0", "x/0.1", "x/1.0", "x/1.1", "x/2.2"]
    assert arr.nchunks_initialized == 5 and other.nchunks_initialized == 3


def test_zero_dimensional_properties():
    arr = zarrc.create_array({}, shape=(), dtype="complex64", fill_value=1 + 2j)
    assert arr.shape == () and arr.ndim == 0 and arr.size == 1 and arr.nchunks == 1
    assert arr[...] == 1 + 2j
    with pytest.raises(TypeError):
        len(arr)


def test_iteration_and_basic_selection_methods():
    arr = zarrc.create_array({}, shape=(3, 2), chunks=(2, 2), dtype="int8")
    arr.set_basic_selection((slice(None), 1), [1, 2, 3])
    assert [row.tolist() for row in arr] == [[0, 1], [0, 2], [0, 3]]
    np.testing.assert_array_equal(arr.get_basic_selection(), [[0, 1], [0, 2], [0, 3]])


# ------------------------------------------------------------------ attributes

def test_attributes_persist(rw_store_maker):
    store = rw_store_maker.new()
    arr = zarrc.create_array(store, path="t", shape=(2,), dtype="f4", attributes={"a": 1})
    arr.attrs["b"] = [1, 2]
    arr.attrs.update({"c": {"d": None}}, e="x")
    del arr.attrs["a"]
    expected = {"b": [1, 2], "c": {"d": None}, "e": "x"}
    assert arr.attrs.asdict() == expected and len(arr.attrs) == 3 and "b" in arr.attrs
    reopened = zarrc.open_array(store, path="t", mode="r")
    assert dict(reopened.attrs) == expected
    arr.attrs.put({"only": True})
    assert zarrc.open_array(store, path="t").attrs.asdict() == {"only": True}
    with pytest.raises(StoreError):
        reopened.attrs["z"] = 1
    with pytest.raises(KeyError):
        arr.attrs["missing"]


def test_attributes_read_back_as_stored():
    """In memory as after reopening: JSON's lists and str keys, not tuples, arrays, ints."""
    store = {}
    arr = zarrc.create_array(store, shape=(2,), dtype="i1")
    arr.attrs.update(t=(1, 2), a=np.arange(3), k={1: "one"}, f=np.float32(0.5))
    expected = {"t": [1, 2], "a": [0, 1, 2], "k": {"1": "one"}, "f": 0.5}
    assert arr.attrs.asdict() == expected == zarrc.open_array(store).attrs.asdict()
    before = dict(store)
    with pytest.raises(TypeError):
        arr.attrs["bad"] = object()                       # not JSON: nothing written
    assert store == before and "bad" not in arr.attrs


# ------------------------------------------------------------------ pickling

@pytest.mark.parametrize("kind", ["local", "memory"])
def test_pickle_reopens_the_store(tmp_path, kind):
    store = LocalStore(tmp_path / "p.zarr") if kind == "local" else MemoryStore()
    arr = zarrc.create_array(store, path="g/a", shape=(5, 5), chunks=(2, 2), dtype="float64")
    arr[...] = np.arange(25.0).reshape(5, 5)
    clone = pickle.loads(pickle.dumps(arr))
    assert clone.path == "g/a" and clone.shape == (5, 5) and not clone.read_only
    np.testing.assert_array_equal(clone[...], arr[...])
    if kind == "local":                                   # same files: writes are seen
        assert clone == arr
        clone[0, 0] = -1.0
        assert arr[0, 0] == -1.0
    ro = pickle.loads(pickle.dumps(zarrc.open_array(store, path="g/a", mode="r")))
    assert ro.read_only


def test_pickle_zip_array(tmp_path):
    path = tmp_path / "p.zip"
    with ZipStore(path, mode="w") as store:
        arr = zarrc.create_array(store, shape=(4,), chunks=(2,), dtype="int64")
        arr[...] = [1, 2, 3, 4]
    arr = zarrc.open_array(str(path), mode="r")
    clone = pickle.loads(pickle.dumps(arr))
    np.testing.assert_array_equal(clone[...], [1, 2, 3, 4])
    arr.store.close()
    clone.store.close()


# ------------------------------------------------------------------ open / create

def test_locations_str_pathlib_dict_store(tmp_path):
    data = np.arange(6, dtype="uint16")
    for where in (str(tmp_path / "s.zarr"), tmp_path / "p.zarr", {}, MemoryStore(),
                  LocalStore(tmp_path / "l.zarr"), "file://" + str(tmp_path / "u.zarr")):
        arr = zarrc.create_array(where, shape=(6,), chunks=(4,), dtype="uint16")
        arr[...] = data
        again = zarrc.open_array(where if not isinstance(where, dict) else where, mode="r")
        np.testing.assert_array_equal(again[...], data)
        node = zarrc.open(where)
        assert isinstance(node, zarrc.Array)
    assert os.path.isfile(tmp_path / "p.zarr" / "c" / "1")


def test_zip_path(tmp_path):
    arr = zarrc.create_array(str(tmp_path / "z.zip"), shape=(3,), chunks=(3,), dtype="int8")
    arr[...] = [1, 2, 3]
    arr.store.close()
    np.testing.assert_array_equal(zarrc.open_array(tmp_path / "z.zip", mode="r")[...], [1, 2, 3])


def test_modes(tmp_path):
    where = tmp_path / "m.zarr"
    with pytest.raises(StoreError):                      # r / r+: nothing there
        zarrc.open_array(where, mode="r")
    with pytest.raises(NodeNotFoundError):               # a: no shape, nothing to create
        zarrc.open_array(where, mode="a")
    arr = zarrc.open_array(where, mode="a", shape=(4,), chunks=(2,), dtype="i4")
    arr[...] = 7
    assert zarrc.open_array(where, mode="a")[0] == 7      # a: opens the existing array
    assert zarrc.open_array(where, mode="r+")[3] == 7
    with pytest.raises(ContainsNodeError):
        zarrc.open_array(where, mode="w-", shape=(4,), dtype="i4")
    assert zarrc.open_array(where, mode="r")[1] == 7      # w- changed nothing
    new = zarrc.open_array(where, mode="w", shape=(2,), dtype="f8")   # w: replaces
    assert new.shape == (2,) and new[0] == 0.0 and sorted(os.listdir(where)) == ["zarr.json"]
    with pytest.raises(ValueError):
        zarrc.open_array(where, mode="x")
    with pytest.raises(NodeNotFoundError):
        zarrc.open_array(where, mode="r+", path="nothing")


def test_w_and_w_minus_act_on_the_node_not_the_store(tmp_path):
    """Mode "w" at a path replaces that node only; "w-" at a free path works."""
    for where in (str(tmp_path / "h.zarr"), {}):
        keep = zarrc.create_array(where, path="keep", shape=(2,), chunks=(1,), dtype="i1")
        keep[...] = 3
        zarrc.open_array(where, mode="w", path="other", shape=(2,), dtype="i1")
        zarrc.open_group(where, mode="w", path="grp")
        zarrc.open(where, mode="w", path="grp2")
        zarrc.open_array(where, mode="w-", path="new", shape=(2,), dtype="i1")
        zarrc.open_group(where, mode="w-", path="newg")
        np.testing.assert_array_equal(zarrc.open_array(where, path="keep", mode="r")[...], [3, 3])
        names = sorted(zarrc.open_group(where, mode="r").keys())
        assert names == ["grp", "grp2", "keep", "new", "newg", "other"]
        with pytest.raises(ContainsNodeError):
            zarrc.open_group(where, mode="w-", path="keep")
        with pytest.raises(ContainsNodeError):
            zarrc.open(where, mode="w-")
        zarrc.open_group(where, mode="w")                  # "w" at the root clears the store
        assert list(zarrc.open_group(where).keys()) == []


def test_overwrite():
    store = {}
    arr = zarrc.create_array(store, path="a", shape=(4,), chunks=(2,), dtype="i4")
    arr[...] = 1
    with pytest.raises(ContainsNodeError):
        zarrc.create_array(store, path="a", shape=(4,), dtype="i4")
    assert zarrc.open_array(store, path="a")[0] == 1
    new = zarrc.create_array(store, path="a", shape=(3,), chunks=(3,), dtype="u1", overwrite=True)
    assert new.shape == (3,) and sorted(store) == ["a/zarr.json", "zarr.json"]


def test_overwrite_below_an_array_deletes_nothing():
    store = {}
    arr = zarrc.create_array(store, path="arr", shape=(4,), chunks=(1,), dtype="i1")
    arr[...] = 1
    before = dict(store)
    with pytest.raises(ContainsNodeError, match="is an array"):
        zarrc.create_array(store, path="arr/c", shape=(2,), dtype="i1", overwrite=True)
    with pytest.raises(ContainsNodeError):
        zarrc.open_group(store, path="arr/sub")
    assert store == before


def test_read_only_arrays_refuse_writes(tmp_path):
    arr = zarrc.create_array(tmp_path / "r.zarr", shape=(4,), chunks=(2,), dtype="f4")
    arr[...] = 1.0
    for ro in (zarrc.open_array(tmp_path / "r.zarr", mode="r"),
               zarrc.open(tmp_path / "r.zarr", mode="r"),
               zarrc.open_array(LocalStore(tmp_path / "r.zarr", mode="r"))):
        assert ro.read_only
        with pytest.raises(StoreError, match="read-only"):
            ro[0] = 5.0
        with pytest.raises(StoreError):
            ro.attrs["x"] = 1
        np.testing.assert_array_equal(ro[...], np.ones(4))
    # a read-only view of a writable store object
    store = MemoryStore()
    zarrc.create_array(store, shape=(2,), dtype="i1")
    ro = zarrc.open_array(store, mode="r")
    with pytest.raises(StoreError):
        ro[...] = 1
    assert sorted(store.list()) == ["zarr.json"]


def test_create_array_options():
    arr = zarrc.create_array({}, shape=5, dtype="float32")            # int shape, auto chunks
    assert arr.shape == (5,) and arr.chunks == (5,)
    assert [c.name for c in arr.compressors] == ["zstd"]                # zarr-python's default
    arr = zarrc.create_array({}, shape=(1000, 1000), dtype="float64")
    assert np.prod(arr.chunks) * 8 <= 1 << 20
    arr = zarrc.create_array({}, shape=(6, 6), chunks=2, dtype="i1", compressors=None)
    assert arr.chunks == (2, 2) and arr.compressors == ()
