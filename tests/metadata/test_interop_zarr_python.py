"""zarr.json documents written by zarr-python 3: zarrc parses every one and writes
the same document back; zarr-python reads what zarrc writes."""

from __future__ import annotations

import json
import math

import numpy as np
import pytest

from helpers import NO_ZARR_PYTHON

from zarrc.errors import MetadataError
from zarrc.metadata import ArrayMetadataV3, GroupMetadataV3

zarr = pytest.importorskip("zarr", reason=NO_ZARR_PYTHON)
from zarr.codecs import (
    BloscCodec,
    BytesCodec,
    Crc32cCodec,
    GzipCodec,
    ShardingCodec,
    TransposeCodec,
    ZstdCodec,
)

INF, NAN = math.inf, math.nan

FILL_VALUES = {
    "bool": [False, True],
    "int8": [0, -128, 127, -1],
    "int16": [0, -(2**15), 2**15 - 1],
    "int32": [0, -(2**31), 2**31 - 1, 42],
    "int64": [0, -(2**63), 2**63 - 1],
    "uint8": [0, 255],
    "uint16": [0, 2**16 - 1],
    "uint32": [0, 2**32 - 1],
    "uint64": [0, 2**64 - 1],
    "float16": [0.0, -0.0, NAN, INF, -INF, 1.5, 0.1, 65504.0],
    "float32": [0.0, -0.0, NAN, INF, -INF, 1.5, 0.1, 1e-40],
    "float64": [0.0, -0.0, NAN, INF, -INF, 1.5, 0.1, 1e300, 5e-324],
    "complex64": [0j, complex(NAN, -INF), complex(1.5, -0.0), complex(INF, NAN)],
    "complex128": [0j, complex(NAN, NAN), complex(-INF, 0.1)],
}

FILL_CASES = [
    pytest.param(dtype, fill, id=f"{dtype}-{fill!r}")
    for dtype, fills in FILL_VALUES.items()
    for fill in fills
]


def canonical(doc):
    """JSON text with sorted keys: distinguishes 0 / 0.0 / -0.0, ignores key order."""
    return json.dumps(doc, sort_keys=True)


def check_round_trip(doc, path="/a"):
    meta = ArrayMetadataV3.from_json(json.dumps(doc).encode(), path)
    assert canonical(meta.to_json()) == canonical(doc)
    assert ArrayMetadataV3.from_json(meta.to_bytes()) == meta
    return meta


@pytest.mark.parametrize(("dtype", "fill"), FILL_CASES)
def test_fill_values_and_dtypes(zarr_python_doc, dtype, fill):
    doc = zarr_python_doc(shape=(7, 3), chunks=(4, 3), dtype=dtype, fill_value=fill)
    meta = check_round_trip(doc)
    expected = np.array(fill, dtype=dtype)
    assert meta.fill_value.dtype == np.dtype(dtype)
    assert meta.fill_value.tobytes() == expected.tobytes()


@pytest.mark.parametrize("dtype", list(FILL_VALUES))
def test_default_fill_value(zarr_python_doc, dtype):
    meta = check_round_trip(zarr_python_doc(shape=(3,), dtype=dtype))
    assert meta.fill_value.tobytes() == bytes(np.dtype(dtype).itemsize)


CODEC_CASES = {
    "bytes-little": {"serializer": BytesCodec(endian="little"), "compressors": None},
    "bytes-big": {"serializer": BytesCodec(endian="big"), "compressors": None},
    "transpose": {"filters": [TransposeCodec(order=[1, 0])], "compressors": None},
    "blosc-lz4-shuffle": {"compressors": [BloscCodec(cname="lz4", clevel=1, shuffle="shuffle")]},
    "blosc-zstd-bitshuffle": {
        "compressors": [BloscCodec(cname="zstd", clevel=9, shuffle="bitshuffle", blocksize=256)]
    },
    "blosc-noshuffle": {"compressors": [BloscCodec(cname="blosclz", clevel=0, shuffle="noshuffle")]},
    "gzip": {"compressors": [GzipCodec(level=9)]},
    "zstd": {"compressors": [ZstdCodec(level=-3, checksum=True)]},
    "crc32c": {"compressors": [Crc32cCodec()]},
    "chain": {
        "filters": [TransposeCodec(order=[1, 0])],
        "serializer": BytesCodec(endian="big"),
        "compressors": [BloscCodec(cname="lz4hc"), Crc32cCodec()],
    },
    "sharding-end": {"shards": (8, 6), "chunks": (4, 3)},
    "sharding-start": {
        "chunks": (8, 6),
        "serializer": ShardingCodec(
            chunk_shape=(2, 3), codecs=[BytesCodec(), GzipCodec(level=1)], index_location="start"
        ),
        "compressors": None,
    },
    "sharding-nested": {
        "chunks": (8, 12),
        "filters": [TransposeCodec(order=[1, 0])],
        "serializer": ShardingCodec(
            chunk_shape=(4, 4), codecs=[ShardingCodec(chunk_shape=(1, 2), codecs=[BytesCodec(endian="big")])]
        ),
        "compressors": [Crc32cCodec()],
    },
}


