"""The v3 data types zarr-python 3 writes beyond the core ones: numpy.datetime64,
numpy.timedelta64, fixed_length_utf32, null_terminated_bytes, raw_bytes and struct
(zarr-python 3.1's "structured"), and zarr-python's fill value casts.

Metadata (names, configurations, fill value forms, errors) is checked on its own;
the data both ways against zarr-python, bit for bit with dtype, on v3 unsharded,
sharded and nested-sharded arrays in local, memory and zip stores, with default and
other fill values and with a big-endian ``bytes`` codec."""

from __future__ import annotations

import json
import os
import shutil
import warnings

import numpy as np
import pytest
from helpers import NO_ZARR_PYTHON
from interop.support import assert_bit_equal

import zarrc
from zarrc.errors import MetadataError
from zarrc.metadata import ArrayMetadataV3
from zarrc.metadata.dtypes import as_data_type, byte_swap_unit, parse_data_type
from zarrc.metadata.fill_value import cast_fill_value, encode_fill_value, parse_fill_value
from zarrc.stores import MemoryStore, ZipStore

STRUCT = [("a", "<i4"), ("b", "<f8"), ("c", "<U2"), ("d", "u1")]
UNIFORM = [("x", "<i4"), ("y", "<f4")]           # one 4-byte swap unit: big endian works

# numpy dtype -> the data_type zarr-python 3.4 writes
WRITTEN = {
    "M8[ns]": {"name": "numpy.datetime64", "configuration": {"unit": "ns", "scale_factor": 1}},
    "m8[10ms]": {"name": "numpy.timedelta64", "configuration": {"unit": "ms", "scale_factor": 10}},
    "U5": {"name": "fixed_length_utf32", "configuration": {"length_bytes": 20}},
    "S4": {"name": "null_terminated_bytes", "configuration": {"length_bytes": 4}},
    "V3": {"name": "raw_bytes", "configuration": {"length_bytes": 3}},
}


# ---------------------------------------------------------------------------
# data types and their metadata

@pytest.mark.parametrize("dtype", list(WRITTEN))
def test_data_type_names(dtype):
    data_type = as_data_type(dtype)
    assert data_type.to_json() == WRITTEN[dtype]
    assert data_type.dtype == np.dtype(dtype)
    assert parse_data_type(WRITTEN[dtype]) == data_type


def test_struct_names():
    data_type = as_data_type(np.dtype(STRUCT))
    assert data_type.to_json() == {"name": "struct", "configuration": {"fields": [
        {"name": "a", "data_type": "int32"}, {"name": "b", "data_type": "float64"},
        {"name": "c", "data_type": WRITTEN["U5"] | {"configuration": {"length_bytes": 8}}},
        {"name": "d", "data_type": "uint8"}]}}
    assert data_type.dtype == np.dtype(STRUCT)
    legacy = {"name": "structured", "configuration": {"fields": [["a", "int32"], ["b", "float64"]]}}
    parsed = parse_data_type(legacy)
    assert parsed.name == "structured" and parsed.to_json() == legacy
    assert parsed.dtype == np.dtype([("a", "<i4"), ("b", "<f8")])
    # zarr-python 3.4 reads the pairs under "struct" too
    assert parse_data_type({"name": "struct", "configuration": legacy["configuration"]}).dtype == parsed.dtype


def test_byte_order_dropped_and_swap_units():
    assert as_data_type(">M8[s]").dtype == np.dtype("<M8[s]").newbyteorder("=")
    assert as_data_type(">U3").to_json() == as_data_type("<U3").to_json()
    assert byte_swap_unit(np.dtype("M8[ns]")) == 8
    assert byte_swap_unit(np.dtype("U3")) == 4
    assert byte_swap_unit(np.dtype("S3")) == byte_swap_unit(np.dtype("V3")) == 0
    assert byte_swap_unit(np.dtype(UNIFORM)) == 4
    assert byte_swap_unit(np.dtype(STRUCT)) is None
    assert byte_swap_unit(np.dtype([("p", "u1"), ("q", "S2")])) == 0


def test_raw_names():
    # r<bits> is still read and kept; numpy void dtypes are written raw_bytes (as zarr-python)
    assert parse_data_type("r24").to_json() == "r24"
    assert as_data_type("r16").name == "r16"
    assert as_data_type(np.dtype("V2")).name == "raw_bytes"


