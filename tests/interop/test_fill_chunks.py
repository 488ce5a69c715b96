"""A chunk is "equal to the fill value" only bit for bit: zarrc keeps chunks of +0.0
under a -0.0 fill value (and the other way round) and chunks of NaNs whose payload
differs from the fill value's, so zarr-python and tensorstore read those bits."""

from __future__ import annotations

import numpy as np
import pytest

from helpers import NO_ZARR_PYTHON

import zarrc

from interop import support

zarr = pytest.importorskip("zarr", reason=NO_ZARR_PYTHON)

QUIET_NAN_WITH_PAYLOAD = np.array(0x7FF8000000000ABC, np.uint64).view(np.float64)[()]


@pytest.mark.parametrize("fill,value", [(-0.0, 0.0), (0.0, -0.0), (np.nan, QUIET_NAN_WITH_PAYLOAD),
                                        (np.nan, -np.float64(np.nan))],
                         ids=["fill-neg0-data-pos0", "fill-pos0-data-neg0", "fill-nan-data-payload",
                              "fill-nan-data-negative-nan"])
def test_chunk_bitwise_unequal_to_fill_is_stored(tmp_path, fill, value) -> None:
    path = str(tmp_path / "a")
    a = zarrc.create_array(str(tmp_path), name="a", shape=(10,), chunks=(4,), dtype="float64",
                           fill_value=fill)
    a[...] = np.arange(10.0) + 1
    a[4:8] = value   # a whole chunk
    a[8:] = value    # the edge chunk, in bounds part
    a[0:4] = fill    # equal to the fill value bit for bit: deleted
    expected = np.full(10, value)
    expected[:4] = fill
    assert support.stored_chunk_keys(path) == {"c/1", "c/2"}
    support.assert_bit_equal(a[...], expected, "zarrc")
    support.assert_bit_equal(np.asarray(zarr.open_array(path, mode="r")[...]), expected, "zarr-python")
    ts = pytest.importorskip("tensorstore")
    support.assert_bit_equal(support.tensorstore_open(path).read().result(), expected, "tensorstore")