@pytest.mark.parametrize("dtype", ["uint8", "int16", "float64", "complex64"])
@pytest.mark.parametrize("case", list(CODEC_CASES))
def test_codecs(zarr_python_doc, case, dtype):
    kwargs = {"chunks": (4, 6), **CODEC_CASES[case]}
    doc = zarr_python_doc(shape=(16, 12), dtype=dtype, **kwargs)
    meta = check_round_trip(doc)
    assert [c.name for c in meta.codecs] == [c["name"] for c in doc["codecs"]]


def test_sharding_after_transpose_checks_the_transposed_shape(zarr_python_doc):
    # zarr-python checks the inner chunk shape against the untransposed chunk shape
    # (8, 6); the codec receives the transposed (6, 8), which (4, 2) does not divide.
    # The spec (and tensorstore) reject this document.
    doc = zarr_python_doc(
        shape=(16, 12),
        dtype="u1",
        chunks=(8, 6),
        filters=[TransposeCodec(order=[1, 0])],
        serializer=ShardingCodec(chunk_shape=(4, 2)),
        compressors=None,
    )
    with pytest.raises(
        MetadataError, match=r'"chunk_shape" \[4, 2\] must evenly divide the shard shape \[6, 8\]'
    ):
        ArrayMetadataV3.from_json(doc)


@pytest.mark.parametrize(
    "encoding",
    [
        {"name": "default", "separator": "/"},
        {"name": "default", "separator": "."},
        {"name": "v2", "separator": "."},
        {"name": "v2", "separator": "/"},
    ],
)
def test_chunk_key_encodings(zarr_python_doc, encoding):
    meta = check_round_trip(
        zarr_python_doc(shape=(5, 5), chunks=(2, 2), dtype="i4", chunk_key_encoding=encoding)
    )
    assert (meta.chunk_key_encoding.name, meta.chunk_key_encoding.separator) == (
        encoding["name"],
        encoding["separator"],
    )


@pytest.mark.parametrize(
    "kwargs",
    [
        {"shape": (), "dtype": "f8", "fill_value": -INF},
        {"shape": (), "dtype": "u1", "shards": None},
        {"shape": (0,), "dtype": "i2", "chunks": (1,)},
        {"shape": (10, 0, 3), "dtype": "f4", "chunks": (5, 2, 3), "fill_value": NAN},
        {"shape": (3, 4), "dtype": "f4", "dimension_names": ["y", "x"]},
        {"shape": (3, 4), "dtype": "f4", "dimension_names": [None, "x"]},
        {
            "shape": (3,),
            "dtype": "i8",
            "attributes": {
                "units": "K",
                "nested": {"a": [1, 2.5, None, True]},
                "unicode": "température",
                "empty": {},
            },
        },
    ],
    ids=["0d-f8", "0d-u1", "len0", "zero-dim", "dim-names", "dim-names-null", "attributes"],
)
def test_shapes_names_attributes(zarr_python_doc, kwargs):
    check_round_trip(zarr_python_doc(**kwargs))


def test_group_documents(tmp_path):
    group = zarr.open_group(str(tmp_path), mode="w", attributes={"title": "t", "n": [1, 2]})
    group.create_array("child", shape=(3,), dtype="f4", fill_value=NAN)
    plain = json.loads((tmp_path / "zarr.json").read_text())
    meta = GroupMetadataV3.from_json((tmp_path / "zarr.json").read_bytes())
    assert canonical(meta.to_json()) == canonical(plain)
    with pytest.warns(UserWarning):
        zarr.consolidate_metadata(str(tmp_path))
    consolidated = json.loads((tmp_path / "zarr.json").read_text())
    meta = GroupMetadataV3.from_json(consolidated)
    assert meta.consolidated_metadata["kind"] == "inline"
    assert canonical(meta.to_json()) == canonical(consolidated)
    child = consolidated["consolidated_metadata"]["metadata"]["child"]
    check_round_trip(child)


@pytest.mark.parametrize(
    ("dtype", "fill"),
    [
        ("float32", np.frombuffer(b"\x01\x00\xc0\x7f", "<f4")[0]),  # NaN with a payload
        ("float64", -0.0),
        ("complex128", complex(NAN, -INF)),
        ("int64", -5),
        ("uint64", 2**64 - 1),
        ("bool", True),
        ("float16", np.float16(-INF)),
    ],
)
def test_zarr_python_reads_what_zarrc_writes(zarr_python_open, dtype, fill):
    meta = ArrayMetadataV3.create(
        (6, 4),
        dtype,
        (3, 4),
        fill_value=fill,
        dimension_names=["t", None],
        codecs=[
            {"name": "transpose", "configuration": {"order": [1, 0]}},
            "bytes",
            {"name": "zstd", "configuration": {"level": 3}},
        ],
        attributes={"a": 1},
    )
    array = zarr_python_open(meta.to_bytes())
    assert array.shape == (6, 4) and array.dtype == np.dtype(dtype)
    got = np.asarray(array.fill_value, dtype=dtype)
    if np.isnan(got).any():  # zarr-python canonicalises NaN payloads
        assert np.array_equal(got, np.asarray(meta.fill_value), equal_nan=True)
    else:
        assert got.tobytes() == meta.fill_value.tobytes()
    assert array.metadata.dimension_names == ("t", None)
