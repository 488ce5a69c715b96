"""The variable-length data types ``string`` and variable-length bytes: names, user
dtypes, fill value forms, codec compatibility, and the zarr.json documents
zarr-python 3.0, 3.1 and 3.4 write (and read)."""

from __future__ import annotations

import json

import numpy as np
import pytest

from helpers import NO_ZARR_PYTHON

from zarrc.errors import MetadataError
from zarrc.metadata import (
    ArrayMetadataV3,
    as_data_type,
    cast_fill_value,
    default_fill_value,
    encode_fill_value,
    parse_data_type,
    parse_fill_value,
)
from zarrc.metadata.codecs import default_serializer, parse_codecs
from zarrc.metadata.dtypes import STRING, VARIABLE_LENGTH_BYTES
from zarrc.metadata.v3 import complete_codecs

VLEN_UTF8 = {"name": "vlen-utf8", "configuration": {}}
VLEN_BYTES = {"name": "vlen-bytes", "configuration": {}}
ZSTD = {"name": "zstd", "configuration": {"level": 0, "checksum": False}}


def header(data_type, fill_value, codecs, shape=(4,), chunks=(2,)):
    """A zarr.json in the form (and key order) zarr-python 3.1 / 3.4 write."""
    return {
        "shape": list(shape),
        "data_type": data_type,
        "chunk_grid": {"name": "regular", "configuration": {"chunk_shape": list(chunks)}},
        "chunk_key_encoding": {"name": "default", "configuration": {"separator": "/"}},
        "fill_value": fill_value,
        "codecs": codecs,
        "attributes": {},
        "zarr_format": 3,
        "node_type": "array",
        "storage_transformers": [],
    }


def canonical(doc):
    return json.dumps(doc, sort_keys=True)


def round_trip(doc):
    meta = ArrayMetadataV3.from_json(json.dumps(doc).encode(), "a")
    assert ArrayMetadataV3.from_json(meta.to_bytes()) == meta
    return meta


# ------------------------------------------------------------------ names


@pytest.mark.parametrize(
    ("value", "expected"),
    [
        ("string", STRING),
        ({"name": "string"}, STRING),
        ({"name": "string", "configuration": {}}, STRING),
        ("variable_length_bytes", VARIABLE_LENGTH_BYTES),
        ("bytes", VARIABLE_LENGTH_BYTES),  # the zarr-extensions name, zarr-python 3.0
        ({"name": "bytes", "configuration": {}}, VARIABLE_LENGTH_BYTES),
    ],
)
def test_parse_names(value, expected):
    data_type = parse_data_type(value)
    assert data_type is expected
    assert data_type.dtype == np.dtype(object)
    assert not data_type.has_endianness and data_type.variable_length


def test_names_written():
    assert (STRING.to_json(), STRING.kind, str(STRING)) == ("string", "string", "string")
    assert (VARIABLE_LENGTH_BYTES.to_json(), VARIABLE_LENGTH_BYTES.kind) == ("variable_length_bytes", "bytes")
    assert not parse_data_type("int32").variable_length


@pytest.mark.parametrize(
    ("value", "match"),
    [
        ({"name": "string", "configuration": {"length": 3}}, "takes no configuration"),
        ({"name": "bytes", "configuration": {"x": None}}, "takes no configuration"),
        ("String", "not a supported"),
        ("variable_length_utf8", "not a supported"),  # never written by zarr-python
        ("str", "not a supported"),  # a user alias, not a data_type name
        ("vlen-utf8", "not a supported"),
    ],
)
def test_bad_names(value, match):
    with pytest.raises(MetadataError, match=match) as info:
        parse_data_type(value)
    assert str(info.value).startswith('"data_type"')


STRING_DTYPES = [str, "str", "string", {"name": "string"}, STRING]
BYTES_DTYPES = [bytes, "bytes", "variable_length_bytes", VARIABLE_LENGTH_BYTES]
if hasattr(np, "dtypes") and hasattr(np.dtypes, "StringDType"):
    STRING_DTYPES += [np.dtypes.StringDType(), np.dtypes.StringDType]


@pytest.mark.parametrize("dtype", STRING_DTYPES, ids=repr)
def test_user_dtypes_for_string(dtype):
    assert as_data_type(dtype) is STRING


@pytest.mark.parametrize("dtype", BYTES_DTYPES, ids=repr)
def test_user_dtypes_for_bytes(dtype):
    assert as_data_type(dtype) is VARIABLE_LENGTH_BYTES


