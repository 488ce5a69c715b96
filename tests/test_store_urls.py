"""Store arguments given as paths and URLs: a path or URL that ends in a node's
metadata document opens that node (as GDAL does for servers without listings)."""

from __future__ import annotations

import numpy as np
import pytest

import zarrc
from zarrc.errors import StoreNotFoundError


@pytest.mark.parametrize("zarr_format", [2, 3])
def test_a_path_to_a_node_document_opens_the_node(tmp_path, zarr_format):
    root = tmp_path / "data.zarr"
    g = zarrc.create_group(str(root), zarr_format=zarr_format)
    a = g.create_array("temp", shape=(6,), dtype="i2", chunks=(4,))
    a[:] = np.arange(6)
    array_doc = "zarr.json" if zarr_format == 3 else ".zarray"
    group_doc = "zarr.json" if zarr_format == 3 else ".zgroup"
    for form in (str(root / "temp" / array_doc), (root / "temp" / array_doc).as_uri()):
        np.testing.assert_array_equal(zarrc.open_array(form, mode="r")[:], np.arange(6))
    assert list(zarrc.open_group(str(root / group_doc), mode="r")) == ["temp"]
    opened = zarrc.open(str(root / "temp" / array_doc), mode="r")
    assert isinstance(opened, zarrc.Array) and opened.shape == (6,)


def test_consolidated_document_opens_the_group(tmp_path):
    root = tmp_path / "c.zarr"
    g = zarrc.create_group(str(root), zarr_format=2)
    g.create_array("x", shape=(2,), dtype="u1")
    zarrc.consolidate_metadata(str(root))
    opened = zarrc.open_consolidated(str(root / ".zmetadata"), mode="r")
    assert list(opened) == ["x"]


def test_other_file_names_are_paths(tmp_path):
    """Only the metadata documents' names are taken off: another name is a directory."""
    with pytest.raises(StoreNotFoundError, match="zarr.jsonx"):
        zarrc.open_array(str(tmp_path / "zarr.jsonx"), mode="r")
