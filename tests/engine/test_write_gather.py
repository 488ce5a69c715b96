"""Whole chunks that are encoded are first gathered from the value row by row, with
the rows a few ahead prefetched (copy.pyx gather_nd).  Every chunk must hold exactly
its part of the value, whatever the number of rows (fewer than the prefetch distance,
or more), the number of dimensions and the value's layout."""

from __future__ import annotations

import numpy as np
import pytest

import zarrc
from zarrc.codecs import Blosc


def _value(shape, layout, rng):
    full = rng.integers(0, 60000, size=tuple(2 * n for n in shape), dtype=np.uint16)
    if layout == "contiguous":
        return np.ascontiguousarray(full[tuple(slice(0, n) for n in shape)])
    if layout == "strided":          # every other item of every dimension
        return full[tuple(slice(0, 2 * n, 2) for n in shape)]
    if layout == "fortran":
        return np.asfortranarray(full[tuple(slice(0, n) for n in shape)])
    return np.broadcast_to(full[(0,) * (len(shape) - 1)][: shape[-1]], shape)   # broadcast


@pytest.mark.parametrize("layout", ["contiguous", "strided", "fortran", "broadcast"])
@pytest.mark.parametrize(("shape", "chunks"), [
    ((5, 300), (1, 300)),            # one row a chunk
    ((21, 96), (3, 32)),             # 3 rows: fewer than the prefetch distance
    ((40, 70), (9, 64)),             # 9 rows: just past it, with edge chunks
    ((6, 33, 20, 48), (2, 16, 5, 48)),
    ((70, 12, 64), (64, 12, 64)),    # 768 rows a chunk
    ((1000,), (64,)),                # 1-d: whole chunks encoded straight from the value
    ((4, 8, 300), (1, 8, 300)),      # chunks spanning every later dimension: one run too
])
def test_encoded_chunks_hold_their_part_of_the_value(tmp_path, layout, shape, chunks):
    rng = np.random.default_rng(sum(shape))
    value = _value(shape, layout, rng)
    for name, compressors in (("blosc", Blosc(cname="lz4", clevel=1, shuffle="shuffle")),
                              ("raw", None)):
        a = zarrc.create_array(str(tmp_path / f"{name}.zarr"), shape=shape, chunks=chunks,
                               dtype="uint16", compressors=compressors, fill_value=0)
        a[...] = value
        np.testing.assert_array_equal(zarrc.open_array(str(tmp_path / f"{name}.zarr"))[...], value)
        window = tuple(slice(1, n - 1) for n in shape)     # every chunk rewritten in part
        a[window] = value[window][::-1]
        expected = value.copy()
        expected[window] = value[window][::-1]
        np.testing.assert_array_equal(a[...], expected)


@pytest.mark.parametrize("store_kind", ["local", "memory"])
def test_chunks_encoded_straight_from_the_value_match_gathered_ones(tmp_path, store_kind):
    """A whole chunk lying in the value as one run is encoded from the value itself
    (WriteBatch.value_run): its stored bytes equal those of the same data gathered
    from a strided value, and a run that is all fill value deletes the chunk."""
    value = np.arange(2000, dtype="<i4").reshape(20, 100)
    value[4:6] = 7                                   # chunk row 2 (rows 4, 5): all fill
    stores = {}
    for name, v in (("run", value), ("gathered", np.asfortranarray(value))):
        store = {} if store_kind == "memory" else str(tmp_path / name)
        a = zarrc.create_array(store, shape=v.shape, chunks=(2, 100), dtype="i4", fill_value=7,
                               compressors=[{"name": "zstd", "configuration": {"level": 1, "checksum": False}}])
        a[...] = v
        np.testing.assert_array_equal(a[...], value)
        stores[name] = {k: a.store.get(k) for k in a.store.list() if k != "zarr.json"}
    assert stores["run"] == stores["gathered"]
    assert "c/2/0" not in stores["run"] and len(stores["run"]) == 9