@pytest.mark.parametrize(("value", "match"), [
    ({"name": "numpy.datetime64", "configuration": {"unit": "days", "scale_factor": 1}}, '"unit" "days"'),
    ({"name": "numpy.datetime64", "configuration": {"unit": "s", "scale_factor": 0}}, '"scale_factor" 0'),
    ({"name": "numpy.timedelta64", "configuration": {"unit": "s", "scale_factor": 2**31}}, '"scale_factor"'),
    ({"name": "numpy.timedelta64", "configuration": {"unit": "generic", "scale_factor": 2}}, "generic"),
    ({"name": "numpy.datetime64", "configuration": {"unit": "s"}}, "exactly the members"),
    ({"name": "numpy.datetime64"}, "exactly the members"),
    ({"name": "fixed_length_utf32", "configuration": {"length_bytes": 6}}, '"length_bytes" 6'),
    ({"name": "fixed_length_utf32", "configuration": {"length_bytes": 0}}, '"length_bytes" 0'),
    ({"name": "null_terminated_bytes", "configuration": {"length_bytes": "4"}}, '"length_bytes" "4"'),
    ({"name": "raw_bytes", "configuration": {"length_bytes": -1}}, '"length_bytes" -1'),
    ({"name": "raw_bytes", "configuration": {"length_bytes": 3, "x": 1}}, "exactly the members"),
    ({"name": "struct", "configuration": {"fields": []}}, "at least one field"),
    ({"name": "struct", "configuration": {"fields": [["a", "int8"], ["a", "int8"]]}}, 'field name "a"'),
    ({"name": "struct", "configuration": {"fields": [["s", "string"]]}}, "variable-length"),
    ({"name": "struct", "configuration": {"fields": [{"name": "a"}]}}, "must be"),
    ({"name": "struct", "configuration": {"fields": "a"}}, '"fields" "a"'),
    ({"name": "struct", "configuration": {"fields": [["a", "int7"]]}}, "int7"),
])
def test_bad_data_types(value, match):
    with pytest.raises(MetadataError, match=match):
        parse_data_type(value)


@pytest.mark.parametrize(("dtype", "match"), [("U", "no length"), ("S", "no length"),
                                              (np.dtype([("a", "i4", (2,))]), "subarray")])
def test_bad_numpy_dtypes(dtype, match):
    with pytest.raises(MetadataError, match=match):
        as_data_type(dtype)


# ---------------------------------------------------------------------------
# fill values: JSON forms and casts

NAT = -2**63


@pytest.mark.parametrize(("dtype", "json_value", "value"), [
    ("M8[ns]", NAT, np.datetime64("NaT", "ns")),
    ("M8[ns]", 5, np.datetime64(5, "ns")),
    ("m8[10ms]", 3, np.timedelta64(3, "10ms")),
    ("U5", "ab", np.str_("ab")),
    ("U5", "", np.str_("")),
    ("S4", "eHk=", np.bytes_(b"xy")),
    ("S4", "", np.bytes_(b"")),
    ("V3", "YWJj", np.void(b"abc")),
])
def test_fill_value_forms(dtype, json_value, value):
    data_type = as_data_type(dtype)
    parsed = parse_fill_value(json_value, data_type)
    assert np.asarray(parsed, dtype=data_type.dtype).tobytes() == np.asarray(value, dtype=data_type.dtype).tobytes()
    assert encode_fill_value(parsed, data_type) == json_value


def test_fill_value_struct_forms():
    data_type = as_data_type(np.dtype(STRUCT))
    value = parse_fill_value({"a": 3, "b": "NaN", "c": "q"}, data_type)    # d missing: its default
    assert value.dtype == np.dtype(STRUCT)
    assert (int(value["a"]), str(value["c"]), int(value["d"])) == (3, "q", 0) and np.isnan(value["b"])
    assert encode_fill_value(value, data_type) == {"a": 3, "b": "NaN", "c": "q", "d": 0}
    # base64 of the little-endian item (zarr-python 3.1's "structured" form), read under both names
    item = np.array((3, 1.5, "q", 7), dtype=np.dtype(STRUCT).newbyteorder("<")).tobytes()
    import base64
    b64 = base64.b64encode(item).decode()
    assert parse_fill_value(b64, data_type).tobytes() == np.array((3, 1.5, "q", 7), np.dtype(STRUCT)).tobytes()
    legacy = parse_data_type({"name": "structured", "configuration": {"fields": [
        ["a", "int32"], ["b", "float64"], ["c", WRITTEN["U5"] | {"configuration": {"length_bytes": 8}}],
        ["d", "uint8"]]}})
    assert encode_fill_value(parse_fill_value(b64, legacy), legacy) == b64
    assert encode_fill_value(cast_fill_value((3, 1.5, "q", 7), data_type), data_type) == {
        "a": 3, "b": 1.5, "c": "q", "d": 7}


