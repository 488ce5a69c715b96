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


# ------------------------------------------------ v2 chunks with numcodecs filters

FILTERS = {   # filter (encode order: the chunk of 4 <f8 items first), its stored item size
    "fixedscaleoffset": ({"id": "fixedscaleoffset", "offset": 0, "scale": 10, "dtype": "<f8",
                          "astype": "|u1"}, 1),
    "delta": ({"id": "delta", "dtype": "<f8", "astype": "<f4"}, 4),
    "quantize": ({"id": "quantize", "digits": 2, "dtype": "<f8", "astype": "<f4"}, 4),
    "astype": ({"id": "astype", "encode_dtype": "<f4", "decode_dtype": "<f8"}, 4),
}


def v2_filtered(filters: list, compressor: dict | None, chunk: bytes) -> zarrc.Array:
    store = MemoryStore()
    store.set("a/.zarray", json.dumps({"zarr_format": 2, "shape": [4], "chunks": [4], "dtype": "<f8",
                                       "compressor": compressor, "fill_value": 0, "order": "C",
                                       "filters": filters}).encode())
    store.set("a/0", chunk)
    return zarrc.open_array(store, path="a", mode="r", zarr_format=2)


@pytest.mark.parametrize("name", list(FILTERS))
def test_filtered_chunk_of_the_wrong_size_is_refused_naming_the_codec(name) -> None:
    # a filter makes items of its stored type, one per item of the chunk: other sizes
    # (a hostile chunk the filter would expand, 8x for fixedscaleoffset to u1) are
    # refused before the filter runs
    import numcodecs
    config, stored = FILTERS[name]
    codec = numcodecs.get_codec(dict(config))
    good = codec.encode(np.array([0.5, 1.25, 2.0, 3.5]))
    np.testing.assert_allclose(v2_filtered([config], None, bytes(good))[...],
                               codec.decode(good), rtol=0, atol=0)
    for chunk in (bytes(good) + bytes(stored * (1 << 16)), bytes(good)[:-stored]):
        with pytest.raises(CodecError, match=r"stored chunk \(no compressor\) gives \d+ bytes where "
                                             rf"the chunk's codecs expect {4 * stored}"):
            v2_filtered([config], None, chunk)[...]


@pytest.mark.parametrize("name", list(COMPRESSORS))
def test_bomb_before_a_filter_refused_before_it_is_held(name) -> None:
    # the compressor's output is the filter's input, 4 bytes here (4 items of u1)
    config, compress = COMPRESSORS[name]
    a = v2_filtered([FILTERS["fixedscaleoffset"][0]], config, compress(bytes(64 << 20)))
    tracemalloc.start()
    try:
        with pytest.raises(CodecError, match="decodes to more than the 4 bytes"):
            a[...]
        peak = tracemalloc.get_traced_memory()[1]
    finally:
        tracemalloc.stop()
    assert peak < (8 << 20), peak


def test_lz4_header_claiming_more_than_the_chunk_is_refused_before_decoding() -> None:
    # numcodecs' LZ4 allocates what its header claims before it decodes: 2 GiB here
    import numcodecs
    good = numcodecs.LZ4().encode(np.arange(4, dtype="<f8").tobytes())
    a = v2_filtered(None, {"id": "lz4", "acceleration": 1}, bytes(good))
    np.testing.assert_array_equal(a[...], np.arange(4))
    claim = (2**31 - 1).to_bytes(4, "little") + bytes(good)[4:]
    tracemalloc.start()
    try:
        with pytest.raises(CodecError, match="lz4: header claims 2147483647 bytes, the chunk's codecs "
                                             "expect 32"):
            v2_filtered(None, {"id": "lz4", "acceleration": 1}, claim)[...]
        peak = tracemalloc.get_traced_memory()[1]
    finally:
        tracemalloc.stop()
    assert peak < (8 << 20), peak


