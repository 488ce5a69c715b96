"""ArrayMetadataV3 / GroupMetadataV3: every MUST of v3 core raises MetadataError
naming the document, key and value; extension fields follow must_understand."""

from __future__ import annotations

import json

import numpy as np
import pytest

from zarrc.errors import MetadataError
from zarrc.metadata import (
    ArrayMetadataV3,
    ChunkKeyEncodingSpec,
    CodecSpec,
    GroupMetadataV3,
    metadata_from_json,
)


def raises(doc, match, path="/temperature"):
    with pytest.raises(MetadataError, match=match) as info:
        ArrayMetadataV3.from_json(doc, path)
    assert str(info.value).startswith(f"zarr.json of {path}: ")
    return str(info.value)


def test_valid_document(array_doc):
    meta = ArrayMetadataV3.from_json(array_doc(), "/temperature")
    assert meta.shape == (10, 6) and meta.chunk_shape == (5, 3) and meta.ndim == 2
    assert meta.dtype == np.dtype("int32") and meta.fill_value == 0
    assert meta.codecs == (CodecSpec("bytes", {"endian": "little"}),)
    assert meta.chunk_key_encoding == ChunkKeyEncodingSpec("default", "/")
    assert meta.dimension_names is None and dict(meta.attributes) == {}


def test_message_names_key_and_value(array_doc):
    message = raises(array_doc(fill_value=1.5), "fill_value")
    assert (
        message == 'zarr.json of /temperature: "fill_value" 1.5 is not valid for data type int32'
        " (expected an integer)"
    )


def test_bytes_input_and_invalid_json(array_doc):
    assert ArrayMetadataV3.from_json(json.dumps(array_doc()).encode()).shape == (10, 6)
    raises(b"{not json", "not valid JSON")
    raises(b"\xff\xfe", "not valid JSON")
    raises(b"[1, 2]", "must hold a JSON object")


@pytest.mark.parametrize(
    "key",
    [
        "zarr_format",
        "node_type",
        "shape",
        "data_type",
        "chunk_grid",
        "chunk_key_encoding",
        "fill_value",
    ],
)
def test_missing_required_key(array_doc, key):
    raises(array_doc(**{key: None}), f'"{key}" is missing')


def test_optional_keys_may_be_absent(array_doc):
    meta = ArrayMetadataV3.from_json(array_doc(attributes=None))
    assert meta.to_json()["attributes"] == {} and meta.to_json()["storage_transformers"] == []


