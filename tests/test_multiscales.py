"""The multiscales convention (zarrc.multiscales, zarrc.overviews,
zarrc.build_overviews): GDAL 3.13's test pyramids read, pyramids built in the layout
GDAL's BuildOverviews writes (its zarr_v3_group.cpp GenerateMultiscalesMetadata:
the base array's name, then ``ovr_<n>x`` groups holding an array of the same name,
``derived_from`` the previous level, scale = previous / this shape per dimension,
translation 0), values against numpy references, bounded reads."""

from __future__ import annotations

import itertools
import json
import os
import warnings
from pathlib import Path

import numpy as np
import pytest

import zarrc
from zarrc.core import conventions, overviews
from zarrc.core.overviews import downsample
from zarrc.errors import ArgumentError

GDAL_V3 = Path(os.environ.get("ZARRC_CORPUS", "/work/shared/corpus")) / "gdal_zarr" / "v3"
UUID = "d35379db-88df-4056-af3a-620245f8e347"


def corpus(name: str) -> zarrc.Group:
    path = GDAL_V3 / name
    if not path.exists():
        pytest.skip(f"GDAL's test store {name} is not at {path}")
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        return zarrc.open_group(str(path), mode="r")


# ------------------------------------------------------------ reading GDAL's pyramids

def test_root_level_multiscales_of_gdal():
    g = corpus("root_level_multiscales")
    ms = zarrc.multiscales(g, "ar")
    assert [lv.asset for lv in ms] == ["ar", "ovr_2x"]
    assert [lv.shape for lv in ms] == [(200, 100), (100, 50)]
    assert ms[1].derived_from == "ar" and ms[1].scale == (2.0, 2.0) and ms[1].translation == (0.0, 0.0)
    ar = g["ar"]
    assert [o.shape for o in zarrc.overviews(ar)] == [(100, 50)]
    assert zarrc.overviews(g["ovr_2x/ar"]) == []            # (the smallest level has none)
    assert zarrc.multiscales(g["ovr_2x/ar"]).group.path == ""
    # the group's own accessor: group levels resolved to the base level's array name
    own = g.multiscales
    assert own.name == "ar" and [lv.shape for lv in own] == [(200, 100), (100, 50)]
    assert [a.path for a in own.arrays] == ["ar", "ovr_2x/ar"]
    assert g["ovr_2x"].multiscales is None


@pytest.mark.parametrize("name", ["simple_multiscales", "simple_multiscales_ref_array",
                                  "simple_multiscales_spatial"])
def test_grandparent_multiscales_of_gdal(name):
    g = corpus(name)
    ar = g["level0/ar"]
    ms = zarrc.multiscales(ar)
    assert ms is not None and ms.group.path == ""
    own = g.multiscales
    if name == "simple_multiscales_ref_array":     # (its assets name the arrays)
        assert [a.path for a in own.arrays] == ["level0/ar", "level1/ar", "level2/ar"]
    else:           # every level a group: which of a level's arrays is meant, only a name says
        assert own.name is None and [lv.array for lv in own] == [None] * 3
        assert [lv.node.path for lv in own] == ["level0", "level1", "level2"]
    assert [lv.asset.split("/")[0] for lv in ms] == ["level0", "level1", "level2"]
    shapes = [o.shape for o in zarrc.overviews(ar)]
    assert shapes[0] == (100, 50)
    assert all(s[0] < 200 for s in shapes)
    assert zarrc.overviews(g["level0/unrelated"]) == []     # no level holds an "unrelated"
    other = zarrc.multiscales(g["level0/unrelated"])
    if name == "simple_multiscales_ref_array":      # (its assets name the arrays "ar")
        assert other is None
    else:                                           # (group levels: only level0 has one)
        assert [lv.array is not None for lv in other] == [True, False, False]
    assert zarrc.overviews(g["level0/y"]) == []
    if name == "simple_multiscales_spatial":
        assert ms[1].spatial_transform == (20.0, 0.0, 1000.0, 0.0, -20.0, 2000.0)
        assert ms[2].spatial_shape == (50, 25)


