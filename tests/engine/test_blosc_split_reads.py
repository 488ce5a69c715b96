"""Reads of a single large blosc chunk shared by several threads (ReadBatch.can_split:
the task that fetched the chunk publishes its blocks, idle and lingering pool
threads take them).  The split is forced on small chunks here (block_split_min(0),
PARALLEL_MIN_BYTES 1): every read must give numpy's values and those of the
unsplit read, through zarrc's own API (BasicReader) and read_into (the path
zarr-python's pipeline takes), for edge chunks, dropped dimensions, frames stored
as is, every typesize; a damaged block gives the same error either way; many
Python threads reading at once get their own values."""

from __future__ import annotations

import os
import threading

import numpy as np
import pytest

import zarrc
import zarrc.runtime.threads
from zarrc._kernels import batch as kernel_batch
from zarrc._kernels import read as kernel_read
from zarrc.engine.api import read_into
from zarrc.core.indexing import plan_orthogonal


@pytest.fixture
def split_small(monkeypatch):
    """Split every chunk's blocks (2 threads), restoring the settings after."""
    before = kernel_read.block_split_min(), kernel_batch.blocks_steady()
    monkeypatch.setattr(zarrc.runtime.threads, "PARALLEL_MIN_BYTES", 1)
    kernel_read.block_split_min(0)
    kernel_batch.blocks_steady(True)        # (no pause after a share that lost)
    with zarrc.config.set(threads=2):
        yield
    kernel_read.block_split_min(before[0])
    kernel_batch.blocks_steady(before[1])


def _blosc(typesize, clevel=5, blocksize=1 << 16):
    # (c-blosc takes no blocksize below 64 KiB on a frame this large)
    return [{"name": "blosc", "configuration": {"cname": "lz4", "clevel": clevel, "shuffle": "shuffle",
                                                "typesize": typesize, "blocksize": blocksize}}]


def _data(shape, dtype, seed):
    rng = np.random.default_rng(seed)
    n = int(np.prod(shape))
    return (np.sin(np.arange(n) / 97.0) * 100 + rng.integers(0, 16, n)).astype(dtype).reshape(shape)


def _chunk_boxes(shape, chunks):
    grid = [range(0, s, c) for s, c in zip(shape, chunks)]
    return [tuple(slice(o, min(o + c, s)) for o, c, s in zip(at, chunks, shape))
            for at in np.ndindex(*[len(g) for g in grid])
            for at in [tuple(g[i] for g, i in zip(grid, at))]]


def _reads(a, boxes, out_of):
    """Each box read through a[box] and through read_into, split and not."""
    engine = a._engine
    got = []
    for split in (0, 1 << 40):
        kernel_read.block_split_min(split)
        for box in boxes:
            out = np.full(out_of(box), 7, a.dtype)
            plan = plan_orthogonal(box, engine.arr.shape, engine.arr.chunks)[0]
            read_into(engine, plan, out)
            got.append((split, box, a[box], out))
    kernel_read.block_split_min(0)
    return got


@pytest.mark.parametrize("dtype", ["<u1", "<u2", "<f4", "<f8"])
@pytest.mark.parametrize("clevel", [5, 0])
def test_single_chunk_reads(tmp_path, split_small, dtype, clevel):
    itemsize = np.dtype(dtype).itemsize
    data = _data((40, 100, 150), dtype, seed=itemsize + clevel)     # edge chunks on every axis
    chunks = (16, 64, 140)                      # 2.2 to 17.5 blocks: a short last one
    a = zarrc.create_array(str(tmp_path / "a.zarr"), shape=data.shape, dtype=dtype, chunks=chunks,
                           compressors=_blosc(itemsize, clevel))
    a[...] = data
    a = zarrc.open_array(str(tmp_path / "a.zarr"), mode="r")
    boxes = _chunk_boxes(data.shape, chunks)
    before = kernel_batch.shared_blocks()
    for _ in range(3):
        got = _reads(a, boxes, lambda box: data[box].shape)
        for split, box, via_api, via_into in got:
            np.testing.assert_array_equal(via_api, data[box], err_msg=f"split={split} {box}")
            np.testing.assert_array_equal(via_into, data[box], err_msg=f"split={split} {box}")
    if (os.cpu_count() or 1) > 1 and itemsize > 1 and clevel:
        # some blocks were taken by a helper (timing: a busy machine may need more reads)
        for _ in range(50):
            if kernel_batch.shared_blocks() > before:
                break
            _reads(a, boxes, lambda box: data[box].shape)
        assert kernel_batch.shared_blocks() > before


