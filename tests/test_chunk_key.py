"""Chunk key encodings 'default' and 'v2' (both separators), single and batched."""

from __future__ import annotations

import json

import numpy as np
import pytest
from hypothesis import given
from hypothesis import strategies as st

from zarrc.core.chunk_key import ChunkKeyEncoding
from zarrc.errors import SelectionError, StoreError
from zarrc.metadata import ArrayMetadataV3
from zarrc.metadata.v2 import ArrayMetadataV2

ENCODINGS = [("default", "/"), ("default", "."), ("v2", "."), ("v2", "/")]


@pytest.mark.parametrize(
    ("name", "sep", "coords", "key"),
    [
        ("default", "/", (1, 23, 45), "c/1/23/45"),
        ("default", ".", (1, 23, 45), "c.1.23.45"),
        ("v2", ".", (1, 23, 45), "1.23.45"),
        ("v2", "/", (1, 23, 45), "1/23/45"),
        ("default", "/", (), "c"),
        ("default", ".", (), "c"),
        ("v2", ".", (), "0"),
        ("v2", "/", (), "0"),
        ("default", "/", (0,), "c/0"),
        ("v2", ".", (7,), "7"),
    ],
)
def test_spec_examples(name, sep, coords, key):
    encoding = ChunkKeyEncoding(name, sep)
    assert encoding.encode(coords) == key
    assert encoding.decode(key, ndim=len(coords)) == coords
    assert encoding.encode_many(np.array([coords], dtype=np.int64).reshape(1, len(coords))) == [key]


def test_defaults_and_construction():
    assert ChunkKeyEncoding().separator == "/" and ChunkKeyEncoding("v2").separator == "."
    meta = ArrayMetadataV3.create((4,), "u1", (2,), chunk_key_encoding="v2")
    assert ChunkKeyEncoding.from_metadata(meta) == ChunkKeyEncoding("v2", ".")
    assert ChunkKeyEncoding.from_metadata(meta.chunk_key_encoding) == ChunkKeyEncoding("v2", ".")
    assert ChunkKeyEncoding("v2") != ChunkKeyEncoding("v2", "/")
    with pytest.raises(ValueError):
        ChunkKeyEncoding("v3")
    with pytest.raises(ValueError):
        ChunkKeyEncoding("default", "-")


def test_prefix_and_numpy_integers():
    encoding = ChunkKeyEncoding()
    assert encoding.encode((np.int64(2), np.uint8(3)), prefix="a/b/") == "a/b/c/2/3"
    coords = np.array([[0, 1], [10, 200]], dtype=np.uint16)
    assert encoding.encode_many(coords, prefix="x{}/") == ["x{}/c/0/1", "x{}/c/10/200"]
    assert ChunkKeyEncoding("v2").encode_many(np.zeros((3, 0), dtype=int)) == ["0", "0", "0"]
    assert encoding.encode_many(np.zeros((0, 2), dtype=int)) == []


def test_v2_zero_is_ambiguous_without_ndim():
    encoding = ChunkKeyEncoding("v2")
    assert encoding.decode("0") == (0,) and encoding.decode("0", ndim=0) == ()
    assert ChunkKeyEncoding().decode("c") == ()


@pytest.mark.parametrize(
    ("name", "sep", "key", "ndim"),
    [
        ("default", "/", "1/2", None),
        ("default", "/", "c.1.2", None),
        ("default", "/", "c/1/", None),
        ("default", "/", "c//1", None),
        ("default", "/", "c/01", None),
        ("default", "/", "c/-1", None),
        ("default", "/", "c/+1", None),
        ("default", "/", "c/1a", None),
        ("default", "/", "c/١", None),
        ("default", "/", "c/1/2", 3),
        ("default", "/", "c", 1),
        ("default", "/", "d/1", None),
        ("default", "/", "c/99999999999999999999", None),
        ("default", "/", "", None),
        ("v2", ".", "1/2", None),
        ("v2", ".", "1..2", None),
        ("v2", ".", "c.1", None),
        ("v2", ".", "", None),
        ("v2", "/", "1.2", 2),
        ("v2", ".", "0", 2),
        ("v2", ".", "1", 0),
    ],
)
def test_malformed_keys(name, sep, key, ndim):
    with pytest.raises(StoreError):
        ChunkKeyEncoding(name, sep).decode(key, ndim=ndim)


def test_negative_coordinates():
    with pytest.raises(SelectionError):
        ChunkKeyEncoding().encode((0, -1))
    with pytest.raises(SelectionError):
        ChunkKeyEncoding().encode_many(np.array([[0, -1]]))
    with pytest.raises(SelectionError):
        ChunkKeyEncoding().encode_many(np.array([0, 1]))


coords_lists = st.lists(st.integers(0, 2**63 - 1), min_size=0, max_size=6)


@given(st.sampled_from(ENCODINGS), coords_lists)
def test_round_trip(encoding, coords):
    encoding = ChunkKeyEncoding(*encoding)
    key = encoding.encode(coords)
    assert encoding.decode(key, ndim=len(coords)) == tuple(coords)
    assert key.isascii()


@given(st.sampled_from(ENCODINGS), st.integers(0, 5), st.data())
def test_encode_many_matches_encode(encoding, ndim, data):
    encoding = ChunkKeyEncoding(*encoding)
    rows = data.draw(st.lists(st.lists(st.integers(0, 10**6), min_size=ndim, max_size=ndim), max_size=20))
    coords = np.array(rows, dtype=np.int64).reshape(len(rows), ndim)
    assert encoding.encode_many(coords, prefix="p/") == [encoding.encode(r, prefix="p/") for r in rows]


@pytest.mark.parametrize(("name", "sep"), ENCODINGS)
@pytest.mark.parametrize("ndim", [0, 1, 3])
def test_key_parts_count_what_encode_writes(name, sep, ndim):
    """key_parts(ndim) is the number of "/"-separated parts of a key encode writes
    (what precedes them in a store key is the array's prefix)."""
    enc = ChunkKeyEncoding(name, sep)
    assert enc.key_parts(ndim) == len(enc.encode((12,) * ndim).split("/"))


@pytest.mark.parametrize("sep", [".", "/"])
def test_from_metadata_of_v2_arrays(sep):
    doc = {"zarr_format": 2, "shape": [4], "chunks": [2], "dtype": "<i4", "compressor": None,
           "fill_value": 0, "order": "C", "filters": None, "dimension_separator": sep}
    md = ArrayMetadataV2.from_json(json.dumps(doc).encode())
    assert ChunkKeyEncoding.from_metadata(md) == ChunkKeyEncoding("v2", sep)
