"""Compressors numcodecs runs whole (bz2, lzma) are decoded by zarrc with a bound:
a v2 chunk that decodes to more than the chunk's size (a decompression bomb) is
refused before more than the chunk's size + 1 bytes are held."""

from __future__ import annotations

import bz2
import json
import lzma
import tracemalloc

import numpy as np
import pytest

import zarrc
from zarrc.codecs.bounded import bounded_decode
from zarrc.errors import CodecError
from zarrc.stores import MemoryStore

pytest.importorskip("numcodecs")

COMPRESSORS = {
    "bz2": ({"id": "bz2", "level": 1}, bz2.compress),
    "lzma-xz": ({"id": "lzma", "format": 1, "check": -1, "preset": None, "filters": None},
                lambda b: lzma.compress(b, preset=0)),
}


def v2_array(compressor: dict, chunk: bytes | None = None) -> zarrc.Array:
    store = MemoryStore()
    store.set("a/.zarray", json.dumps({"zarr_format": 2, "shape": [8], "chunks": [4], "dtype": "<i4",
                                       "compressor": compressor, "fill_value": 0, "order": "C",
                                       "filters": None}).encode())
    if chunk is not None:
        store.set("a/0", chunk)
    return zarrc.open_array(store, path="a", mode="r", zarr_format=2)


@pytest.mark.parametrize("name", list(COMPRESSORS))
def test_bomb_refused_before_it_is_held(name) -> None:
    config, compress = COMPRESSORS[name]
    bomb = compress(bytes(64 << 20))                       # 64 MiB of zeros for a 16-byte chunk
    a = v2_array(config, bomb)
    tracemalloc.start()
    try:
        with pytest.raises(CodecError, match="decodes to more than the 16 bytes"):
            a[...]
        peak = tracemalloc.get_traced_memory()[1]
    finally:
        tracemalloc.stop()
    assert peak < (8 << 20), peak


@pytest.mark.parametrize("name", list(COMPRESSORS))
def test_good_chunks_and_concatenated_streams_read(name) -> None:
    config, compress = COMPRESSORS[name]
    data = np.arange(4, dtype="<i4").tobytes()
    np.testing.assert_array_equal(v2_array(config, compress(data))[0:4], np.arange(4))
    two = compress(data[:8]) + compress(data[8:])             # (bz2/lzma.decompress read both)
    np.testing.assert_array_equal(v2_array(config, two)[0:4], np.arange(4))
    with pytest.raises(CodecError):
        v2_array(config, compress(data)[:-5])[0:4]           # truncated
    with pytest.raises(CodecError):
        v2_array(config, b"not a stream")[0:4]


def test_other_codecs_are_not_bounded_here() -> None:
    assert bounded_decode(object(), b"", 1, "x") is None


@pytest.mark.parametrize("name,config", [("bz2", {"level": 1}), ("lzma", {"preset": 0})])
def test_v3_numcodecs_bomb_refused(name, config) -> None:
    compress = bz2.compress if name == "bz2" else (lambda b: lzma.compress(b, preset=0))
    store = MemoryStore()
    a = zarrc.create_array(store, name="a", shape=(8,), dtype="<i4", chunks=(4,),
                           compressors=[{"name": f"numcodecs.{name}", "configuration": config}])
    a[...] = np.arange(8)
    np.testing.assert_array_equal(zarrc.open_array(store, path="a", mode="r")[...], np.arange(8))
    store.set("a/c/0", compress(bytes(64 << 20)))
    with pytest.raises(CodecError, match="decodes to more than the 16 bytes"):
        zarrc.open_array(store, path="a", mode="r")[0:4]
    np.testing.assert_array_equal(zarrc.open_array(store, path="a", mode="r")[4:8], np.arange(4, 8))
