"""The native reader of int/slice selections (zarrc._kernels.read.BasicReader): arrays of plain
chunk files read basic selections in one native call, with chunk file paths built
natively from the coordinates.  Results equal the general path's, errors name the
chunk's key, and it stands aside where chunk paths are not head + coordinates."""

from __future__ import annotations

import os
import random

import numpy as np
import pytest
from helpers import make_array

import zarrc
from zarrc.engine import batch
from zarrc.engine.basic import BasicStrategy
from zarrc.errors import CodecError
from zarrc.stores import LocalStore, MemoryStore
from zarrc.runtime.threads import count_calls

from .test_partial_reads import _random_selection


def _general(a: zarrc.Array, selection):
    """``a[selection]`` by the strategy behind the BasicReader (native or sharded)."""
    return a._engine.fallback.read(selection)


def _check_random_selections(a: zarrc.Array, data: np.ndarray, rng: random.Random) -> None:
    """300 random selections read by the BasicReader, by the general path and by
    ``a[...]`` give what numpy gives (or raise IndexError as numpy does)."""
    assert isinstance(a._engine, BasicStrategy)
    for _ in range(300):
        sel = _random_selection(rng, data.shape)
        try:
            expected = data[sel]
        except IndexError:
            with pytest.raises(IndexError):
                a[sel]
            continue
        got = a._engine.reader.read(sel)
        if got is None:                       # not a basic selection: general path
            got = a[sel]
        np.testing.assert_array_equal(got, expected)
        assert got.shape == expected.shape and got.dtype == expected.dtype
        np.testing.assert_array_equal(_general(a, sel), expected)
        # into a given output: Fortran order (strides not C's), every element written
        out = np.full(expected.shape[::-1], -1, data.dtype).T
        if a._engine.read_basic_into(sel, out):
            np.testing.assert_array_equal(out, expected)
        else:
            assert a._engine.reader.read(sel) is None and (out == -1).all()


@pytest.mark.parametrize("chain", ["bytes", "blosc", "zstd+crc32c", "transpose", "big-endian"])
def test_basic_reads_equal_the_general_path(tmp_path, chain):
    shape, chunks = (37, 29, 11), (8, 7, 4)
    data = np.arange(np.prod(shape), dtype="int32").reshape(shape)
    a = make_array(LocalStore(str(tmp_path / "a.zarr"), mode="w"), shape, chunks, "int32", chain)
    a[...] = data
    a[:8, :7, :4] = 0                         # a chunk of fill values: not stored
    data[:8, :7, :4] = 0
    _check_random_selections(a, data, random.Random(3))


@pytest.mark.parametrize("separator", [".", "/"])
@pytest.mark.parametrize("order", ["C", "F"])
def test_basic_reads_of_v2_arrays(tmp_path, separator, order):
    data = np.arange(30 * 20, dtype="<u2").reshape(30, 20)
    a = zarrc.create_array(LocalStore(str(tmp_path / "v2.zarr"), mode="w"), shape=data.shape,
                           chunks=(7, 6), dtype=data.dtype, zarr_format=2, order=order,
                           dimension_separator=separator, compressor=None)
    a[...] = data
    assert a._chunked.path_head is not None and a._chunked.path_separator == separator.encode()
    for sel in [(slice(3, 25, 2), slice(None)), (4, slice(5, 19)), (slice(None), 13), (29, 19),
                (slice(6, 6),)]:
        np.testing.assert_array_equal(a[sel], data[sel])


def test_basic_reader_stands_aside(tmp_path):
    mem = make_array(MemoryStore(), (10,), (4,))
    assert not isinstance(mem._engine, BasicStrategy) and mem._chunked.path_head is None

    class Renamed(LocalStore):               # chunk files are not named after their keys
        def local_path(self, key):
            return super().local_path(key) + ".bin"

        def file_prefix(self, prefix):       # (so it declares no file layout)
            return None

    odd = make_array(Renamed(str(tmp_path / "r.zarr"), mode="w"), (10,), (4,))
    assert odd._chunked.path_head is None and not isinstance(odd._engine, BasicStrategy)
    odd[...] = np.arange(10)
    np.testing.assert_array_equal(odd[2:9], np.arange(2, 9))


def test_basic_read_errors_name_the_chunk(tmp_path):
    store = LocalStore(str(tmp_path / "e.zarr"), mode="w")
    raw = make_array(store, (8, 8), (4, 4), "int32", "bytes")
    raw[...] = np.arange(64).reshape(8, 8)
    with open(tmp_path / "e.zarr" / "c" / "1" / "0", "wb") as f:
        f.write(b"short")
    np.testing.assert_array_equal(raw[:4, :], np.arange(32).reshape(4, 8))
    with pytest.raises(CodecError, match="c/1/0"):
        raw[3:6, 1:3]
    assert count_calls(0) == 0
    packed = make_array(LocalStore(str(tmp_path / "p.zarr"), mode="w"), (8, 8), (4, 4),
                           "int32", "zstd+crc32c")
    packed[...] = np.arange(64).reshape(8, 8)
    with open(tmp_path / "p.zarr" / "c" / "0" / "1", "r+b") as f:
        f.truncate(9)
    with pytest.raises(CodecError, match="c/0/1"):
        packed[:, 2:6]
    assert count_calls(0) == 0


