"""Single-element reads (zarrc.point): the fast path must return exactly what the
general path returns, for every layout it takes, and fail the same way."""

from __future__ import annotations

import numpy as np
import pytest

import zarrc
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
    # raw chunk files: the native basic reader takes single elements instead
    assert (a._point is None) == (a._chunked.basic is not None and "raw" in layout)
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
