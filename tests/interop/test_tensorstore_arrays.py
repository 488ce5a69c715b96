"""Arrays written by tensorstore (driver zarr3) read bit-exactly in zarrc, and arrays
written by zarrc read bit-exactly in tensorstore, over the matrix of matrix.py."""

from __future__ import annotations

import numpy as np
import pytest

import zarrc

from interop import support

ts = pytest.importorskip("tensorstore")


def positive(sel: tuple, shape: tuple[int, ...]) -> tuple:
    """``sel`` (without ``...``) with negative integers counted from the end, which
    tensorstore does not do."""
    if Ellipsis in sel:
        return sel
    return tuple(s + n if isinstance(s, int) and s < 0 else s for s, n in zip(sel, shape))


def check_tensorstore_reads(case, path: str, expected: np.ndarray) -> None:
    t = support.tensorstore_open(path)
    assert tuple(t.shape) == case.shape
    assert t.dtype.numpy_dtype == case.np_dtype
    assert tuple(t.chunk_layout.read_chunk.shape or ()) == case.chunks
    support.assert_scalar_bit_equal(np.asarray(t.fill_value), case.fill_value)
    support.assert_bit_equal(t.read().result(), expected, "tensorstore t.read()")
    for sel in support.selections(case)[1:]:
        support.assert_bit_equal(t[positive(sel, case.shape)].read().result(), np.asarray(expected[sel]),
                            f"tensorstore t[{sel!r}]")


def test_tensorstore_writes_zarrc_reads(case, tmp_path) -> None:
    data, expected = support.model(case)
    path = str(tmp_path / "arr")
    t = support.tensorstore_create(case, path)
    region = case.writes_region
    if region is not None:
        t[region].write(data[region]).result()
    support.assert_bit_equal(t.read().result(), expected, "tensorstore's own read")

    # open through the three kinds of entry point
    if case.index % 3 == 0:
        a = zarrc.open_array(str(tmp_path), mode="r", path="arr")
    elif case.index % 3 == 1:
        a = zarrc.open(zarrc.stores.LocalStore(path, mode="r"), mode="r")
    else:
        a = zarrc.open_array(path, mode="r")
    assert isinstance(a, zarrc.Array)
    assert (a.shape, a.chunks, a.dtype) == (case.shape, case.chunks, case.np_dtype)
    support.assert_scalar_bit_equal(a.fill_value, case.fill_value)
    for sel in support.selections(case):
        support.assert_bit_equal(a[sel], np.asarray(expected[sel]), f"zarrc a[{sel!r}]")
    on_disk = support.stored_chunk_keys(path)
    assert a.nchunks_initialized == len(on_disk)
    assert on_disk <= {support.chunk_key(case, c) for c in support.chunk_boxes(case)}

    # zarrc rewrites chunks that tensorstore encoded; tensorstore reads the result
    support.apply_updates(case, zarrc.open_array(path, mode="r+"), expected, seed=case.index + 13)
    check_tensorstore_reads(case, path, expected)


def test_zarrc_writes_tensorstore_reads(case, tmp_path) -> None:
    data, expected = support.model(case, seed=5)
    a = support.zarrc_create(case, str(tmp_path), "arr")
    region = case.writes_region
    if region is not None:
        a[region] = data[region]
    support.apply_updates(case, a, expected, seed=case.index + 11)
    assert support.stored_chunk_keys(str(tmp_path / "arr")) == support.nonfill_chunk_keys(case, expected)

    check_tensorstore_reads(case, str(tmp_path / "arr"), expected)
