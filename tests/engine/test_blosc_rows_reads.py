"""Reads of blosc arrays through the engine, with whole chunks decoded straight into
their rows of the output (zarrc._kernels.read.blosc_rows on) and the usual way (off): both must
return the stored data for every layout, the rows decoder must leave alone what it
does not take (bit-shuffled, other compressors, big-endian, transposed, F order),
and large outputs (written with streaming stores) must come out right too."""

from __future__ import annotations

import numpy as np
import pytest

import zarrc
from zarrc._kernels import read as kernel_read


@pytest.fixture
def rows_modes():
    before = kernel_read.blosc_rows()
    yield (True, False)
    kernel_read.blosc_rows(before)


def _blosc(shuffle="shuffle", typesize=4, cname="lz4", blocksize=0):
    return [{"name": "blosc", "configuration": {"cname": cname, "clevel": 5, "shuffle": shuffle,
                                                "typesize": typesize, "blocksize": blocksize}}]


def _data(shape, dtype, seed=0):
    rng = np.random.default_rng(seed)
    n = int(np.prod(shape))
    smooth = np.sin(np.arange(n) / 97.0) * 3000 + rng.integers(0, 16, n)
    return smooth.astype(dtype).reshape(shape)


SELECTIONS = [..., (slice(3, 61), slice(None), slice(64, 131)), (slice(None), 5), (slice(0, 70, 3),),
              (slice(32, 64), slice(16, 32), slice(0, 64))]


def _check_reads(a, data, modes):
    for sel in SELECTIONS:
        got = {}
        for on in modes:
            kernel_read.blosc_rows(on)
            got[on] = a[sel]
            assert got[on].dtype == data.dtype
            np.testing.assert_array_equal(got[on], data[sel], err_msg=f"rows={on} {sel}")


@pytest.mark.parametrize("dtype", ["<u2", "<i4", "<f4", "<f8", "<i8"])
@pytest.mark.parametrize("kind", ["local", "memory"])
def test_v3_edge_chunks(tmp_path, dtype, kind, rows_modes):
    data = _data((70, 45, 131), dtype)
    store = str(tmp_path / "a.zarr") if kind == "local" else {}
    a = zarrc.create_array(store, shape=data.shape, dtype=dtype, chunks=(32, 16, 64),
                           compressors=_blosc(typesize=np.dtype(dtype).itemsize, blocksize=2048))
    a[...] = data
    _check_reads(a, data, rows_modes)


@pytest.mark.parametrize("order", ["C", "F"])
def test_v2(tmp_path, order, rows_modes):
    data = _data((70, 45, 131), "<f8", seed=1)
    a = zarrc.create_array(str(tmp_path / "v2.zarr"), shape=data.shape, dtype="<f8", chunks=(32, 16, 64),
                           zarr_format=2, order=order,
                           compressors={"id": "blosc", "cname": "lz4", "clevel": 5, "shuffle": 1})
    a[...] = data
    _check_reads(a, data, rows_modes)


@pytest.mark.parametrize("compressors", [
    _blosc(shuffle="bitshuffle"), _blosc(shuffle="noshuffle"), _blosc(cname="zstd"),
    _blosc(cname="blosclz"), _blosc(typesize=8),          # edge chunks' rows split its 8-byte items
], ids=["bitshuffle", "noshuffle", "zstd", "blosclz", "typesize8"])
def test_layouts_left_to_cblosc(tmp_path, compressors, rows_modes):
    data = _data((70, 45, 131), "<u2", seed=2)
    a = zarrc.create_array(str(tmp_path / "a.zarr"), shape=data.shape, dtype="<u2", chunks=(32, 16, 64),
                           compressors=compressors)
    a[...] = data
    _check_reads(a, data, rows_modes)


def test_big_endian_and_transposed(tmp_path, rows_modes):
    data = _data((70, 45, 131), ">i4", seed=3)
    a = zarrc.create_array(str(tmp_path / "be.zarr"), shape=data.shape, dtype=">i4", chunks=(32, 16, 64),
                           serializer={"name": "bytes", "configuration": {"endian": "big"}},
                           compressors=_blosc())
    a[...] = data
    _check_reads(a, data.astype("<i4"), rows_modes)
    t = zarrc.create_array(str(tmp_path / "t.zarr"), shape=data.shape, dtype="<i4", chunks=(32, 16, 64),
                           filters=[{"name": "transpose", "configuration": {"order": [2, 0, 1]}}],
                           compressors=_blosc())
    t[...] = data
    _check_reads(t, data.astype("<i4"), rows_modes)


def test_sharded(tmp_path, rows_modes):
    data = _data((70, 45, 131), "<u2", seed=4)
    a = zarrc.create_array(str(tmp_path / "s.zarr"), shape=data.shape, dtype="<u2", chunks=(16, 16, 32),
                           shards=(32, 32, 64), compressors=_blosc(typesize=2))
    a[...] = data
    _check_reads(a, data, rows_modes)


def test_large_outputs_read_the_values_written(tmp_path, rows_modes):
    """A full read of 32 MiB or more is written with non-temporal stores: rows of edge
    chunks, rows at every alignment."""
    data = _data((4096, 2050), "<f4", seed=5)
    a = zarrc.create_array(str(tmp_path / "big.zarr"), shape=data.shape, dtype="<f4", chunks=(512, 300),
                           compressors=_blosc())
    a[...] = data
    for on in rows_modes:
        kernel_read.blosc_rows(on)
        np.testing.assert_array_equal(a[...], data)
        np.testing.assert_array_equal(a[:, 1:2049], data[:, 1:2049])


def test_corrupt_chunk_is_named_either_way(tmp_path, rows_modes):
    """A damaged chunk raises the same error with the rows decoder as without it."""
    data = _data((64, 64), "<f4", seed=6)
    path = tmp_path / "c.zarr"
    a = zarrc.create_array(str(path), shape=data.shape, dtype="<f4", chunks=(32, 32), compressors=_blosc())
    a[...] = data
    chunk = path / "c" / "1" / "0"
    chunk.write_bytes(chunk.read_bytes()[:-100])
    messages = []
    for on in rows_modes:
        kernel_read.blosc_rows(on)
        with pytest.raises(zarrc.errors.ZarrcError) as info:
            zarrc.open_array(str(path))[...]
        messages.append(str(info.value))
    assert messages[0] == messages[1] and "c/1/0" in messages[0]
