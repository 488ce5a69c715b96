"""Hostile metadata is refused when it is opened, with a MetadataError naming the
document and the field: chunks (shards, rectilinear chunks) too large to hold,
absurd dimension counts; v2 compressor and filter errors name the ``.zarray``."""

from __future__ import annotations

import json

import pytest

import zarrc
from zarrc.errors import MetadataError, ZarrcError
from zarrc.metadata.common import MAX_CHUNK_BYTES, MAX_DIMS
from zarrc.stores import MemoryStore


def v3_doc(shape, chunks, dtype="uint8", **extra) -> bytes:
    doc = {"zarr_format": 3, "node_type": "array", "shape": shape, "data_type": dtype,
           "chunk_grid": {"name": "regular", "configuration": {"chunk_shape": chunks}},
           "chunk_key_encoding": {"name": "default"}, "fill_value": 0,
           "codecs": [{"name": "bytes", "configuration": {"endian": "little"}}], **extra}
    return json.dumps(doc).encode()


def v2_doc(shape, chunks, dtype="|u1", compressor=None, filters=None) -> bytes:
    return json.dumps({"zarr_format": 2, "shape": shape, "chunks": chunks, "dtype": dtype,
                       "compressor": compressor, "fill_value": 0, "order": "C",
                       "filters": filters}).encode()


def open_v3(doc: bytes):
    store = MemoryStore()
    store.set("a/zarr.json", doc)
    return zarrc.open_array(store, path="a", mode="r")


def open_v2(doc: bytes):
    store = MemoryStore()
    store.set("a/.zarray", doc)
    return zarrc.open_array(store, path="a", mode="r", zarr_format=2)


@pytest.mark.parametrize("chunks,dtype", [([2**40, 1], "uint8"), ([2**40, 2**40], "uint8"),
                                          ([2**20, 2**20, 2], "float32"), ([2**62, 2**62], "uint64")])
def test_v3_huge_chunks_refused_at_open(chunks, dtype) -> None:
    with pytest.raises(MetadataError, match=r"zarr\.json of /a: .*chunk_shape.*512 GiB"):
        open_v3(v3_doc([2**62] * len(chunks), chunks, dtype))


def test_v3_largest_allowed_chunk_opens() -> None:
    a = open_v3(v3_doc([2**41], [MAX_CHUNK_BYTES]))
    assert a.chunks == (MAX_CHUNK_BYTES,)
    assert a[5] == 0                     # a missing chunk: nothing allocated but the output


@pytest.mark.parametrize("shard,inner,match", [
    ([2**21, 2**21], [2**20, 2**20], r"sharding_indexed\.configuration\.chunk_shape.*512 GiB"),       # inner chunks
    ([2**26, 2**26], [2**10, 2**10], r"chunk_grid\.configuration\.chunk_shape.* shards .*1 PiB"),
])
def test_v3_huge_shards_or_inner_chunks_refused_at_open(shard, inner, match) -> None:
    sharding = {"name": "sharding_indexed", "configuration": {
        "chunk_shape": inner, "codecs": [{"name": "bytes", "configuration": {"endian": "little"}}],
        "index_codecs": [{"name": "bytes", "configuration": {"endian": "little"}}, {"name": "crc32c"}]}}
    doc = json.loads(v3_doc([2**41, 2**41], shard))
    doc["codecs"] = [sharding]
    with pytest.raises(MetadataError, match=r"zarr\.json of /a: .*" + match):
        open_v3(json.dumps(doc).encode())


def test_v3_large_shard_of_small_chunks_opens() -> None:
    sharding = {"name": "sharding_indexed", "configuration": {
        "chunk_shape": [2**10, 2**10], "codecs": [{"name": "bytes", "configuration": {"endian": "little"}}],
        "index_codecs": [{"name": "bytes", "configuration": {"endian": "little"}}, {"name": "crc32c"}]}}
    doc = json.loads(v3_doc([2**21, 2**21], [2**20, 2**20]))      # 1 TiB shards of 1 MiB chunks
    doc["codecs"] = [sharding]
    a = open_v3(json.dumps(doc).encode())
    assert a[3, 4] == 0


