"""Small reads of large chunks: the native planner of int/slice selections
(zarrc._kernels.plan) gives exactly the general planner's tasks; a blosc chunk of
many blocks decodes only the blocks a selection spans; a zstd chunk is decoded
only up to the selection's last element; an uncompressed chunk file is read in
slabs along its first dimension when the selection is a small box."""

from __future__ import annotations

import random
import struct

import numpy as np
import pytest

import zarrc
from zarrc import engine
from zarrc.core import indexing
from zarrc.engine import batch
from zarrc._kernels.plan import format_keys, plan_basic
from zarrc.errors import CodecError


def _random_selection(rng: random.Random, shape: tuple[int, ...]):
    sel = []
    for n in shape:
        r = rng.random()
        if r < 0.25 and n:
            sel.append(rng.randrange(-n, n))
        elif r < 0.9:
            lo, hi = (rng.choice([None, rng.randrange(-n - 3, n + 3)]) for _ in range(2))
            sel.append(slice(lo, hi, rng.choice([None, 1, 2, 3, 7, 20])))
        else:
            break
    return sel[0] if len(sel) == 1 and rng.random() < 0.2 else tuple(sel)


def test_plan_basic_matches_general_plan():
    rng = random.Random(7)
    checked = 0
    for _ in range(4000):
        ndim = rng.randrange(1, 4)
        shape = tuple(rng.randrange(0, 30) for _ in range(ndim))
        chunks = tuple(rng.randrange(1, 12) for _ in range(ndim))
        sel = _random_selection(rng, shape)
        planned = plan_basic(sel, shape, chunks)
        dims, out_shape = indexing.plan(sel, shape, chunks)
        assert planned is not None, (sel, shape)
        table, tasks, coords, pshape, dropped = planned
        assert pshape == out_shape and dropped == tuple(d.dropped for d in dims)
        if 0 in out_shape:
            continue
        t2, _, _, k2 = batch.assemble(dims)
        assert np.array_equal(table, t2), (sel, shape, chunks)
        assert np.array_equal(tasks, k2), (sel, shape, chunks)
        assert np.array_equal(coords, batch.task_coords(t2, k2))
        checked += 1
    assert checked > 2000


@pytest.mark.parametrize("sel", [
    (Ellipsis, 1, Ellipsis), (np.int64(1),), (True,), (slice(None, None, -1),), (slice(0, 2, 0),),
    (5,), (-6,), (2 ** 70,), (slice("a", None),), (0, 0, 0), ([1, 2],),
])
def test_plan_basic_declines_what_the_general_path_handles(sel):
    assert plan_basic(sel, (5, 4), (2, 2)) is None
    assert plan_basic((), (), ()) is None          # 0-d arrays


@pytest.mark.parametrize("sel", [
    Ellipsis, (Ellipsis,), (1, Ellipsis), (Ellipsis, slice(1, 3)), (0, Ellipsis, 2),
    (slice(None, None, 2), Ellipsis, 1, 3), (1, 2, 3, Ellipsis),
])
def test_plan_basic_expands_one_ellipsis(sel):
    shape, chunks = (5, 4, 7), (2, 3, 4)
    if sel == (slice(None, None, 2), Ellipsis, 1, 3):
        shape, chunks = (5, 6, 4, 7), (2, 3, 3, 4)
    table, tasks, _, pshape, dropped = plan_basic(sel, shape, chunks)
    dims, out_shape = indexing.plan(sel, shape, chunks)
    t2, _, _, k2 = batch.assemble(dims)
    assert pshape == out_shape and dropped == tuple(d.dropped for d in dims)
    assert np.array_equal(table, t2) and np.array_equal(tasks, k2)


def test_format_keys():
    coords = np.array([[0, 12], [3, 4]], np.int64)
    assert format_keys(coords, "a/c/", "/") == ["a/c/0/12", "a/c/3/4"]
    with pytest.raises(ValueError, match="negative"):
        format_keys(np.array([[0, -1]], np.int64), "", ".")


# ------------------------------------------------------------------ blosc blocks

# c-blosc keeps a forced block size for zstd, but makes LZ4 blocks (which it splits
# into one stream per byte of an item) at least 64 KiB
BLOCKS = {"zstd": ((32, 32, 16), (64, 40, 16)), "lz4": ((64, 64, 32), (70, 64, 40))}


def _blosc_array(store, cname):
    chunks, shape = BLOCKS[cname]
    data = _data(shape)
    comp = [{"name": "blosc", "configuration": {
        "cname": cname, "clevel": 5, "shuffle": "shuffle", "typesize": 2, "blocksize": 4096}}]
    a = zarrc.create_array(store, shape=shape, chunks=chunks, dtype=data.dtype, compressors=comp)
    a[...] = data
    return a, data


