"""Arrays of the ml_dtypes data types (bfloat16, float8_*, float6_*, float4_e2m1fn,
int2, int4, uint2, uint4) through zarrc's engine: whole and partial writes and
reads, big- and little-endian bfloat16, transposed, compressed, sharded and
nested-sharded chains, fill values of missing chunks (hex forms too), and the
packbits codec for the sub-byte types and bool (tests/codecs/test_packbits.py
has its bytes).  Bit for bit: arrays are compared as their bytes."""

from __future__ import annotations

import json

import numpy as np
import pytest

import zarrc
from zarrc.codecs import Bytes, PackBits, Transpose, Zstd
from zarrc.metadata.dtypes_ml import ML_KINDS, NAN_BITS, SUB_BYTE_BITS

ml_dtypes = pytest.importorskip("ml_dtypes", reason="the ml_dtypes types need ml_dtypes (zarrc[dtypes])")

NAMES = sorted(ML_KINDS)


def sample(name: str, shape: tuple[int, ...], seed: int = 0) -> np.ndarray:
    """Every bit pattern of the type that ml_dtypes keeps as it is (for the sub-byte
    types: the values, upper bits zero), repeated; for bfloat16 random bits."""
    dtype = np.dtype(getattr(ml_dtypes, name))
    n = int(np.prod(shape))
    rng = np.random.default_rng(seed)
    if name == "bfloat16":
        return rng.integers(0, 2**16, n, dtype=np.uint16).view(dtype).reshape(shape)
    width = SUB_BYTE_BITS.get(name, 8)
    raw = rng.integers(0, 2**width, n, dtype=np.uint8)
    if name in ("int2", "int4"):   # ml_dtypes' form: the value's low bits, upper bits zero
        raw &= (1 << width) - 1
    return raw.view(dtype).reshape(shape)


def assert_bits(actual: np.ndarray, expected: np.ndarray) -> None:
    assert actual.dtype == expected.dtype, (actual.dtype, expected.dtype)
    assert actual.shape == expected.shape
    np.testing.assert_array_equal(np.ascontiguousarray(actual).view(np.uint8),
                                  np.ascontiguousarray(expected).view(np.uint8))


@pytest.mark.parametrize("name", NAMES)
def test_round_trip(tmp_path, name):
    data = sample(name, (13, 9))
    a = zarrc.create_array(str(tmp_path / "a"), shape=data.shape, chunks=(5, 4), dtype=name)
    assert a.dtype == data.dtype
    a[...] = data
    assert_bits(a[...], data)
    b = zarrc.open_array(str(tmp_path / "a"), mode="r")
    assert b.dtype == data.dtype
    assert_bits(b[2:11, 1:8], data[2:11, 1:8])
    doc = json.loads((tmp_path / "a" / "zarr.json").read_text())
    assert doc["data_type"] == name
    assert doc["codecs"][0] == ({"name": "bytes", "configuration": {"endian": "little"}}
                                if name == "bfloat16" else {"name": "bytes"})
    # a partial write, read back
    part = sample(name, (3, 3), seed=1)
    a[4:7, 2:5] = part
    data[4:7, 2:5] = part
    assert_bits(b[...], data)


@pytest.mark.parametrize("endian", ["little", "big"])
@pytest.mark.parametrize("sharded", [False, True])
def test_bfloat16_chains(tmp_path, endian, sharded):
    data = sample("bfloat16", (20, 12))
    a = zarrc.create_array(str(tmp_path / "a"), shape=data.shape, chunks=(5, 3) if sharded else (10, 6),
                           shards=(10, 6) if sharded else None, dtype=ml_dtypes.bfloat16,
                           filters=[Transpose(order=(1, 0))], serializer=Bytes(endian=endian),
                           compressors=[Zstd(level=3)])
    a[...] = data
    b = zarrc.open_array(str(tmp_path / "a"), mode="r")
    assert_bits(b[...], data)
    assert_bits(b[3:17:2, 1:11], data[3:17:2, 1:11])
    assert_bits(b.vindex[[0, 19, 7], [11, 0, 5]], data[[0, 19, 7], [11, 0, 5]])
    a[7:13, 4] = data[0:6, 0]
    data[7:13, 4] = data[0:6, 0]
    assert_bits(b[...], data)