def test_zarr_python_dtype_objects():
    dtype_module = pytest.importorskip("zarr.core.dtype", reason=NO_ZARR_PYTHON)
    assert as_data_type(dtype_module.VariableLengthUTF8()) is STRING
    assert as_data_type(dtype_module.VariableLengthBytes()) is VARIABLE_LENGTH_BYTES
    assert as_data_type(dtype_module.Int32()).name == "int32"
    assert as_data_type(dtype_module.FixedLengthUTF32(length=3)).dtype == np.dtype("U3")


@pytest.mark.parametrize(
    ("dtype", "match"),
    [
        (object, "ambiguous"),  # as zarr-python 3.1 / 3.4, which refuse dtype=object too
        ("O", "ambiguous"),
        (np.dtype(object), "ambiguous"),
        ("U", "no length"),
    ],
)
def test_user_dtypes_refused(dtype, match):
    with pytest.raises(MetadataError, match=match):
        as_data_type(dtype)


def test_string_dtype_with_na_object_refused():
    if not hasattr(getattr(np, "dtypes", None), "StringDType"):   # (numpy < 1.25 has no np.dtypes)
        pytest.skip("numpy < 2")
    with pytest.raises(MetadataError, match="na_object"):
        as_data_type(np.dtypes.StringDType(na_object=None))


# ------------------------------------------------------------------ fill values


@pytest.mark.parametrize(
    ("data_type", "json_value", "value", "written"),
    [
        (STRING, "", "", ""),
        (STRING, "abc", "abc", "abc"),
        (STRING, "température ☃ 𝄞", "température ☃ 𝄞", "température ☃ 𝄞"),
        (STRING, "a\x00b", "a\x00b", "a\x00b"),
        (VARIABLE_LENGTH_BYTES, "", b"", ""),
        (VARIABLE_LENGTH_BYTES, "AP9hYg==", b"\x00\xffab", "AP9hYg=="),
        (VARIABLE_LENGTH_BYTES, "YQ==", b"a", "YQ=="),
        # zarr-python 3.0 wrote bytes fill values as arrays of integers
        (VARIABLE_LENGTH_BYTES, [], b"", ""),
        (VARIABLE_LENGTH_BYTES, [0, 255, 88], b"\x00\xffX", "AP9Y"),
    ],
)
def test_fill_value_forms(data_type, json_value, value, written):
    parsed = parse_fill_value(json_value, data_type)
    assert type(parsed) is type(value) and parsed == value
    assert encode_fill_value(parsed, data_type) == written


@pytest.mark.parametrize(
    ("data_type", "value", "why"),
    [
        (STRING, 0, "expected a string"),  # zarr-python would read 0 as "0"; see the module notes
        (STRING, 1.5, "expected a string"),
        (STRING, True, "expected a string"),
        (STRING, None, "expected a string"),
        (STRING, ["a"], "expected a string"),
        (STRING, {"a": 1}, "expected a string"),
        (VARIABLE_LENGTH_BYTES, "not base64!", "expected base64"),
        (VARIABLE_LENGTH_BYTES, "YQ", "expected base64"),  # missing padding
        (VARIABLE_LENGTH_BYTES, "é", "expected base64"),
        (VARIABLE_LENGTH_BYTES, [256], "integers 0..255"),
        (VARIABLE_LENGTH_BYTES, [-1], "integers 0..255"),
        (VARIABLE_LENGTH_BYTES, [1.0], "integers 0..255"),
        (VARIABLE_LENGTH_BYTES, [True], "integers 0..255"),
        (VARIABLE_LENGTH_BYTES, 5, "expected base64"),
        (VARIABLE_LENGTH_BYTES, None, "expected base64"),
        (VARIABLE_LENGTH_BYTES, {"a": 1}, "expected base64"),
    ],
)
def test_bad_fill_values_name_the_key_and_value(data_type, value, why):
    doc = header(data_type.name, value, [VLEN_UTF8 if data_type is STRING else VLEN_BYTES])
    with pytest.raises(MetadataError) as info:
        ArrayMetadataV3.from_json(doc, "temperature/names")
    message = str(info.value)
    assert message.startswith('zarr.json of /temperature/names: "fill_value" ')
    assert json.dumps(value) in message and data_type.name in message and why in message