@pytest.mark.parametrize(("dtype", "value", "match"), [
    ("M8[ns]", 1.5, "int64 count"),
    ("M8[ns]", "NaT", "int64 count"),
    ("M8[ns]", 2**63, "int64 count"),
    ("U2", "abc", "longer than 2 characters"),
    ("U2", 7, "expected a string"),
    ("S2", "eHl6", "longer than 2 bytes"),
    ("S2", "%%", "base64"),
    ("V3", "YWI=", "base64 of 3 bytes"),
    (np.dtype(STRUCT), {"zz": 1}, "no field 'zz'"),
    (np.dtype(STRUCT), 5, "object of field values"),
    ("bool", "true", "true or false"),
    ("int8", "x", "expected an integer"),
    ("int8", 1.5, "expected an integer"),
    ("float32", "nan", "expected a number"),
])
def test_bad_fill_values(dtype, value, match):
    with pytest.raises(MetadataError, match=match):
        parse_fill_value(value, as_data_type(dtype))


@pytest.mark.parametrize(("dtype", "value", "json_value"), [
    # zarr-python's casts when creating an array
    ("bool", 0, False), ("bool", 1, True), ("bool", 2, True), ("bool", 0.0, False), ("bool", np.int8(0), False),
    ("int16", 2.0, 2), ("int16", True, 1), ("int8", "3", 3), ("uint8", np.float32(7), 7),
    ("float32", "1.5", 1.5), ("float32", True, 1.0), ("float32", "NaN", "NaN"),
    ("complex64", 1, [1.0, 0.0]), ("complex64", "1+2j", [1.0, 2.0]),
    ("M8[s]", "2020-01-01", 1577836800), ("M8[s]", np.datetime64("2020-01-01", "D"), 1577836800),
    ("M8[s]", None, NAT), ("M8[s]", "NaT", NAT), ("m8[s]", 7, 7), ("m8[ms]", np.timedelta64(2, "s"), 2000),
    ("U3", 5, "5"), ("U3", "abcdef", "abc"), ("U3", None, ""),
    ("S3", 7, "Nw=="), ("S3", "ab", "YWI="), ("S3", b"abcd", "YWJj"), ("S3", None, ""),
    ("V2", b"ab", "YWI="), ("V2", None, "AAA="),
])
def test_fill_value_casts(dtype, value, json_value):
    data_type = as_data_type(dtype)
    assert encode_fill_value(cast_fill_value(value, data_type), data_type) == json_value


@pytest.mark.parametrize(("dtype", "value"), [
    ("int16", float("nan")), ("uint8", -1), ("uint8", 300), ("int16", "2.0"),
    ("bool", "false"),         # zarr-python makes it True: refused
    ("M8[s]", 1.5), ("M8[s]", "soon"), ("V2", "ab"), ("V2", b"abc"), ("U3", b"ab"),
])
def test_refused_casts(dtype, value):
    with pytest.raises(MetadataError, match='"fill_value"'):
        cast_fill_value(value, as_data_type(dtype))


def test_metadata_round_trip():
    for dtype in [*WRITTEN, np.dtype(STRUCT)]:
        md = ArrayMetadataV3.create((4,), dtype, (2,), fill_value=None)
        doc = md.to_json()
        assert ArrayMetadataV3.from_json(json.dumps(doc)) == md
        assert ArrayMetadataV3.from_json(md.to_bytes()).to_json() == doc
        endian = doc["codecs"][0].get("configuration", {}).get("endian")
        assert endian == (None if np.dtype(dtype).kind in "SV" and not np.dtype(dtype).fields else "little")


