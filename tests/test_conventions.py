"""GDAL's conventions (zarrc.core.conventions): dimension names in their three forms
(v3 ``dimension_names``, v2 ``_ARRAY_DIMENSIONS``, NCZarr's dimension references),
written for v2 as ``_ARRAY_DIMENSIONS``, and the georeferencing attributes kept by
copies.  On GDAL's own test stores (skipped where the corpus is absent), on stores
netCDF-C writes (netCDF4) and through xarray."""

from __future__ import annotations

import json
import os
import warnings
from pathlib import Path

import numpy as np
import pytest

from helpers import netcdf_nczarr

import zarrc
from zarrc.core import conventions
from zarrc.errors import MetadataError

GDAL = Path(os.environ.get("ZARRC_CORPUS", "/work/shared/corpus")) / "gdal_zarr"


def corpus(name: str) -> Path:
    path = GDAL / name
    if not path.exists():
        pytest.skip(f"GDAL's test store {name} is not at {path}")
    return path


def quiet_open(path, **kw):
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        return zarrc.open(str(path), **kw)


# ------------------------------------------------------------ dimension names

@pytest.mark.parametrize("name, member, dims", [
    ("array_dimensions.zarr", "var", ("lat", "lon")),
    ("array_dimensions.zarr", "lat", ("lat",)),
    ("array_dimensions_upper_level.zarr", "subgroup/var", ("lat", "lon")),
    ("zarr_with_stac_proj_epsg.zarr", "test", ("Y", "X")),
])
def test_array_dimensions_attribute_of_gdal_stores(name, member, dims):
    g = quiet_open(corpus(name), mode="r")
    assert g[member].dimension_names == dims


@pytest.mark.parametrize("member, dims", [
    ("MyGroup/dset1", ("lat", "lon")), ("MyGroup/lon", ("lon",)),
    ("MyGroup/Group_A/dset2", ("lat", "lon")), ("MyGroup/Group_A/dset3", ("lat", "lon")),
])
def test_nczarr_dimension_references_of_gdal_store(member, dims):
    g = quiet_open(corpus("nczarr_v2.zarr"), mode="r", use_consolidated=False)
    a = g[member]
    assert a.dimension_names == dims
    assert a.metadata.nczarr_dimrefs[-1].startswith("/MyGroup")
    assert "_ARRAY_DIMENSIONS" not in a.attrs        # (only .zarray's _NCZARR_ARRAY names them)


def test_v3_dimension_names_of_gdal_store():
    found = [p for p in (GDAL / "v3").glob("*.zarr") if (p / "zarr.json").exists()] if GDAL.exists() else []
    if not found:
        pytest.skip("GDAL's v3 test stores are absent")
    g = quiet_open(corpus("v3/simple_multiscales"), mode="r")
    assert g["level0/ar"].dimension_names == ("y", "x")


def test_nczarr_attribute_and_precedence():
    store = zarrc.storage.MemoryStore()
    a = zarrc.create_array(store, name="a", shape=(2, 3), dtype="i2", zarr_format=2,
                           attributes={"_nczarr_array": {"dimrefs": ["/t", "/grp/x"]}})
    assert a.dimension_names == ("t", "x")
    a.attrs["_ARRAY_DIMENSIONS"] = ["tt", "xx"]          # xarray's attribute wins
    assert zarrc.open_array(store, path="a").dimension_names == ("tt", "xx")
    a.attrs["_ARRAY_DIMENSIONS"] = ["only_one"]          # not one per dimension: not names
    assert zarrc.open_array(store, path="a").dimension_names == ("t", "x")
    b = zarrc.create_array(store, name="b", shape=(2,), dtype="i2", zarr_format=2)
    assert b.dimension_names is None


def test_v2_dimension_names_written_as_array_dimensions(tmp_path):
    path = tmp_path / "v2.zarr"
    a = zarrc.create_array(str(path), name="t", shape=(4, 6), chunks=(2, 3), dtype="f4", zarr_format=2,
                           dimension_names=["y", "x"], attributes={"units": "K"})
    a[...] = np.arange(24, dtype="f4").reshape(4, 6)
    assert a.dimension_names == ("y", "x")
    zattrs = json.loads((path / "t" / ".zattrs").read_text())
    assert zattrs == {"units": "K", "_ARRAY_DIMENSIONS": ["y", "x"]}
    assert zarrc.open_array(str(path), path="t").dimension_names == ("y", "x")
    g = zarrc.open_group(str(path), mode="r+")
    b = g.create_array("u", shape=(3,), dtype="i1", dimension_names=("x3",))
    assert b.attrs["_ARRAY_DIMENSIONS"] == ["x3"]


