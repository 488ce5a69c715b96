"""zarr.json documents written by tensorstore's zarr3 driver: zarrc parses them, and
tensorstore opens what zarrc writes back."""

from __future__ import annotations

import numpy as np
import pytest

from zarrc.metadata import ArrayMetadataV3

ts = pytest.importorskip("tensorstore")

REGULAR = {"name": "regular", "configuration": {"chunk_shape": [4, 3]}}

CASES = {
    "defaults": {"shape": [10, 6], "data_type": "float32", "chunk_grid": REGULAR},
    "zero-dim": {"shape": [10, 0], "data_type": "int16", "chunk_grid": REGULAR},
    "0d-complex-nan-payload": {
        "shape": [],
        "data_type": "complex128",
        "fill_value": ["NaN", "0x7ff8000000000001"],
    },
    "float-hex": {"shape": [4], "data_type": "float32", "fill_value": "0xffc00000"},
    "float16-inf": {"shape": [4], "data_type": "float16", "fill_value": "-Infinity"},
    "neg-zero": {"shape": [4], "data_type": "float64", "fill_value": -0.0},
    "uint64-max": {"shape": [4], "data_type": "uint64", "fill_value": 2**64 - 1},
    "bool": {"shape": [4], "data_type": "bool", "fill_value": True},
    "shorthand-codecs": {
        "shape": [4, 6],
        "data_type": "uint8",
        "chunk_grid": REGULAR,
        "codecs": [{"name": "transpose", "configuration": {"order": [1, 0]}}, "bytes", "crc32c"],
        "dimension_names": ["x", None],
        "attributes": {"a": 1},
    },
    "compressors": {
        "shape": [4],
        "data_type": "float64",
        "codecs": [
            "bytes",
            {"name": "zstd"},
            {"name": "gzip"},
            {
                "name": "blosc",
                "configuration": {"cname": "zstd", "shuffle": "bitshuffle", "typesize": 8, "clevel": 2},
            },
        ],
    },
    "big-endian": {
        "shape": [4],
        "data_type": "int32",
        "codecs": [{"name": "bytes", "configuration": {"endian": "big"}}],
    },
    "v2-keys": {"shape": [8, 8], "data_type": "int16", "chunk_key_encoding": {"name": "v2"}},
    "v2-keys-slash": {
        "shape": [8, 8],
        "data_type": "int16",
        "chunk_key_encoding": {"name": "v2", "configuration": {"separator": "/"}},
    },
    "default-dot": {
        "shape": [8, 8],
        "data_type": "int16",
        "chunk_key_encoding": {"name": "default", "configuration": {"separator": "."}},
    },
    "sharding-start": {
        "shape": [8, 8],
        "data_type": "int16",
        "codecs": [
            {
                "name": "sharding_indexed",
                "configuration": {
                    "chunk_shape": [2, 2],
                    "codecs": [
                        {"name": "bytes", "configuration": {"endian": "big"}},
                        {
                            "name": "blosc",
                            "configuration": {
                                "cname": "lz4",
                                "clevel": 3,
                                "shuffle": "bitshuffle",
                                "typesize": 2,
                            },
                        },
                    ],
                    "index_codecs": ["bytes"],
                    "index_location": "start",
                },
            }
        ],
    },
    "sharding-end": {
        "shape": [8, 8],
        "data_type": "float32",
        "chunk_grid": REGULAR | {"configuration": {"chunk_shape": [8, 4]}},
        "codecs": [
            {
                "name": "sharding_indexed",
                "configuration": {
                    "chunk_shape": [4, 2],
                    "codecs": ["bytes"],
                    "index_codecs": ["bytes", "crc32c"],
                },
            }
        ],
    },
    "extension-field": {"shape": [4], "data_type": "uint16", "extra": {"must_understand": False, "v": 1}},
}


def without_default_index_location(value):
    """Drop ``"index_location": "end"`` (zarrc writes the default as zarr-python does,
    tensorstore omits it)."""
    if isinstance(value, dict):
        return {
            k: without_default_index_location(v)
            for k, v in value.items()
            if not (k == "index_location" and v == "end")
        }
    if isinstance(value, list):
        return [without_default_index_location(v) for v in value]
    return value


@pytest.mark.parametrize("case", list(CASES))
def test_parse_tensorstore_documents(tensorstore_doc, tensorstore_open, case):
    doc = tensorstore_doc(CASES[case])
    meta = ArrayMetadataV3.from_json(doc, "/ts")
    assert list(meta.shape) == doc["shape"]
    assert meta.data_type.name == doc["data_type"]
    assert list(meta.chunk_shape) == doc["chunk_grid"]["configuration"]["chunk_shape"]
    assert meta.chunk_key_encoding.name == doc["chunk_key_encoding"]["name"]
    # the fill value is exact: tensorstore's own JSON form parses to the same bits
    again = ArrayMetadataV3.from_json(meta.to_json())
    assert again == meta
    assert meta.to_json()["fill_value"] == doc["fill_value"] or np.isnan(meta.fill_value)
    # tensorstore opens what zarrc writes and sees the same array
    store = tensorstore_open(meta.to_bytes())
    assert list(store.shape) == list(meta.shape)
    assert store.dtype.numpy_dtype == meta.dtype
    assert np.asarray(store.fill_value, dtype=meta.dtype).tobytes() == meta.fill_value.tobytes()
    written = store.spec().to_json()["metadata"]
    assert without_default_index_location(written["codecs"]) == without_default_index_location(doc["codecs"])
    assert written["fill_value"] == doc["fill_value"]


def test_nan_payload_round_trips_bit_exactly(tensorstore_doc):
    doc = tensorstore_doc({"shape": [2], "data_type": "float64", "fill_value": "0xfff0000000000123"})
    meta = ArrayMetadataV3.from_json(doc)
    assert meta.fill_value.view(np.uint64) == 0xFFF0000000000123
    assert meta.to_json()["fill_value"] == "0xfff0000000000123"
