"""Zarr v2 metadata: .zarray / .zgroup / .zattrs parsing and writing, v2 dtypes and
fill values (zarrc.metadata.v2, zarrc.metadata.dtypes_v2)."""

from __future__ import annotations

import base64
import copy
import json
import math

import numpy as np
import pytest

from zarrc.errors import MetadataError, ZarrcUserWarning
from zarrc.metadata.dtypes_v2 import (
    dtype_to_json_v2,
    encode_fill_value_v2,
    parse_dtype_v2,
    parse_fill_value_v2,
)
from zarrc.metadata.v2 import ArrayMetadataV2, GroupMetadataV2

BASE = {
    "shape": [10, 6],
    "chunks": [5, 3],
    "dtype": "<i4",
    "fill_value": 0,
    "order": "C",
    "filters": None,
    "dimension_separator": ".",
    "compressor": {"id": "zstd", "level": 0},
    "zarr_format": 2,
}


def zarray(**changes):
    """A valid .zarray dict with members replaced; the value ``...`` deletes one."""
    doc = copy.deepcopy(BASE)
    for key, value in changes.items():
        if value is ...:
            doc.pop(key, None)
        else:
            doc[key] = value
    return doc


def roundtrip(doc):
    return ArrayMetadataV2.from_json(doc).to_json()


# ---------------------------------------------------------------- dtypes

SIMPLE_DTYPES = [
    ("|b1", np.bool_), ("|i1", np.int8), ("<i2", "<i2"), (">i2", ">i2"), ("<i4", "<i4"),
    (">i8", ">i8"), ("|u1", np.uint8), ("<u2", "<u2"), (">u4", ">u4"), ("<u8", "<u8"),
    ("<f2", "<f2"), (">f2", ">f2"), ("<f4", "<f4"), (">f8", ">f8"), ("<c8", "<c8"),
    (">c16", ">c16"), ("<M8[ns]", "<M8[ns]"), (">M8[D]", ">M8[D]"), ("<m8[s]", "<m8[s]"),
    ("<m8[10ms]", "<m8[10ms]"), ("|S1", "S1"), ("|S12", "S12"), ("<U5", "<U5"), (">U5", ">U5"),
    ("|V3", "V3"), ("|O", object),
]


@pytest.mark.parametrize(("text", "expected"), SIMPLE_DTYPES)
def test_simple_dtypes_parse_and_roundtrip(text, expected):
    dtype = parse_dtype_v2(text)
    assert dtype == np.dtype(expected)
    assert dtype.str == np.dtype(expected).str  # byte order kept
    assert dtype_to_json_v2(dtype) == text


def test_big_endian_kept():
    assert parse_dtype_v2(">f8").byteorder == ">"
    assert parse_dtype_v2(">U5").byteorder == ">"
    assert parse_dtype_v2("<U5").itemsize == 20


@pytest.mark.parametrize("text", ["<i1", ">u1", "<b1", ">S3", "<V2"])
def test_single_byte_types_accept_either_order(text):
    assert dtype_to_json_v2(parse_dtype_v2(text)) == "|" + text[1:]


STRUCTURED = [
    [["r", "|u1"], ["g", "|u1"], ["b", "|u1"]],
    [["x", "<f4"], ["y", "<f4"], ["z", "<f4", [2, 2]]],
    [["foo", "<f4"], ["bar", [["baz", "<f4"], ["qux", "<i4"]]]],
    [["a", ">i8"], ["b", [["c", "|S3"], ["d", "<U2", [3]]], [2]], ["e", "<M8[s]"]],
]


@pytest.mark.parametrize("text", STRUCTURED)
def test_structured_dtypes(text):
    dtype = parse_dtype_v2(text)
    assert dtype.names == tuple(field[0] for field in text)
    assert dtype_to_json_v2(dtype) == text
    assert parse_dtype_v2(json.loads(json.dumps(text))) == dtype


def test_structured_subarray_and_nesting_shapes():
    dtype = parse_dtype_v2(STRUCTURED[3])
    assert dtype["b"].shape == (2,)
    assert dtype["b"].base["d"].shape == (3,)
    assert dtype["a"].byteorder == ">"


def test_dtype_from_numpy():
    assert dtype_to_json_v2(np.dtype("float64")) == "<f8"
    assert dtype_to_json_v2(bool) == "|b1"
    assert dtype_to_json_v2(np.dtype([("a", "<i4"), ("b", "u1", (2,))])) == [["a", "<i4"], ["b", "|u1", [2]]]