@pytest.mark.parametrize("names", [[None, "x"], ["x"], "x"])
def test_v2_unnamed_or_wrong_count_dimension_names_refused(names):
    with pytest.raises(MetadataError, match="_ARRAY_DIMENSIONS"):
        zarrc.create_array(zarrc.storage.MemoryStore(), shape=(2, 2), dtype="i1", zarr_format=2,
                           dimension_names=names)
    with pytest.raises(MetadataError, match="differ"):
        conventions.v2_dimension_attributes(["a"], 1, {"_ARRAY_DIMENSIONS": ["b"]})


def test_xarray_reads_zarrc_v2_dimension_names(tmp_path):
    xr = pytest.importorskip("xarray")
    pytest.importorskip("zarr")
    path = tmp_path / "x.zarr"
    g = zarrc.open_group(str(path), mode="w", zarr_format=2)
    a = g.create_array("temp", shape=(3, 4), dtype="f8", dimension_names=["time", "x"], fill_value=np.nan)
    a[...] = np.arange(12.0).reshape(3, 4)
    g.create_array("x", shape=(4,), dtype="i4", dimension_names=["x"])[...] = [10, 20, 30, 40]
    zarrc.consolidate_metadata(str(path))
    for engine in ("zarr", "zarrc"):
        ds = xr.open_dataset(path, engine=engine)
        assert ds["temp"].dims == ("time", "x")
        assert list(ds["x"].values) == [10, 20, 30, 40]
        np.testing.assert_array_equal(ds["temp"].values, np.arange(12.0).reshape(3, 4))


def test_netcdf_c_written_dimensions(tmp_path):
    path = tmp_path / "nc.zarr"
    with netcdf_nczarr(path) as nc:
        nc.createDimension("time", 2)
        nc.createDimension("lat", 3)
        v = nc.createVariable("v", "f4", ("time", "lat"))
        v[:] = np.arange(6.0).reshape(2, 3)
        g = nc.createGroup("sub")
        g.createDimension("lon", 4)
        w = g.createVariable("w", "i2", ("lat", "lon"))
        w[:] = np.ones((3, 4))
    g = quiet_open(path, mode="r", use_consolidated=False)
    assert g["v"].dimension_names == ("time", "lat")
    assert g["sub/w"].dimension_names == ("lat", "lon")
    for zattrs in path.rglob(".zattrs"):       # NCZarr's references alone name them too
        attrs = json.loads(zattrs.read_text())
        if attrs.pop("_ARRAY_DIMENSIONS", None) is not None:
            zattrs.write_text(json.dumps(attrs))
    g = quiet_open(path, mode="r", use_consolidated=False)
    assert "_ARRAY_DIMENSIONS" not in g["sub/w"].attrs
    assert g["sub/w"].dimension_names == ("lat", "lon")


# ------------------------------------------------------------ georeferencing kept by copies

@pytest.mark.parametrize("fmt", [2, 3])
def test_copy_keeps_gdal_stac_proj_attributes(tmp_path, fmt):
    src = quiet_open(corpus("zarr_with_stac_proj_epsg.zarr"), mode="r")
    dest = zarrc.open_group(str(tmp_path / "out.zarr"), mode="w", zarr_format=fmt)
    zarrc.copy_all(src, dest)
    out = zarrc.open_group(str(tmp_path / "out.zarr"), mode="r")
    test = out["test"]
    assert test.dimension_names == ("Y", "X")
    want = conventions.georeferencing(src["test"].attrs)
    assert want["proj:epsg"] == 26711 and len(want["proj:transform"]) == 9
    assert conventions.georeferencing(test.attrs) == want
    if fmt == 3:      # the names moved to dimension_names
        assert "_ARRAY_DIMENSIONS" not in test.attrs and test.metadata.dimension_names == ("Y", "X")
    np.testing.assert_array_equal(test[:], src["test"][:])


def georef_attributes():
    return {
        "_CRS": {"url": "http://www.opengis.net/def/crs/EPSG/0/26711", "wkt": "PROJCRS[\"NAD27 / UTM zone 11N\"]"},
        "zarr_conventions": [dict(conventions.SPATIAL), dict(conventions.PROJ)],
        "spatial:dimensions": ["y", "x"], "spatial:transform": [60.0, 0.0, 440720.0, 0.0, -60.0, 3751320.0],
        "spatial:shape": [8, 6], "spatial:registration": "pixel", "proj:code": "EPSG:26711",
        "units": "metre", "add_offset": 1.5, "scale_factor": 0.01, "_FillValue": -9999,
    }


