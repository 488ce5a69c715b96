"""Metadata forms beyond the matrix: zarr-python's way of spelling a chunk key
encoding, and fill values that are NaNs with a payload (the "0x..." form)."""

from __future__ import annotations

import json

import numpy as np
import pytest

from helpers import NO_ZARR_PYTHON

import zarrc

from interop import support

zarr = pytest.importorskip("zarr", reason=NO_ZARR_PYTHON)
ts = pytest.importorskip("tensorstore")

UINT = {2: np.uint16, 4: np.uint32, 8: np.uint64}


@pytest.mark.parametrize("name,separator,key", [("v2", "/", "1/0"), ("v2", ".", "1.0"),
                                                ("default", ".", "c.1.0"), ("default", "/", "c/1/0")])
def test_chunk_key_encoding_as_zarr_python_spells_it(tmp_path, name, separator, key) -> None:
    """zarr.create_array(chunk_key_encoding={"name": ..., "separator": ...}) works, and
    so must the same argument to zarrc.create_array; both write the same keys."""
    cke = {"name": name, "separator": separator}
    z = zarr.create_array(str(tmp_path), name="z", shape=(4, 3), chunks=(2, 3), dtype="uint8",
                          chunk_key_encoding=cke)
    z[...] = np.arange(12, dtype=np.uint8).reshape(4, 3) + 1
    assert key in support.stored_chunk_keys(str(tmp_path / "z"))

    a = zarrc.create_array(str(tmp_path), name="a", shape=(4, 3), chunks=(2, 3), dtype="uint8",
                           chunk_key_encoding=cke)
    a[...] = np.arange(12, dtype=np.uint8).reshape(4, 3) + 1
    assert support.stored_chunk_keys(str(tmp_path / "a")) == support.stored_chunk_keys(str(tmp_path / "z"))
    support.assert_bit_equal(np.asarray(zarr.open_array(str(tmp_path / "a"), mode="r")[...]), z[...])


def nan_with_payload(dtype: str) -> np.generic:
    """A quiet NaN with a non-canonical payload (the real part only, for complex)."""
    dt = np.dtype(dtype)
    part = np.dtype(f"f{dt.itemsize // 2}") if dt.kind == "c" else dt
    bits = {2: 0x7E01, 4: 0x7FC00001, 8: 0x7FF8000000000123}[part.itemsize]
    value = np.array(bits, UINT[part.itemsize]).view(part)[()]
    if dt.kind == "f":
        return value
    out = np.zeros((), dt)
    out.real, out.imag = value, -1.0
    return out[()]


def payload_fill_json(value: np.generic) -> object:
    def hexbits(x: np.generic) -> str:
        return f"0x{int(np.asarray(x).view(UINT[x.dtype.itemsize])):0{2 * x.dtype.itemsize}x}"
    if value.dtype.kind == "f":
        return hexbits(value)
    return [hexbits(value.real), -1.0]