@pytest.mark.parametrize(
    ("changes", "match"),
    [
        ({"zarr_format": 2}, '"zarr_format" 2 must be 3'),
        ({"zarr_format": "3"}, '"zarr_format" "3" must be 3'),
        ({"zarr_format": 3.0}, '"zarr_format" 3.0 must be 3'),
        ({"zarr_format": True}, '"zarr_format" true must be 3'),
        ({"node_type": "group"}, '"node_type" "group" must be "array"'),
        ({"shape": [10, -1]}, '"shape" \\[10, -1\\] must be an array of integers >= 0'),
        ({"shape": [10, 6.0]}, '"shape"'),
        ({"shape": "10"}, '"shape" "10" must be an array'),
        ({"shape": [10, True]}, '"shape"'),
        ({"data_type": "int33"}, '"data_type" "int33" is not a supported data type'),
        ({"data_type": "r12"}, "multiple of 8"),
        ({"data_type": 5}, '"data_type" 5 must be a name or an object'),
        ({"data_type": {"name": "datetime64", "configuration": {"unit": "ns"}}}, "datetime64"),
        ({"data_type": {"name": "complex_bfloat16", "must_understand": False}}, "complex_bfloat16"),
        ({"data_type": {"name": "int32", "configuration": {"x": 1}}}, "takes no configuration"),
        (
            {"chunk_grid": {"name": "rectangular", "configuration": {"chunk_shapes": [[5, 5], [3, 3]]}}},
            '"chunk_grid" .*rectangular.* is not supported',
        ),
        (
            {"chunk_grid": {"name": "rectilinear", "configuration": {"chunk_shapes": [[5, 5], [3, 3]]}}},
            '"chunk_grid.configuration.kind" null must be "inline"',
        ),
        ({"chunk_grid": "regular"}, 'needs "configuration"'),
        (
            {"chunk_grid": {"name": "regular", "configuration": {"chunk_shape": [5]}}},
            '"chunk_shape" \\[5\\] has 1 dimensions but shape \\[10, 6\\] has 2',
        ),
        ({"chunk_grid": {"name": "regular", "configuration": {"chunk_shape": [5, 0]}}}, "zero chunk length"),
        (
            {"chunk_grid": {"name": "regular", "configuration": {"chunk_shape": [5, 3], "x": 1}}},
            'unknown member "x"',
        ),
        (
            {"chunk_grid": {"name": "regular", "configuration": {"chunk_shape": [5, 3]}, "extra": 1}},
            'unknown member "extra"',
        ),
        ({"chunk_key_encoding": {"name": "default", "configuration": {"separator": "-"}}}, '"separator"'),
        ({"chunk_key_encoding": {"name": "v2", "configuration": {"separator": ""}}}, '"separator"'),
        ({"chunk_key_encoding": {"name": "v3"}}, "not a supported chunk key encoding"),
        ({"chunk_key_encoding": {"name": "default", "configuration": {"sep": "/"}}}, 'unknown member "sep"'),
        (
            {"chunk_key_encoding": {"name": "default", "configuration": "/"}},
            '"configuration" must be an object',
        ),
        ({"fill_value": None}, '"fill_value" is missing'),
        ({"fill_value": "0.5"}, '"fill_value" "0.5" is not valid for data type int32'),
        ({"fill_value": 2**31}, "out of range"),
        ({"codecs": []}, "no array -> bytes codec"),
        ({"codecs": {"name": "bytes"}}, '"codecs" .* must be an array'),
        ({"attributes": [1]}, '"attributes" \\[1\\] must be an object'),
        ({"attributes": "x"}, '"attributes"'),
        ({"dimension_names": ["x"]}, '"dimension_names" \\["x"\\] must be an array of 2 strings or nulls'),
        ({"dimension_names": ["x", 1]}, '"dimension_names"'),
        ({"dimension_names": "xy"}, '"dimension_names"'),
        ({"storage_transformers": [{"name": "sharding"}]}, '"storage_transformers" .* is not supported'),
        ({"storage_transformers": ["foo"]}, '"storage_transformers" "foo" is not supported'),
        ({"storage_transformers": {}}, '"storage_transformers" {} must be an array'),
        ({"unknown_key": 1}, '"unknown_key" 1 is not a known field'),
        ({"unknown_key": {"must_understand": True}}, '"unknown_key"'),
        ({"unknown_key": {"a": 1}}, '"unknown_key"'),
    ],
)
def test_must_violations(array_doc, changes, match):
    raises(array_doc(**changes), match)


def test_zero_length_dimensions_and_0d(array_doc):
    grid = {"name": "regular", "configuration": {"chunk_shape": [5, 0]}}
    assert ArrayMetadataV3.from_json(array_doc(shape=[10, 0], chunk_grid=grid)).shape == (10, 0)
    grid = {"name": "regular", "configuration": {"chunk_shape": [5, 4]}}
    assert ArrayMetadataV3.from_json(array_doc(shape=[0, 0], chunk_grid=grid)).shape == (0, 0)
    grid = {"name": "regular", "configuration": {"chunk_shape": []}}
    meta = ArrayMetadataV3.from_json(array_doc(shape=[], chunk_grid=grid))
    assert meta.shape == () and meta.chunk_shape == () and meta.ndim == 0
    raises(
        array_doc(shape=[], chunk_grid={"name": "regular", "configuration": {"chunk_shape": [1]}}),
        "has 1 dimensions but shape \\[\\] has 0",
    )


def test_chunk_key_encoding_defaults_and_shorthand(array_doc):
    for value, expected in [
        ({"name": "default"}, ("default", "/")),
        ({"name": "v2"}, ("v2", ".")),
        ("v2", ("v2", ".")),
        ("default", ("default", "/")),
        ({"name": "v2", "configuration": {"separator": "/"}}, ("v2", "/")),
    ]:
        meta = ArrayMetadataV3.from_json(array_doc(chunk_key_encoding=value))
        assert (meta.chunk_key_encoding.name, meta.chunk_key_encoding.separator) == expected
        assert meta.to_json()["chunk_key_encoding"] == {
            "name": expected[0],
            "configuration": {"separator": expected[1]},
        }


def test_dimension_names(array_doc):
    meta = ArrayMetadataV3.from_json(array_doc(dimension_names=["y", None]))
    assert meta.dimension_names == ("y", None)
    assert meta.to_json()["dimension_names"] == ["y", None]
    # null is read as "not specified" (zarr-python does the same)
    assert "dimension_names" not in ArrayMetadataV3.from_json(array_doc(dimension_names=None)).to_json()