@pytest.mark.parametrize("dtype", [
    np.dtype({"names": ["a", "b"], "formats": ["u1", "<i4"], "offsets": [0, 4]}),  # padding
    np.dtype({"names": ["a"], "formats": ["u1"], "itemsize": 4}),  # trailing padding
    np.dtype("<f16") if np.dtype("longdouble").itemsize == 16 else np.dtype("S0"),
    np.dtype("S0"),
    np.dtype("M8"),
])
def test_dtype_without_v2_form(dtype):
    with pytest.raises(MetadataError):
        dtype_to_json_v2(dtype)


@pytest.mark.parametrize("bad", [
    "f8", "|i4", "=i4", "<i3", "<i16", "<f16", "<f3", "<c4", "<c32", "|b2", "<M8", "<m8",
    "<M8[xx]", "<i4[s]", "|S0", "|S", "<U", "|V0", "|O8", "<O", "float64", "", " <f8", "<f8 ",
    5, None, {}, True, [], [["a"]], [["a", "<i4", [2], 1]], [[1, "<i4"]], [["", "<i4"]],
    [["a", "<i4"], ["a", "<f8"]], [["a", "|O"]], [["a", "<i4", []]], [["a", "<i4", [0]]],
    [["a", "<i4", 2]], [["a", "<i9"]], ["<i4"],
])
def test_bad_dtypes_raise_naming_value(bad):
    with pytest.raises(MetadataError, match='"dtype"'):
        parse_dtype_v2(bad)


def test_bad_dtype_message_names_value():
    with pytest.raises(MetadataError, match=r'"dtype" "<i3"'):
        parse_dtype_v2("<i3")


# ---------------------------------------------------------------- fill values

FILLS = [
    ("|b1", True, np.True_), ("|b1", False, np.False_),
    ("<i4", 42, 42), (">i2", -32768, -32768), ("<u8", 2**64 - 1, 2**64 - 1), ("|i1", -1, -1),
    ("<f8", 1.5, 1.5), (">f4", 0.5, 0.5), (">f4", 0.10000000149011612, np.float32(0.1)),
    ("<f2", 65504.0, 65504.0), ("<f8", -0.0, -0.0),
    ("<f8", 3, 3.0), ("<f8", "Infinity", math.inf), ("<f4", "-Infinity", -math.inf),
    ("<M8[ns]", -(2**63), np.datetime64("NaT", "ns")), ("<M8[s]", 5, np.datetime64(5, "s")),
    (">m8[ms]", 7, np.timedelta64(7, "ms")),
    ("<U3", "ab", "ab"), (">U3", "", ""), ("|S3", "YWI=", b"ab"), ("|S3", "", b""), ("|S3", "YWJj", b"abc"),
]


@pytest.mark.parametrize(("dtype", "json_value", "expected"), FILLS)
def test_fill_values(dtype, json_value, expected):
    dt = parse_dtype_v2(dtype)
    value = parse_fill_value_v2(json_value, dt)
    assert isinstance(value, np.generic)
    if dt.kind in "mM":
        assert value.dtype == dt.newbyteorder("=")
        assert str(value) == str(expected)
    else:
        assert value == expected
    if dt.kind == "f":
        assert math.copysign(1, value) == math.copysign(1, expected)
    out = encode_fill_value_v2(value, dt)
    assert out == (float(json_value) if dt.kind == "f" and isinstance(json_value, int) else json_value)


def test_nan_fill():
    for dtype in ("<f2", "<f4", ">f8"):
        value = parse_fill_value_v2("NaN", parse_dtype_v2(dtype))
        assert np.isnan(value)
        assert encode_fill_value_v2(value, parse_dtype_v2(dtype)) == "NaN"


def test_complex_fill():
    dt = parse_dtype_v2("<c8")
    value = parse_fill_value_v2([1.0, "NaN"], dt)
    assert value.real == 1.0 and np.isnan(value.imag)
    assert encode_fill_value_v2(value, dt) == [1.0, "NaN"]
    assert encode_fill_value_v2(parse_fill_value_v2([0, "-Infinity"], parse_dtype_v2(">c16")),
                                parse_dtype_v2(">c16")) == [0.0, "-Infinity"]