@pytest.mark.parametrize("dtype", ["float16", "float32", "float64", "complex64", "complex128"])
def test_nan_payload_fill_value(tmp_path, dtype) -> None:
    """zarrc keeps a NaN fill value's payload (written as "0x..."), and tensorstore and
    zarr-python fill missing chunks with exactly those bits; a tensorstore array with
    such a fill value reads so in zarrc."""
    fill = nan_with_payload(dtype)
    # sanity: numpy itself keeps the payload through these operations
    assert np.full((), fill, dtype).tobytes() == np.asarray(fill).tobytes()
    x = support.sample(dtype, (5, 6), seed=1)
    expected = np.full((10, 6), fill, dtype)
    expected[:5] = x

    a = zarrc.create_array(str(tmp_path), name="a", shape=(10, 6), chunks=(5, 4), dtype=dtype,
                           fill_value=fill)
    a[:5] = x
    written = json.loads((tmp_path / "a" / "zarr.json").read_text())["fill_value"]
    assert written == payload_fill_json(fill)
    support.assert_bit_equal(a[...], expected, "zarrc")
    support.assert_bit_equal(support.tensorstore_open(str(tmp_path / "a")).read().result(), expected, "tensorstore")
    if dtype != "float16":  # zarr-python 3.1 drops the payload of a float16 "0x..." fill value
        support.assert_bit_equal(np.asarray(zarr.open_array(str(tmp_path / "a"), mode="r")[...]), expected,
                            "zarr-python")

    metadata = {"shape": [10, 6], "data_type": dtype, "fill_value": payload_fill_json(fill),
                "chunk_grid": {"name": "regular", "configuration": {"chunk_shape": [5, 4]}},
                "chunk_key_encoding": {"name": "default"},
                "codecs": [{"name": "bytes", "configuration": {"endian": "little"}}]}
    t = ts.open({"driver": "zarr3", "kvstore": {"driver": "file", "path": str(tmp_path / "t")},
                 "metadata": metadata}, create=True, dtype=getattr(ts, dtype)).result()
    t[:5].write(x).result()
    b = zarrc.open_array(str(tmp_path), mode="r", path="t")
    support.assert_scalar_bit_equal(b.fill_value, fill)
    support.assert_bit_equal(b[...], expected, "zarrc reading tensorstore's array")


def test_default_codecs(tmp_path) -> None:
    """Arrays created with each library's default codecs read in the others."""
    x = support.sample("float32", (10, 9), seed=2)
    a = zarrc.create_array(str(tmp_path), name="zarrc", shape=(10, 9), chunks=(3, 4), dtype="float32")
    a[...] = x
    z = zarr.create_array(str(tmp_path), name="zarr", shape=(10, 9), chunks=(3, 4), dtype="float32")
    z[...] = x
    t = ts.open({"driver": "zarr3", "kvstore": {"driver": "file", "path": str(tmp_path / "ts")},
                 "metadata": {"shape": [10, 9], "data_type": "float32",
                              "chunk_grid": {"name": "regular", "configuration": {"chunk_shape": [3, 4]}}}},
                create=True, dtype=ts.float32).result()
    t.write(x).result()
    for name in ("zarrc", "zarr", "ts"):
        path = str(tmp_path / name)
        support.assert_bit_equal(zarrc.open_array(path, mode="r")[...], x, f"zarrc reading {name}")
        support.assert_bit_equal(np.asarray(zarr.open_array(path, mode="r")[...]), x,
                            f"zarr-python reading {name}")
        support.assert_bit_equal(support.tensorstore_open(path).read().result(), x, f"tensorstore reading {name}")


@pytest.mark.parametrize("codec", [
    {"name": "blosc", "configuration": {"cname": "lz4", "clevel": 5, "shuffle": "noshuffle", "blocksize": 0}},
    {"name": "blosc"},
    {"name": "zstd", "configuration": {"level": 1}},
    {"name": "gzip", "configuration": {"level": 1}},
], ids=["blosc-noshuffle-no-typesize", "blosc-defaults", "zstd-level-only", "gzip"])
def test_tensorstore_codec_defaults(tmp_path, codec) -> None:
    """Codec configurations as tensorstore completes them (e.g. blosc "noshuffle"
    with no "typesize") read in zarrc, and zarrc's rewrite reads in tensorstore."""
    x = support.sample("int32", (10,), seed=4)
    path = str(tmp_path / "t")
    t = ts.open({"driver": "zarr3", "kvstore": {"driver": "file", "path": path},
                 "metadata": {"shape": [10], "data_type": "int32",
                              "chunk_grid": {"name": "regular", "configuration": {"chunk_shape": [4]}},
                              "codecs": [{"name": "bytes", "configuration": {"endian": "little"}}, codec]}},
                create=True, dtype=ts.int32).result()
    t.write(x).result()
    a = zarrc.open_array(path, mode="r+")
    support.assert_bit_equal(a[...], x)
    a[2:7] = -x[2:7]
    x[2:7] = -x[2:7]
    support.assert_bit_equal(support.tensorstore_open(path).read().result(), x)
