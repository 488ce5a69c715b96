"""Reading what other writers wrote (issue 23, item 5): unknown keys NCZarr and
netCDF-C put into .zarray / .zgroup, orphan .zattrs entries in .zmetadata, v3
arrays without "codecs" (GDAL's older writer) and ``order`` for a v3 array; each
read (or created) with a warning, compared with zarr-python where it reads them."""

from __future__ import annotations

import json
import os
import warnings

import numpy as np
import pytest
from helpers import NO_ZARR_PYTHON
from interop.support import assert_bit_equal

import zarrc
from zarrc.api.synchronous import create_group
from zarrc.errors import ZarrcRuntimeWarning, ZarrcUserWarning


def _edit_json(path, **changes) -> None:
    with open(path) as f:
        doc = json.load(f)
    doc.update(changes)
    with open(path, "w") as f:
        json.dump(doc, f)


def _v2_hierarchy(root) -> np.ndarray:
    data = np.arange(30, dtype="<i4").reshape(5, 6)
    g = create_group(str(root), zarr_format=2)
    a = g.create_array("x", shape=data.shape, chunks=(2, 4), dtype="int32", zarr_format=2)
    a[...] = data
    return data


def test_nczarr_keys_in_zarray_and_zgroup_are_ignored_with_a_warning(tmp_path):
    data = _v2_hierarchy(tmp_path)
    _edit_json(tmp_path / "x" / ".zarray", _NCZARR_ARRAY={"dimrefs": ["/d0", "/d1"], "storage": "chunked"})
    _edit_json(tmp_path / ".zgroup", _NCZARR_SUPERBLOCK={"version": "2.0.0"}, _nczarr_group={"dims": {}})
    with pytest.warns(ZarrcUserWarning) as caught:
        g = zarrc.open_group(str(tmp_path), mode="r")
        a = g["x"]
        assert list(g.keys()) == ["x"]
    text = " ".join(str(w.message) for w in caught)
    assert '"_NCZARR_ARRAY"' in text and '"_NCZARR_SUPERBLOCK"' in text and '"_nczarr_group"' in text
    assert ".zarray of /x" in text and ".zgroup of /" in text
    assert_bit_equal(a[...], data)
    # writing through zarrc keeps the file readable and does not add the keys back
    with pytest.warns(ZarrcUserWarning):
        a = zarrc.open_array(str(tmp_path / "x"), mode="r+")
    a[0, 0] = 99
    data[0, 0] = 99
    zarr = pytest.importorskip("zarr", reason=NO_ZARR_PYTHON)
    assert_bit_equal(zarr.open_array(str(tmp_path / "x"), mode="r")[...], data)


def test_orphan_zattrs_in_zmetadata_are_ignored_with_a_warning(tmp_path):
    data = _v2_hierarchy(tmp_path)
    zarrc.consolidate_metadata(str(tmp_path), zarr_format=2)
    path = tmp_path / ".zmetadata"
    doc = json.loads(path.read_text())
    doc["metadata"]["gone/.zattrs"] = {"long_name": "a deleted variable"}
    path.write_text(json.dumps(doc))
    with pytest.warns(ZarrcUserWarning, match=r'ignoring key "gone/.zattrs": attributes without'):
        g = zarrc.open_consolidated(str(tmp_path), mode="r")
    assert list(g.keys()) == ["x"]
    assert_bit_equal(g["x"][...], data)


def test_v3_array_without_codecs_reads_as_plain_bytes_with_a_warning(tmp_path):
    data = np.arange(24, dtype="<u2").reshape(4, 6)
    a = zarrc.create_array(str(tmp_path), shape=data.shape, chunks=(3, 4), dtype="uint16",
                           compressors=None, fill_value=7)
    a[...] = data
    doc = json.loads((tmp_path / "zarr.json").read_text())
    assert doc.pop("codecs") == [{"name": "bytes", "configuration": {"endian": "little"}}]
    (tmp_path / "zarr.json").write_text(json.dumps(doc))
    os.remove(tmp_path / "c" / "1" / "1")
    with pytest.warns(ZarrcUserWarning, match=r'zarr.json of /: "codecs" is missing: read as'):
        b = zarrc.open_array(str(tmp_path), mode="r")
    expected = data.copy()
    expected[3:, 4:] = 7
    assert_bit_equal(b[...], expected)


def test_order_for_a_v3_array_warns_as_zarr_python(tmp_path):
    with pytest.warns(ZarrcRuntimeWarning, match="order has no effect for Zarr v3"):
        a = zarrc.create_array(str(tmp_path / "c"), shape=(4, 6), chunks=(2, 3), dtype="int32", order="F")
    a[...] = np.arange(24).reshape(4, 6)
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        zarrc.create_array(str(tmp_path / "v2"), shape=(4,), dtype="int8", order="F", zarr_format=2)
        zarrc.create_array(str(tmp_path / "none"), shape=(4,), dtype="int8")
    zarr = pytest.importorskip("zarr", reason=NO_ZARR_PYTHON)
    with pytest.warns(RuntimeWarning, match="order"):
        z = zarr.create_array(str(tmp_path / "z"), shape=(4, 6), chunks=(2, 3), dtype="int32", order="F")
    z[...] = np.arange(24).reshape(4, 6)
    # the same document and data: order changed nothing stored
    assert json.loads((tmp_path / "c" / "zarr.json").read_text()) == \
        json.loads((tmp_path / "z" / "zarr.json").read_text())
    assert_bit_equal(zarr.open_array(str(tmp_path / "c"))[...], np.arange(24, dtype="int32").reshape(4, 6))