def test_bfloat16_big_endian_bytes(tmp_path):
    data = np.array([1.5, -2.0, np.inf, 0.0], dtype=ml_dtypes.bfloat16)
    a = zarrc.create_array(str(tmp_path / "a"), shape=(4,), chunks=(4,), dtype="bfloat16",
                           serializer=Bytes(endian="big"), compressors=None)
    a[...] = data
    assert (tmp_path / "a" / "c" / "0").read_bytes() == data.byteswap().tobytes()
    assert_bits(a[...], data)


@pytest.mark.parametrize(("name", "fill", "expected_bits"), [
    ("bfloat16", "0x7fc1", 0x7FC1), ("bfloat16", "NaN", 0x7FC0), ("bfloat16", "-Infinity", 0xFF80),
    ("float8_e4m3fn", "0x7f", 0x7F), ("float8_e5m2", "0xfe", 0xFE), ("float8_e4m3fnuz", "NaN", 0x80),
    ("float4_e2m1fn", -6.0, 0x0F), ("int4", -2, 0x0E), ("uint2", 2, 0x02),
])
def test_fill_values_of_missing_chunks(tmp_path, name, fill, expected_bits):
    a = zarrc.create_array(str(tmp_path / "a"), shape=(6,), chunks=(3,), dtype=name, fill_value=fill)
    a[:3] = sample(name, (3,))
    out = a[...]
    assert out[3:].view(f"u{out.dtype.itemsize}").tolist() == [expected_bits] * 3
    doc = json.loads((tmp_path / "a" / "zarr.json").read_text())
    assert zarrc.open_array(str(tmp_path / "a")).fill_value.view(f"u{out.dtype.itemsize}") == expected_bits
    if isinstance(fill, str) and fill.startswith("0x"):   # a NaN but the canonical one stays hex
        assert doc["fill_value"] == ("NaN" if expected_bits == NAN_BITS.get(name) else fill)
    # a chunk written as all fill value is not stored
    a[3:] = np.full(3, a.fill_value, dtype=a.dtype)
    assert not (tmp_path / "a" / "c" / "1").exists()


def test_values_assigned_from_other_dtypes(tmp_path):
    a = zarrc.create_array(str(tmp_path / "a"), shape=(4,), chunks=(2,), dtype="bfloat16")
    a[...] = np.array([1.0, 2.5, -3.0, 1e38])
    assert a[...].astype(np.float32).tolist() == np.array([1.0, 2.5, -3.0, 1e38],
                                                          dtype=ml_dtypes.bfloat16).astype(np.float32).tolist()
    a[1] = 7
    assert float(a[1]) == 7.0
    b = zarrc.create_array(str(tmp_path / "b"), shape=(4,), chunks=(4,), dtype="int4")
    b[...] = [-8, -1, 0, 7]
    assert b[...].astype(int).tolist() == [-8, -1, 0, 7]


@pytest.mark.parametrize("name", ["int2", "int4", "uint2", "uint4", "float4_e2m1fn", "float6_e2m3fn",
                                  "float6_e3m2fn", "bool"])