def test_void_and_structured_fill_base64():
    dt = parse_dtype_v2("|V3")
    assert parse_fill_value_v2("YWJj", dt).tobytes() == b"abc"
    assert encode_fill_value_v2(parse_fill_value_v2("AAAA", dt), dt) == "AAAA"
    st = parse_dtype_v2([["a", "<i4"], ["b", "|u1"]])
    value = parse_fill_value_v2("AQAAAAI=", st)
    assert value["a"] == 1 and value["b"] == 2
    assert encode_fill_value_v2(value, st) == "AQAAAAI="
    big = parse_dtype_v2([["a", ">i4"]])
    assert parse_fill_value_v2(base64.b64encode(b"\0\0\0\1").decode(), big)["a"] == 1


def test_object_fill_values():
    dt = parse_dtype_v2("|O")
    utf8 = ({"id": "vlen-utf8"},)
    vbytes = ({"id": "vlen-bytes"},)
    assert parse_fill_value_v2("x", dt, utf8) == "x"
    assert encode_fill_value_v2("x", dt, utf8) == "x"
    assert parse_fill_value_v2("YWI=", dt, vbytes) == b"ab"
    assert encode_fill_value_v2(b"ab", dt, vbytes) == "YWI="
    assert parse_fill_value_v2(None, dt, utf8) is None
    # zarr-python 3 writes 0 for strings (zarrs' str_v2_fv_0.zarr, zarrita.js) and reads "0"
    assert parse_fill_value_v2(0, dt, utf8) == "0"
    for bad in (True, [0], 1.5):
        with pytest.raises(MetadataError, match='"fill_value"'):
            parse_fill_value_v2(bad, dt, utf8)
    with pytest.raises(MetadataError, match='"fill_value" "!!"'):
        parse_fill_value_v2("!!", dt, vbytes)


def test_string_fill_value_zero_as_zarr_python_2_reads_it():
    # zarr-python 2's fixtures 14 and 15 hold fill_value 0 for |S1 and <U4, which it
    # read leniently (numpy's cast): b"0" and "0"; other numbers stay refused
    # (test_bad_fill_values_raise_naming_value)
    assert parse_fill_value_v2(0, parse_dtype_v2("|S1")) == b"0"
    assert parse_fill_value_v2(0, parse_dtype_v2("<U4")) == "0"
    with pytest.raises(MetadataError):
        parse_fill_value_v2(True, parse_dtype_v2("<U4"))
    with pytest.raises(MetadataError):
        parse_fill_value_v2(1000, parse_dtype_v2("|S1"))


def test_null_fill_is_undefined():
    for dtype in ("<i4", "<f8", "|S3", [["a", "<i4"]], "<M8[ns]"):
        assert parse_fill_value_v2(None, parse_dtype_v2(dtype)) is None
        assert encode_fill_value_v2(None, parse_dtype_v2(dtype)) is None


@pytest.mark.parametrize(("dtype", "bad"), [
    ("|b1", [0]), ("|b1", "true"), ("<i4", 1.5), ("<i4", "1.5"), ("<i4", True), ("|u1", 256), ("|u1", -1),
    ("<i8", 2**63), ("<f8", "nan"), ("<f8", "inf"), ("<f8", True), ("<f8", [1.0]), ("<c8", 1.0),
    ("<c8", [1.0]), ("<c8", ["x", 0]), ("<M8[ns]", 1.5), ("<M8[ns]", "NaT"), ("<M8[ns]", 2**63),
    ("<U2", "abc"), ("<U2", 5), ("|S2", "YWJj"), ("|S2", "not base64!"), ("|S2", 5),
    ("|V3", "YWI="), ("|V3", [1, 2, 3]), ([["a", "<i4"]], "YWI="), ([["a", "<i4"]], 0),
])
def test_bad_fill_values_raise_naming_value(dtype, bad):
    with pytest.raises(MetadataError, match=r'"fill_value" ' + json.dumps(bad).replace("[", r"\[")[:6]):
        parse_fill_value_v2(bad, parse_dtype_v2(dtype))


# ---------------------------------------------------------------- .zarray


def test_parse_minimal_document():
    meta = ArrayMetadataV2.from_json(zarray())
    assert meta.shape == (10, 6) and meta.chunks == (5, 3) and meta.ndim == 2
    assert meta.dtype == np.dtype("<i4")
    assert meta.compressor == {"id": "zstd", "level": 0}
    assert meta.fill_value == 0 and isinstance(meta.fill_value, np.int32)
    assert meta.order == "C" and meta.filters is None and meta.dimension_separator == "."
    assert meta.zarr_format == 2
    assert meta.attributes == {}
    assert meta.to_json() == BASE
    assert list(meta.to_json()) == list(BASE)  # zarr-python's key order


