"""Zarr v2 arrays and groups on the engine: both paths (native pipeline, Python
codecs), orders, separators, fill values, vlen strings, errors."""

from __future__ import annotations

import json
import pickle

import numcodecs
import numpy as np
import pytest

import zarrc
from zarrc.errors import CodecError, ContainsNodeError, MetadataError
from zarrc.stores import MemoryStore

RNG = np.random.default_rng(5)


def _data(shape, dtype):
    dtype = np.dtype(dtype)
    if dtype.kind == "f":
        return (RNG.standard_normal(shape) * 100).astype(dtype)
    if dtype.kind == "b":
        return RNG.integers(0, 2, shape).astype(dtype)
    return RNG.integers(0, 100, shape).astype(dtype)


COMPRESSORS = [None, "auto", {"id": "blosc", "cname": "lz4", "clevel": 5, "shuffle": 1, "blocksize": 0},
               {"id": "blosc", "cname": "zstd", "clevel": 3, "shuffle": -1, "blocksize": 0},
               {"id": "zlib", "level": 1}, {"id": "gzip", "level": 1}, {"id": "lz4", "acceleration": 1},
               {"id": "bz2", "level": 1}]


@pytest.mark.parametrize("compressor", COMPRESSORS, ids=str)
@pytest.mark.parametrize("order", ["C", "F"])
@pytest.mark.parametrize("sep", [".", "/"])
def test_round_trip_and_keys(compressor, order, sep):
    store = MemoryStore()
    x = _data((11, 7, 5), ">i4")
    a = zarrc.create_array(store, name="a", shape=x.shape, dtype=">i4", chunks=(4, 3, 5),
                           zarr_format=2, order=order, compressors=compressor, dimension_separator=sep)
    a[:] = x
    b = zarrc.open_array(store, path="a", mode="r")
    assert b.zarr_format == 2 and b.order == order and b.dtype == np.dtype(">i4")
    np.testing.assert_array_equal(b[:], x)
    np.testing.assert_array_equal(b[3:10:2, 1, ::3], x[3:10:2, 1, ::3])
    assert store.get(f"a/2{sep}2{sep}0") is not None
    doc = json.loads(store.get("a/.zarray"))
    assert doc["order"] == order and doc["dimension_separator"] == sep
    assert json.loads(store.get(".zgroup")) == {"zarr_format": 2}


def test_f_order_chunk_bytes_are_fortran():
    store = MemoryStore()
    x = np.arange(12, dtype="<u2").reshape(3, 4)
    a = zarrc.create_array(store, shape=(3, 4), chunks=(3, 4), dtype="<u2", zarr_format=2,
                           order="F", compressors=None)
    a[:] = x
    assert store.get("0.0") == x.tobytes(order="F")


@pytest.mark.parametrize("filters,dtype", [
    ([numcodecs.Delta(dtype="<i4")], "<i4"),
    ([numcodecs.FixedScaleOffset(offset=10, scale=100, dtype="<f8", astype="<i4")], "<f8"),
    ([numcodecs.Quantize(digits=3, dtype="<f4")], "<f4"),
    ([numcodecs.Shuffle(elementsize=8)], "<f8"),
    ([numcodecs.PackBits()], "|b1"),
    ([numcodecs.AsType(encode_dtype="<i2", decode_dtype="<i8")], "<i8"),
])
@pytest.mark.parametrize("order", ["C", "F"])
def test_filters_run_through_numcodecs(filters, dtype, order):
    store = MemoryStore()
    x = _data((20, 9), dtype)
    a = zarrc.create_array(store, shape=x.shape, dtype=dtype, chunks=(6, 4), zarr_format=2,
                           order=order, filters=filters,
                           compressors={"id": "blosc", "cname": "lz4", "clevel": 5, "shuffle": 1,
                                        "blocksize": 0})
    a[:] = x
    expected = x
    for f in filters:     # lossy filters: what numcodecs makes of the data
        decoded = np.asarray(f.decode(f.encode(expected)))
        if decoded.dtype == np.uint8 and np.dtype(dtype) != np.uint8:
            decoded = decoded.view(dtype)
        expected = decoded.reshape(x.shape).astype(dtype)
    np.testing.assert_array_equal(zarrc.open_array(store, mode="r")[:], expected)
    a[3:5, 2] = x[3:5, 2]                     # partial write through the Python path
    np.testing.assert_array_equal(a[3:5, 2], expected[3:5, 2])


