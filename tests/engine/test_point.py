"""Single-element reads (zarrc.point): the fast path must return exactly what the
general path returns, for every layout it takes, and fail the same way."""

from __future__ import annotations

import numpy as np
import pytest

import zarrc
from zarrc.engine.basic import BasicStrategy
from zarrc.engine.point import PointStrategy
from zarrc.errors import CodecError, SelectionError
from zarrc.stores import MemoryStore

BLOSC = {"name": "blosc", "configuration": {"cname": "lz4", "clevel": 5, "shuffle": "shuffle"}}
LAYOUTS = {
    "raw": dict(compressors=None),
    "blosc": dict(compressors=BLOSC),
    "raw-big-endian": dict(compressors=None, serializer={"name": "bytes", "configuration": {"endian": "big"}}),
    "blosc-transposed": dict(compressors=BLOSC, filters=[{"name": "transpose", "configuration":
                                                          {"order": [2, 0, 1]}}]),
    "v2-raw-F": dict(zarr_format=2, compressors=None, order="F"),
    "v2-blosc-F": dict(zarr_format=2, order="F", dimension_separator="/",
                       compressors={"id": "blosc", "cname": "lz4", "clevel": 5, "shuffle": 1}),
    "v2-blosc-bitshuffle-C": dict(zarr_format=2, compressors={"id": "blosc", "cname": "zstd", "clevel": 3,
                                                              "shuffle": 2}),
}


@pytest.fixture(params=["local", "memory"])
def store(request, tmp_path):
    return str(tmp_path / "a") if request.param == "local" else MemoryStore()


@pytest.mark.parametrize("layout", LAYOUTS)
@pytest.mark.parametrize("dtype", ["<u2", "<f8", "<c8", "|u1"])
def test_single_elements_match_numpy(store, layout, dtype):
    rng = np.random.default_rng(1)
    shape, chunks = (21, 17, 9), (8, 5, 9)
    x = (rng.standard_normal(shape) * 1000).astype(dtype)
    a = zarrc.create_array(store, shape=shape, dtype=dtype, chunks=chunks, **LAYOUTS[layout])
    a[:, :12] = x[:, :12]                     # chunks beyond column 15 stay missing
    expected = x.copy()
    expected[:, 12:] = 0
    a = zarrc.open_array(store, mode="r")
    # chunk files: the native basic reader takes single elements instead
    assert isinstance(a._engine, PointStrategy) != isinstance(a._engine, BasicStrategy)
    for _ in range(150):
        idx = tuple(int(rng.integers(-n, n)) for n in shape)
        got = a[idx]
        assert isinstance(got, np.ndarray) and got.shape == () and got.dtype == a.dtype
        assert got.tobytes() == np.asarray(expected[idx], a.dtype).tobytes(), idx
        assert got.tobytes() == a[tuple(np.int64(i) for i in idx)].tobytes()   # general path


def test_out_of_bounds_and_one_dimensional(store):
    a = zarrc.create_array(store, shape=(10,), dtype="<i4", chunks=(4,), compressors=BLOSC)
    a[:] = np.arange(10)
    assert a[3] == 3 and a[-1] == 9 and a[(9,)] == 9
    for bad in (10, -11, (2, 3)):
        with pytest.raises(SelectionError):
            a[bad]
    with pytest.raises(IndexError):
        a[10]


def test_corrupt_chunks_raise_naming_the_key():
    for layout in ("raw", "blosc"):
        store = MemoryStore()
        a = zarrc.create_array(store, name="t", shape=(8, 8), dtype="<u2", chunks=(4, 4), **LAYOUTS[layout])
        a[:] = 7
        store.set("t/c/1/0", store.get("t/c/1/0")[:-5])
        with pytest.raises(CodecError, match="c/1/0"):
            a[5, 2]
        store.set("t/c/1/0", b"\x02\x01\x21\x02" + bytes(30))
        with pytest.raises(CodecError, match="c/1/0"):
            a[5, 2]
        assert a[0, 0] == 7


def test_local_truncated_file(tmp_path):
    for layout in ("raw", "blosc"):
        path = tmp_path / layout
        a = zarrc.create_array(str(path), shape=(8, 8), dtype="<u2", chunks=(4, 4), **LAYOUTS[layout])
        a[:] = 3
        chunk = path / "c" / "0" / "1"
        chunk.write_bytes(chunk.read_bytes()[:-7])
        with pytest.raises(CodecError, match="c/0/1"):
            a[1, 6]
        chunk.write_bytes(b"")
        with pytest.raises(CodecError, match="c/0/1"):
            a[1, 6]


@pytest.mark.parametrize("dtype", ["<u2", "<f4", ">f8"])
@pytest.mark.parametrize("sharded", [False, True])
def test_large_blosc_chunks_in_files(tmp_path, dtype, sharded):
    """Chunks of many LZ4 sequences read from files a part at a time (the frame's
    header, a stream's size, the stretch of a stream walked): every element as in
    memory, in plain chunk files and in shards."""
    rng = np.random.default_rng(5)
    shape, chunks = (128, 96, 40), (64, 48, 40)
    grid = np.indices(shape).sum(axis=0)
    x = (np.sin(grid / 37.0) * 3000 + rng.integers(0, 4, shape)).astype(dtype)
    layout = {"shards": chunks, "chunks": (32, 24, 40)} if sharded else {"chunks": chunks}
    arrays = []
    for store in (str(tmp_path / "a"), MemoryStore()):
        a = zarrc.create_array(store, shape=shape, dtype=dtype, compressors=BLOSC, **layout)
        a[...] = x
        arrays.append(zarrc.open_array(store, mode="r"))
    assert isinstance(arrays[0]._engine, BasicStrategy)
    for _ in range(300):
        idx = tuple(int(rng.integers(0, n)) for n in shape)
        expected = np.asarray(x[idx], arrays[0].dtype).tobytes()
        assert arrays[0][idx].tobytes() == expected == arrays[1][idx].tobytes(), idx
    box = arrays[0][5:7, 40:41, 3:9]              # a few bytes spread over rows
    assert box.tobytes() == x[5:7, 40:41, 3:9].astype(box.dtype).tobytes()


def test_corrupt_large_blosc_file(tmp_path):
    """A damaged stream in a chunk file: single elements raise an error naming the
    chunk, or read a value; the interpreter survives; a truncated file is an error."""
    rng = np.random.default_rng(6)
    path = tmp_path / "a"
    shape = (64, 64, 32)
    x = (np.sin(np.indices(shape).sum(axis=0) / 9.0) * 900 + rng.integers(0, 3, shape)).astype("<u2")
    a = zarrc.create_array(str(path), shape=shape, dtype="<u2", chunks=shape, compressors=BLOSC)
    a[...] = x
    chunk = path / "c" / "0" / "0" / "0"
    frame = chunk.read_bytes()
    for trial in range(60):
        g = bytearray(frame)
        for _ in range(int(rng.integers(1, 8))):
            g[int(rng.integers(16, len(g)))] = int(rng.integers(0, 256))
        chunk.write_bytes(bytes(g))
        for _ in range(5):
            idx = tuple(int(rng.integers(0, n)) for n in shape)
            try:
                a[idx]
            except CodecError as exc:
                assert "c/0/0/0" in str(exc)
    chunk.write_bytes(frame[:len(frame) // 2])
    with pytest.raises(CodecError, match="c/0/0/0"):
        a[63, 63, 31]
    chunk.write_bytes(frame)
    assert a[63, 63, 31] == x[63, 63, 31]
