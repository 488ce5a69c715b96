"""Codec lists: chain structure, per-codec configuration, normalisation, must_understand."""

from __future__ import annotations

import pytest

from zarrc.errors import MetadataError
from zarrc.metadata import CodecSpec, parse_codecs, parse_data_type

INT16 = parse_data_type("int16")
UINT8 = parse_data_type("uint8")
LE = {"name": "bytes", "configuration": {"endian": "little"}}
BE = {"name": "bytes", "configuration": {"endian": "big"}}


def parse(codecs, shape=(4, 6), dtype=INT16):
    return parse_codecs(codecs, shape, dtype)


def as_json(specs):
    return [s.to_json() for s in specs]


def test_shorthand_names_and_normalised_configurations():
    specs = parse(
        [
            {"name": "transpose", "configuration": {"order": [1, 0]}},
            BE,
            {
                "name": "blosc",
                "configuration": {"cname": "lz4", "clevel": 5, "shuffle": "shuffle", "typesize": 2},
            },
            {"name": "zstd", "configuration": {"level": 3}},
            {"name": "gzip", "configuration": {"level": 1}},
            "crc32c",
            {"name": "crc32c", "configuration": {}},
        ]
    )
    assert as_json(specs) == [
        {"name": "transpose", "configuration": {"order": [1, 0]}},
        BE,
        {
            "name": "blosc",
            "configuration": {
                "typesize": 2,
                "cname": "lz4",
                "clevel": 5,
                "shuffle": "shuffle",
                "blocksize": 0,
            },
        },
        {"name": "zstd", "configuration": {"level": 3, "checksum": False}},
        {"name": "gzip", "configuration": {"level": 1}},
        {"name": "crc32c"},
        {"name": "crc32c"},
    ]
    assert [s.category for s in specs] == ["array->array", "array->bytes"] + ["bytes->bytes"] * 5
    assert list(specs[1].configuration.keys()) == ["endian"]


def test_codec_spec_is_frozen_and_hashable():
    spec = parse([{"name": "transpose", "configuration": {"order": [1, 0]}}, LE])[0]
    assert spec.configuration["order"] == (1, 0)
    assert spec == CodecSpec("transpose", {"order": [1, 0]})
    assert hash(spec) == hash(CodecSpec("transpose", {"order": (1, 0)}))
    with pytest.raises(TypeError):
        spec.configuration["order"] = (0, 1)


def test_bytes_endian_for_one_byte_types():
    assert as_json(parse(["bytes"], dtype=UINT8)) == [{"name": "bytes"}]
    assert as_json(parse([LE], dtype=UINT8)) == [{"name": "bytes"}]  # zarr-python drops it too
    assert as_json(parse(["bytes"], dtype=parse_data_type("bool"))) == [{"name": "bytes"}]
    assert as_json(parse(["bytes"], dtype=parse_data_type("r24"))) == [{"name": "bytes"}]
    assert as_json(parse([BE], dtype=parse_data_type("r24"))) == [BE]
    with pytest.raises(MetadataError, match='needs "endian" for data type int16'):
        parse(["bytes"])
    with pytest.raises(MetadataError, match='"endian" "middle" must be "little" or "big"'):
        parse([{"name": "bytes", "configuration": {"endian": "middle"}}])
    with pytest.raises(MetadataError, match='"endian" null'):
        parse([{"name": "bytes", "configuration": {"endian": None}}], dtype=UINT8)