@pytest.mark.parametrize("shards", [None, (4,)])
def test_struct_of_mixed_units_in_big_endian(tmp_path, shards):
    """Fields that swap in different unit sizes (the kernels swap one per item) run on
    the Python chunk path: every field stored big-endian, as the spec says."""
    dt = np.dtype(STRUCT)
    data = np.zeros(10, dt)
    data["a"], data["b"], data["c"], data["d"] = np.arange(10) * 100003, np.linspace(0, 1, 10), "é", 7
    a = zarrc.create_array(str(tmp_path / "s"), shape=(10,), chunks=(2,), dtype=STRUCT, shards=shards,
                           serializer={"name": "bytes", "configuration": {"endian": "big"}}, compressors=None)
    a[...] = data
    a[3] = data[8]
    data[3] = data[8]
    assert zarrc.open_array(str(tmp_path / "s"), mode="r")[...].tobytes() == data.tobytes()
    if shards is None:
        with open(tmp_path / "s" / "c" / "1", "rb") as f:
            assert f.read() == data[2:4].astype(dt.newbyteorder(">")).tobytes()


# ---------------------------------------------------------------------------
# data both ways against zarr-python

SHAPE, CHUNKS, SHARDS, INNER = (11, 7), (4, 3), (8, 6), (2, 3)