def test_default_fill_values():
    assert default_fill_value(STRING) == "" and type(default_fill_value(STRING)) is str
    assert default_fill_value(VARIABLE_LENGTH_BYTES) == b""
    assert ArrayMetadataV3.create((3,), str, (3,)).fill_value == ""
    assert ArrayMetadataV3.create((3,), bytes, (3,)).to_json()["fill_value"] == ""


@pytest.mark.parametrize(
    ("data_type", "value", "expected"),
    [
        (STRING, "x", "x"),
        (STRING, np.str_("x"), "x"),
        (STRING, np.array("xy", dtype=object), "xy"),
        (VARIABLE_LENGTH_BYTES, b"\x00", b"\x00"),
        (VARIABLE_LENGTH_BYTES, bytearray(b"ab"), b"ab"),
        (VARIABLE_LENGTH_BYTES, memoryview(b"ab"), b"ab"),
        (VARIABLE_LENGTH_BYTES, np.bytes_(b"ab"), b"ab"),
        (VARIABLE_LENGTH_BYTES, [1, 2], b"\x01\x02"),
    ],
)
def test_cast_user_fill_values(data_type, value, expected):
    cast = cast_fill_value(value, data_type)
    assert type(cast) is type(expected) and cast == expected


@pytest.mark.parametrize(
    ("data_type", "value", "why"),
    [
        (STRING, b"x", "expected a str"),
        (STRING, 0, "expected a str"),
        (STRING, np.float32(1), "expected a str"),
        (VARIABLE_LENGTH_BYTES, "AA==", "a str is ambiguous"),
        (VARIABLE_LENGTH_BYTES, 0, "expected bytes"),
        (VARIABLE_LENGTH_BYTES, [300], "integers 0..255"),
    ],
)
def test_cast_refuses(data_type, value, why):
    with pytest.raises(MetadataError, match="fill_value") as info:
        cast_fill_value(value, data_type)
    assert why in str(info.value)


# ------------------------------------------------------------------ codecs


@pytest.mark.parametrize(
    ("data_type", "codecs", "match"),
    [
        ("string", [{"name": "bytes"}], r'\[0\] "bytes": cannot encode the variable-length data type string '
                                        r'\(use "vlen-utf8"\)'),
        ("string", [{"name": "bytes", "configuration": {"endian": "little"}}], "cannot encode"),
        ("variable_length_bytes", [{"name": "bytes"}], r'variable_length_bytes \(use "vlen-bytes"\)'),
        ("string", [VLEN_BYTES], r'"vlen-bytes": encodes only the data type variable_length_bytes, '
                                 r'not string \(use "vlen-utf8"\)'),
        ("bytes", [VLEN_UTF8], r'"vlen-utf8": encodes only the data type string, not variable_length_bytes'),
        ("int32", [VLEN_UTF8], r'not int32 \(use "bytes"\)'),
        ("uint8", [VLEN_BYTES], "not uint8"),
        ("string", [{"name": "vlen-utf8", "configuration": {"x": 1}}], 'unknown member "x"'),
        ("string", [VLEN_UTF8, VLEN_UTF8], "second array -> bytes codec"),
        ("string", [ZSTD], "before any array -> bytes codec"),
        ("string", [{"name": "sharding_indexed", "configuration": {
            "chunk_shape": [1], "codecs": [{"name": "bytes"}],
            "index_codecs": [{"name": "bytes", "configuration": {"endian": "little"}}]}}],
         r'"codecs"\[0\] "bytes": cannot encode'),
    ],
)
def test_codec_data_type_compatibility(data_type, codecs, match):
    with pytest.raises(MetadataError, match=match) as info:
        fill = "" if data_type in ("string", "bytes", "variable_length_bytes") else 0
        ArrayMetadataV3.from_json(header(data_type, fill, codecs))
    assert str(info.value).startswith('zarr.json of /: "codecs"')


def test_vlen_codecs_with_their_types():
    meta = round_trip(header("string", "", [{"name": "transpose", "configuration": {"order": [0]}},
                                           {"name": "vlen-utf8"}, ZSTD, {"name": "crc32c"}]))
    assert [c.name for c in meta.codecs] == ["transpose", "vlen-utf8", "zstd", "crc32c"]
    # the empty configuration is written, as zarr-python writes it
    assert meta.to_json()["codecs"][1] == VLEN_UTF8
    meta = round_trip(header("bytes", [], [VLEN_BYTES]))
    assert meta.to_json()["codecs"] == [VLEN_BYTES] and meta.data_type is VARIABLE_LENGTH_BYTES


