"""zarr-python 3.4's ``ShardingCodec(subchunk_write_order=...)``: each order
(morton, lexicographic, colexicographic, unordered) lays the inner chunks of a
shard out in that physical order; the setting is write-only (not in the metadata),
so a reader must follow the shard index wherever the chunks sit.  zarr-python 3.4
writes each order (index at start and end, compressed and not, partly written
shards, overhanging edge shards, empty inner chunks), the test checks the layout
really follows the order, and zarrc reads every array bit-exactly, whole and in
parts.  zarr-python 3.1 (the 3.11 venv) has no such setting: these tests skip."""

from __future__ import annotations

import numpy as np
import pytest
from helpers import NO_ZARR_PYTHON

import zarrc

zarr = pytest.importorskip("zarr", reason=NO_ZARR_PYTHON)
from zarr.codecs import BytesCodec, Crc32cCodec, ShardingCodec, ZstdCodec

try:
    ShardingCodec(chunk_shape=(2,), subchunk_write_order="lexicographic")
except TypeError as exc:
    pytest.skip(f"zarr-python {zarr.__version__} has no subchunk_write_order (3.4+): {exc}",
                allow_module_level=True)

ORDERS = ["morton", "lexicographic", "colexicographic", "unordered"]
SHAPE, SHARD, INNER = (37, 50), (16, 20), (4, 5)      # 4 x 4 inner chunks per shard


def write(path, order, location, compressed):
    codecs = [BytesCodec(endian="little")] + ([ZstdCodec(level=1)] if compressed else [])
    codec = ShardingCodec(chunk_shape=INNER, codecs=codecs, index_location=location,
                          index_codecs=[BytesCodec(endian="little"), Crc32cCodec()],
                          subchunk_write_order=order)
    z = zarr.create_array(str(path), shape=SHAPE, dtype="int32", chunks=SHARD, serializer=codec,
                          filters=None, compressors=None, fill_value=-1)
    rng = np.random.default_rng(3)
    expected = np.full(SHAPE, -1, "int32")
    data = rng.integers(0, 1000, SHAPE, dtype="int32")
    for region in [(slice(0, 30), slice(0, 50)), (slice(33, 37), slice(41, 47))]:
        z[region] = data[region]
        expected[region] = data[region]
    z[20:24, 25:30] = -1                # one inner chunk all fill value: left out of its shard
    expected[20:24, 25:30] = -1
    return expected


def inner_offsets(path, location):
    """(row, col) of inner chunk -> byte offset, of shard c/0/0 (written in full)."""
    blob = (path / "c" / "0" / "0").read_bytes()
    n = 16 * 16 + 4
    raw = blob[:n] if location == "start" else blob[-n:]
    index = np.frombuffer(raw[:-4], "<u8").reshape(4, 4, 2)
    return {(i, j): int(index[i, j, 0]) for i in range(4) for j in range(4) if index[i, j, 0] != 2**64 - 1}


def expected_order(order):
    cells = [(i, j) for i in range(4) for j in range(4)]
    if order == "colexicographic":
        return sorted(cells, key=lambda c: (c[1], c[0]))
    if order == "morton":
        def key(c):
            return sum((((c[0] >> b) & 1) << (2 * b)) | (((c[1] >> b) & 1) << (2 * b + 1)) for b in range(2))
        return sorted(cells, key=key)
    return cells                        # lexicographic (and, today, unordered)


@pytest.mark.parametrize("compressed", [False, True], ids=["bytes", "zstd"])
@pytest.mark.parametrize("location", ["end", "start"])
@pytest.mark.parametrize("order", ORDERS)
def test_zarr_python_subchunk_write_order_reads_in_zarrc(tmp_path, order, location, compressed):
    path = tmp_path / "a"
    expected = write(path, order, location, compressed)
    if order != "unordered":            # "unordered" promises no layout
        offsets = inner_offsets(path, location)
        laid_out = sorted(offsets, key=offsets.get)
        assert laid_out == expected_order(order), f"zarr-python did not write {order}"
    a = zarrc.open_array(str(path), mode="r")
    got = a[...]
    assert got.dtype == expected.dtype
    np.testing.assert_array_equal(got, expected)
    for sel in [(slice(3, 29), slice(7, 44)), (slice(30, 37), slice(40, 50)), (5, slice(None)),
                (slice(None), 22)]:
        np.testing.assert_array_equal(a[sel], expected[sel])
    np.testing.assert_array_equal(a.oindex[[0, 9, 17, 36], [1, 24, 49]], expected[np.ix_([0, 9, 17, 36], [1, 24, 49])])
    np.testing.assert_array_equal(zarr.open_array(str(path), mode="r")[...], expected)


@pytest.mark.parametrize("order", ["lexicographic", "colexicographic"])
def test_zarrc_updates_a_reordered_shard(tmp_path, order):
    """zarrc rewriting part of a shard zarr-python laid out in another order keeps
    every value (what zarrc then writes is its own layout; the index says where)."""
    path = tmp_path / "a"
    expected = write(path, order, "end", True)
    a = zarrc.open_array(str(path), mode="r+")
    a[2:11, 3:14] = 7
    expected[2:11, 3:14] = 7
    np.testing.assert_array_equal(a[...], expected)
    np.testing.assert_array_equal(zarr.open_array(str(path), mode="r")[...], expected)