def _data(shape, dtype="<u2"):
    rng = np.random.default_rng(3)
    n = int(np.prod(shape))
    return (np.arange(n) // 7 + rng.integers(0, 4, n)).astype(dtype).reshape(shape)


@pytest.mark.parametrize("cname", ["zstd", "lz4"])
@pytest.mark.parametrize("kind", ["local", "memory"])
def test_small_boxes_of_many_block_blosc_chunks_read_the_values_written(tmp_path, kind, cname):
    a, data = _blosc_array(str(tmp_path / "a") if kind == "local" else {}, cname)
    frame = a._chunked.store.get("c/0/0/0")
    nbytes, blocksize = struct.unpack_from("<ii", frame, 4)
    assert nbytes // blocksize >= 4
    rng = random.Random(1)
    for _ in range(200):
        corner = [rng.randrange(n) for n in data.shape]
        box = tuple(slice(c, c + rng.randrange(1, 9), rng.choice([1, 1, 2])) for c in corner)
        np.testing.assert_array_equal(a[box], data[box])
    np.testing.assert_array_equal(a[5, 3:30, 7], data[5, 3:30, 7])
    np.testing.assert_array_equal(a[...], data)


def test_blosc_items_that_do_not_divide_the_chunk(tmp_path):
    # typesize 8 over chunks of 39 * 9 bytes: the frame's items do not tile them
    data = _data((40, 9), "i1")
    comp = [{"name": "blosc", "configuration": {
        "cname": "zstd", "clevel": 5, "shuffle": "shuffle", "typesize": 8, "blocksize": 128}}]
    a = zarrc.create_array(str(tmp_path / "a"), shape=data.shape, chunks=(39, 9), dtype="i1",
                           compressors=comp)
    a[...] = data
    for box in [(slice(0, 2), slice(1, 3)), (slice(30, 39), slice(None)), (38, 8)]:
        np.testing.assert_array_equal(a[box], data[box])


def test_blosc_damaged_block_fails_only_reads_that_need_it(tmp_path):
    a, data = _blosc_array(str(tmp_path / "a"), "zstd")
    path = tmp_path / "a" / "c" / "0" / "0" / "0"
    frame = bytearray(path.read_bytes())
    nbytes, blocksize = struct.unpack_from("<ii", frame, 4)
    assert nbytes // blocksize == 8                     # 32 * 32 * 16 * 2 bytes, 4 KiB blocks
    struct.pack_into("<i", frame, 16 + 4 * 7, len(frame) + 100)     # last block points away
    path.write_bytes(bytes(frame))
    np.testing.assert_array_equal(a[:4, :5, :], data[:4, :5, :])     # first block only
    with pytest.raises(CodecError, match="c/0/0/0"):
        a[30:32, 0:3, :]                                             # in the last block
    with pytest.raises(CodecError, match="c/0/0/0"):
        a[:32, :32, :]


# ------------------------------------------------------------------ uncompressed slabs

def test_small_boxes_of_uncompressed_chunk_files_read_the_values_written(tmp_path):
    data = _data((64, 64, 64))
    a = zarrc.create_array(str(tmp_path / "a"), shape=data.shape, chunks=(64, 64, 64),
                           dtype=data.dtype, compressors=None)
    a[...] = data
    rng = random.Random(2)
    for _ in range(100):
        corner = [rng.randrange(n) for n in data.shape]
        box = tuple(slice(c, c + rng.randrange(1, 20), rng.choice([1, 3])) for c in corner)
        np.testing.assert_array_equal(a[box], data[box])
    idx = np.array([60, 2, 2, 31])
    out = np.empty((4, 3, 2), data.dtype)
    dims = [indexing.project_indices(idx, 64, 64), indexing.project_slice(5, 8, 1, 64, 64),
            indexing.project_slice(9, 11, 1, 64, 64)]
    engine.read_into(a._engine, dims, out)
    np.testing.assert_array_equal(out, data[idx][:, 5:8, 9:11])
    # a chunk file of the wrong size is an error, a missing one reads as fill
    path = tmp_path / "a" / "c" / "0" / "0" / "0"
    path.write_bytes(path.read_bytes()[:-2])
    with pytest.raises(CodecError, match="c/0/0/0"):
        a[10:20, 10:20, 10:20]
    path.unlink()
    assert not a[10:20, 10:20, 10:20].any()


# ------------------------------------------------------------------ zstd prefixes

@pytest.mark.parametrize("checksum", [False, True])
@pytest.mark.parametrize("kind", ["local", "memory"])
def test_small_reads_of_zstd_chunks_return_the_values_written(tmp_path, kind, checksum):
    data = _data((64, 64, 32))
    comp = [{"name": "zstd", "configuration": {"level": 3, "checksum": checksum}}]
    a = zarrc.create_array(str(tmp_path / "a") if kind == "local" else {}, shape=data.shape,
                           chunks=(64, 64, 32), dtype=data.dtype, compressors=comp)
    a[...] = data
    rng = random.Random(4)
    for _ in range(100):
        corner = [rng.randrange(n) for n in data.shape]
        box = tuple(slice(c, c + rng.randrange(1, 12)) for c in corner)
        np.testing.assert_array_equal(a[box], data[box])
    np.testing.assert_array_equal(a[3, 2, 1], data[3, 2, 1])


def test_zstd_truncated_frame_fails_even_for_reads_near_its_start(tmp_path):
    data = _data((64, 64, 32))
    a = zarrc.create_array(str(tmp_path / "a"), shape=data.shape, chunks=(64, 64, 32),
                           dtype=data.dtype,
                           compressors=[{"name": "zstd", "configuration": {"level": 3}}])
    a[...] = data
    path = tmp_path / "a" / "c" / "0" / "0" / "0"
    path.write_bytes(path.read_bytes()[:-10])
    with pytest.raises(CodecError, match="c/0/0/0"):
        a[0:2, 0:2, 0:2]