@pytest.mark.parametrize("padding", ["none", "first_byte", "last_byte"])
def test_packbits_arrays(tmp_path, name, padding):
    data = (np.random.default_rng(3).random((11, 7)) < 0.5) if name == "bool" else sample(name, (11, 7))
    a = zarrc.create_array(str(tmp_path / "a"), shape=data.shape, chunks=(5, 3), dtype=name,
                           serializer=PackBits(padding_encoding=padding), compressors=[Zstd(level=1)])
    a[...] = data
    b = zarrc.open_array(str(tmp_path / "a"), mode="r")
    assert json.loads((tmp_path / "a" / "zarr.json").read_text())["codecs"][0] == {
        "name": "packbits", "configuration": {"padding_encoding": padding}}
    assert_bits(b[...], data)
    assert_bits(b[1:9, 2:6], data[1:9, 2:6])
    assert_bits(np.asarray(b[3, 4]), np.asarray(data[3, 4]))       # one element: not a byte range
    assert_bits(b.vindex[[0, 10, 5], [6, 0, 3]], data[[0, 10, 5], [6, 0, 3]])
    assert b._chunked.chain is not None          # the native chain packs: no Python per chunk
    a[0, :] = data[10, :]
    data[0, :] = data[10, :]
    assert_bits(b[...], data)


def test_packbits_sharded(tmp_path):
    data = sample("int4", (16, 16))
    a = zarrc.create_array(str(tmp_path / "a"), shape=data.shape, chunks=(4, 4), shards=(8, 8), dtype="int4",
                           serializer=PackBits(), compressors=None)
    a[...] = data
    assert_bits(zarrc.open_array(str(tmp_path / "a"), mode="r")[...], data)
    # a full shard: 4 inner chunks of 16 nibbles (8 bytes each) and the index
    assert (tmp_path / "a" / "c" / "0" / "0").stat().st_size == 4 * 8 + 4 * 16 + 4
    b = zarrc.open_array(str(tmp_path / "a"), mode="r+")
    assert_bits(b[5:11, 3:13], data[5:11, 3:13])
    b[6, 1:15] = data[0, 1:15]
    data[6, 1:15] = data[0, 1:15]
    assert_bits(b[...], data)


def test_packbits_corrupt_chunk(tmp_path):
    a = zarrc.create_array(str(tmp_path / "a"), shape=(6,), chunks=(6,), dtype="uint2",
                           serializer=PackBits(padding_encoding="last_byte"), compressors=None)
    a[...] = [1, 2, 3, 0, 1, 2]
    assert (tmp_path / "a" / "c" / "0").read_bytes().hex() == "390904"
    (tmp_path / "a" / "c" / "0").write_bytes(bytes.fromhex("390905"))
    with pytest.raises(zarrc.errors.CodecError, match="padding"):
        a[...]
    (tmp_path / "a" / "c" / "0").write_bytes(bytes.fromhex("39"))
    with pytest.raises(zarrc.errors.CodecError, match="holds 1"):
        a[...]


@pytest.mark.parametrize(("dtype", "kwargs"), [
    ("uint16", {"first_bit": 1, "last_bit": 12, "padding_encoding": "last_byte"}),
    ("int32", {"last_bit": 9}),
    ("float6_e3m2fn", {"padding_encoding": "first_byte"}),
    ("bfloat16", {}),
    ("complex64", {"first_bit": 16}),
])
def test_packbits_native_chunks_are_the_codecs_bytes(tmp_path, dtype, kwargs):
    """The native chain's packed chunks are byte for byte what the codec's Python
    ``pack`` makes, and read back as its ``unpack`` does."""
    np_dtype = np.dtype(getattr(ml_dtypes, dtype, None) or dtype)
    rng = np.random.default_rng(9)
    data = rng.integers(0, 256, 7 * 5 * np_dtype.itemsize, dtype=np.uint8).view(np_dtype).reshape(7, 5)
    if dtype == "float6_e3m2fn":
        data = (data.view(np.uint8) & 0x3F).view(np_dtype)
    codec = PackBits(**kwargs)
    a = zarrc.create_array(str(tmp_path / "a"), shape=(7, 5), chunks=(7, 5), dtype=np_dtype, serializer=codec,
                           compressors=None, fill_value=0)
    a[...] = data
    stored = (tmp_path / "a" / "c" / "0" / "0").read_bytes()
    assert stored == codec.pack(data)
    assert_bits(a[...], codec.unpack(stored, (7, 5), np_dtype))