def test_parse_from_bytes_and_str():
    text = json.dumps(BASE)
    assert ArrayMetadataV2.from_json(text) == ArrayMetadataV2.from_json(text.encode())
    meta = ArrayMetadataV2.from_json(text.encode(), b'{"a": [1, 2]}')
    assert meta.attributes == {"a": [1, 2]}            # the parsed JSON values, as zarr-python
    assert meta.attributes_to_json() == {"a": [1, 2]}
    assert json.loads(meta.attributes_to_bytes()) == {"a": [1, 2]}


def test_to_bytes_is_indented_json():
    meta = ArrayMetadataV2.from_json(zarray())
    data = meta.to_bytes()
    assert json.loads(data) == BASE
    assert data.startswith(b'{\n  "shape": [\n    10,')


def test_dimension_separator_optional_defaults_to_dot():
    meta = ArrayMetadataV2.from_json(zarray(dimension_separator=...))
    assert meta.dimension_separator == "."
    assert meta.to_json()["dimension_separator"] == "."
    assert ArrayMetadataV2.from_json(zarray(dimension_separator="/")).dimension_separator == "/"


def test_full_document_roundtrips():
    doc = zarray(dtype=">f8", fill_value="NaN", order="F", dimension_separator="/",
                 compressor={"id": "blosc", "cname": "lz4", "clevel": 5, "shuffle": 1, "blocksize": 0},
                 filters=[{"id": "delta", "dtype": ">f8", "astype": "<f4"}])
    assert roundtrip(doc) == doc
    meta = ArrayMetadataV2.from_json(doc)
    assert meta.filters == ({"id": "delta", "dtype": ">f8", "astype": "<f4"},)
    assert np.isnan(meta.fill_value)


def test_zero_d_and_empty_arrays():
    assert roundtrip(zarray(shape=[], chunks=[])) == zarray(shape=[], chunks=[])
    assert ArrayMetadataV2.from_json(zarray(shape=[0, 6])).shape == (0, 6)


def test_object_array_needs_object_codec():
    doc = zarray(dtype="|O", fill_value="", filters=[{"id": "vlen-utf8"}])
    meta = ArrayMetadataV2.from_json(doc)
    assert meta.fill_value == "" and meta.dtype == np.dtype(object)
    assert meta.to_json() == doc
    with pytest.raises(MetadataError, match='"filters".*object codec'):
        ArrayMetadataV2.from_json(zarray(dtype="|O", fill_value=None))
    with pytest.raises(MetadataError, match='"filters"'):
        ArrayMetadataV2.from_json(zarray(dtype="|O", fill_value=None, filters=[{"id": "zlib"}]))
    vb = zarray(dtype="|O", fill_value="YWI=", filters=[{"id": "vlen-bytes"}])
    assert ArrayMetadataV2.from_json(vb).fill_value == b"ab"
    assert roundtrip(vb) == vb


@pytest.mark.parametrize("key", ["zarr_format", "shape", "chunks", "dtype", "compressor", "fill_value",
                                 "order", "filters"])
def test_required_keys(key):
    with pytest.raises(MetadataError, match=f'"{key}" is missing'):
        ArrayMetadataV2.from_json(zarray(**{key: ...}))


@pytest.mark.parametrize("key", ["attributes", "node_type", "foo", "dimension_names", "_NCZARR_ARRAY"])
def test_unknown_keys_are_ignored_with_a_warning_naming_key(key):
    # as zarr-python and GDAL: older NCZarr writes "_NCZARR_ARRAY" into .zarray
    with pytest.warns(ZarrcUserWarning, match=f'.zarray of /: ignoring unknown key.*"{key}"'):
        md = ArrayMetadataV2.from_json(zarray(**{key: 1}))
    assert md == ArrayMetadataV2.from_json(zarray())
    assert key not in md.to_json()


