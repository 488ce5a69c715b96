"""The ml_dtypes data types between tensorstore (drivers zarr3 and zarr) and zarrc, bit for bit
both ways, for each type tensorstore has (bfloat16, its float8 names, float4_e2m1fn,
int2, int4; it has no uint2 / uint4 / float6 / float8_e4m3 and no packbits codec):
plain and zstd-compressed chunks, partial regions (fill values of missing chunks,
hex fill values), and a checkpoint laid out as orbax lays out its zarr3 arrays
(sharding_indexed, bytes little endian + zstd inside, bytes + crc32c index at the
end; the grid's chunk is a device's shard)."""

from __future__ import annotations

import functools
import json

import numpy as np
import pytest

import zarrc

ts = pytest.importorskip("tensorstore", reason="interop with tensorstore needs tensorstore")
ml_dtypes = pytest.importorskip("ml_dtypes", reason="the ml_dtypes types need ml_dtypes (zarrc[dtypes])")

# the names tensorstore's zarr3 driver takes (0.1.7x / 0.1.8x)
TS_TYPES = ["bfloat16", "float8_e3m4", "float8_e4m3fn", "float8_e4m3fnuz", "float8_e4m3b11fnuz",
            "float8_e5m2", "float8_e5m2fnuz", "float8_e8m0fnu", "float4_e2m1fn", "int2", "int4"]
WIDTH = {"float4_e2m1fn": 4, "int2": 2, "int4": 4}


@functools.lru_cache(maxsize=None)
def ts_supports(name: str) -> bool:
    """Whether this tensorstore has the zarr3 data type ``name`` (older releases, as
    Python 3.10's newest, lack float8_e8m0fnu and float4_e2m1fn)."""
    try:
        ts.open({"driver": "zarr3", "kvstore": {"driver": "memory"},
                 "metadata": {"shape": [1], "data_type": name}}, create=True).result()
    except ValueError as e:
        if "Unsupported data type" in str(e):
            return False
        raise
    return True


@pytest.fixture(autouse=True)
def _tensorstore_has_the_type(request):
    callspec = getattr(request.node, "callspec", None)
    name = callspec.params.get("name") if callspec is not None else None
    if name is not None and not ts_supports(name):
        pytest.skip(f"this tensorstore has no {name} data type")


def sample(name: str, shape: tuple[int, ...], seed: int = 0) -> np.ndarray:
    """Bit patterns tensorstore and ml_dtypes keep as they are: every pattern for
    the 8- and 16-bit types (NaN payloads too), the values' low bits for the
    sub-byte ones."""
    dtype = np.dtype(getattr(ml_dtypes, name))
    n = int(np.prod(shape))
    rng = np.random.default_rng(seed)
    if dtype.itemsize == 2:
        return rng.integers(0, 2**16, n, dtype=np.uint16).view(dtype).reshape(shape)
    return rng.integers(0, 2 ** WIDTH.get(name, 8), n, dtype=np.uint8).view(dtype).reshape(shape)


def assert_bits(actual: np.ndarray, expected: np.ndarray) -> None:
    """Equal bits; of a sub-byte type, the type's bits (tensorstore's numpy int4 /
    int2 items may be sign-extended to the byte: the same value to ml_dtypes)."""
    assert actual.dtype == expected.dtype, (actual.dtype, expected.dtype)
    mask = (1 << WIDTH.get(actual.dtype.name, 8)) - 1
    np.testing.assert_array_equal(np.ascontiguousarray(actual).view(np.uint8) & mask,
                                  np.ascontiguousarray(expected).view(np.uint8) & mask)


def ts_open(path: str, **metadata) -> ts.TensorStore:
    spec: dict = {"driver": "zarr3", "kvstore": {"driver": "file", "path": path}}
    if metadata:
        spec["metadata"] = metadata
        return ts.open(spec, create=True, open=False).result()
    return ts.open(spec, open=True).result()


def codecs(name: str, compressed: bool) -> list[dict]:
    serializer = {"name": "bytes", "configuration": {"endian": "little"}} if name == "bfloat16" \
        else {"name": "bytes"}
    return [serializer] + ([{"name": "zstd", "configuration": {"level": 3, "checksum": False}}]
                           if compressed else [])


@pytest.mark.parametrize("compressed", [False, True], ids=["raw", "zstd"])
@pytest.mark.parametrize("name", TS_TYPES)
def test_tensorstore_writes_zarrc_reads(tmp_path, name, compressed):
    path = str(tmp_path / "a")
    data = sample(name, (12, 10))
    t = ts_open(path, shape=[12, 10], data_type=name, codecs=codecs(name, compressed),
                chunk_grid={"name": "regular", "configuration": {"chunk_shape": [5, 4]}})
    t[:10, :8].write(data[:10, :8]).result()
    expected = t.read().result()
    a = zarrc.open_array(path, mode="r")
    assert a.dtype == np.dtype(getattr(ml_dtypes, name))
    assert_bits(a[...], expected)
    assert_bits(a[3:11, 2:9], expected[3:11, 2:9])
    assert_bits(np.asarray(a.fill_value), np.asarray(t.fill_value))


