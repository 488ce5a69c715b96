"""GDAL's Zarr driver reads what zarrc writes (issue 40, item 3): v2 arrays of each data
type GDAL knows, with the compressors GDAL's driver has (blosc with each shuffle, zlib,
gzip, zstd, lz4, lzma), both orders, both key separators and fill values; their values
bit for bit, their dimension names (``_ARRAY_DIMENSIONS``), fill values as GDAL's nodata,
``_CRS`` in each of its three forms and the X / Y coordinate arrays as GDAL's
geotransform.  v3 where GDAL's version reads it, else skipped saying why (the
multiscales pyramid zarrc builds: tests/test_multiscales.py, GDAL 3.13 on).  GDAL runs in the Python that has its bindings (``interop/gdal_peer.py``); the whole
store is described by one GDAL run and each case checked against it."""

from __future__ import annotations

import json

import numpy as np
import pytest

import zarrc
from interop import gdal_peer

pytestmark = pytest.mark.skipif(gdal_peer.available() is not None, reason=str(gdal_peer.available()))

SHAPE, CHUNKS = (13, 17), (5, 6)           # edge chunks on both axes
COMPRESSORS = {
    "none": None,
    "blosc-lz4-shuffle": {"id": "blosc", "cname": "lz4", "clevel": 5, "shuffle": 1, "blocksize": 0},
    "blosc-zstd-bitshuffle": {"id": "blosc", "cname": "zstd", "clevel": 3, "shuffle": 2, "blocksize": 0},
    "blosc-zlib-noshuffle": {"id": "blosc", "cname": "zlib", "clevel": 1, "shuffle": 0, "blocksize": 0},
    "blosc-autoshuffle": {"id": "blosc", "cname": "blosclz", "clevel": 7, "shuffle": -1, "blocksize": 0},
    "zlib": {"id": "zlib", "level": 4},
    "gzip": {"id": "gzip", "level": 6},
    "zstd": {"id": "zstd", "level": 5},
    "lz4": {"id": "lz4", "acceleration": 1},
    "lzma": {"id": "lzma", "preset": 1},
}
# GDAL's data type of each numpy one (GDAL 3.6: no Int8 (3.7), float16 read as Float32)
GDAL_TYPES = {"|u1": "Byte", "<i2": "Int16", "<u2": "UInt16", "<i4": "Int32", "<u4": "UInt32",
              "<i8": "Int64", "<u8": "UInt64", "<f4": "Float32", "<f8": "Float64",
              "<c8": "CFloat32", "<c16": "CFloat64", ">i4": "Int32", ">f8": "Float64"}
# complex: none (GDAL 3.6 refuses the [real, imag] fill value of zarr-python 2 and 3 and
# zarrc as "Invalid fill_value": test_gdal_on_complex_fill_values)
FILLS = {"f": float("nan"), "c": None, "i": -7, "u": 3}