@pytest.mark.parametrize(
    ("codecs", "match"),
    [
        ([], "no array -> bytes codec"),
        (["crc32c"], 'bytes -> bytes codec "crc32c" comes before any array -> bytes codec'),
        (
            [{"name": "gzip", "configuration": {"level": 1}}, LE],
            '\\[0\\] bytes -> bytes codec "gzip" comes before',
        ),
        ([LE, BE], '\\[1\\] "bytes" is a second array -> bytes codec'),
        (
            [
                LE,
                {
                    "name": "sharding_indexed",
                    "configuration": {"chunk_shape": [2, 2], "codecs": [LE], "index_codecs": [LE]},
                },
            ],
            "second array -> bytes",
        ),
        ([LE, {"name": "transpose", "configuration": {"order": [1, 0]}}], '"transpose" comes after'),
        ([{"name": "transpose", "configuration": {"order": [1, 0]}}], "no array -> bytes codec"),
        (["foo", LE], '\\[0\\] "name" "foo" is not a supported codec'),
        ([LE, {"name": "foo", "must_understand": True}], '"foo" is not a supported codec'),
        ([LE, {"name": "endian"}], '"endian" is not a supported codec'),
        ([5], '"codec" 5 must be a name or an object'),
        ([{"configuration": {}}], 'must have a string "name"'),
        ([{"name": "bytes", "configuration": {"endian": "little"}, "extra": 1}], 'unknown member "extra"'),
        ([{"name": "bytes", "configuration": [1]}], '"configuration" must be an object'),
        (
            [{"name": "bytes", "configuration": {"endian": "little"}, "must_understand": "no"}],
            '"must_understand" must be a boolean',
        ),
        ([{"name": "bytes", "configuration": {"endian": "little", "order": "C"}}], 'unknown member "order"'),
        ([{"name": "transpose"}, LE], '"transpose": "configuration" is missing "order"'),
        (
            [{"name": "transpose", "configuration": {"order": [0, 0]}}, LE],
            '"order" \\[0, 0\\] must be a permutation',
        ),
        ([{"name": "transpose", "configuration": {"order": [0, 1, 2]}}, LE], "must be a permutation of 0..1"),
        ([{"name": "transpose", "configuration": {"order": "F"}}, LE], '"order" "F"'),
        ([LE, {"name": "gzip", "configuration": {"level": 10}}], '"level" 10 must be an integer from 0 to 9'),
        ([LE, {"name": "gzip", "configuration": {"level": True}}], '"level" true'),
        (
            [LE, {"name": "zstd", "configuration": {"level": 23}}],
            '"level" 23 must be an integer from -131072 to 22',
        ),
        (
            [LE, {"name": "zstd", "configuration": {"level": 1, "checksum": 1}}],
            '"checksum" 1 must be a boolean',
        ),
        ([LE, {"name": "crc32c", "configuration": {"x": 1}}], 'unknown member "x"'),
        (
            [
                LE,
                {
                    "name": "blosc",
                    "configuration": {"cname": "lz5", "clevel": 1, "shuffle": "shuffle", "typesize": 2},
                },
            ],
            '"cname" "lz5" must be one of',
        ),
        (
            [
                LE,
                {
                    "name": "blosc",
                    "configuration": {"cname": "lz4", "clevel": 10, "shuffle": "shuffle", "typesize": 2},
                },
            ],
            '"clevel" 10',
        ),
        (
            [
                LE,
                {
                    "name": "blosc",
                    "configuration": {"cname": "lz4", "clevel": 1, "shuffle": 1, "typesize": 2},
                },
            ],
            '"shuffle" 1 must be one of',
        ),
        (
            [LE, {"name": "blosc", "configuration": {"cname": "lz4", "clevel": 1, "typesize": "4"}}],
            '"typesize" "4" must be a positive integer',
        ),
        (
            [
                LE,
                {
                    "name": "blosc",
                    "configuration": {"cname": "lz4", "clevel": 1, "shuffle": "shuffle", "typesize": 0},
                },
            ],
            '"typesize" 0',
        ),
        (
            [
                LE,
                {
                    "name": "blosc",
                    "configuration": {"cname": "lz4", "clevel": 1, "shuffle": "noshuffle", "blocksize": -1},
                },
            ],
            '"blocksize" -1',
        ),
        ([LE, {"name": "blosc", "configuration": {"clevel": None}}], '"clevel" null must be an integer'),
        ([LE, {"name": "zstd", "configuration": {"level": None}}], '"level" null must be an integer'),
        ([LE, {"name": "blosc", "configuration": {"cname": "lz4", "typo": 1}}], 'unknown member "typo"'),
    ],
)
def test_invalid_codec_lists(codecs, match):
    with pytest.raises(MetadataError, match=match):
        parse(codecs)


def test_blosc_noshuffle_gets_the_item_size():
    spec = parse(
        [LE, {"name": "blosc", "configuration": {"cname": "zlib", "clevel": 0, "shuffle": "noshuffle"}}]
    )
    assert dict(spec[1].configuration) == {
        "typesize": 2,
        "cname": "zlib",
        "clevel": 0,
        "shuffle": "noshuffle",
        "blocksize": 0,
    }


@pytest.mark.parametrize(("codec", "dtype", "config"), [
    # zarr-python's BloscCodec defaults, typesize and shuffle from the item size
    ({"name": "blosc"}, "int16",
     {"typesize": 2, "cname": "zstd", "clevel": 5, "shuffle": "shuffle", "blocksize": 0}),
    ({"name": "blosc", "configuration": {"cname": "lz4", "clevel": 5}}, "float64",
     {"typesize": 8, "cname": "lz4", "clevel": 5, "shuffle": "shuffle", "blocksize": 0}),
    ({"name": "blosc", "configuration": {"typesize": None, "shuffle": None}}, "uint8",
     {"typesize": 1, "cname": "zstd", "clevel": 5, "shuffle": "bitshuffle", "blocksize": 0}),
    ({"name": "blosc", "configuration": {"typesize": 2}}, "float64",      # given: kept
     {"typesize": 2, "cname": "zstd", "clevel": 5, "shuffle": "shuffle", "blocksize": 0}),
    ({"name": "zstd"}, "int16", {"level": 0, "checksum": False}),
    ({"name": "zstd", "configuration": {"checksum": True}}, "int16", {"level": 0, "checksum": True}),
    ({"name": "gzip"}, "int16", {"level": 5}),
    ("gzip", "int16", {"level": 5}),
])
def test_members_left_out_get_zarr_pythons_values(codec, dtype, config):
    data_type = parse_data_type(dtype)
    le = LE if data_type.itemsize > 1 else {"name": "bytes"}
    specs = parse([le, codec], dtype=data_type)
    assert dict(specs[1].configuration) == config