def test_complete_codecs_adds_no_endian():
    for data_type, serializer in ((STRING, VLEN_UTF8), (VARIABLE_LENGTH_BYTES, VLEN_BYTES)):
        assert default_serializer(data_type) == serializer
        blosc = {"name": "blosc", "configuration": {"cname": "lz4", "clevel": 5, "shuffle": "shuffle"}}
        completed = complete_codecs([serializer["name"], blosc], data_type)
        assert completed[0] == {"name": serializer["name"]}
        specs = parse_codecs(completed, (4,), data_type)   # the parser fills in typesize
        assert specs[1].configuration["typesize"] == 1  # as zarr-python
        sharded = complete_codecs([{"name": "sharding_indexed", "configuration": {"chunk_shape": [2]}}],
                                  data_type)
        assert sharded[0]["configuration"]["codecs"] == [serializer]
    assert default_serializer(parse_data_type("int16")) == {"name": "bytes"}


def test_create_picks_the_vlen_serializer():
    for dtype, serializer in ((str, VLEN_UTF8), (bytes, VLEN_BYTES)):
        meta = ArrayMetadataV3.create((5,), dtype, (2,))
        assert meta.to_json()["codecs"] == [serializer]
        sharded = ArrayMetadataV3.create((4,), dtype, (4,), codecs=[
            {"name": "sharding_indexed", "configuration": {"chunk_shape": [2]}}])
        assert sharded.to_json()["codecs"][0]["configuration"]["codecs"] == [serializer]
    with pytest.raises(MetadataError, match='cannot encode the variable-length data type string'):
        ArrayMetadataV3.create((5,), str, (2,), codecs=["bytes"])
    assert ArrayMetadataV3.create((5,), "u2", (2,)).to_json()["codecs"] == [
        {"name": "bytes", "configuration": {"endian": "little"}}]


def test_equality_and_hash():
    a = ArrayMetadataV3.create((4,), str, (2,), fill_value="x")
    again = ArrayMetadataV3.from_json(a.to_bytes())
    assert a == again and hash(a) == hash(again)
    assert a != ArrayMetadataV3.create((4,), str, (2,), fill_value="y")
    b = ArrayMetadataV3.create((4,), bytes, (2,), fill_value=b"x")
    assert b == ArrayMetadataV3.from_json(b.to_json()) and len({a, b}) == 2
    assert ArrayMetadataV3.create((4,), str, (2,)) != ArrayMetadataV3.create((4,), bytes, (2,))
    # constructing directly with the value (bytes) or its JSON form (base64) agree
    direct = ArrayMetadataV3((4,), "variable_length_bytes", (2,), "default", b"\x01", [VLEN_BYTES])
    assert direct == ArrayMetadataV3((4,), "bytes", (2,), "default", "AQ==", [VLEN_BYTES])
    assert direct.fill_value == b"\x01"


def test_fill_value_as_numpy_array():
    # how zarrc.array uses it: np.asarray(fill_value, dtype=dtype)
    for value, dtype in (("ab", str), (b"ab", bytes)):
        meta = ArrayMetadataV3.create((4,), dtype, (2,), fill_value=value)
        full = np.full(3, np.asarray(meta.fill_value, dtype=meta.dtype), dtype=meta.dtype)
        assert full.dtype == np.dtype(object) and full.tolist() == [value] * 3


# ------------------------------------------------------------------ zarr-python documents

# What zarr-python 3.4.2 writes (checked in: it needs Python >= 3.12).  zarr-python
# 3.1.6 writes exactly the same documents (see the tests generating them below).
ZARR_PYTHON_34 = {
    "str-default": header("string", "", [VLEN_UTF8, ZSTD]),
    "str-fill": header("string", "abc", [VLEN_UTF8, ZSTD]),
    "bytes-default": header("variable_length_bytes", "", [VLEN_BYTES, ZSTD]),
    "bytes-fill": header("variable_length_bytes", "AP9hYg==", [VLEN_BYTES, ZSTD]),
    "bytes-blosc": header("variable_length_bytes", "AQ==", [VLEN_BYTES, {"name": "blosc", "configuration": {
        "typesize": 1, "cname": "zstd", "clevel": 5, "shuffle": "bitshuffle", "blocksize": 0}}]),
    "str-sharded": header("string", "fv", [{"name": "sharding_indexed", "configuration": {
        "chunk_shape": [2], "codecs": [VLEN_UTF8, ZSTD],
        "index_codecs": [{"name": "bytes", "configuration": {"endian": "little"}}, {"name": "crc32c"}],
        "index_location": "end"}}], chunks=(4,)),
}


