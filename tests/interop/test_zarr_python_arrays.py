"""Arrays written by zarr-python 3 read bit-exactly in zarrc, and arrays written by
zarrc read bit-exactly in zarr-python, over the matrix of matrix.py."""

from __future__ import annotations

import numpy as np
import pytest

from helpers import NO_ZARR_PYTHON

import zarrc

from interop import support

zarr = pytest.importorskip("zarr", reason=NO_ZARR_PYTHON)


def check_zarr_python_reads(case, path: str, expected: np.ndarray) -> None:
    z = zarr.open_array(path, mode="r")
    assert z.shape == case.shape
    assert z.chunks == case.chunks
    support.assert_scalar_bit_equal(np.asarray(z.fill_value, dtype=case.np_dtype), case.fill_value)
    for sel in support.selections(case):
        support.assert_bit_equal(np.asarray(z[sel]), np.asarray(expected[sel]), f"zarr-python z[{sel!r}]")


def test_zarr_python_writes_zarrc_reads(case, tmp_path) -> None:
    data, expected = support.model(case)
    path = str(tmp_path / "arr")
    z = support.zarr_python_create(case, str(tmp_path), "arr")
    region = case.writes_region
    if region is not None:
        z[region] = data[region]
    support.assert_bit_equal(np.asarray(z[...]), expected, "zarr-python's own read")

    a = zarrc.open_array(str(tmp_path), mode="r", path="arr")
    assert (a.shape, a.chunks, a.dtype) == (case.shape, case.chunks, case.np_dtype)
    support.assert_scalar_bit_equal(a.fill_value, case.fill_value)
    for sel in support.selections(case):
        support.assert_bit_equal(a[sel], np.asarray(expected[sel]), f"zarrc a[{sel!r}]")
    on_disk = support.stored_chunk_keys(path)
    assert a.nchunks_initialized == len(on_disk)
    all_keys = {support.chunk_key(case, c) for c in support.chunk_boxes(case)}
    assert on_disk <= all_keys, f"zarr-python wrote keys zarrc's encoding would not: {on_disk - all_keys}"

    # zarrc rewrites chunks that zarr-python encoded; zarr-python reads the result
    support.apply_updates(case, zarrc.open_array(path, mode="r+"), expected, seed=case.index + 3)
    check_zarr_python_reads(case, path, expected)


def test_zarrc_writes_zarr_python_reads(case, tmp_path) -> None:
    data, expected = support.model(case)
    path = str(tmp_path / "arr")
    a = support.zarrc_create(case, str(tmp_path), "arr")
    region = case.writes_region
    if region is not None:
        a[region] = data[region]
    support.apply_updates(case, a, expected, seed=case.index + 1)
    support.assert_bit_equal(a[...], expected, "zarrc's own read")
    assert support.stored_chunk_keys(path) == support.nonfill_chunk_keys(case, expected)
    check_zarr_python_reads(case, path, expected)