def test_must_understand_false_extensions_are_kept(array_doc):
    doc = array_doc(
        my_extension={"must_understand": False, "payload": [1, 2]},
        storage_transformers=[{"name": "caching", "must_understand": False, "configuration": {"n": 1}}],
        codecs=[
            {"name": "bytes", "configuration": {"endian": "little"}},
            {"name": "my_checksum", "configuration": {"k": 1}, "must_understand": False},
        ],
    )
    meta = ArrayMetadataV3.from_json(doc)
    assert dict(meta.extra_fields)["my_extension"]["payload"] == (1, 2)
    assert meta.codecs[1].name == "my_checksum" and not meta.codecs[1].must_understand
    assert meta.codecs[1].category is None
    out = meta.to_json()
    assert out["my_extension"] == doc["my_extension"]
    assert out["storage_transformers"] == doc["storage_transformers"]
    assert out["codecs"][1] == doc["codecs"][1]
    assert ArrayMetadataV3.from_json(meta.to_bytes()) == meta


def test_to_json_key_order_and_bytes(array_doc):
    meta = ArrayMetadataV3.from_json(array_doc(dimension_names=["a", "b"], attributes={"z": 1}))
    assert list(meta.to_json()) == [
        "zarr_format",
        "node_type",
        "shape",
        "data_type",
        "chunk_grid",
        "chunk_key_encoding",
        "fill_value",
        "codecs",
        "attributes",
        "storage_transformers",
        "dimension_names",
    ]
    text = meta.to_bytes().decode()
    assert text.startswith('{\n  "zarr_format": 3,\n  "node_type": "array",')
    assert json.loads(text) == meta.to_json()


def test_frozen_equality_and_hash(array_doc):
    a = ArrayMetadataV3.from_json(array_doc(fill_value=3, attributes={"x": [1, {"y": 2}]}))
    b = ArrayMetadataV3.from_json(array_doc(fill_value=3, attributes={"x": [1, {"y": 2}]}))
    assert a == b and hash(a) == hash(b)
    assert a != ArrayMetadataV3.from_json(array_doc(fill_value=4))
    with pytest.raises(AttributeError):
        a.shape = (1, 1)
    with pytest.raises(TypeError):
        a.attributes["x"] = 2
    nan = ArrayMetadataV3.from_json(array_doc(data_type="float32", fill_value="NaN"))
    assert nan == ArrayMetadataV3.from_json(nan.to_json())
    zero = ArrayMetadataV3.from_json(array_doc(data_type="float32", fill_value=0.0))
    assert zero != ArrayMetadataV3.from_json(array_doc(data_type="float32", fill_value=-0.0))


def test_replace_revalidates(array_doc):
    import dataclasses

    meta = ArrayMetadataV3.from_json(array_doc())
    bigger = dataclasses.replace(meta, shape=(20, 6), attributes={"a": 1})
    assert bigger.shape == (20, 6) and bigger.attributes["a"] == 1
    with pytest.raises(MetadataError, match="has 2 dimensions but shape"):
        dataclasses.replace(meta, shape=(20,))


def test_create_from_user_arguments():
    meta = ArrayMetadataV3.create(
        (100, 40),
        ">f4",
        (10, 40),
        fill_value=np.nan,
        codecs=[
            "bytes",
            {"name": "blosc", "configuration": {"cname": "zstd", "clevel": 3, "shuffle": "shuffle"}},
        ],
        chunk_key_encoding="v2",
        dimension_names=["t", "x"],
    )
    out = meta.to_json()
    assert out["data_type"] == "float32" and out["fill_value"] == "NaN"
    assert out["codecs"][0] == {"name": "bytes", "configuration": {"endian": "little"}}
    assert out["codecs"][1]["configuration"]["typesize"] == 4
    assert out["chunk_key_encoding"] == {"name": "v2", "configuration": {"separator": "."}}
    sharded = ArrayMetadataV3.create(
        (8,), np.int16, (8,), codecs=[{"name": "sharding_indexed", "configuration": {"chunk_shape": [2]}}]
    )
    config = sharded.codecs[0].configuration
    assert config["codecs"][0] == CodecSpec("bytes", {"endian": "little"})
    assert [c.name for c in config["index_codecs"]] == ["bytes", "crc32c"]
    assert ArrayMetadataV3.create((3,), "u1", (3,)).to_json()["codecs"] == [{"name": "bytes"}]
    with pytest.raises(MetadataError, match="has no Zarr v3 data type"):
        ArrayMetadataV3.create((3,), "float128", (3,))


def test_group_metadata():
    meta = GroupMetadataV3.from_json(b'{"zarr_format": 3, "node_type": "group", "attributes": {"a": 1}}')
    assert meta.attributes["a"] == 1 and meta.consolidated_metadata is None
    assert meta.to_json() == {"zarr_format": 3, "node_type": "group", "attributes": {"a": 1}}
    assert GroupMetadataV3.from_json({"zarr_format": 3, "node_type": "group"}).to_json()["attributes"] == {}
    assert GroupMetadataV3().to_bytes() == GroupMetadataV3.from_json(GroupMetadataV3().to_bytes()).to_bytes()
    null = GroupMetadataV3.from_json({"zarr_format": 3, "node_type": "group", "consolidated_metadata": None})
    assert "consolidated_metadata" not in null.to_json()
    extra = GroupMetadataV3.from_json(
        {"zarr_format": 3, "node_type": "group", "x": {"must_understand": False}}
    )
    assert extra.to_json()["x"] == {"must_understand": False}