def test_large_basic_reads_use_the_pool(tmp_path, monkeypatch):
    used = []
    real = batch.run_batch

    def spy(batch, ntasks, work_bytes=None):
        used.append((ntasks, work_bytes))
        real(batch, ntasks, work_bytes)

    monkeypatch.setattr(batch, "run_batch", spy)
    data = np.arange(512 * 512, dtype="float64").reshape(512, 512)
    a = make_array(LocalStore(str(tmp_path / "big.zarr"), mode="w"), data.shape, (64, 64),
                      "float64", "blosc")
    a[...] = data
    used.clear()
    np.testing.assert_array_equal(a[3:5, 3:200], data[3:5, 3:200])      # 4 chunks, 128 KiB
    assert used == []                                                    # ran on the caller
    with zarrc.config.set(threads=2):
        np.testing.assert_array_equal(a[...], data)                      # 64 chunks, 2 MiB
    assert used == [(64, 64 * 64 * 64 * 8)]


@pytest.mark.parametrize("location", ["start", "end"])
def test_sharded_basic_reads(tmp_path, location):
    shape = (37, 29)
    data = np.arange(np.prod(shape), dtype="int32").reshape(shape)
    sharding = {"name": "sharding_indexed", "configuration": {
        "chunk_shape": [3, 4], "index_location": location,
        "codecs": [{"name": "bytes", "configuration": {"endian": "little"}},
                   {"name": "zstd", "configuration": {"level": 1, "checksum": False}}],
        "index_codecs": [{"name": "bytes", "configuration": {"endian": "little"}}, {"name": "crc32c"}]}}
    root = tmp_path / "s.zarr"
    a = zarrc.create_array(LocalStore(str(root), mode="w"), shape=shape, chunks=(9, 8),
                           serializer=sharding, compressors=None, dtype="int32", fill_value=-1)
    a[...] = data
    a[:9, 8:16] = -1                          # a shard of fill values: removed
    a[9:12, :4] = -1                          # an inner chunk of fill values: empty in its shard
    data[:9, 8:16] = data[9:12, :4] = -1
    _check_random_selections(a, data, random.Random(5))
    a[20:25, 3] = 7                           # a write through the array: indexes reloaded
    data[20:25, 3] = 7
    np.testing.assert_array_equal(a[18:27, :], data[18:27, :])
    # damaged inner chunks are named with their shard
    path = root / "c" / "1" / "0"
    raw = path.read_bytes()
    n = 16 * 6 + 4                            # the index: 3 x 2 inner chunks, crc32c
    lo, hi = (n, len(raw)) if location == "start" else (0, len(raw) - n)
    path.write_bytes(raw[:lo] + bytes(b ^ 0x5A for b in raw[lo:hi]) + raw[hi:])
    b = zarrc.open_array(str(root), mode="r")
    assert isinstance(b._engine, BasicStrategy)
    with pytest.raises(CodecError, match=r"c/1/0 \(inner chunk \(4, 0\)\)"):
        b[12:13, 0:1]
    assert count_calls(0) == 0


def test_nested_sharding_takes_the_general_path(tmp_path):
    inner = {"name": "sharding_indexed", "configuration": {
        "chunk_shape": [2, 2], "codecs": [{"name": "bytes", "configuration": {"endian": "little"}}],
        "index_codecs": [{"name": "bytes", "configuration": {"endian": "little"}}]}}
    outer = {"name": "sharding_indexed", "configuration": {
        "chunk_shape": [4, 4], "codecs": [inner],
        "index_codecs": [{"name": "bytes", "configuration": {"endian": "little"}}]}}
    a = zarrc.create_array(LocalStore(str(tmp_path / "n.zarr"), mode="w"), shape=(10, 10),
                           chunks=(8, 8), serializer=outer, compressors=None, dtype="int32")
    a[...] = np.arange(100).reshape(10, 10)
    assert not isinstance(a._engine, BasicStrategy)
    np.testing.assert_array_equal(a[3:9, 2], np.arange(100).reshape(10, 10)[3:9, 2])


@pytest.mark.skipif(not os.path.isdir("/proc/self/fd"), reason="needs /proc/self/fd")
def test_shard_files_are_opened_once_per_run_and_closed(tmp_path):
    a = zarrc.create_array(LocalStore(str(tmp_path / "f.zarr"), mode="w"), shape=(64, 64),
                           chunks=(4, 4), shards=(16, 16), dtype="int16", fill_value=5)
    data = np.arange(64 * 64, dtype="int16").reshape(64, 64)
    a[...] = data
    a[16:32, 16:32] = 5                       # a missing shard among stored ones
    data[16:32, 16:32] = 5
    before = len(os.listdir("/proc/self/fd"))
    for _ in range(20):
        np.testing.assert_array_equal(a[...], data)
        np.testing.assert_array_equal(a[3:60:5, 10:50], data[3:60:5, 10:50])
    with zarrc.config.set(threads=2):
        np.testing.assert_array_equal(a[...], data)
    assert len(os.listdir("/proc/self/fd")) == before