def sample(dtype, shape=SHAPE, seed=0) -> np.ndarray:
    """Deterministic data of ``dtype`` (NaT, non-ASCII text, interior NUL bytes)."""
    dt = np.dtype(dtype)
    rng = np.random.default_rng(seed)
    n = int(np.prod(shape))
    if dt.fields is not None:
        out = np.zeros(n, dt)
        for name in dt.names:
            out[name] = sample(dt.fields[name][0], (n,), seed + 1).reshape(-1)
        return out.reshape(shape)
    if dt.kind in "mM":
        flat = rng.integers(-2**62, 2**62, n).view(dt)
        flat[::5] = np.array("NaT", dt)
    elif dt.kind == "U":
        alphabet = np.array(list("aé漢😀 z\x00"))
        lengths = rng.integers(0, dt.itemsize // 4 + 1, n)
        flat = np.array(["".join(rng.choice(alphabet, k)).rstrip("\x00") for k in lengths], dt)
    elif dt.kind in "SV":
        flat = np.frombuffer(rng.integers(0, 256, n * dt.itemsize, dtype=np.uint8).tobytes(), dt).copy()
    elif dt.kind == "f":
        flat = rng.standard_normal(n).astype(dt)
    else:
        flat = rng.integers(0, 100, n).astype(dt)
    return flat.reshape(shape)


# (numpy dtype, a fill value other than the default) per type
TYPES = {
    "datetime64": ("M8[ns]", np.datetime64("2001-02-03T04:05:06", "ns")),
    "timedelta64": ("m8[10ms]", np.timedelta64(42, "10ms")),
    "utf32": ("U5", "ab😀"),
    "null_bytes": ("S4", b"x\x00y"),
    "raw_bytes": ("V3", b"a\x00c"),
    "struct": (STRUCT, (5, -1.5, "é", 9)),
}


def _zarr():
    return pytest.importorskip("zarr", reason=NO_ZARR_PYTHON)


def _new_zarr_python(zarr) -> bool:
    """zarr-python >= 3.4 (reads and writes "struct"); 3.1 knows only "structured"."""
    return tuple(int(p) for p in zarr.__version__.split(".")[:2]) >= (3, 4)


def _zarr_kw(zarr, layout, endian="little"):
    from zarr.codecs import BytesCodec, Crc32cCodec, ShardingCodec
    if layout == "v3":
        return {"chunks": CHUNKS, "serializer": BytesCodec(endian=endian)}
    if layout == "sharded":
        return {"chunks": INNER, "shards": SHARDS, "serializer": BytesCodec(endian=endian)}
    inner = ShardingCodec(chunk_shape=INNER, codecs=[BytesCodec(endian=endian)],
                          index_codecs=[BytesCodec(), Crc32cCodec()])
    return {"chunks": SHARDS, "compressors": None,
            "serializer": ShardingCodec(chunk_shape=CHUNKS, codecs=[inner],
                                        index_codecs=[BytesCodec(), Crc32cCodec()])}


def _zarrc_kw(layout, endian="little"):
    serializer = {"name": "bytes", "configuration": {"endian": endian}}
    if layout == "v3":
        return {"chunks": CHUNKS, "serializer": serializer}
    if layout == "sharded":
        return {"chunks": INNER, "shards": SHARDS, "serializer": serializer}

    def sharding(chunk, codecs):
        return {"name": "sharding_indexed", "configuration": {
            "chunk_shape": list(chunk), "codecs": codecs,
            "index_codecs": [{"name": "bytes", "configuration": {"endian": "little"}}, {"name": "crc32c"}],
            "index_location": "end"}}
    return {"chunks": SHARDS, "compressors": None, "serializer": sharding(CHUNKS, [sharding(INNER, [serializer])])}


def _zarrc_store(kind, root):
    if kind == "local":
        return os.path.join(root, "c")
    if kind == "zip":
        return ZipStore(os.path.join(root, "c.zip"), mode="w")
    return MemoryStore()


def _partial(a, data) -> None:
    """Write all but the last row of chunks (it stays the fill value)."""
    a[: SHAPE[0] - 3] = data[: SHAPE[0] - 3]


CASES = [(t, lay, st, f) for t in TYPES for lay in ("v3", "sharded", "nested")
         for st in ("local", "memory", "zip") for f in ("default", "other")
         if st == "local" or lay == "sharded"]


@pytest.mark.parametrize(("type_name", "layout", "store", "fill"), CASES,
                         ids=lambda v: str(v))
def test_against_zarr_python(tmp_path, type_name, layout, store, fill):
    zarr = _zarr()
    dtype, other = TYPES[type_name]
    new = _new_zarr_python(zarr)
    if type_name == "struct" and fill == "default" and not new:
        pytest.skip("zarr-python 3.1's default struct fill value is not zeros (3.4's is)")
    # zarr-python 3.1 cannot shard void items (it hashes the fill value): compared
    # with its unsharded array there
    zarr_layout = "v3" if type_name in ("raw_bytes", "struct") and not new else layout
    fill_value = None if fill == "default" else other
    data = sample(dtype)
    root = str(tmp_path)
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")           # zarr-python: "unstable" data type warnings
        z = zarr.create_array(os.path.join(root, "z"), shape=SHAPE, dtype=dtype, fill_value=fill_value,
                              **_zarr_kw(zarr, zarr_layout))
        _partial(z, data)
        expected = z[...]
    # zarr-python's files read in zarrc
    shutil.copytree(os.path.join(root, "z"), os.path.join(root, "zc"))
    read = zarrc.open_array(os.path.join(root, "zc"), mode="r")
    assert_bit_equal(read[...], expected, f"{type_name} {layout} read")
    assert_bit_equal(read[2:9, 1:6], expected[2:9, 1:6], f"{type_name} {layout} region")
    # zarrc's writes read in zarr-python
    a = zarrc.create_array(_zarrc_store(store, root), shape=SHAPE, dtype=dtype, fill_value=fill_value,
                           **_zarrc_kw(layout))
    _partial(a, data)
    assert_bit_equal(a[...], expected, f"{type_name} {layout} {store} zarrc")
    assert a.dtype == expected.dtype
    assert np.asarray(a.fill_value, dtype=a.dtype).tobytes() == np.asarray(z.fill_value, dtype=z.dtype).tobytes()
    doc = json.loads((tmp_path / "z" / "zarr.json").read_text())
    mine = a.metadata.to_json()
    if type_name != "struct" or new:
        assert mine["data_type"] == doc["data_type"]
        assert mine["fill_value"] == doc["fill_value"]
    if store == "memory" or (type_name == "struct" and not new) or zarr_layout != layout:
        return                 # (zarr-python 3.1 does not read "struct", which zarrc writes as 3.4)
    if store == "zip":
        a.store.close()
        where = zarr.storage.ZipStore(os.path.join(root, "c.zip"), mode="r")
    else:
        where = os.path.join(root, "c")
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        back = zarr.open_array(where, mode="r")
        assert_bit_equal(back[...], expected, f"{type_name} {layout} {store} by zarr-python")


BIG = {"datetime64": "M8[ns]", "timedelta64": "m8[10ms]", "utf32": "U5", "uniform struct": UNIFORM}


@pytest.mark.parametrize("type_name", list(BIG))
@pytest.mark.parametrize("layout", ["v3", "sharded"])
def test_big_endian_against_zarr_python(tmp_path, type_name, layout):
    zarr = _zarr()
    dtype = BIG[type_name]
    if type_name == "uniform struct" and not _new_zarr_python(zarr):
        pytest.skip("zarr-python 3.1 ignores the bytes codec's endian for structs")
    data = sample(dtype)
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        z = zarr.create_array(str(tmp_path / "z"), shape=SHAPE, dtype=dtype, **_zarr_kw(zarr, layout, "big"))
        _partial(z, data)
        expected = z[...]
    assert_bit_equal(zarrc.open_array(str(tmp_path / "z"), mode="r")[...], expected, "big endian read")
    a = zarrc.create_array(str(tmp_path / "c"), shape=SHAPE, dtype=dtype, **_zarrc_kw(layout, "big"))
    _partial(a, data)
    if layout == "v3":     # the same chunks (sharded: zarr-python 3.1 compresses inner chunks differently)
        for key in ("c/c/0/0", "c/c/1/0"):
            assert (tmp_path / key).read_bytes() == (tmp_path / key.replace("c/", "z/", 1)).read_bytes()
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        assert_bit_equal(zarr.open_array(str(tmp_path / "c"), mode="r")[...], expected, "big endian write")


def test_zarr_python_31_structured_read(tmp_path):
    """A "structured" array as zarr-python 3.1 writes it (pairs, base64 fill value, no
    endian) reads, and its metadata is written back unchanged."""
    doc = {"zarr_format": 3, "node_type": "array", "shape": [3], "data_type": {
        "name": "structured", "configuration": {"fields": [["a", "int32"], ["b", "uint8"]]}},
        "chunk_grid": {"name": "regular", "configuration": {"chunk_shape": [2]}},
        "chunk_key_encoding": {"name": "default", "configuration": {"separator": "/"}},
        "fill_value": "BwAAAAk=", "codecs": [{"name": "bytes"}], "attributes": {},
        "storage_transformers": []}
    (tmp_path / "s").mkdir()
    (tmp_path / "s" / "zarr.json").write_text(json.dumps(doc))
    dt = np.dtype([("a", "<i4"), ("b", "u1")])
    (tmp_path / "s" / "c").mkdir()
    (tmp_path / "s" / "c" / "0").write_bytes(np.array([(1, 2), (3, 4)], dt).tobytes())
    a = zarrc.open_array(str(tmp_path / "s"), mode="r")
    assert_bit_equal(a[...], np.array([(1, 2), (3, 4), (7, 9)], dt))
    assert a.metadata.to_json() == doc


CASTS = [("bool", 0), ("bool", 1), ("bool", 2.0), ("int16", 2.0), ("int16", True), ("int8", "3"),
         ("int8", 2.5), ("int16", -2.7), ("float32", "1.5"), ("float32", True), ("complex64", 1),
         ("complex64", "1+2j"), ("U3", 5), ("U3", "abcdef"), ("S3", 7), ("S3", "ab"),
         ("M8[s]", np.datetime64("2020-01-01", "D")), ("M8[s]", "2020-01-01"),
         ("m8[ms]", np.timedelta64(2, "s"))]


@pytest.mark.parametrize(("dtype", "value", "zarr_format"),
                         [(*c, 3) for c in CASTS] + [(*c, 2) for c in CASTS], ids=repr)
def test_fill_value_casts_as_zarr_python(tmp_path, dtype, value, zarr_format):
    """The fill value zarr-python records for a user's value, zarrc records too."""
    zarr = _zarr()
    key = "zarr.json" if zarr_format == 3 else ".zarray"
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        zarr.create_array(str(tmp_path / "z"), shape=(4,), chunks=(2,), dtype=dtype, fill_value=value,
                          zarr_format=zarr_format)
    zarrc.create_array(str(tmp_path / "c"), shape=(4,), chunks=(2,), dtype=dtype, fill_value=value,
                       zarr_format=zarr_format)
    theirs = json.loads((tmp_path / "z" / key).read_text())
    mine = json.loads((tmp_path / "c" / key).read_text())
    assert mine["fill_value"] == theirs["fill_value"]
    assert mine.get("data_type", mine.get("dtype")) == theirs.get("data_type", theirs.get("dtype"))