@pytest.mark.parametrize(
    ("doc", "match"),
    [
        ({"node_type": "group"}, '"zarr_format" is missing'),
        ({"zarr_format": 3}, '"node_type" is missing'),
        ({"zarr_format": 2, "node_type": "group"}, '"zarr_format" 2 must be 3'),
        ({"zarr_format": 3, "node_type": "array"}, '"node_type" "array" must be "group"'),
        ({"zarr_format": 3, "node_type": "group", "attributes": []}, '"attributes" \\[\\] must be an object'),
        ({"zarr_format": 3, "node_type": "group", "extra": 1}, '"extra" 1 is not a known field'),
        ({"zarr_format": 3, "node_type": "group", "consolidated_metadata": 5}, '"consolidated_metadata" 5'),
    ],
)
def test_group_must_violations(doc, match):
    with pytest.raises(MetadataError, match=match):
        GroupMetadataV3.from_json(doc, "/g")


def test_metadata_from_json_dispatches(array_doc):
    assert isinstance(metadata_from_json(array_doc()), ArrayMetadataV3)
    assert isinstance(metadata_from_json({"zarr_format": 3, "node_type": "group"}), GroupMetadataV3)
    with pytest.raises(MetadataError, match='zarr.json of /x: "node_type" "table"'):
        metadata_from_json({"zarr_format": 3, "node_type": "table"}, "x")
    with pytest.raises(MetadataError, match='"zarr_format" 2 must be 3'):
        metadata_from_json({"zarr_format": 2, "node_type": "table"})


def test_deeply_nested_input_is_a_metadata_error(array_doc):
    raises(b"[" * 100000 + b"]" * 100000, "not valid JSON")
    inner = '[{"name": "bytes", "configuration": {"endian": "little"}}]'
    text = inner
    for _ in range(240):  # within json's nesting limit, beyond the interpreter's recursion limit
        text = (
            '[{"name": "sharding_indexed", "configuration": {"chunk_shape": [5, 3], '
            f'"codecs": {text}, "index_codecs": {inner}}}}}]'
        )
    doc = json.dumps(array_doc(codecs="CODECS")).replace('"CODECS"', text)
    raises(doc.encode(), "nested too deeply")


def test_create_accepts_zarrc_codec_objects():
    from zarrc.codecs import Blosc, Crc32c, Zstd

    meta = ArrayMetadataV3.create(
        (8,), "f8", (4,), codecs=["bytes", Blosc(cname="lz4"), Zstd(level=1), Crc32c()]
    )
    assert meta.to_json()["codecs"] == [
        {"name": "bytes", "configuration": {"endian": "little"}},
        {
            "name": "blosc",
            "configuration": {
                "typesize": 8,
                "cname": "lz4",
                "clevel": 5,
                "shuffle": "shuffle",
                "blocksize": 0,
            },
        },
        {"name": "zstd", "configuration": {"level": 1, "checksum": False}},
        {"name": "crc32c"},
    ]


def test_documents_alike_but_their_attributes_share_the_parsed_members(array_doc):
    first = ArrayMetadataV3.from_json(array_doc(attributes={"i": 1}), "/a")
    second = ArrayMetadataV3.from_json(array_doc(attributes={"i": 2, "units": [1, 2]}), "/b")
    assert second.codecs is first.codecs and second.fill_value is first.fill_value
    assert dict(first.attributes) == {"i": 1} and dict(second.attributes) == {"i": 2, "units": [1, 2]}
    assert second.to_json()["attributes"] == {"i": 2, "units": [1, 2]}
    assert second.to_json() == {**first.to_json(), "attributes": {"i": 2, "units": [1, 2]}}
    assert second == ArrayMetadataV3.from_json(array_doc(attributes={"i": 2, "units": [1, 2]}))
    # 0 and 0.0 and false are different documents
    assert ArrayMetadataV3.from_json(array_doc(fill_value=False, data_type="bool")).fill_value == np.False_
    raises(array_doc(fill_value=0.5), "fill_value")
    # the attributes are still checked
    raises(array_doc(attributes=[1]), '"attributes"')
    deep: object = 1
    for _ in range(250):
        deep = [deep]
    raises(array_doc(attributes={"deep": deep}), "nested too deeply")
