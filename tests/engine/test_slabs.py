"""Read outputs of 256 KiB and more come from zarrc/_kernels/slabs.pyx: huge-page slabs
(up to 2 MiB) and mappings of their own (larger).  Each is a writable C-order array of
its own memory for as long as it lives, whatever order outputs die in; memory of dead
outputs is handed out again (the top of the current slab at once, the rest through a
pool of at most ``zarrc.config.pool_bytes``)."""

from __future__ import annotations

import itertools
import random
import sys

import numpy as np
import pytest

import zarrc
from zarrc._kernels import slabs
from zarrc.stores import LocalStore

KIB = 1024
linux_only = pytest.mark.skipif(not sys.platform.startswith("linux"), reason="slabs are Linux only")


def _span(a: np.ndarray) -> tuple[int, int]:
    return a.ctypes.data, a.ctypes.data + a.nbytes


@linux_only
def test_outputs_are_separate_whatever_order_they_die_in():
    rng = random.Random(5)
    live: dict[int, np.ndarray] = {}
    for step in range(600):
        if live and rng.random() < 0.45:
            del live[rng.choice(list(live))]
        else:
            nbytes = rng.randrange(slabs.SLAB_MIN_BYTES, slabs.SLAB_BYTES + 1, 8)
            a = slabs.empty((nbytes // 8,), "<u8")
            assert a.flags.c_contiguous and a.flags.writeable
            a[:] = step
            live[step] = a
        spans = sorted(_span(a) for a in live.values())
        assert all(hi <= lo for (_, hi), (lo, _) in itertools.pairwise(spans)), "outputs overlap"
    for step, a in live.items():
        assert (a == step).all(), f"output {step} was overwritten"


@linux_only
def test_memory_at_the_top_of_the_slab_is_used_again():
    first = slabs.empty((512 * KIB,), np.uint8)
    live, top = slabs.in_use()
    address = first.ctypes.data
    del first
    assert slabs.in_use() == (live - 1, top - 512 * KIB)
    again = slabs.empty((64, 2048), np.float32)           # 512 KiB too
    assert again.ctypes.data == address
    # pieces that died below the top are taken back once the top reaches them
    below, above = slabs.empty((256 * KIB,), np.uint8), slabs.empty((256 * KIB,), np.uint8)
    live, top = slabs.in_use()
    del below
    assert slabs.in_use() == (live - 1, top)
    del above
    assert slabs.in_use() == (live - 2, top - 512 * KIB)
    del again


@pytest.mark.parametrize("nbytes", [104, 256 * KIB - 8])
def test_small_outputs_are_numpy_arrays(nbytes):
    a = slabs.empty((nbytes // 8,), "<f8")
    assert a.flags.owndata and a.nbytes == nbytes


@linux_only
def test_chunk_reads_kept_and_dropped_in_any_order(tmp_path):
    """Chunk-sized reads (512 KiB and 1.5 MiB) into slab outputs, some kept, some
    dropped, each still holding its chunk at the end."""
    shape, chunks = (2048, 1024), (128, 1024)                # float32: 512 KiB chunks
    data = np.random.default_rng(3).standard_normal(shape).astype("float32")
    a = zarrc.create_array(LocalStore(str(tmp_path / "s.zarr"), mode="w"), shape=shape,
                           dtype="float32", chunks=chunks)
    a[...] = data
    rng = random.Random(7)
    kept = {}
    for _ in range(3):
        for i in range(0, 2048, 128):
            span = 384 if i % 512 == 0 and i + 384 <= 2048 else 128
            out = a[i:i + span]
            assert out.base is not None and not out.flags.owndata   # a slab's piece
            kept[i, span, len(kept)] = out
        for key in rng.sample(sorted(kept), len(kept) // 2):
            del kept[key]
    for (i, span, _), out in kept.items():
        np.testing.assert_array_equal(out, data[i:i + span])


MIB = 1024 * KIB


@linux_only
def test_large_outputs_reuse_the_memory_of_dead_ones():
    with zarrc.config.set(pool_bytes=64 * MIB):
        first = slabs.empty((8 * MIB // 4,), np.float32)     # 8 MiB: a mapping of its own
        assert not first.flags.owndata and first.ctypes.data % (2 * MIB) == 0
        first[:] = 1.5
        address = first.ctypes.data
        del first
        assert 8 * MIB in slabs.pooled_mappings()
        small = slabs.empty((3 * MIB,), np.uint8)            # 4 MiB: too small to take it
        assert small.ctypes.data != address
        again = slabs.empty((7 * MIB + 5,), np.uint8)       # 8 MiB once rounded up: takes it
        assert again.ctypes.data == address
        again[:] = 9
        assert (again == 9).all()
        del again, small
        # a pooled mapping up to an eighth larger is taken whole, and pooled whole again
        larger = slabs.empty((18 * MIB,), np.uint8)
        address = larger.ctypes.data
        del larger
        taken = slabs.empty((16 * MIB,), np.uint8)
        assert taken.ctypes.data == address and 18 * MIB not in slabs.pooled_mappings()
        del taken
        assert slabs.pooled_mappings()[-1] == 18 * MIB


@linux_only
def test_the_pool_keeps_at_most_pool_bytes():
    with zarrc.config.set(pool_bytes=20 * MIB):
        outs = [slabs.empty((8 * MIB,), np.uint8) for _ in range(3)]
        newest = outs[2].ctypes.data
        while outs:
            del outs[0]                                      # freed in order
        kept = slabs.pooled_mappings()
        assert sum(kept) <= 20 * MIB and kept[-1] == 8 * MIB
        assert slabs.empty((8 * MIB,), np.uint8).ctypes.data == newest   # the last freed
        with zarrc.config.set(pool_bytes=0):
            assert slabs.pooled_mappings() == []
            big = slabs.empty((4 * MIB,), np.uint8)
            del big
            assert slabs.pooled_mappings() == []
        assert slabs.pool_limit() == 20 * MIB
    assert slabs.pool_limit() == zarrc.config.pool_bytes == 1 << 30
    with pytest.raises(ValueError, match="pool_bytes must be an integer >= 0, got -1"):
        zarrc.config.set(pool_bytes=-1)


@linux_only
def test_dead_slabs_go_to_the_pool_and_dead_pieces_are_bounded():
    with zarrc.config.set(pool_bytes=64 * MIB):
        first = [slabs.empty((512 * KIB,), np.uint8) for _ in range(4)]   # one whole slab
        nxt = slabs.empty((512 * KIB,), np.uint8)                        # retires it
        before = slabs.pooled_mappings().count(2 * MIB)
        del first[:3]
        assert slabs.held_bytes() >= 3 * 512 * KIB                       # held, not dropped
        del first
        assert slabs.pooled_mappings().count(2 * MIB) == before + 1
        assert slabs.held_bytes() == 0
        # keep every fourth of many outputs: dead pieces of retired slabs stay bounded
        kept = {}
        for i in range(400):
            a = slabs.empty((512 * KIB,), np.uint8)
            a[:] = i % 251
            if i % 4 == 0:
                kept[i] = a
            del a
            assert slabs.held_bytes() <= slabs.HELD_MAX_BYTES
        for i, a in kept.items():
            assert (a == i % 251).all()
        del nxt, kept


@linux_only
@pytest.mark.parametrize("nbytes", [512 * KIB, 6 * MIB])
def test_reused_memory_holds_nothing_of_the_last_output(tmp_path, nbytes):
    """Reads into memory that held other values: chunks never written come out as the
    fill value, written ones as written."""
    n = nbytes // 2
    a = zarrc.create_array(LocalStore(str(tmp_path / "f.zarr"), mode="w"), shape=(n,),
                           dtype="uint16", chunks=(n // 8,), fill_value=7)
    a[: n // 8] = 3
    a[n // 2: n // 2 + n // 8] = 5
    expected = np.full(n, 7, np.uint16)
    expected[: n // 8] = 3
    expected[n // 2: n // 2 + n // 8] = 5
    with zarrc.config.set(pool_bytes=64 * MIB):
        for _ in range(3):
            garbage = slabs.empty((n,), np.uint16)
            garbage[:] = 0xBEEF
            del garbage
            np.testing.assert_array_equal(a[...], expected)
