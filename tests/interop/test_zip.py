"""A zip file written by zarr-python's ZipStore reads bit-exactly in zarrc (by a
".zip" path and through zarrc.stores.ZipStore), and the other way round."""

from __future__ import annotations

import zipfile

import numpy as np
import pytest

from helpers import NO_ZARR_PYTHON

import zarrc

from interop import support

zarr = pytest.importorskip("zarr", reason=NO_ZARR_PYTHON)
ZarrZipStore = getattr(getattr(zarr, "storage", None), "ZipStore", None)
pytestmark = pytest.mark.skipif(ZarrZipStore is None, reason="zarr-python has no ZipStore")

ARRAYS = {
    # path -> dtype, shape, chunks, fill, codecs for zarr-python
    "x": ("float64", (13, 7), (4, 3), np.nan, {}),
    "g/y": ("int16", (21,), (5,), -4, {"compressors": [{"name": "gzip", "configuration": {"level": 1}}]}),
    "g/h/z": ("complex64", (3, 4, 5), (2, 4, 2), complex(0.5, -1), {
        "serializer": {"name": "bytes", "configuration": {"endian": "big"}},
        "compressors": [{"name": "blosc", "configuration": {"cname": "zstd", "clevel": 3,
                                                             "shuffle": "bitshuffle", "typesize": 8}},
                        {"name": "crc32c"}]}),
}


def contents(path: str) -> tuple[np.ndarray, tuple]:
    """(expected array content, the region that was written)."""
    dtype, shape, chunks, fill, _ = ARRAYS[path]
    data = support.sample(dtype, shape, seed=len(path))
    region = (slice(1, None),) + (slice(None),) * (len(shape) - 1)  # the first chunk row stays missing
    expected = np.full(shape, fill, dtype)
    expected[region] = data[region]
    return expected, region


@pytest.mark.parametrize("how,compression", [("path", zipfile.ZIP_STORED), ("store", zipfile.ZIP_STORED),
                                             ("path", zipfile.ZIP_DEFLATED)],
                         ids=["path-stored", "store-stored", "path-deflated"])
def test_zarr_python_zip_reads_in_zarrc(tmp_path, how, compression) -> None:
    zpath = str(tmp_path / "data.zip")
    store = ZarrZipStore(zpath, mode="w", compression=compression)
    root = zarr.open_group(store, mode="w", attributes={"zip": "✓"})
    for path, (dtype, shape, chunks, fill, codecs) in ARRAYS.items():
        parent, _, name = path.rpartition("/")
        g = root.require_group(parent) if parent else root
        a = g.create_array(name, shape=shape, chunks=chunks, dtype=dtype, fill_value=fill, **codecs)
        expected, region = contents(path)
        a[region] = expected[region]
    store.close()

    zstore = zarrc.stores.ZipStore(zpath, mode="r") if how == "store" else zpath
    g = zarrc.open_group(zstore, mode="r")
    assert dict(g.attrs) == {"zip": "✓"}
    assert sorted(g.keys()) == ["g", "x"]
    for path in ARRAYS:
        a = g[path]
        expected, _ = contents(path)
        support.assert_bit_equal(a[...], expected, path)
        support.assert_bit_equal(a[1:, ...][::2], expected[1:, ...][::2], path)
    if how == "store":
        zstore.close()


def test_zarrc_zip_reads_in_zarr_python(tmp_path) -> None:
    zpath = str(tmp_path / "data.zip")
    store = zarrc.stores.ZipStore(zpath, mode="w")
    root = zarrc.group(store, attributes={"zip": "✓"})
    for path, (dtype, shape, chunks, fill, codecs) in ARRAYS.items():
        a = root.create_array(path, shape=shape, chunks=chunks, dtype=dtype, fill_value=fill, **codecs)
        expected, region = contents(path)
        a[region] = expected[region]
    store.close()

    zstore = ZarrZipStore(zpath, mode="r")
    g = zarr.open_group(zstore, mode="r")
    assert dict(g.attrs) == {"zip": "✓"}
    for path in ARRAYS:
        expected, _ = contents(path)
        support.assert_bit_equal(np.asarray(g[path][...]), expected, path)
    zstore.close()