@pytest.mark.parametrize(("key", "value"), [
    ("zarr_format", 3), ("zarr_format", "2"), ("zarr_format", True), ("zarr_format", 2.0),
    ("shape", [10]), ("shape", [-1, 6]), ("shape", "10"), ("shape", [10.0, 6]), ("shape", None),
    ("chunks", [5]), ("chunks", [0, 3]), ("chunks", [5, -3]), ("chunks", None), ("chunks", [5, True]),
    ("dtype", "<i3"), ("dtype", "int32"), ("dtype", None),
    ("compressor", "zlib"), ("compressor", {"level": 1}), ("compressor", {"id": 5}), ("compressor", []),
    ("filters", {"id": "delta"}), ("filters", [{"dtype": "<i4"}]), ("filters", ["delta"]), ("filters", "x"),
    ("fill_value", 1.5), ("fill_value", "NaN"), ("fill_value", [0]),
    ("order", "K"), ("order", "c"), ("order", None),
    ("dimension_separator", "_"), ("dimension_separator", None), ("dimension_separator", ""),
])
def test_bad_values_raise_naming_key_and_value(key, value):
    with pytest.raises(MetadataError) as info:
        ArrayMetadataV2.from_json(zarray(**{key: value}), path="group/temp")
    message = str(info.value)
    assert message.startswith(".zarray of /group/temp: ")
    assert f'"{key}"' in message or f"{key} {json.dumps(value)}" in message
    if key != "shape" or value is not None:
        shown = json.dumps(value)
        assert shown[:3] in message


def test_shape_chunks_rank_mismatch_message():
    with pytest.raises(MetadataError, match=r'"chunks" \[5\] has 1 dimensions but shape \[10, 6\] has 2'):
        ArrayMetadataV2.from_json(zarray(chunks=[5]))


@pytest.mark.parametrize("doc", [b"not json", b"[1, 2]", "", b"\xff", b"null"])
def test_invalid_json(doc):
    with pytest.raises(MetadataError, match=r"^\.zarray of /: "):
        ArrayMetadataV2.from_json(doc)


@pytest.mark.parametrize("zattrs", [b"[1]", b"nope", "3"])
def test_invalid_zattrs(zattrs):
    with pytest.raises(MetadataError, match=r"^\.zattrs of /a: "):
        ArrayMetadataV2.from_json(zarray(), zattrs, path="a")


def test_deep_nesting_refused():
    deep = []
    for _ in range(1000):
        deep = [deep]
    with pytest.raises(MetadataError, match="nested too deeply"):
        ArrayMetadataV2.from_json(zarray(dtype=deep))
    text = '{"a": ' + "[" * 100000 + "]" * 100000 + "}"
    with pytest.raises(MetadataError):
        ArrayMetadataV2.from_json(zarray(), text)


def test_direct_construction_validates_and_normalises():
    meta = ArrayMetadataV2(shape=[4], chunks=[2], dtype="<f4", fill_value="NaN",
                           compressor={"id": "zlib", "level": 1}, filters=[{"id": "delta", "dtype": "<f4"}])
    assert meta.shape == (4,) and meta.dtype == np.dtype("<f4") and np.isnan(meta.fill_value)
    assert meta.filters == ({"id": "delta", "dtype": "<f4"},)
    direct = ArrayMetadataV2(shape=(4,), chunks=(2,), dtype=np.dtype(">i2"), fill_value=np.int16(3))
    assert direct.to_json() == {
        "shape": [4], "chunks": [2], "dtype": ">i2", "fill_value": 3, "order": "C", "filters": None,
        "dimension_separator": ".", "compressor": None, "zarr_format": 2}
    with pytest.raises(MetadataError, match='"fill_value"'):
        ArrayMetadataV2(shape=(4,), chunks=(2,), dtype="<i4", fill_value=np.float64(1.5))
    with pytest.raises(MetadataError, match='"dtype"'):
        ArrayMetadataV2(shape=(4,), chunks=(2,), dtype="nonsense-dtype")


def test_frozen_hashable_and_equality():
    a = ArrayMetadataV2.from_json(zarray(fill_value=None), {"x": {"y": [1]}})
    b = ArrayMetadataV2.from_json(zarray(fill_value=None), {"x": {"y": [1]}})
    assert a == b and hash(a) == hash(b)
    assert a != ArrayMetadataV2.from_json(zarray(fill_value=None))
    nan1 = ArrayMetadataV2.from_json(zarray(dtype="<f8", fill_value="NaN"))
    assert nan1 == ArrayMetadataV2.from_json(zarray(dtype="<f8", fill_value="NaN"))
    with pytest.raises(AttributeError):
        a.shape = (1, 1)
    with pytest.raises(TypeError):
        a.attributes["x"] = 1
    with pytest.raises(TypeError):
        a.compressor["id"] = "zlib"


# ---------------------------------------------------------------- .zgroup