def test_unknown_codec_with_must_understand_false_is_kept_and_skipped():
    unknown = {"name": "example.checksum", "configuration": {"location": "end"}, "must_understand": False}
    specs = parse([unknown, LE, unknown, "crc32c"])
    assert [s.name for s in specs] == ["example.checksum", "bytes", "example.checksum", "crc32c"]
    assert specs[0].must_understand is False and specs[0].category is None
    assert specs[0].to_json() == unknown
    # a must_understand: false codec does not count as the array -> bytes codec
    with pytest.raises(MetadataError, match="no array -> bytes codec"):
        parse([unknown])


SHARD = {
    "chunk_shape": [2, 3],
    "codecs": [LE, {"name": "zstd", "configuration": {"level": 0}}],
    "index_codecs": [LE, "crc32c"],
}


def test_sharding_configuration_is_normalised_recursively():
    (spec,) = parse([{"name": "sharding_indexed", "configuration": SHARD}], shape=(4, 6))
    config = spec.configuration
    assert config["chunk_shape"] == (2, 3) and config["index_location"] == "end"
    assert config["codecs"][1] == CodecSpec("zstd", {"level": 0, "checksum": False})
    assert spec.to_json()["configuration"]["index_codecs"] == [LE, {"name": "crc32c"}]
    start = parse([{"name": "sharding_indexed", "configuration": {**SHARD, "index_location": "start"}}])
    assert start[0].configuration["index_location"] == "start"


def test_sharding_inner_transpose_sees_inner_shape():
    inner = {**SHARD, "codecs": [{"name": "transpose", "configuration": {"order": [1, 0]}}, LE]}
    parse([{"name": "sharding_indexed", "configuration": inner}])
    index = {**SHARD, "index_codecs": [{"name": "transpose", "configuration": {"order": [2, 0, 1]}}, LE]}
    parse([{"name": "sharding_indexed", "configuration": index}])  # the index has rank 3


@pytest.mark.parametrize(
    ("changes", "match"),
    [
        ({"chunk_shape": [3, 3]}, '"chunk_shape" \\[3, 3\\] must evenly divide the shard shape \\[4, 6\\]'),
        ({"chunk_shape": [2]}, '"chunk_shape" \\[2\\] must have 2 dimensions'),
        ({"chunk_shape": [0, 3]}, '"chunk_shape" \\[0, 3\\] must be an array of integers >= 1'),
        ({"index_location": "middle"}, '"index_location" "middle" must be "start" or "end"'),
        ({"codecs": []}, '"codecs" \\[\\] has no array -> bytes codec'),
        ({"codecs": ["crc32c", LE]}, '"sharding_indexed": "codecs"\\[0\\] bytes -> bytes codec'),
        ({"codecs": ["bytes"]}, '"codecs"\\[0\\] "bytes": "configuration" needs "endian"'),
        (
            {"index_codecs": ["bytes"]},
            '"index_codecs"\\[0\\] "bytes": "configuration" needs "endian" for data type uint64',
        ),
        (
            {"index_codecs": [LE, {"name": "gzip", "configuration": {"level": 1}}]},
            '"index_codecs"\\[1\\] "gzip": index codecs must have a fixed-size output',
        ),
        ({"extra": 1}, 'unknown member "extra"'),
    ],
)
def test_invalid_sharding(changes, match):
    config = {**SHARD, **changes}
    with pytest.raises(MetadataError, match=match):
        parse([{"name": "sharding_indexed", "configuration": config}])


def test_sharding_requires_chunk_shape():
    config = {k: v for k, v in SHARD.items() if k != "chunk_shape"}
    with pytest.raises(MetadataError, match='"sharding_indexed": "configuration" is missing "chunk_shape"'):
        parse([{"name": "sharding_indexed", "configuration": config}])


def test_sharding_members_left_out_get_zarr_pythons_values():
    (spec,) = parse([{"name": "sharding_indexed", "configuration": {"chunk_shape": [2, 3]}}])
    assert spec.to_json()["configuration"] == {
        "chunk_shape": [2, 3], "codecs": [LE], "index_codecs": [LE, {"name": "crc32c"}],
        "index_location": "end"}
    (spec,) = parse([{"name": "sharding_indexed", "configuration": {"chunk_shape": [2, 3]}}],
                    dtype=parse_data_type("uint8"))
    assert spec.to_json()["configuration"]["codecs"] == [{"name": "bytes"}]


def test_transpose_shape_flows_into_sharding():
    # after transpose [1, 0] the shard is (6, 4): inner (3, 2) divides it, (2, 3) does not
    transpose = {"name": "transpose", "configuration": {"order": [1, 0]}}
    parse([transpose, {"name": "sharding_indexed", "configuration": {**SHARD, "chunk_shape": [3, 2]}}])
    with pytest.raises(MetadataError, match="shard shape \\[6, 4\\]"):
        parse([transpose, {"name": "sharding_indexed", "configuration": {**SHARD, "chunk_shape": [2, 3]}}])