def case_list() -> list[tuple[str, str, str, str]]:
    """(name, dtype, compressor, order + separator): each data type with three
    compressors, each compressor with several data types, both orders and separators."""
    dtypes, names = list(GDAL_TYPES), list(COMPRESSORS)
    cases = []
    for i, dt in enumerate(dtypes):
        for j in range(3):
            comp = names[(3 * i + j) % len(names)]
            layout = ("C", "F")[(i + j) % 2] + (".", "/")[(i // 2 + j) % 2]
            cases.append((f"a{len(cases)}_{dt[1:]}_{comp}_{layout[0]}", dt, comp, layout))
    return cases


CASES = case_list()


def values(dtype: str, seed: int) -> np.ndarray:
    out = gdal_peer.sample(dtype, SHAPE, seed, 1e3, [np.inf, -np.inf, -0.0])
    out[5:10, 6:12] = FILLS[np.dtype(dtype).kind] or 0                 # a chunk left unwritten
    return out


@pytest.fixture(scope="module")
def gdal_view(tmp_path_factory):
    """The zarrc-written store of every case, and what GDAL reports of it."""
    root = tmp_path_factory.mktemp("gdal") / "cases.zarr"
    g = zarrc.open_group(str(root), mode="w", zarr_format=2)
    for seed, (name, dtype, comp, layout) in enumerate(CASES):
        a = g.create_array(name, shape=SHAPE, chunks=CHUNKS, dtype=dtype, order=layout[0],
                           compressors=COMPRESSORS[comp], fill_value=FILLS[np.dtype(dtype).kind],
                           chunk_key_encoding={"name": "v2", "separator": layout[1]},
                           dimension_names=["y", "x"])
        a[...] = values(dtype, seed)
    return root, gdal_peer.describe(str(root), str(root.parent / "npy"))


@pytest.mark.parametrize("name,dtype,comp,layout", CASES, ids=[c[0] for c in CASES])
def test_gdal_reads_zarrc_v2_array(gdal_view, name, dtype, comp, layout):
    root, seen = gdal_view
    assert seen["refused"] is None
    got = seen["arrays"][f"/{name}"]
    assert "open_error" not in got and "read_error" not in got, got
    assert got["dims"] == ["y", "x"]
    assert got["type"] == GDAL_TYPES[dtype]
    mine = zarrc.open_array(str(root / name), mode="r")[...]
    np.testing.assert_array_equal(mine, values(dtype, CASES.index((name, dtype, comp, layout))))
    theirs = np.load(got["npy"])
    assert theirs.shape == SHAPE
    same = mine.astype(mine.dtype.newbyteorder("<"))
    assert theirs.astype(same.dtype).tobytes() == same.tobytes(), "values differ bit for bit"
    fill = FILLS[np.dtype(dtype).kind]
    assert got["nodata"] == ("nan" if isinstance(fill, float) else fill)


def test_gdal_on_complex_fill_values(tmp_path):
    """A complex v2 fill value as zarr-python (2 and 3) and zarrc write it, ``[re, im]``:
    GDAL 3.6 refuses the array ("Invalid fill_value"); fill_value null it reads."""
    path = tmp_path / "c.zarr"
    g = zarrc.open_group(str(path), mode="w", zarr_format=2)
    g.create_array("c", data=np.array([[1 + 2j, 3 - 4j]], "c8"), fill_value=1 + 1j, dimension_names=["y", "x"])
    assert json.loads((path / "c" / ".zarray").read_text())["fill_value"] == [1.0, 1.0]
    got = gdal_peer.describe(str(path), str(tmp_path / "npy"))["arrays"]["/c"]
    if "open_error" in got:
        assert "fill_value" in got["open_error"]
        pytest.xfail(f"GDAL {gdal_peer.require()} refuses a [re, im] complex fill value: {got['open_error']}")
    assert np.array_equal(np.load(got["npy"]), np.array([[1 + 2j, 3 - 4j]], "c8"))


@pytest.fixture(scope="module")
def crs_text():
    return gdal_peer.run("""
from osgeo import osr
s = osr.SpatialReference(); s.ImportFromEPSG(32631)
out["wkt"] = s.ExportToWkt(["FORMAT=WKT2_2019"]); out["projjson"] = json.loads(s.ExportToPROJJSON())
""")


@pytest.mark.parametrize("form", ["url", "wkt", "projjson"])
def test_gdal_reads_crs_attribute_and_geotransform(tmp_path, crs_text, form):
    """``_CRS`` in each form GDAL reads, with X / Y coordinate arrays of a regular grid:
    GDAL's SRS (EPSG:32631) and, through its raster API, the geotransform."""
    value = {"url": "http://www.opengis.net/def/crs/EPSG/0/32631"} if form == "url" else {form: crs_text[form]}
    path = tmp_path / "geo.zarr"
    g = zarrc.open_group(str(path), mode="w", zarr_format=2)
    x0, y0, res = 440000.0, 5000000.0, 30.0
    g.create_array("x", data=x0 + res / 2 + res * np.arange(17), dimension_names=["x"])
    g.create_array("y", data=y0 - res / 2 - res * np.arange(13), dimension_names=["y"])
    data = np.arange(13 * 17, dtype="u2").reshape(13, 17)
    g.create_array("data", data=data, chunks=(8, 8), dimension_names=["y", "x"], fill_value=0,
                   compressors={"id": "zlib", "level": 1}, attributes={"_CRS": value, "units": "K", "comment": "by zarrc"})
    seen = gdal_peer.describe(str(path), str(tmp_path / "npy"))
    got = seen["arrays"]["/data"]
    assert got["epsg"] == "32631"
    assert got["unit"] == "K" and got["attrs"] == {"comment": "by zarrc"}   # _CRS and units taken
    raster = gdal_peer.run("""
ds = gdal.Open('ZARR:"%s":/data' % args["path"])
out["gt"] = list(ds.GetGeoTransform()); out["epsg"] = ds.GetSpatialRef().GetAuthorityCode(None)
out["values"] = ds.GetRasterBand(1).ReadAsArray().tolist()
""", path=str(path))
    assert raster["gt"] == [x0, res, 0.0, y0, 0.0, -res]
    assert raster["epsg"] == "32631"
    assert np.array_equal(np.array(raster["values"]), data)


def test_gdal_reads_consolidated_v2_group(tmp_path):
    """A nested hierarchy with ``.zmetadata`` (GDAL uses it by default): every array
    found where zarrc put it, with its dimension names and values."""
    path = tmp_path / "nested.zarr"
    g = zarrc.open_group(str(path), mode="w", zarr_format=2)
    sub = g.create_group("sub").create_group("deeper")
    sub.create_array("v", data=np.arange(24, dtype="f4").reshape(2, 3, 4), chunks=(1, 2, 2),
                     dimension_names=["t", "y", "x"], compressors={"id": "zstd", "level": 1})
    zarrc.consolidate_metadata(str(path))
    meta = json.loads((path / ".zmetadata").read_text())
    assert "sub/deeper/v/.zarray" in meta["metadata"]
    seen = gdal_peer.describe(str(path), str(tmp_path / "npy"))
    got = seen["arrays"]["/sub/deeper/v"]
    assert got["dims"] == ["t", "y", "x"]
    assert np.array_equal(np.load(got["npy"]), np.arange(24, dtype="f4").reshape(2, 3, 4))


def test_gdal_reads_zarrc_v3_array(tmp_path):
    """Zarr v3 as the final spec: GDAL reads it from 3.8 on (3.6 and 3.7 read a draft's
    layout, meta/root/*.array.json, which no v3 writer uses now)."""
    if gdal_peer.version_tuple() < (3, 8):
        pytest.skip(f"GDAL {gdal_peer.require()} reads only a draft of Zarr v3, not the final spec")
    path = tmp_path / "v3.zarr"
    g = zarrc.open_group(str(path), mode="w", zarr_format=3)
    data = np.arange(13 * 17, dtype="<i4").reshape(13, 17)
    g.create_array("data", data=data, chunks=(5, 6), dimension_names=["y", "x"], fill_value=-1,
                   compressors=[{"name": "zstd", "configuration": {"level": 3, "checksum": False}}])
    seen = gdal_peer.describe(str(path), str(tmp_path / "npy"))
    got = seen["arrays"]["/data"]
    assert got["dims"] == ["y", "x"] and got["nodata"] == -1
    assert np.array_equal(np.load(got["npy"]), data)


def test_what_gdal_36_does_with_zarrc_v3(tmp_path):
    """Where GDAL reads only the v3 draft (before 3.8), a zarrc v3 store is not
    mistaken for one: GDAL refuses it rather than reading something else."""
    if gdal_peer.version_tuple() >= (3, 8):
        pytest.skip("GDAL reads final v3 here: test_gdal_reads_zarrc_v3_array covers it")
    path = tmp_path / "v3.zarr"
    zarrc.open_group(str(path), mode="w", zarr_format=3).create_array(
        "data", data=np.arange(6, dtype="i4").reshape(2, 3), dimension_names=["y", "x"])
    seen = gdal_peer.describe(str(path), str(tmp_path / "npy"))
    assert seen["refused"] is not None or not seen["arrays"], seen