@pytest.mark.parametrize("compressed", [False, True], ids=["raw", "zstd"])
@pytest.mark.parametrize("name", TS_TYPES)
def test_zarrc_writes_tensorstore_reads(tmp_path, name, compressed):
    path = str(tmp_path / "a")
    data = sample(name, (12, 10), seed=1)
    a = zarrc.create_array(path, shape=data.shape, chunks=(5, 4), dtype=name,
                           compressors=[zarrc.codecs.Zstd(level=3)] if compressed else None)
    a[:10, :8] = data[:10, :8]
    t = ts_open(path)
    assert t.dtype.numpy_dtype == a.dtype
    assert_bits(t.read().result(), a[...])
    assert_bits(t[:10, :8].read().result(), data[:10, :8])
    # the chunk bytes are the ones tensorstore writes for the same data
    other = str(tmp_path / "b")
    t2 = ts_open(other, shape=[12, 10], data_type=name, codecs=codecs(name, False),
                 chunk_grid={"name": "regular", "configuration": {"chunk_shape": [5, 4]}})
    t2[:10, :8].write(data[:10, :8]).result()
    if not compressed:
        assert (tmp_path / "a" / "c" / "1" / "1").read_bytes() == (tmp_path / "b" / "c" / "1" / "1").read_bytes()


@pytest.mark.parametrize(("name", "fill"), [
    ("bfloat16", "0x7fc1"), ("bfloat16", "0xff80"), ("bfloat16", "NaN"), ("bfloat16", -2.5),
    ("float8_e4m3fn", "0xff"), ("float8_e5m2", "0x7d"), ("float8_e4m3b11fnuz", "NaN"),
    ("float8_e8m0fnu", "0x01"), ("float4_e2m1fn", "0x0b"), ("int4", -8), ("int2", 1),
])
def test_fill_values_both_ways(tmp_path, name, fill):
    """Hex fill values (and the others) mean the same bits to both libraries; what
    zarrc writes, tensorstore reads as the same bits."""
    path = str(tmp_path / "a")
    t = ts_open(path, shape=[4], data_type=name, fill_value=fill, codecs=codecs(name, False),
                chunk_grid={"name": "regular", "configuration": {"chunk_shape": [2]}})
    a = zarrc.open_array(path, mode="r")
    if name != "float8_e8m0fnu":
        # tensorstore 0.1.8x writes this type's fill values as numbers of its own
        # reading (0x7f as 2**64, not the spec's and ml_dtypes' 1.0): zarrc reads them
        # by the spec; it writes them in hex, which tensorstore reads right (below)
        assert_bits(np.asarray(a.fill_value), np.asarray(t.fill_value))
        assert_bits(a[...], t.read().result())
    b = zarrc.create_array(str(tmp_path / "b"), shape=(4,), chunks=(2,), dtype=name, fill_value=fill)
    b[:2] = sample(name, (2,))
    t2 = ts_open(str(tmp_path / "b"))
    assert_bits(np.asarray(t2.fill_value), np.asarray(b.fill_value))
    assert_bits(t2.read().result(), b[...])


def orbax_metadata(shape, shard, chunk, name="bfloat16"):
    """An orbax-style zarr3 array (orbax.checkpoint's tensorstore spec for
    ``use_zarr3``): the grid's chunk is the per-device shard, stored as one
    ``sharding_indexed`` shard whose inner chunks are bytes (little endian) + zstd,
    its index bytes + crc32c at the end."""
    return dict(
        shape=list(shape), data_type=name, fill_value=0.0,
        chunk_grid={"name": "regular", "configuration": {"chunk_shape": list(shard)}},
        chunk_key_encoding={"name": "default", "configuration": {"separator": "/"}},
        codecs=[{"name": "sharding_indexed", "configuration": {
            "chunk_shape": list(chunk),
            "codecs": [{"name": "bytes", "configuration": {"endian": "little"}}, {"name": "zstd"}],
            "index_codecs": [{"name": "bytes", "configuration": {"endian": "little"}}, {"name": "crc32c"}],
            "index_location": "end"}}])


@pytest.mark.parametrize(("shard", "chunk"), [((32, 48), (32, 48)), ((32, 48), (8, 48))],
                         ids=["chunk=shard", "sub-chunked"])