def test_group():
    group = GroupMetadataV2.from_json(b'{"zarr_format": 2}', b'{"title": "t"}')
    assert group.attributes == {"title": "t"}
    assert group.to_json() == {"zarr_format": 2}
    assert json.loads(group.to_bytes()) == {"zarr_format": 2}
    assert group.attributes_to_json() == {"title": "t"}
    assert group == GroupMetadataV2({"title": "t"}) and hash(group) == hash(GroupMetadataV2({"title": "t"}))
    assert GroupMetadataV2.from_json({"zarr_format": 2}).attributes == {}


@pytest.mark.parametrize(("doc", "match"), [
    ({}, '"zarr_format" is missing'),
    ({"zarr_format": 3}, '"zarr_format" 3 must be 2'),
    (b"[]", "JSON object"),
])
def test_bad_groups(doc, match):
    with pytest.raises(MetadataError, match=match) as info:
        GroupMetadataV2.from_json(doc, path="g")
    assert str(info.value).startswith(".zgroup of /g: ")


@pytest.mark.parametrize("key", ["node_type", "attributes", "_NCZARR_SUPERBLOCK"])
def test_unknown_group_keys_are_ignored_with_a_warning(key):
    with pytest.warns(ZarrcUserWarning, match=f'.zgroup of /g: ignoring unknown key.*"{key}"'):
        group = GroupMetadataV2.from_json({"zarr_format": 2, key: {}}, path="g")
    assert group.to_json() == {"zarr_format": 2} and group.attributes == {}


def test_group_attributes_must_be_object():
    with pytest.raises(MetadataError, match='"attributes"'):
        GroupMetadataV2(attributes=[1])


def test_direct_construction_casts_python_and_numpy_fill_values():
    def make(dtype, fill, filters=None):
        return ArrayMetadataV2(shape=(4,), chunks=(2,), dtype=dtype, fill_value=fill, filters=filters)

    meta = make("<f4", np.float64(0.1))
    assert meta.fill_value == np.float32(0.1) and meta.fill_value.dtype == np.float32
    assert make("<f4", np.float64(0.1)) == make("<f4", 0.10000000149011612)
    assert make("|S3", b"ab").to_json()["fill_value"] == "YWI="
    assert make("|S3", np.bytes_(b"ab")).fill_value == b"ab"
    assert make("<U3", np.str_("ab")).to_json()["fill_value"] == "ab"
    assert make("|V2", b"ab").to_json()["fill_value"] == "YWI="
    assert make([["a", "<i2"]], b"\x01\x00").fill_value["a"] == 1
    assert make("<M8[s]", np.datetime64(3, "s")).to_json()["fill_value"] == 3
    assert make("|O", b"ab", [{"id": "vlen-bytes"}]).to_json()["fill_value"] == "YWI="
    assert make("|O", "ab", [{"id": "vlen-utf8"}]).fill_value == "ab"
    # zarr-python's casts of strings: cut to the length, a str for S
    assert make("|S2", b"abc").fill_value == b"ab" and make("<U1", np.str_("ab")).fill_value == "a"
    assert make("|S3", np.str_("ab")).fill_value == b"ab"
    for dtype, bad in [("|V2", b"a"), ("<i4", np.float64(1.5)), ("<i2", np.int64(2**40)),
                       ("<M8[s]", "not a date")]:
        with pytest.raises(MetadataError, match='"fill_value"'):
            make(dtype, bad)


hypothesis = pytest.importorskip("hypothesis")
from hypothesis import given, settings  # noqa: E402
from hypothesis import strategies as st  # noqa: E402
from hypothesis.extra import numpy as hnp  # noqa: E402

NUMERIC = st.sampled_from(["|b1", "|i1", "<i2", ">i4", "<i8", "|u1", ">u2", "<u4", ">u8",
                           "<f2", ">f4", "<f8", "<c8", ">c16", "<M8[ns]", ">m8[D]", "|S4", "<U3"])


@settings(max_examples=300, deadline=None)
@given(st.data())
def test_fill_value_json_roundtrip_property(data):
    text = data.draw(NUMERIC)
    dtype = parse_dtype_v2(text)
    value = data.draw(hnp.from_dtype(dtype.newbyteorder("=")))
    encoded = encode_fill_value_v2(value, dtype)
    json.dumps(encoded, allow_nan=False)  # plain JSON, no bare NaN / Infinity
    parsed = parse_fill_value_v2(json.loads(json.dumps(encoded)), dtype)
    assert encode_fill_value_v2(parsed, dtype) == encoded
    assert np.asarray(parsed, dtype=dtype).tobytes() == np.asarray(value, dtype=dtype).tobytes() or (
        dtype.kind in "fc" and np.isnan(value).any())