@pytest.mark.parametrize("case", list(ZARR_PYTHON_34))
def test_documents_of_zarr_python_34(case):
    doc = ZARR_PYTHON_34[case]
    meta = round_trip(doc)
    assert canonical(meta.to_json()) == canonical(doc)


def test_document_of_zarr_python_30():
    # zarr-python 3.0 (before its data type rework): "bytes", fill value as integers;
    # 3.1 and 3.4 read "bytes" but not the integer array, so it is written back as
    # "variable_length_bytes" with base64
    meta = round_trip(header("bytes", [0, 255, 97, 98], [VLEN_BYTES]))
    assert meta.fill_value == b"\x00\xffab"
    written = meta.to_json()
    assert (written["data_type"], written["fill_value"]) == ("variable_length_bytes", "AP9hYg==")
    assert round_trip(header("string", "", [{"name": "vlen-utf8"}])).to_json()["codecs"] == [VLEN_UTF8]


def _variable_length_bytes():
    return pytest.importorskip("zarr.core.dtype", reason=NO_ZARR_PYTHON).VariableLengthBytes()


@pytest.mark.parametrize(
    "kwargs",
    [
        {"dtype": str},
        {"dtype": str, "fill_value": "abc"},
        {"dtype": str, "fill_value": "température ☃"},
        {"dtype": "bytes"},
        {"dtype": "bytes", "fill_value": b"\x00\xffab"},
        {"dtype": str, "compressors": {"name": "blosc", "configuration": {"cname": "lz4"}}},
        {"dtype": "bytes", "compressors": None},
        {"dtype": str, "shards": (4,), "chunks": (2,)},
        {"dtype": str, "filters": [{"name": "transpose", "configuration": {"order": [0]}}]},
    ],
    ids=lambda kw: "-".join(f"{k}={v!r}" for k, v in kw.items()),
)
def test_documents_of_zarr_python(zarr_python_doc, kwargs):
    if kwargs["dtype"] == "bytes":
        kwargs = {**kwargs, "dtype": _variable_length_bytes()}
    doc = zarr_python_doc(shape=(4,), **{"chunks": (2,), **kwargs})
    meta = round_trip(doc)
    assert canonical(meta.to_json()) == canonical(doc)
    expected = kwargs.get("fill_value", "" if meta.data_type is STRING else b"")
    assert type(meta.fill_value) is type(expected) and meta.fill_value == expected


@pytest.mark.parametrize(
    ("case", "kwargs"),
    [
        ("str-default", {"dtype": str}),
        ("str-fill", {"dtype": str, "fill_value": "abc"}),
        ("bytes-default", {"dtype": "bytes"}),
        ("bytes-fill", {"dtype": "bytes", "fill_value": b"\x00\xffab"}),
        ("bytes-blosc", {"dtype": "bytes", "fill_value": b"\x01", "compressors": {
            "name": "blosc", "configuration": {"cname": "zstd"}}}),
        ("str-sharded", {"dtype": str, "fill_value": "fv", "shards": (4,)}),
    ],
)
def test_installed_zarr_python_writes_what_34_writes(zarr_python_doc, case, kwargs):
    if kwargs["dtype"] == "bytes":
        kwargs = {**kwargs, "dtype": _variable_length_bytes()}
    doc = zarr_python_doc(shape=(4,), chunks=(2,), **kwargs)
    assert canonical(doc) == canonical(ZARR_PYTHON_34[case])


@pytest.mark.parametrize(
    ("dtype", "fill"),
    [(str, ""), (str, "fill é"), (bytes, b""), (bytes, b"\x00\xff"), ("bytes", b"x")],
)
def test_zarr_python_reads_ours(zarr_python_open, dtype, fill):
    meta = ArrayMetadataV3.create((6,), dtype, (4,), fill_value=fill, codecs=None)
    array = zarr_python_open(meta.to_bytes())
    assert array.fill_value == fill
    assert array.shape == (6,)
    assert array[:].tolist() == [fill] * 6