def test_orbax_checkpoint_layout(tmp_path, shard, chunk):
    """A sharded, zstd-compressed bfloat16 parameter written as orbax writes it
    (one write per device shard) reads bit for bit in zarrc; zarrc's rewrite of one
    shard reads in tensorstore."""
    path = str(tmp_path / "params" / "dense.kernel")
    shape = (64, 96)
    rng = np.random.default_rng(5)
    data = rng.standard_normal(shape).astype(np.float32).astype(ml_dtypes.bfloat16)
    t = ts_open(path, **orbax_metadata(shape, shard, chunk))
    for i in range(0, shape[0], shard[0]):
        for j in range(0, shape[1], shard[1]):
            t[i:i + shard[0], j:j + shard[1]].write(data[i:i + shard[0], j:j + shard[1]]).result()
    a = zarrc.open_array(path, mode="r")
    doc = json.loads((tmp_path / "params" / "dense.kernel" / "zarr.json").read_text())
    assert doc["data_type"] == "bfloat16" and doc["codecs"][0]["name"] == "sharding_indexed"
    assert (a.shards, a.chunks) == (shard, chunk)
    assert_bits(a[...], data)
    assert_bits(a[5:40, 17:90], data[5:40, 17:90])
    w = zarrc.open_array(path, mode="r+")
    new = (data[:32, :48].astype(np.float32) * 2).astype(ml_dtypes.bfloat16)
    w[:32, :48] = new
    data[:32, :48] = new
    assert_bits(ts_open(path).read().result(), data)


@pytest.mark.parametrize("name", ["bfloat16", "float8_e4m3fn", "float8_e5m2", "float4_e2m1fn", "int4", "int2"])
def test_zarr_v2_both_ways(tmp_path, name):
    """tensorstore's zarr (v2) driver writes these types' names as the ``dtype``
    ("bfloat16", "int4"), little endian, fill values as in v3 but float4_e2m1fn's
    (base64 of the byte): read and written alike."""
    data = sample(name, (6, 5), seed=2)
    path = str(tmp_path / "ts")
    t = ts.open({"driver": "zarr", "kvstore": {"driver": "file", "path": path},
                 "metadata": {"shape": [6, 5], "chunks": [4, 2], "dtype": name, "compressor": None,
                              "fill_value": "NaN" if name == "bfloat16" else None}},
                create=True, open=False).result()
    t[:4, :4].write(data[:4, :4]).result()
    a = zarrc.open_array(path, mode="r")
    assert a.metadata.zarr_format == 2 and a.dtype == data.dtype
    assert_bits(a[...], t.read().result())
    b = zarrc.create_array(str(tmp_path / "z"), shape=(6, 5), chunks=(4, 2), dtype=name, zarr_format=2,
                           compressors=None, fill_value=-1 if name in ("int4", "int2") else 1.5)
    b[:4, :4] = data[:4, :4]
    zarray = json.loads((tmp_path / "z" / ".zarray").read_text())
    assert zarray["dtype"] == name
    assert zarray["fill_value"] == {"float4_e2m1fn": "Aw==", "int4": -1, "int2": -1}.get(name, 1.5)
    t2 = ts.open({"driver": "zarr", "kvstore": {"driver": "file", "path": str(tmp_path / "z")}},
                 open=True).result()
    assert_bits(t2.read().result(), b[...])
    assert (tmp_path / "z" / "0.0").read_bytes() == (tmp_path / "ts" / "0.0").read_bytes()


@pytest.mark.parametrize(("name", "endian"), [("bfloat16", "big"), ("int4", None), ("float8_e5m2", None)])
def test_sharded_both_ways(tmp_path, name, endian):
    """Sharded arrays (big-endian bfloat16; one-byte and sub-byte types) written by
    each library read bit for bit by the other."""
    serializer = {"name": "bytes", "configuration": {"endian": endian}} if endian else {"name": "bytes"}
    meta = dict(shape=[12, 10], data_type=name,
                chunk_grid={"name": "regular", "configuration": {"chunk_shape": [6, 10]}},
                codecs=[{"name": "sharding_indexed", "configuration": {
                    "chunk_shape": [3, 5], "codecs": [serializer, {"name": "zstd"}],
                    "index_codecs": [{"name": "bytes", "configuration": {"endian": "little"}},
                                     {"name": "crc32c"}]}}])
    data = sample(name, (12, 10), seed=4)
    t = ts_open(str(tmp_path / "ts"), **meta)
    t[:9].write(data[:9]).result()
    assert_bits(zarrc.open_array(str(tmp_path / "ts"), mode="r")[...], t.read().result())
    b = zarrc.create_array(str(tmp_path / "z"), shape=(12, 10), chunks=(3, 5), shards=(6, 10), dtype=name,
                           serializer=zarrc.codecs.Bytes(endian=endian) if endian else "auto",
                           compressors=[zarrc.codecs.Zstd(level=3)])
    b[:9] = data[:9]
    assert_bits(ts_open(str(tmp_path / "z")).read().result(), b[...])
    assert_bits(b[:9], data[:9])