def sizeless_zstd(raw: bytes) -> bytes:
    """A zstd frame of ``raw`` that records no content size (as a streaming encoder
    writes it): zarrc's frame with its size field dropped and a window descriptor of
    128 MiB instead of the single segment."""
    from zarrc.codecs.zstd import Zstd
    frame = Zstd(level=1).encode(raw)
    fhd = frame[4]
    single = (fhd >> 5) & 1
    start = 5 + (0 if single else 1) + (single, 2, 4, 8)[fhd >> 6]
    return frame[:4] + bytes([fhd & 0x07, 0x88]) + frame[start:]


def refused_under_read_over(a: zarrc.Array, items: list, under: int, over: int, match: str) -> None:
    """``a`` refused whole (CodecError matching ``match``) with zarrc.config.vlen_chunk_bytes
    at ``under``, and read as ``items`` at ``over``."""
    with zarrc.config.set(vlen_chunk_bytes=under):
        with pytest.raises(CodecError, match=match):
            a[...]
    with zarrc.config.set(vlen_chunk_bytes=over):
        assert list(a[...]) == items


def test_sizeless_zstd_frames_of_variable_length_items_stop_at_the_setting() -> None:
    # no header to check: the frame is decoded into a buffer of the setting's bytes,
    # refused as it overfills it (naming the key and the setting), read whole within it
    import numcodecs
    store = MemoryStore()
    a = zarrc.create_array(store, name="a", shape=(8,), chunks=(4,), dtype=str,
                           compressors=[{"name": "zstd", "configuration": {"level": 1}}])
    items = ["ab" * (1 << 19), "c" * (1 << 20), "d", ""]
    a[:4] = np.array(items, dtype=object)
    raw = bytes(numcodecs.VLenUTF8().encode(np.array(items, dtype=object)))
    frame = sizeless_zstd(raw)
    assert frame[5] == 0x88 and len(frame) < 64 * 1024
    store.set("a/c/0", frame)
    with zarrc.config.set(vlen_chunk_bytes=1 << 20):
        with pytest.raises(CodecError, match=r"chunk a/c/0 of /a: zstd: decodes to more than the 1048576 "
                                             r"bytes a chunk holds \(zarrc.config.vlen_chunk_bytes"):
            a[...]
    with zarrc.config.set(vlen_chunk_bytes=len(raw)):
        assert list(a[:4]) == items
    with zarrc.config.set(vlen_chunk_bytes=8 << 20):
        assert list(a[:4]) == items
    store.set("a/c/0", frame[:-50])
    with pytest.raises(CodecError, match="chunk a/c/0 of /a: zstd"):
        a[...]


def test_a_sizeless_zstd_frame_after_a_sized_one_stops_at_the_setting() -> None:
    # the first frame's header claims little; the total of the frames is unknown, so
    # they are decoded into a buffer of the setting's bytes as a sizeless frame is
    import numcodecs
    store = MemoryStore()
    a = zarrc.create_array(store, name="a", shape=(4,), chunks=(4,), dtype=str,
                           compressors=[{"name": "zstd", "configuration": {"level": 1}}])
    items = ["ab" * (1 << 19), "c" * (1 << 20), "d", ""]
    raw = bytes(numcodecs.VLenUTF8().encode(np.array(items, dtype=object)))
    frames = bytes(numcodecs.Zstd(1).encode(raw[:1000])) + sizeless_zstd(raw[1000:])
    store.set("a/c/0", frames)
    refused_under_read_over(a, items, 1 << 20, 4 << 20,
                            r"chunk a/c/0 of /a: zstd: decodes to more than the 1048576 "
                            r"bytes a chunk holds \(zarrc.config.vlen_chunk_bytes")
    sized = bytes(numcodecs.Zstd(1).encode(raw[:1000])) + bytes(numcodecs.Zstd(1).encode(raw[1000:]))
    store.set("a/c/0", sized)
    with zarrc.config.set(vlen_chunk_bytes=1 << 20):      # (their recorded total: refused before decoding)
        with pytest.raises(CodecError, match=r"zstd: decodes to more than the 1048576 bytes"):
            a[...]
    assert list(a[...]) == items


