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
