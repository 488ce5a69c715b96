"""A newer GDAL than Debian's: the libgdal rasterio's wheels bundle, with its Zarr driver
(rasterio 1.4.4, the last for Python 3.11: GDAL 3.10.3; rasterio 1.5.2, Python 3.12 on:
GDAL 3.12.2), through rasterio's raster API (no multidimensional API: dimension names
are seen only in what GDAL writes).  v2 both ways, bit for bit, with the CRS and
the geotransform; v3 both ways as this GDAL does it.  Skipped without rasterio (a test
dependency for Python 3.11 on) or where its GDAL has no Zarr driver."""

from __future__ import annotations

import numpy as np
import pytest

import zarrc

rasterio = pytest.importorskip("rasterio", reason="rasterio is not installed (zarrc[test], Python 3.11+)")
from rasterio.transform import from_origin  # noqa: E402

GDAL = rasterio.__gdal_version__
with rasterio.Env() as _env:
    if "Zarr" not in _env.drivers():
        pytest.skip(f"rasterio's GDAL {GDAL} has no Zarr driver", allow_module_level=True)

X0, Y0, RES = 440000.0, 5000000.0, 30.0


def zarrc_geo_store(path, fmt: int, dtype="<i4", compressors=None) -> np.ndarray:
    g = zarrc.open_group(str(path), mode="w", zarr_format=fmt)
    g.create_array("x", data=X0 + RES / 2 + RES * np.arange(17), dimension_names=["x"])
    g.create_array("y", data=Y0 - RES / 2 - RES * np.arange(13), dimension_names=["y"])
    data = np.random.default_rng(3).integers(-1000, 1000, (13, 17)).astype(dtype)
    g.create_array("data", data=data, chunks=(5, 6), dimension_names=["y", "x"], fill_value=-1,
                   compressors=compressors,
                   attributes={"_CRS": {"url": "http://www.opengis.net/def/crs/EPSG/0/32631"}})
    return data


@pytest.mark.parametrize("compressor", [None, {"id": "zstd", "level": 3}, {"id": "zlib", "level": 1},
                                        {"id": "blosc", "cname": "lz4", "clevel": 5, "shuffle": 2,
                                         "blocksize": 0}])
def test_bundled_gdal_reads_zarrc_v2(tmp_path, compressor):
    data = zarrc_geo_store(tmp_path / "g.zarr", 2, compressors=compressor)
    with rasterio.open(f'ZARR:"{tmp_path / "g.zarr"}":/data') as src:
        assert src.read(1).tobytes() == data.tobytes()
        assert src.crs.to_epsg() == 32631
        assert tuple(src.transform)[:6] == (RES, 0.0, X0, 0.0, -RES, Y0)
        assert src.nodata == -1


def test_zarrc_reads_bundled_gdal_v2(tmp_path):
    """GDAL 3.10 and 3.12 still write blosc's shuffle as "BIT" (numcodecs_compat.from_gdal)."""
    data = np.random.default_rng(4).integers(0, 65535, (13, 17), dtype="u2")
    path = tmp_path / "w.zarr"
    with rasterio.open(path, "w", driver="Zarr", width=17, height=13, count=1, dtype="uint16",
                       crs="EPSG:32631", transform=from_origin(X0, Y0, RES, RES), nodata=0,
                       FORMAT="ZARR_V2", COMPRESS="BLOSC", BLOSC_SHUFFLE="BIT", BLOCKSIZE="8,8") as dst:
        dst.write(data, 1)
    g = zarrc.open_group(str(path), mode="r")
    a = g["w"]
    assert a[...].tobytes() == data.tobytes()
    assert a.dimension_names == ("Y", "X") and a.fill_value == 0
    assert a.attrs["_CRS"]["url"].endswith("/EPSG/0/32631")
    assert np.array_equal(g["X"][...], X0 + RES / 2 + RES * np.arange(17))


def test_bundled_gdal_reads_zarrc_v3(tmp_path):
    """zarrc's v3 arrays as the spec writes them (``bytes`` then a compressor): GDAL 3.10.3
    as rasterio 1.4.4 bundles it refuses them ("Unsupported codec: bytes"), and GDAL's own
    v3 test store (gdal_zarr/v3/gzip.zarr) alike; it passes where a GDAL reads them."""
    data = zarrc_geo_store(tmp_path / "g.zarr", 3,
                           compressors=[{"name": "zstd", "configuration": {"level": 3, "checksum": False}}])
    try:
        src = rasterio.open(f'ZARR:"{tmp_path / "g.zarr"}":/data')
    except rasterio.errors.RasterioIOError as exc:
        assert "codec" in str(exc)
        pytest.xfail(f"rasterio's GDAL {GDAL} refuses final v3 arrays: {exc}")
    with src:
        assert src.read(1).tobytes() == data.tobytes()
        assert src.crs.to_epsg() == 32631


def test_zarrc_reads_bundled_gdal_v3(tmp_path):
    """GDAL 3.10.3 (rasterio 1.4.4) writes v3 arrays whose codecs lack the array -> bytes
    codec the spec requires (``[gzip]``): zarrc refuses them naming that (as zarr-python
    does: xfail); GDAL 3.12.2 (rasterio 1.5.2) writes ``bytes`` first, read here."""
    data = np.arange(13 * 17, dtype="u2").reshape(13, 17)
    path = tmp_path / "w3.zarr"
    with rasterio.open(path, "w", driver="Zarr", width=17, height=13, count=1, dtype="uint16",
                       crs="EPSG:32631", transform=from_origin(X0, Y0, RES, RES), nodata=0,
                       FORMAT="ZARR_V3", COMPRESS="GZIP") as dst:
        dst.write(data, 1)
    try:
        a = zarrc.open_group(str(path), mode="r")["w3"]
    except zarrc.errors.MetadataError as exc:
        assert "array -> bytes codec" in str(exc)
        pytest.xfail(f"GDAL {GDAL} writes a v3 codec list without an array -> bytes codec: {exc}")
    assert a[...].tobytes() == data.tobytes()
    assert a.dimension_names == ("Y", "X")