def test_no_convention_no_pyramid():
    g = zarrc.group()
    g.attrs["multiscales"] = {"layout": [{"asset": "a"}]}           # no zarr_conventions entry
    g.create_array("a", shape=(4, 4), dtype="u1")
    assert zarrc.multiscales(g) is None and zarrc.overviews(g["a"]) == []
    g.attrs["zarr_conventions"] = [{"uuid": UUID, "name": "multiscales"}]
    assert [lv.asset for lv in zarrc.multiscales(g)] == ["a"]
    g.attrs["multiscales"] = {"layout": [{"asset": "../a"}, {"asset": "a"}]}
    assert [lv.node is None for lv in zarrc.multiscales(g)] == [True, False]


# ------------------------------------------------------------ numpy references

def ref_windows(values, f, axes):
    """(index of each window, the window's values) along the spatial ``axes``, loops."""
    a0, a1 = axes
    n0, n1 = -(-values.shape[a0] // f), -(-values.shape[a1] // f)
    for i, j in itertools.product(range(n0), range(n1)):
        sel = [slice(None)] * values.ndim
        sel[a0], sel[a1] = slice(i * f, (i + 1) * f), slice(j * f, (j + 1) * f)
        yield (i, j), values[tuple(sel)]


def reference(values, f, method, fill=None, axes=(-2, -1)):
    axes = tuple(a % values.ndim for a in axes)
    out_shape = list(values.shape)
    for a in axes:
        out_shape[a] = -(-values.shape[a] // f)
    out = np.empty(out_shape, dtype=values.dtype)
    lead = [range(values.shape[k]) if k not in axes else [None] for k in range(values.ndim)]
    for idx in itertools.product(*lead):
        sel = tuple(slice(None) if i is None else i for i in idx)
        plane = values[sel]
        dst = out[sel]
        for (i, j), w in ref_windows(plane, f, (0, 1)):
            flat = w.ravel()
            ok = flat[~np.isnan(flat)] if flat.dtype.kind == "f" else flat
            if fill is not None:
                ok = ok[ok != fill]
            if method == "nearest":
                r = min(f // 2, w.shape[0] - 1)
                c = min(f // 2, w.shape[1] - 1)
                dst[i, j] = w[r, c]
            elif ok.size == 0:
                dst[i, j] = fill if fill is not None else np.nan
            elif method == "mean":
                m = ok.astype(np.float64).mean()
                dst[i, j] = np.rint(m) if values.dtype.kind in "iu" else m
            else:
                vals, counts = np.unique(ok, return_counts=True)
                dst[i, j] = vals[np.argmax(counts)]
    return out


@pytest.mark.parametrize("method", ["mean", "nearest", "mode"])
@pytest.mark.parametrize("shape", [(8, 8), (7, 9), (5, 1), (2, 6, 5)])
@pytest.mark.parametrize("f", [2, 3, 4])
def test_downsample_against_loops(method, shape, f):
    rng = np.random.default_rng(sum(shape) + f)
    ints = rng.integers(0, 4, size=shape).astype("i2")
    floats = rng.random(shape).astype("f4")
    floats[rng.random(shape) < 0.2] = np.nan
    for values, fill in ((ints, None), (ints, 0), (floats, None)):
        got = downsample(values, [f, f], method, fill_value=fill, skip_fill=fill is not None)
        want = reference(values, f, method, fill)
        np.testing.assert_allclose(got, want, rtol=1e-6) if values.dtype.kind == "f" else \
            np.testing.assert_array_equal(got, want)
        assert got.dtype == values.dtype


def test_downsample_other_axes_and_errors():
    v = np.arange(4 * 6 * 3, dtype="f8").reshape(4, 6, 3)
    got = downsample(v, [2, 2], "mean", axes=(0, 1))
    np.testing.assert_allclose(got, np.moveaxis(reference(np.moveaxis(v, 2, 0), 2, "mean"), 0, 2))
    with pytest.raises(ArgumentError, match="method"):
        downsample(v, [2, 2], "cubic")


# ------------------------------------------------------------ building

def make_source(tmp_path, shape=(100, 70), chunks=(16, 16), dtype="f4", fmt=3, dims=("y", "x"),
                shards=None, spatial=True, coords=True):
    g = zarrc.open_group(str(tmp_path / "p.zarr"), mode="w", zarr_format=fmt)
    g.attrs.update({"zarr_conventions": [dict(conventions.PROJ)], "proj:code": "EPSG:32632"})
    attrs = {}
    if spatial:
        attrs = {"zarr_conventions": [dict(conventions.SPATIAL), dict(conventions.PROJ)],
                 "spatial:dimensions": list(dims[-2:]), "proj:code": "EPSG:32632",
                 "spatial:transform": [10.0, 0.0, 500000.0, 0.0, -10.0, 5000000.0],
                 "spatial:shape": list(shape[-2:])}
    kw = {"shards": shards} if shards else {}
    a = g.create_array("data", shape=shape, chunks=chunks, dtype=dtype, dimension_names=list(dims),
                       attributes=attrs, compressors={"name": "zstd", "configuration": {"level": 3}}
                       if fmt == 3 else {"id": "zlib", "level": 3}, **kw)
    rng = np.random.default_rng(1)
    values = (rng.random(shape) * 100).astype(dtype)
    a[...] = values
    if coords:
        for d in dims[-2:]:
            n = shape[list(dims).index(d)]
            g.create_array(d, shape=(n,), dtype="f8", dimension_names=[d])[...] = np.arange(n) * 10.0 + 5
    return g, a, values


def test_build_layout_as_gdal_writes_it(tmp_path):
    g, a, values = make_source(tmp_path)
    ms = zarrc.build_overviews(a, (2, 4, 8), method="mean")
    doc = json.loads((tmp_path / "p.zarr" / "zarr.json").read_text())["attributes"]
    assert [c["uuid"] for c in doc["zarr_conventions"]] == [conventions.PROJ["uuid"], UUID]
    entry = doc["zarr_conventions"][-1]
    assert entry["name"] == "multiscales" and entry["spec_url"].endswith("multiscales/blob/v1/README.md")
    layout = doc["multiscales"]["layout"]
    assert [e["asset"] for e in layout] == ["data", "ovr_2x", "ovr_4x", "ovr_8x"]
    assert layout[0]["transform"] == {"scale": [1.0, 1.0]} and "derived_from" not in layout[0]
    assert [e.get("derived_from") for e in layout[1:]] == ["data", "ovr_2x", "ovr_4x"]
    assert layout[1]["transform"] == {"scale": [2.0, 2.0], "translation": [0.0, 0.0]}
    assert layout[3]["transform"]["scale"] == [25 / 13, 2.0]          # (25, 18) -> (13, 9)
    assert {e.get("resampling_method") for e in layout[1:]} == {"average"}
    assert layout[2]["spatial:transform"] == [40.0, 0.0, 500000.0, 0.0, -40.0, 5000000.0]
    assert layout[2]["spatial:shape"] == [25, 18]
    assert layout[0]["spatial:shape"] == [100, 70]
    # each level: the group ovr_<f>x with an array of the source's name, its codecs, its
    # attributes with the spatial: shape and transform of the level, the coordinates
    level = zarrc.open_array(str(tmp_path / "p.zarr"), path="ovr_4x/data")
    assert level.shape == (25, 18) and level.chunks == (16, 16) and level.dtype == a.dtype
    assert [c.to_dict()["name"] for c in level.compressors] == ["zstd"]
    assert level.dimension_names == ("y", "x")
    assert level.attrs["spatial:transform"] == [40.0, 0.0, 500000.0, 0.0, -40.0, 5000000.0]
    assert level.attrs["spatial:shape"] == [25, 18] and level.attrs["proj:code"] == "EPSG:32632"
    x = zarrc.open_array(str(tmp_path / "p.zarr"), path="ovr_2x/x")[:]
    np.testing.assert_allclose(x, np.arange(35) * 20.0 + 10)    # pixel centres of the level
    assert [lv.shape for lv in ms] == [(100, 70), (50, 35), (25, 18), (13, 9)]
    assert [o.shape for o in zarrc.overviews(zarrc.open_array(str(tmp_path / "p.zarr"), path="data"))] == \
        [(50, 35), (25, 18), (13, 9)]


@pytest.mark.parametrize("method", ["mean", "nearest", "mode"])
def test_build_values_each_level_from_the_previous(tmp_path, method):
    dtype = "u1" if method == "mode" else "f4"
    g, a, values = make_source(tmp_path, shape=(45, 37), chunks=(8, 8), dtype=dtype)
    if method == "mode":
        values = (values % 5).astype("u1")
        a[...] = values
    zarrc.build_overviews(a, levels=3, method=method, skip_fill=False)
    previous = values
    for f in (2, 4, 8):
        want = reference(previous, 2, method)
        got = zarrc.open_array(str(tmp_path / "p.zarr"), path=f"ovr_{f}x/data")[:]
        np.testing.assert_allclose(got, want, rtol=1e-6)
        previous = want


def test_build_3d_keeps_time_and_named_spatial_dimensions(tmp_path):
    g, a, values = make_source(tmp_path, shape=(3, 20, 30), chunks=(1, 8, 8), dims=("time", "y", "x"))
    ms = zarrc.build_overviews(a, (2, 4))
    assert [lv.shape for lv in ms] == [(3, 20, 30), (3, 10, 15), (3, 5, 8)]
    assert ms[1].scale == (1.0, 2.0, 2.0)
    np.testing.assert_allclose(ms[1].array[:], reference(values, 2, "mean"), rtol=1e-6)
    # spatial:dimensions naming other axes: (y, time, x) -> y and x reduced, time kept
    g2 = zarrc.group()
    b = g2.create_array("b", shape=(12, 3, 10), chunks=(4, 1, 4), dtype="f8", dimension_names=["y", "t", "x"],
                        attributes={"spatial:dimensions": ["y", "x"]})
    v = np.arange(1.0, 361.0).reshape(12, 3, 10)     # (no 0: the fill value, nodata)
    b[...] = v
    ms = zarrc.build_overviews(b, (2,))
    assert ms[1].shape == (6, 3, 5)
    np.testing.assert_allclose(ms[1].array[:], np.moveaxis(reference(np.moveaxis(v, 1, 0), 2, "mean"), 0, 1))


def test_build_sharded_and_v2_inherit_codecs(tmp_path):
    g, a, values = make_source(tmp_path, shape=(64, 64), chunks=(8, 8), shards=(32, 32))
    ms = zarrc.build_overviews(a, (2, 4, 8))
    assert [lv.array.shards for lv in ms] == [(32, 32), (32, 32), (16, 16), (8, 8)]
    assert [lv.array.chunks for lv in ms] == [(8, 8)] * 4
    np.testing.assert_allclose(ms[3].array[:], reference(reference(reference(values, 2, "mean"), 2, "mean"),
                                                         2, "mean"), rtol=1e-5)
    g2, b, v2 = make_source(tmp_path / "v2", shape=(30, 20), chunks=(8, 8), fmt=2)
    ms = zarrc.build_overviews(b, (2, 4), method="nearest")
    level = ms[1].array
    assert level.compressor.get_config()["id"] == "zlib" and level.attrs["_ARRAY_DIMENSIONS"] == ["y", "x"]
    np.testing.assert_array_equal(level[:], v2[1::2, 1::2])


def test_build_replaces_existing_overviews(tmp_path):
    g, a, values = make_source(tmp_path, shape=(40, 40), chunks=(8, 8))
    zarrc.build_overviews(a, (2, 4, 8))
    g.create_group("unrelated")
    zarrc.build_overviews(a, (3,), method="nearest")
    g = zarrc.open_group(str(tmp_path / "p.zarr"), mode="r")
    assert sorted(k for k, _ in g.groups()) == ["ovr_3x", "unrelated"]
    assert [e["asset"] for e in g.attrs["multiscales"]["layout"]] == ["data", "ovr_3x"]
    assert g.attrs["multiscales"]["layout"][1]["resampling_method"] == "nearest"
    zarrc.build_overviews(zarrc.open_array(str(tmp_path / "p.zarr"), path="data", mode="r+"), [])
    g = zarrc.open_group(str(tmp_path / "p.zarr"), mode="r")
    assert "multiscales" not in g.attrs
    assert [c["uuid"] for c in g.attrs["zarr_conventions"]] == [conventions.PROJ["uuid"]]
    assert g.attrs["proj:code"] == "EPSG:32632"


def test_build_for_a_group_and_default_levels(tmp_path):
    g, a, values = make_source(tmp_path, shape=(64, 48), chunks=(16, 16), coords=False)
    g.create_array("another", shape=(64, 48), chunks=(16, 16), dtype="i2")[...] = 7
    ms = zarrc.build_overviews(g)                      # halve until a level fits one chunk
    assert ms.name == "another"                        # (GDAL's: the first name)
    assert [lv.shape for lv in ms] == [(64, 48), (32, 24), (16, 12)]
    assert (zarrc.open_array(str(tmp_path / "p.zarr"), path="ovr_4x/another")[:] == 7).all()
    reopened = zarrc.open_group(str(tmp_path / "p.zarr"), mode="r").multiscales
    assert reopened.name == "another" and [a.shape for a in reopened.arrays] == [(64, 48), (32, 24), (16, 12)]
    assert zarrc.open_array(str(tmp_path / "p.zarr"), path="ovr_4x/data").shape == (16, 12)


def test_build_fill_value_is_nodata(tmp_path):
    g = zarrc.group()
    a = g.create_array("a", shape=(4, 4), chunks=(4, 4), dtype="i4", fill_value=-1)
    a[...] = np.array([[1, -1, 5, 5], [-1, -1, 5, 6], [2, 2, -1, -1], [2, 3, -1, -1]])
    ms = zarrc.build_overviews(a, (2,))
    np.testing.assert_array_equal(ms[1].array[:], [[1, 5], [2, -1]])
    ms = zarrc.build_overviews(a, (2,), method="mode")
    np.testing.assert_array_equal(ms[1].array[:], [[1, 5], [2, -1]])


def test_build_errors():
    g = zarrc.group()
    one = g.create_array("one", shape=(8,), dtype="u1")
    two = g.create_array("two", shape=(8, 8), dtype="u1")
    with pytest.raises(ArgumentError, match="2 or more"):
        zarrc.build_overviews(one, (2,))
    for bad in ((2, 3), (4, 2), (1,)):
        with pytest.raises(ArgumentError, match="multiple"):
            zarrc.build_overviews(two, bad)
    with pytest.raises(ArgumentError, match="method"):
        zarrc.build_overviews(two, (2,), method="cubic")
    with pytest.raises(ArgumentError, match="not both"):
        zarrc.build_overviews(two, (2,), levels=1)


def test_build_reads_in_bounded_boxes(tmp_path, monkeypatch):
    """The largest box a build reads is one block of the destination (whole chunks, at
    most BLOCK_BYTES) times the step of each spatial dimension: never the array."""
    monkeypatch.setattr(overviews, "BLOCK_BYTES", 4 * 16 * 16 * 4)    # 4 chunks of 16 x 16 f4
    largest = [0]
    read = overviews.read_box

    def counting(source, box):
        out = read(source, box)
        largest[0] = max(largest[0], out.size)
        return out

    monkeypatch.setattr(overviews, "read_box", counting)
    g, a, values = make_source(tmp_path, shape=(2, 256, 256), chunks=(1, 16, 16), dims=("t", "y", "x"),
                               coords=False)
    ms = zarrc.build_overviews(a, (2, 4))
    assert 0 < largest[0] <= 4 * 16 * 16 * 2 * 2          # one block's source: 4 chunks x 2 x 2
    assert largest[0] * 32 <= a.size
    np.testing.assert_allclose(ms[2].array[:], reference(reference(values, 2, "mean"), 2, "mean"), rtol=1e-5)


def test_gdal_reads_the_built_pyramid(tmp_path):
    """GDAL reads the convention as overviews from 3.13 on (interop/gdal_peer.py: GDAL
    through its bindings, in the Python that has them; scripts/test installs Debian's)."""
    from interop import gdal_peer

    version = gdal_peer.require()
    if gdal_peer.version_tuple() < (3, 13):
        pytest.skip(f"GDAL {version} predates its reading of the multiscales convention (3.13)")
    g, a, values = make_source(tmp_path, shape=(64, 48), chunks=(16, 16))
    zarrc.build_overviews(a, (2, 4))
    got = gdal_peer.run("""
ds = gdal.OpenEx('ZARR:"%s":/data' % args["path"], gdal.OF_RASTER)
b = ds.GetRasterBand(1)
out["sizes"] = [[b.GetOverview(i).XSize, b.GetOverview(i).YSize] for i in range(b.GetOverviewCount())]
""", path=str(tmp_path / "p.zarr"))
    assert got["sizes"] == [[24, 32], [12, 16]]


def test_build_keeps_consolidated_metadata_in_step(tmp_path):
    path = str(tmp_path / "c.zarr")
    g = zarrc.open_group(path, mode="w")
    g.create_array("data", shape=(64, 64), chunks=(16, 16), dtype="f4", dimension_names=["y", "x"])[...] = 2.0
    zarrc.consolidate_metadata(path)
    zarrc.build_overviews(zarrc.open_consolidated(path, mode="r+")["data"], levels=2)
    g = zarrc.open_consolidated(path, mode="r")
    assert sorted(k for k, _ in g.members(max_depth=None)) == [
        "data", "ovr_2x", "ovr_2x/data", "ovr_4x", "ovr_4x/data"]
    assert [o.shape for o in zarrc.overviews(g["data"])] == [(32, 32), (16, 16)]
    assert (zarrc.overviews(g["data"])[1][:] == 2.0).all()


def test_built_layout_matches_gdal_written_store(tmp_path):
    """GDAL's root_level_multiscales store (written by its BuildOverviews: an array
    "ar" of 200 x 100 and ovr_2x/ar): zarrc's build of the same array writes the same
    convention entry, the same assets, derivations and transforms."""
    gdal = corpus("root_level_multiscales")
    g = zarrc.open_group(str(tmp_path / "z.zarr"), mode="w")
    ar = g.create_array("ar", shape=(200, 100), chunks=(200, 100), dtype="f4", fill_value=np.nan)
    ar[...] = 1.0
    zarrc.build_overviews(ar, (2,), method="nearest")
    g = zarrc.open_group(str(tmp_path / "z.zarr"), mode="r")
    mine, theirs = dict(g.attrs), dict(gdal.attrs)
    assert mine["zarr_conventions"] == theirs["zarr_conventions"]
    strip = [{k: v for k, v in e.items() if k in ("asset", "derived_from")} |
             ({"transform": e["transform"]} if "derived_from" in e else {})
             for e in mine["multiscales"]["layout"]]
    assert strip == theirs["multiscales"]["layout"]
    assert [sorted(k for k, _ in x.members(max_depth=None)) for x in (g, gdal)] == [
        ["ar", "ovr_2x", "ovr_2x/ar"]] * 2