def test_missing_chunks_read_fill_and_empty_chunks_are_deleted():
    store = MemoryStore()
    a = zarrc.create_array(store, shape=(10,), chunks=(5,), dtype="<f8", zarr_format=2,
                           fill_value=np.nan)
    assert json.loads(store.get(".zarray"))["fill_value"] == "NaN"
    assert np.isnan(a[:]).all()
    a[:] = 1.0
    assert store.get("1") is not None
    a[5:] = np.nan
    assert store.get("1") is None
    store = MemoryStore()
    zarrc.create_array(store, name="n", shape=(4,), chunks=(2,), dtype="<i2", zarr_format=2,
                       fill_value=None)
    assert json.loads(store.get("n/.zarray"))["fill_value"] is None   # null, as zarr-python
    zarrc.create_array(store, name="d", shape=(4,), chunks=(2,), dtype="<i2", zarr_format=2)
    assert json.loads(store.get("d/.zarray"))["fill_value"] == 0      # left out: the default
    np.testing.assert_array_equal(zarrc.open_array(store, path="n")[:], np.zeros(4, "<i2"))


@pytest.mark.parametrize("dtype", ["|S5", "<U3", ">U2", "|V4", "<M8[ns]", ">m8[s]", "<c16",
                                   [("a", "<i2"), ("b", ">f4", (2,)), ("c", [("d", "|u1")])]],
                         ids=str)