@pytest.mark.parametrize("src_fmt, dst_fmt", [(2, 2), (2, 3), (3, 2), (3, 3)])
def test_copy_keeps_georeferencing_across_formats(tmp_path, src_fmt, dst_fmt):
    src = zarrc.open_group(str(tmp_path / "in.zarr"), mode="w", zarr_format=src_fmt)
    src.attrs.update({"zarr_conventions": [dict(conventions.PROJ)], "proj:code": "EPSG:26711"})
    a = src.create_array("elev", shape=(8, 6), chunks=(4, 3), dtype="i2", fill_value=-9999,
                         dimension_names=["y", "x"], attributes=georef_attributes())
    a[...] = np.arange(48, dtype="i2").reshape(8, 6)
    dest = zarrc.open_group(str(tmp_path / "out.zarr"), mode="w", zarr_format=dst_fmt)
    zarrc.copy(src["elev"], dest)
    zarrc.copy_all(src, zarrc.open_group(str(tmp_path / "all.zarr"), mode="w", zarr_format=dst_fmt))
    copies = ["out.zarr", "all.zarr"]
    if src_fmt == dst_fmt:         # (byte for byte: one format)
        zarrc.copy_store(str(tmp_path / "in.zarr"), str(tmp_path / "keys.zarr"))
        copies.append("keys.zarr")
    for where in copies:
        out = zarrc.open_group(str(tmp_path / where), mode="r")["elev"]
        assert out.dimension_names == ("y", "x")
        got = conventions.georeferencing(out.attrs)
        assert got == georef_attributes()
        assert out.fill_value == -9999
        np.testing.assert_array_equal(out[:], a[:])
    for where in copies[1:]:
        group = zarrc.open_group(str(tmp_path / where), mode="r")
        assert group.attrs["proj:code"] == "EPSG:26711"
        assert conventions.has_convention(group.attrs, conventions.PROJ)


@pytest.mark.parametrize("dst_fmt", [2, 3])
def test_copy_all_keeps_a_pyramid_and_its_georeferencing(tmp_path, dst_fmt):
    src = zarrc.open_group(str(tmp_path / "in.zarr"), mode="w")
    a = src.create_array("elev", shape=(8, 6), chunks=(4, 3), dtype="f4", dimension_names=["y", "x"],
                         attributes=georef_attributes())
    a[...] = np.arange(48, dtype="f4").reshape(8, 6)
    zarrc.build_overviews(a, (2,))
    zarrc.copy_all(zarrc.open_group(str(tmp_path / "in.zarr"), mode="r"),
                   zarrc.open_group(str(tmp_path / "out.zarr"), mode="w", zarr_format=dst_fmt))
    out = zarrc.open_group(str(tmp_path / "out.zarr"), mode="r")
    assert [lv.asset for lv in out.multiscales] == ["elev", "ovr_2x"]
    assert [x.shape for x in out.multiscales.arrays] == [(8, 6), (4, 3)]
    level = conventions.georeferencing(out["ovr_2x/elev"].attrs)
    assert level["_CRS"] == georef_attributes()["_CRS"] and level["spatial:shape"] == [4, 3]
    assert level["spatial:transform"] == [120.0, 0.0, 440720.0, 0.0, -120.0, 3751320.0]


def test_copy_with_rechunking_keeps_georeferencing(tmp_path):
    src = zarrc.open_group(str(tmp_path / "in.zarr"), mode="w")
    a = src.create_array("elev", shape=(8, 6), chunks=(4, 3), dtype="f4", dimension_names=["y", "x"],
                         attributes=georef_attributes())
    a[...] = 1.0
    dest = zarrc.open_group(str(tmp_path / "out.zarr"), mode="w")
    zarrc.copy(a, dest, chunks=(8, 6))
    out = zarrc.open_array(str(tmp_path / "out.zarr"), path="elev")
    assert out.chunks == (8, 6)
    assert conventions.georeferencing(out.attrs) == georef_attributes()


@pytest.mark.parametrize("name", ["v3/spatial_geotransform.zarr", "v3/spatial_proj_at_array_level.zarr",
                                  "v3/spatial_proj_at_parent_level.zarr",
                                  "v3/spatial_proj_convention_at_root_level.zarr"])
def test_copy_keeps_spatial_proj_of_gdal_v3_stores(tmp_path, name):
    src = quiet_open(corpus(name), mode="r")
    dest = zarrc.open_group(str(tmp_path / "out.zarr"), mode="w")
    zarrc.copy_all(src, dest)
    out = zarrc.open_group(str(tmp_path / "out.zarr"), mode="r")
    assert conventions.georeferencing(out.attrs) == conventions.georeferencing(src.attrs)
    seen = 0
    for key, member in src.members(max_depth=None):
        copied = out[key]
        assert conventions.georeferencing(copied.attrs) == conventions.georeferencing(member.attrs)
        seen += bool(conventions.georeferencing(member.attrs))
    assert seen or conventions.georeferencing(src.attrs)