def test_v3_huge_rectilinear_chunk_refused() -> None:
    doc = json.loads(v3_doc([2**41 + 1, 4], [1, 1]))
    doc["chunk_grid"] = {"name": "rectilinear", "configuration": {
        "kind": "inline", "chunk_shapes": [[1, 2**41], [4]]}}
    with pytest.raises(MetadataError, match=r"zarr\.json of /a: "):
        open_v3(json.dumps(doc).encode())


@pytest.mark.parametrize("ndim", [MAX_DIMS + 1, 10_000])
def test_v3_too_many_dimensions(ndim) -> None:
    with pytest.raises(MetadataError, match=rf"zarr\.json of /a: \"shape\" has {ndim} dimensions"):
        open_v3(v3_doc([1] * ndim, [1] * ndim))


@pytest.mark.parametrize("ndim", [MAX_DIMS + 1, 10_000])
def test_v2_too_many_dimensions(ndim) -> None:
    with pytest.raises(MetadataError, match=rf"\.zarray of /a: \"shape\" has {ndim} dimensions"):
        open_v2(v2_doc([1] * ndim, [1] * ndim))


@pytest.mark.parametrize("chunks", [[2**40, 1], [2**40, 2**40]])
def test_v2_huge_chunks_refused_at_open(chunks) -> None:
    with pytest.raises(MetadataError, match=r"\.zarray of /a: \"chunks\".*512 GiB"):
        open_v2(v2_doc([2**62] * len(chunks), chunks, "<u2"))


def test_deep_nesting_refused() -> None:
    doc = v3_doc([4], [2])[:-1] + b', "attributes": {"x": ' + b"[" * 10_000 + b"1" + b"]" * 10_000 + b"}}"
    with pytest.raises(MetadataError, match=r"zarr\.json of /a: "):
        open_v3(doc)


@pytest.mark.parametrize("compressor,filters", [
    ({"id": "blosc", "cname": "nope", "clevel": 5, "shuffle": 1}, None),
    ({"id": "no-such-codec"}, None),
    (None, [{"id": "no-such-filter"}]),
    ({"id": "zstd", "level": "high"}, None),
])
def test_v2_codec_errors_name_the_zarray(compressor, filters) -> None:
    with pytest.raises(MetadataError, match=r"\.zarray of /a: ") as info:
        open_v2(v2_doc([4], [2], compressor=compressor, filters=filters))[...]
    assert isinstance(info.value, ZarrcError)


def test_v3_shard_index_too_large_refused() -> None:
    """2**40 inner chunks of one byte per shard: a 16 TiB shard index."""
    sharding = {"name": "sharding_indexed", "configuration": {
        "chunk_shape": [1], "codecs": [{"name": "bytes"}],
        "index_codecs": [{"name": "bytes", "configuration": {"endian": "little"}}]}}
    doc = json.loads(v3_doc([2**40], [2**40]))
    doc["codecs"] = [sharding]
    with pytest.raises(MetadataError, match=r"zarr\.json of /a: .*inner chunks per shard"):
        open_v3(json.dumps(doc).encode())


@pytest.mark.parametrize("version", [2, 3])
def test_oversized_document_refused(version, monkeypatch) -> None:
    from zarrc.metadata import v3
    monkeypatch.setattr(v3, "MAX_DOCUMENT_BYTES", 10_000)
    if version == 3:
        doc = json.loads(v3_doc([4], [2]))
        doc["attributes"] = {"x": "y" * 20_000}
        with pytest.raises(MetadataError, match=r"zarr\.json of /a: holds \d+ bytes, more than the 10000"):
            open_v3(json.dumps(doc).encode())
    else:
        store = MemoryStore()
        store.set("a/.zarray", v2_doc([4], [2]))
        store.set("a/.zattrs", json.dumps({"x": "y" * 20_000}).encode())
        with pytest.raises(MetadataError, match=r"\.zattrs of /a: holds \d+ bytes"):
            zarrc.open_array(store, path="a", mode="r", zarr_format=2).attrs["x"]
