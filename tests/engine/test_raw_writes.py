"""Whole uncompressed chunks are written straight from the value's rows (writev, no
gathered copy) when the rows are long enough: the files must hold exactly the
chunk's bytes whatever the value's layout, and chunks left all fill value are
removed unless write_empty_chunks."""

from __future__ import annotations

import numpy as np
import pytest

import zarrc

SHAPE, CHUNKS = (12, 8, 256), (4, 4, 256)     # rows of 256 items: 1 KiB of float32


def _array(path, **kw):
    return zarrc.create_array(str(path), shape=SHAPE, chunks=CHUNKS, dtype="<f4",
                              compressors=None, fill_value=0, **kw)


def _chunk_file(path, *coords):
    return (path / "c").joinpath(*map(str, coords)).read_bytes()


@pytest.mark.parametrize("layout", ["contiguous", "strided", "broadcast", "fortran"])
def test_whole_uncompressed_chunks_hold_their_part_of_the_value(tmp_path, layout):
    rng = np.random.default_rng(0)
    if layout == "contiguous":
        value = rng.random(SHAPE, dtype=np.float32)
    elif layout == "strided":
        value = rng.random((24, 8, 256), dtype=np.float32)[::2]
    elif layout == "broadcast":
        value = np.broadcast_to(rng.random((1, 8, 256), dtype=np.float32), SHAPE)
    else:       # the last dimension is not contiguous: the gathered path
        value = np.asfortranarray(rng.random(SHAPE, dtype=np.float32))
    a = _array(tmp_path / "a")
    a[...] = value
    np.testing.assert_array_equal(a[...], value)
    for coords in [(0, 0, 0), (2, 1, 0)]:
        box = tuple(slice(c * n, (c + 1) * n) for c, n in zip(coords, CHUNKS))
        assert _chunk_file(tmp_path / "a", *coords) == np.ascontiguousarray(value[box]).tobytes()


@pytest.mark.parametrize("write_empty", [False, True])
def test_uncompressed_chunks_left_all_fill_are_removed_unless_write_empty_chunks(tmp_path, write_empty):
    a = _array(tmp_path / "a", write_empty_chunks=write_empty)
    a[...] = 1.0
    value = np.zeros(SHAPE, np.float32)
    value[4:8, 4:8, 100] = 2.0          # chunk (1, 1, 0) keeps one value
    a[...] = value
    np.testing.assert_array_equal(a[...], value)
    assert (tmp_path / "a" / "c" / "1" / "1" / "0").exists()
    assert (tmp_path / "a" / "c" / "0" / "0" / "0").exists() == write_empty
