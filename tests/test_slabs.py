"""Read outputs of 256 KiB to 2 MiB come from huge-page slabs (zarrc/_kernels/slabs.pyx):
each is a writable C-order array of its own memory for as long as it lives, whatever
order outputs die in; freed memory at the top of the current slab is handed out again."""

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
    (live, top), _ = slabs.in_use()
    address = first.ctypes.data
    del first
    assert slabs.in_use()[0] == (live - 1, top - 512 * KIB)
    again = slabs.empty((64, 2048), np.float32)           # 512 KiB too
    assert again.ctypes.data == address
    # pieces that died below the top are taken back once the top reaches them
    below, above = slabs.empty((256 * KIB,), np.uint8), slabs.empty((256 * KIB,), np.uint8)
    (live, top), _ = slabs.in_use()
    del below
    assert slabs.in_use()[0] == (live - 1, top)
    del above
    assert slabs.in_use()[0] == (live - 2, top - 512 * KIB)
    del again


@pytest.mark.parametrize("nbytes", [104, 256 * KIB - 8, 2 * 1024 * KIB + 8])
def test_other_sizes_are_numpy_arrays(nbytes):
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