def test_inner_chunks_of_variable_length_items_stop_at_the_setting() -> None:
    # a shard's inner chunks of strings are chunks of variable-length items too
    store = MemoryStore()
    a = zarrc.create_array(store, name="a", shape=(8,), chunks=(4,), shards=(8,), dtype=str,
                           compressors=[{"name": "zstd", "configuration": {"level": 1}}])
    items = ["x" * (1 << 20)] * 4 + ["a", "b", "", "dé"]
    a[...] = np.array(items, dtype=object)
    refused_under_read_over(a, items, 1 << 20, 8 << 20,
                            r"chunk a/c/0 of /a: inner chunk \(0,\): zstd: .*1048576 "
                            r"\(zarrc.config.vlen_chunk_bytes")


def test_codecs_around_a_shard_of_variable_length_items_stop_at_its_inner_chunks_bound() -> None:
    # [sharding_indexed, zstd]: the zstd around the shard may decode to at most its
    # inner chunks at the setting's bound and its index: a bomb beyond is refused
    # before it is held, a shard within reads
    store = MemoryStore()
    codecs = [{"name": "sharding_indexed", "configuration": {
                  "chunk_shape": [2], "index_codecs": [{"name": "bytes", "configuration": {"endian": "little"}},
                                                       {"name": "crc32c"}],
                  "codecs": [{"name": "vlen-utf8"}]}},
              {"name": "zstd", "configuration": {"level": 1}}]
    a = zarrc.create_array(store, name="a", shape=(4,), chunks=(4,), dtype=str, fill_value="")
    md = store.get("a/zarr.json")
    doc = json.loads(bytes(md))
    doc["codecs"] = codecs
    store.set("a/zarr.json", json.dumps(doc).encode())
    a = zarrc.open_array(store, path="a")
    items = ["y" * (1 << 19), "b", "", "dé"]
    a[...] = np.array(items, dtype=object)
    assert list(a[...]) == items
    refused_under_read_over(a, items, 1 << 18, 1 << 20,
                            r"chunk a/c/0 of /a: zstd: .*\(zarrc.config.vlen_chunk_bytes")


@pytest.mark.parametrize("name", ["zlib", "bz2", "zstd"])
@pytest.mark.parametrize("before", [None, "fletcher32"])
def test_a_compressor_among_the_filters_is_bounded_as_the_compressor_is(name, before) -> None:
    # v2 filters [<compressor>] (or [<compressor>, fletcher32]: its output size unknown)
    # and no compressor: a bomb is refused before it is held (the chunk's 32 bytes
    # exactly; after fletcher32, 4 times the chunk plus 1 MiB), good chunks read
    import numcodecs
    config = {"zlib": {"id": "zlib", "level": 1}, "bz2": {"id": "bz2", "level": 1},
              "zstd": {"id": "zstd", "level": 1}}[name]
    filters = [config] if before is None else [{"id": before}, config]
    chain = [numcodecs.get_codec(dict(f)) for f in filters]

    def encoded(raw: bytes) -> bytes:
        for codec in chain:
            raw = bytes(codec.encode(raw))
        return raw
    data = np.array([0.5, 1.25, 2.0, 3.5])
    np.testing.assert_array_equal(v2_filtered(filters, None, encoded(data.tobytes()))[...], data)
    a = v2_filtered(filters, None, encoded(bytes(64 << 20)) if before is None else chain[-1].encode(bytes(64 << 20)))
    tracemalloc.start()
    try:
        with pytest.raises(CodecError, match=f"chunk a/0 of /a: {name}.*(decodes to more|claims)"):
            a[...]
        peak = tracemalloc.get_traced_memory()[1]
    finally:
        tracemalloc.stop()
    assert peak < (8 << 20), peak