def test_dropped_and_partial_leading_dims(tmp_path, split_small):
    """Chunks of one plane read with the plane's index dropped, and partial edge rows."""
    data = _data((5, 270, 300), "<f4", seed=9)
    a = zarrc.create_array(str(tmp_path / "d.zarr"), shape=data.shape, dtype="<f4", chunks=(1, 256, 256),
                           compressors=_blosc(4))
    a[...] = data
    engine = a._engine
    for split in (0, 1 << 40):
        kernel_read.block_split_min(split)
        for i in range(5):
            for sel in [(i, slice(0, 256), slice(0, 256)), (i, slice(256, 270), slice(256, 300)),
                        (i, slice(0, 256), slice(256, 300))]:
                np.testing.assert_array_equal(a[sel], data[sel])
                out = np.empty(data[sel].shape, np.float32)
                read_into(engine, plan_orthogonal(sel, engine.arr.shape, engine.arr.chunks)[0], out)
                np.testing.assert_array_equal(out, data[sel])


def test_corrupt_block_in_second_half(tmp_path, split_small):
    """A damaged compressed stream late in a chunk: the same error, naming the chunk,
    split or not (the rows decode declines, the usual decode words the error)."""
    data = np.zeros((64, 1024), "<f4")
    data[:, ::7] = 1.5
    path = tmp_path / "c.zarr"
    a = zarrc.create_array(str(path), shape=data.shape, dtype="<f4", chunks=(64, 1024),
                           compressors=_blosc(4))
    a[...] = data
    chunk = path / "c" / "0" / "0"
    frame = bytearray(chunk.read_bytes())
    nblocks = -(-data.nbytes // int.from_bytes(frame[8:12], "little"))
    last = int.from_bytes(frame[16 + 4 * (nblocks - 1):20 + 4 * (nblocks - 1)], "little")
    frame[last:last + 4] = (len(frame) * 2).to_bytes(4, "little")    # a stream past the frame's end
    chunk.write_bytes(bytes(frame))
    messages = []
    for split in (0, 1 << 40):
        kernel_read.block_split_min(split)
        for read in (lambda b: zarrc.open_array(str(path))[b],
                     lambda b: read_into(a._engine, plan_orthogonal(b, a.shape, a.chunks)[0],
                                         np.empty((64, 1024), np.float32))):
            with pytest.raises(zarrc.errors.ZarrcError) as info:
                read((slice(None), slice(None)))
            messages.append(str(info.value))
    assert len(set(messages[::2])) == 1 and len(set(messages[1::2])) == 1 and "c/0/0" in messages[0]


def test_many_python_threads(tmp_path, split_small):
    """8 Python threads each reading single chunks at once: every result right."""
    data = _data((64, 64, 128), "<f4", seed=10)
    chunks = (16, 32, 128)
    a = zarrc.create_array(str(tmp_path / "t.zarr"), shape=data.shape, dtype="<f4", chunks=chunks,
                           compressors=_blosc(4))
    a[...] = data
    boxes = _chunk_boxes(data.shape, chunks)
    errors = []

    def reader(k):
        try:
            for r in range(20):
                box = boxes[(k * 5 + r) % len(boxes)]
                if r % 2:
                    got = a[box]
                else:
                    got = np.empty(data[box].shape, np.float32)
                    read_into(a._engine, plan_orthogonal(box, a.shape, a.chunks)[0], got)
                if not np.array_equal(got, data[box]):
                    errors.append((k, r, box))
        except Exception as exc:          # noqa: BLE001 - reported below
            errors.append(exc)

    threads = [threading.Thread(target=reader, args=(k,)) for k in range(8)]
    for t in threads:
        t.start()
    for t in threads:
        t.join()
    assert errors == []