def test_fixed_size_types(dtype):
    store = MemoryStore()
    dt = np.dtype([tuple(f) for f in dtype]) if isinstance(dtype, list) else np.dtype(dtype)
    x = np.frombuffer(RNG.integers(0, 256, 9 * dt.itemsize, dtype=np.uint8).tobytes(), dt)
    if dt.kind == "U":
        x = np.array(["ab", "é", "", "xyz"[: dt.itemsize // 4], "q", "rs"[: dt.itemsize // 4],
                      "t", "", "u"], dt)
    a = zarrc.create_array(store, shape=(9,), chunks=(4,), dtype=dt, zarr_format=2)
    a[:] = x
    got = zarrc.open_array(store, mode="r")[:]
    assert got.dtype == dt and got.tobytes() == x.tobytes()


@pytest.mark.parametrize("dtype,values", [
    (str, ["", "a", "héllo", "x" * 1000, "日本"]),
    (bytes, [b"", b"\x00\xff", b"abc", b"x" * 300, b"z"]),
])
@pytest.mark.parametrize("fmt", [2, 3])
def test_variable_length(dtype, values, fmt):
    store = MemoryStore()
    a = zarrc.create_array(store, shape=(7, 3), chunks=(3, 2), dtype=dtype, zarr_format=fmt)
    x = np.empty((7, 3), object)
    for i in range(7):
        for j in range(3):
            x[i, j] = values[(i + j) % len(values)]
    a[:] = x
    got = zarrc.open_array(store, mode="r")[:]
    assert got.dtype == object and got.tolist() == x.tolist()
    a[2:4, 1] = values[1]
    x[2:4, 1] = values[1]
    assert a[:].tolist() == x.tolist()
    empty = zarrc.create_array({}, shape=(3,), chunks=(2,), dtype=dtype, zarr_format=fmt)
    assert empty[:].tolist() == [values[0]] * 3          # fill value "" / b""


def test_corrupt_chunk_names_key_and_changes_nothing():
    store = MemoryStore()
    a = zarrc.create_array(store, name="x", shape=(8,), chunks=(4,), dtype="<i4", zarr_format=2,
                           filters=[numcodecs.Delta(dtype="<i4")], compressors=numcodecs.LZMA())
    a[:] = np.arange(8)
    store.set("x/1", b"garbage")
    with pytest.raises(CodecError, match="x/1"):
        a[:]
    with pytest.raises(CodecError, match="x/1"):
        a[2:6] = 0
    np.testing.assert_array_equal(a[:4], np.arange(4))     # chunk 0 not rewritten
    b = zarrc.create_array(store, name="y", shape=(8,), chunks=(4,), dtype="<i4", zarr_format=2,
                           compressors={"id": "blosc", "cname": "lz4", "clevel": 5, "shuffle": 1})
    b[:] = 1
    store.set("y/0", store.get("y/0")[:-3])
    with pytest.raises(CodecError, match="y/0"):
        b[:]


def test_v2_groups_attributes_and_detection(tmp_path):
    g = zarrc.group(str(tmp_path), zarr_format=2, attributes={"title": "t"})
    assert (tmp_path / ".zgroup").exists() and json.loads((tmp_path / ".zattrs").read_text()) == {"title": "t"}
    sub = g.create_group("sub")
    arr = sub.create_array("arr", shape=(4,), dtype="<i8", chunks=(2,))
    assert arr.zarr_format == 2 and (tmp_path / "sub" / "arr" / ".zarray").exists()
    arr.attrs["units"] = "m"
    assert json.loads((tmp_path / "sub" / "arr" / ".zattrs").read_text()) == {"units": "m"}
    deep = zarrc.create_array(str(tmp_path), name="a/b/c", shape=(2,), dtype="u1", zarr_format=2)
    assert (tmp_path / "a" / ".zgroup").exists() and (tmp_path / "a" / "b" / ".zgroup").exists()
    assert deep.path == "a/b/c"
    root = zarrc.open_group(str(tmp_path), mode="r")
    assert root.zarr_format == 2 and sorted(root.keys()) == ["a", "sub"]
    assert root["sub/arr"].attrs["units"] == "m" and "sub/arr" in root
    assert isinstance(zarrc.open(str(tmp_path), path="sub\\arr"), zarrc.Array)
    with pytest.raises(ContainsNodeError):
        zarrc.create_array(str(tmp_path), name="sub/arr", shape=(1,), dtype="u1", zarr_format=2)
    with pytest.raises(ContainsNodeError):
        zarrc.create_array(str(tmp_path), name="sub/arr/x", shape=(1,), dtype="u1", zarr_format=2)
    a2 = pickle.loads(pickle.dumps(arr))
    assert a2.zarr_format == 2 and a2.metadata == arr.metadata


def test_both_zarray_and_zgroup_is_an_error():
    store = MemoryStore()
    zarrc.create_array(store, shape=(2,), dtype="u1", zarr_format=2)
    store.set(".zgroup", b'{"zarr_format": 2}')
    with pytest.raises(MetadataError, match="both"):
        zarrc.open(store)


@pytest.mark.parametrize("kwargs", [
    dict(shards=(4,)), dict(dimension_names=[None]), dict(dimension_names=["x", "y"]), dict(serializer={"name": "bytes"}),
    dict(compressors=[{"id": "zlib", "level": 1}, {"id": "gzip", "level": 1}]),
    dict(compressors={"id": "no-such-codec"}), dict(filters=[{"id": "no-such-filter"}]),
    dict(chunk_key_encoding={"name": "default"}), dict(order="K"),
    dict(compressors={"id": "blosc", "cname": "lz4", "clevel": 42}),
])
def test_bad_v2_arguments_write_nothing(kwargs):
    store = MemoryStore()
    with pytest.raises((MetadataError, ValueError)):
        zarrc.create_array(store, shape=(8,), chunks=(4,), dtype="<i4", zarr_format=2, **kwargs)
    assert list(store.list_prefix("")) == []


def test_zarr_format_2_opens_the_zarray_of_a_folder_holding_a_zarr_json_too(tmp_path):
    # zarrs' test stores keep a .zarray beside a zarr.json (issue 41): zarr-python opens
    # the format asked for, and so does zarrc; unasked, zarr.json comes first
    v3 = zarrc.create_array(str(tmp_path), shape=(4,), chunks=(2,), dtype="i4", zarr_format=3)
    v3[:] = [1, 2, 3, 4]
    other = tmp_path / "v2"
    v2 = zarrc.create_array(str(other), shape=(3,), chunks=(3,), dtype="u1", zarr_format=2,
                            compressors=None)
    v2[:] = [7, 8, 9]
    for name in (".zarray", ".zattrs", "0"):
        (tmp_path / name).write_bytes((other / name).read_bytes())
    for mode in ("r", "r+"):
        a = zarrc.open_array(str(tmp_path), mode=mode, zarr_format=2)
        assert a.metadata.zarr_format == 2 and a[...].tolist() == [7, 8, 9]
        assert zarrc.open(str(tmp_path), mode=mode, zarr_format=2)[...].tolist() == [7, 8, 9]
    assert zarrc.open_array(str(tmp_path), mode="r")[...].tolist() == [1, 2, 3, 4]
    assert zarrc.open_array(str(tmp_path), mode="r", zarr_format=3)[...].tolist() == [1, 2, 3, 4]
    with pytest.raises(ContainsNodeError):
        zarrc.open_array(str(tmp_path), mode="a", zarr_format=2)