@pytest.mark.parametrize("chain", ["bytes", "blosc"])
def test_outputs_above_the_streaming_threshold_read_the_values_written(tmp_path, chain):
    """Outputs of 32 MiB and more are scattered with non-temporal stores (rows of
    256 bytes and more, and shorter ones of whole cache lines; the rest by memcpy)."""
    from zarrc._kernels.read import STREAM_MIN_BYTES

    shape = (4096, 2304)                      # float32: 36 MiB
    data = np.random.default_rng(0).standard_normal(shape).astype("float32")
    assert data.nbytes >= STREAM_MIN_BYTES
    a = make_array(LocalStore(str(tmp_path / "big.zarr"), mode="w"), shape, (100, 300),
                      "float32", chain)
    a[...] = data
    for sel in [Ellipsis, (slice(1, None), slice(3, None)), (slice(None), slice(1, 2300, 1))]:
        np.testing.assert_array_equal(a[sel], data[sel])
    with zarrc.config.set(threads=2):
        np.testing.assert_array_equal(a[:, 5:], data[:, 5:])


@pytest.mark.parametrize("chunks", [(32, 32, 32), (16, 16, 64)])
def test_large_outputs_take_whole_cache_lines(tmp_path, chunks):
    """Large outputs start on a 64-byte boundary, so short chunk rows (64 and 128
    bytes of uint16 here) that cover whole cache lines are streamed too; rows that
    do not (a selection starting one element in) are copied by memcpy."""
    from zarrc._kernels.read import STREAM_MIN_BYTES

    shape = (256, 256, 288)                   # uint16: 36 MiB, rows 576 bytes apart
    data = np.random.default_rng(1).integers(0, 60000, shape, dtype="uint16")
    a = make_array(LocalStore(str(tmp_path / "big.zarr"), mode="w"), shape, chunks,
                      "uint16", "blosc")
    a[...] = data
    for sel in [Ellipsis, (slice(1, None), slice(3, None), slice(32, None)),
                (slice(None), slice(None), slice(1, None))]:
        out = a[sel]
        assert out.nbytes < STREAM_MIN_BYTES or out.ctypes.data % 64 == 0
        assert out.flags.c_contiguous and out.flags.writeable
        np.testing.assert_array_equal(out, data[sel])


def test_one_chunk_reads_into_fresh_outputs(tmp_path):
    """A one-thread read of 256 KiB or more maps its new output's pages in one call
    before decoding into it (copy.prefault); the outputs, kept alive so each is new
    memory, hold the chunks, and so do outputs of memory used before."""
    shape, chunks = (512, 1024), (128, 1024)          # float32: 512 KiB chunks
    data = np.random.default_rng(2).standard_normal(shape).astype("float32")
    a = make_array(LocalStore(str(tmp_path / "c.zarr"), mode="w"), shape, chunks,
                      "float32", "blosc")
    a[...] = data
    for _ in range(3):
        kept = [a[i:i + 128] for i in range(0, 512, 128)] + [a[5:300, 7:900]]
        for i, out in enumerate(kept[:4]):
            np.testing.assert_array_equal(out, data[i * 128:(i + 1) * 128])
        np.testing.assert_array_equal(kept[4], data[5:300, 7:900])


def test_basic_reads_into_a_given_output(tmp_path):
    """read_basic_into fills an output of the selection's shape and the array's dtype
    (a view with gaps between its elements too) and touches nothing else; an output
    of another shape or dtype is declined with nothing written; a corrupt chunk
    raises naming its key."""
    shape, chunks = (20, 30), (8, 8)
    data = np.arange(600, dtype="float64").reshape(shape)
    a = make_array(LocalStore(str(tmp_path / "a.zarr"), mode="w"), shape, chunks, "float64", "blosc")
    a[...] = data
    engine = a._engine
    whole = np.full((12, 40), -7.0)
    view = whole[1:6, ::3][:, :9]                 # (5, 9), gaps between its elements
    assert engine.read_basic_into((slice(3, 8), slice(4, 13)), view)
    np.testing.assert_array_equal(view, data[3:8, 4:13])
    untouched = np.full((12, 40), True)
    untouched[1:6, 0:27:3] = False
    assert (whole[untouched] == -7.0).all()
    for wrong in (np.zeros((5, 8)), np.zeros((5, 9), "float32"), np.zeros((9, 5)).T[:, :8]):
        before = wrong.copy()
        assert not engine.read_basic_into((slice(3, 8), slice(4, 13)), wrong)
        np.testing.assert_array_equal(wrong, before)
    row = np.zeros(30)
    assert engine.read_basic_into((7, slice(None)), row)
    np.testing.assert_array_equal(row, data[7])
    chunk_file = tmp_path / "a.zarr" / "c" / "0" / "1"
    chunk_file.write_bytes(b"not a blosc frame" * 4)
    with pytest.raises(CodecError, match="c/0/1"):
        engine.read_basic_into((slice(0, 8), slice(8, 16)), np.zeros((8, 8)))
