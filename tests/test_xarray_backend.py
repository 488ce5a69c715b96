"""xarray's engine="zarrc" (zarrc/xarray_backend.py) against engine="zarr" (xarray over
zarr-python) on the same stores: written by xarray (v2 and v3, consolidated or not,
sharded), by zarrc, by netCDF-C (NCZarr, through netCDF4) and GDAL's NCZarr corpus
store.  Every comparison is xr.testing.assert_identical plus the dtypes and the chunk
encodings, which assert_identical does not look at."""

from __future__ import annotations

import json
import os
from pathlib import Path

import numpy as np
import pytest
from helpers import NO_ZARR_PYTHON, netcdf_nczarr

xr = pytest.importorskip("xarray")
pytest.importorskip("zarr", reason=NO_ZARR_PYTHON)

import zarrc

CORPUS_NCZARR = Path(os.environ.get("ZARRC_CORPUS", "/work/shared/corpus")) / "gdal_zarr" / "nczarr_v2.zarr"


def sample_dataset(n: int = 24) -> xr.Dataset:
    """A dataset with what xarray maps specially: times, coordinates, strings, NaN and
    integer fill values, CF scaling, attributes of several JSON types, a scalar."""
    rng = np.random.default_rng(5)
    temp = rng.standard_normal((n, 6, 5)).astype("float32")
    temp[0, 0, 0] = np.nan
    count = rng.integers(0, 100, (n, 6)).astype("int16")
    count[1, 1] = -9
    ds = xr.Dataset(
        {
            "temp": (("time", "y", "x"), temp, {"units": "K", "valid_range": [-10.0, 10.0]}),
            "count": (("time", "y"), count, {"long_name": "count"}),
            "scaled": (("y", "x"), rng.uniform(0, 10, (6, 5))),
            "station": ("y", np.array(["alpha", "b", "", "delta", "e", "ü"], dtype=object)),
            "flag": ((), np.int8(3)),
        },
        coords={
            "time": ("time", np.arange("2020-01-01", n, dtype="datetime64[D]").astype("datetime64[ns]")),
            "y": ("y", np.linspace(0, 1, 6)),
            "x": ("x", np.arange(5, dtype="int32"), {"axis": "X"}),
            "lead": ("time", np.arange(n).astype("timedelta64[h]").astype("timedelta64[ns]")),
        },
        attrs={"title": "sample", "version": 3, "tags": ["a", "b"], "nested": {"k": 1.5}},
    )
    ds["count"].encoding["_FillValue"] = np.int16(-9)
    ds["scaled"].encoding.update({"dtype": "int16", "scale_factor": 0.1, "add_offset": 2.0, "_FillValue": -1})
    return ds


def write(ds, path, zarr_format, consolidated, **kw) -> str:
    chunks = {"temp": {"chunks": (5, 3, 5)}, "count": {"chunks": (7, 6)}}
    encoding = {k: v for k, v in chunks.items() if k in ds}
    ds.to_zarr(path, zarr_format=zarr_format, consolidated=consolidated, encoding=encoding, **kw)
    return str(path)


def assert_same(a, b, chunked=False) -> None:
    """a identical to b, with the same dtypes, chunk encodings and (chunked) dask chunks."""
    xr.testing.assert_identical(a, b)
    for name in b.variables:
        va, vb = a[name].variable, b[name].variable
        assert va.dtype == vb.dtype, name
        for key in ("chunks", "preferred_chunks", "shards", "fill_value", "dtype", "compressors", "filters",
                    "serializer"):
            if key in vb.encoding or key in va.encoding:
                assert _norm(va.encoding.get(key)) == _norm(vb.encoding.get(key)), (name, key)
        if chunked:
            assert va.chunks == vb.chunks, name


def _norm(value):
    if isinstance(value, float) and np.isnan(value):
        return "nan"
    if isinstance(value, np.generic):
        return _norm(value.item())
    return value


def open_both(path, **kw):
    return (xr.open_dataset(path, engine="zarrc", **kw), xr.open_dataset(path, engine="zarr", **kw))


def test_entry_point_registered():
    from zarrc.integrations.xarray_backend import ZarrcBackendEntrypoint

    assert isinstance(xr.backends.list_engines()["zarrc"], ZarrcBackendEntrypoint)


def test_import_zarrc_does_not_import_xarray():
    import subprocess
    import sys

    code = "import sys, zarrc; zarrc.open_group(None); print(sorted(m for m in sys.modules if 'xarray' in m))"
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True)
    assert out.stdout.strip() == "[]"


@pytest.mark.parametrize("zarr_format", [2, 3])
@pytest.mark.parametrize("consolidated", [True, False])
def test_identical_on_xarray_stores(tmp_path, zarr_format, consolidated):
    path = write(sample_dataset(), tmp_path / "s.zarr", zarr_format, consolidated)
    a, b = open_both(path, consolidated=consolidated)
    assert_same(a, b)
    assert_same(a.load(), b.load())
    xr.testing.assert_identical(a[["temp", "station", "flag"]].load(),
                                sample_dataset()[["temp", "station", "flag"]])


@pytest.mark.parametrize("zarr_format", [2, 3])
@pytest.mark.parametrize("options", [
    {"decode_times": False}, {"mask_and_scale": False}, {"decode_cf": False},
    {"decode_timedelta": False}, {"concat_characters": False}, {"decode_coords": False},
    {"drop_variables": ["temp", "station"]}, {"drop_variables": "lead"},
])
def test_decode_options(tmp_path, zarr_format, options):
    path = write(sample_dataset(), tmp_path / "s.zarr", zarr_format, True)
    assert_same(*open_both(path, **options))


@pytest.mark.parametrize("zarr_format", [2, 3])
@pytest.mark.parametrize("as_mask", [True, False])
def test_fill_value_as_mask(tmp_path, zarr_format, as_mask):
    # (xarray's engine="zarr" drops the option on its way to its ZarrStore: the store is
    # made here with it, and handed to engine="zarr")
    from xarray.backends.zarr import ZarrStore

    path = write(sample_dataset(), tmp_path / "s.zarr", zarr_format, True)
    store = ZarrStore.open_group(path, mode="r", use_zarr_fill_value_as_mask=as_mask)
    assert_same(xr.open_dataset(path, engine="zarrc", use_zarr_fill_value_as_mask=as_mask),
                xr.open_dataset(path, engine="zarr", store=store))


@pytest.mark.parametrize("zarr_format", [2, 3])
def test_chunks_give_the_same_dask_arrays(tmp_path, zarr_format):
    pytest.importorskip("dask")
    path = write(sample_dataset(), tmp_path / "s.zarr", zarr_format, True)
    for chunks in ({}, {"time": 4, "y": 2}):
        a, b = open_both(path, chunks=chunks)
        assert a["temp"].chunks == ((5,) * 4 + (4,), (3, 3), (5,)) or chunks != {}
        assert_same(a, b, chunked=True)
        assert_same(a.compute(), b.compute())


def test_sharded_store_chunks(tmp_path):
    pytest.importorskip("dask")
    ds = sample_dataset()
    path = tmp_path / "sh.zarr"
    ds.to_zarr(path, zarr_format=3, encoding={"temp": {"chunks": (2, 3, 5), "shards": (8, 6, 5)}})
    a, b = open_both(path, chunks={})
    assert a["temp"].encoding["shards"] == (8, 6, 5)
    assert a["temp"].chunks == ((2,) * 12, (3, 3), (5,))     # the inner chunks, as engine="zarr"
    assert_same(a, b, chunked=True)
    assert_same(a.compute(), b.compute())


@pytest.mark.parametrize("zarr_format", [2, 3])
def test_selections_match(tmp_path, zarr_format):
    path = write(sample_dataset(), tmp_path / "s.zarr", zarr_format, True)
    a, b = open_both(path)
    sels = [
        {"time": slice(3, 17, 2), "x": 1},                                   # basic
        {"time": [0, 5, 6, 23], "y": [4, 1]},                                # outer
        {"time": xr.DataArray([1, 7, 9], dims="p"), "y": xr.DataArray([0, 5, 2], dims="p")},   # vectorized
        {"time": xr.DataArray([[1, 2], [20, 3]], dims=("p", "q")), "x": slice(1, 4)},
    ]
    for sel in sels:
        assert_same(a.isel(sel).load(), b.isel(sel).load())
    assert_same(a[["temp"]].isel(time=slice(None, None, -3), y=slice(2, None), x=slice(None, None, 2)).load(),
                b[["temp"]].isel(time=slice(None, None, -3), y=slice(2, None), x=slice(None, None, 2)).load())


def test_async_load(tmp_path):
    path = write(sample_dataset(), tmp_path / "s.zarr", 3, True)
    a, b = open_both(path)
    if not hasattr(a, "load_async"):
        pytest.skip(f"xarray {xr.__version__} has no Dataset.load_async")
    import asyncio

    async def both():
        sel = {"time": [1, 4], "y": xr.DataArray([0, 3], dims="p")}
        return (await a.load_async(), await a.isel(time=slice(2, 9)).load_async(),
                await a.isel(sel).load_async(), b.isel(sel).load())

    full, part, points, expected = asyncio.run(both())
    assert_same(full, b.load())
    assert_same(part, b.isel(time=slice(2, 9)).load())
    assert_same(points, expected)


def test_small_selection_reads_only_its_chunks(tmp_path):
    """Every chunk file but those a selection touches is overwritten with garbage: the
    selection still reads right, and reading the whole variable fails on the garbage."""
    path = tmp_path / "s.zarr"
    ds = sample_dataset()
    ds[["temp"]].to_zarr(path, zarr_format=3, consolidated=True,
                         encoding={"temp": {"chunks": (5, 3, 5)}})
    keep = {"c/1/0/0", "c/1/1/0", "c/2/0/0", "c/2/1/0"}               # time 5..14: chunks 1 and 2
    chunk_dir = path / "temp"
    broken = 0
    for f in chunk_dir.rglob("*"):
        rel = f.relative_to(chunk_dir).as_posix()
        if f.is_file() and rel.startswith("c/") and rel not in keep:
            f.write_bytes(b"not a zstd frame")
            broken += 1
    assert broken == 6
    a = xr.open_dataset(path, engine="zarrc")
    expected = ds["temp"].isel(time=slice(6, 14), y=[0, 4])
    xr.testing.assert_identical(a["temp"].isel(time=slice(6, 14), y=[0, 4]).load(), expected)
    pts = {"time": xr.DataArray([5, 14, 9], dims="p"), "x": xr.DataArray([0, 4, 2], dims="p")}
    xr.testing.assert_identical(a["temp"].isel(pts).load(), ds["temp"].isel(pts))
    with pytest.raises(zarrc.errors.ZarrcError):
        a["temp"].load()


def test_open_mfdataset(tmp_path):
    pytest.importorskip("dask")
    ds = sample_dataset()
    paths = [write(ds.isel(time=slice(0, 12)), tmp_path / "a.zarr", 3, True),
             write(ds.isel(time=slice(12, None)), tmp_path / "b.zarr", 2, True)]
    a = xr.open_mfdataset(paths, engine="zarrc", combine="by_coords", data_vars="minimal",
                          coords="minimal", compat="override")
    b = xr.open_mfdataset(paths, engine="zarr", combine="by_coords", data_vars="minimal",
                          coords="minimal", compat="override")
    assert_same(a, b, chunked=True)
    assert_same(a.compute(), b.compute())


@pytest.mark.parametrize("zarr_format", [2, 3])
def test_groups(tmp_path, zarr_format):
    ds = sample_dataset()
    tree = xr.DataTree.from_dict({
        "/": ds[["flag"]].assign_attrs(root=True),
        "/obs": ds[["temp", "station"]],
        "/obs/deep": ds[["count"]].isel(time=slice(0, 5)).rename(time="t5"),
        "/model": ds[["scaled"]],
    })
    path = tmp_path / "t.zarr"
    tree.to_zarr(path, zarr_format=zarr_format)
    a = xr.open_datatree(path, engine="zarrc")
    b = xr.open_datatree(path, engine="zarr")
    xr.testing.assert_identical(a, b)
    ga = xr.open_groups(path, engine="zarrc")
    gb = xr.open_groups(path, engine="zarr")
    assert sorted(ga) == sorted(gb)
    for key in gb:
        assert_same(ga[key], gb[key])
    xr.testing.assert_identical(xr.open_datatree(path, engine="zarrc", group="obs"),
                                xr.open_datatree(path, engine="zarr", group="obs"))
    for consolidated in (True, False):
        assert_same(*open_both(path, group="obs/deep", consolidated=consolidated))


def test_zarr_format_option(tmp_path):
    path = write(sample_dataset(), tmp_path / "s.zarr", 2, True)
    assert_same(*open_both(path, zarr_format=2))
    with pytest.raises(zarrc.errors.GroupNotFoundError):
        xr.open_dataset(path, engine="zarrc", zarr_format=3)


def test_consolidated_required(tmp_path):
    path = write(sample_dataset(), tmp_path / "s.zarr", 3, False)
    with pytest.raises(zarrc.errors.MetadataError):
        xr.open_dataset(path, engine="zarrc", consolidated=True)


def test_storage_options_need_a_url(tmp_path):
    path = write(sample_dataset(), tmp_path / "s.zarr", 3, True)
    with pytest.raises(TypeError, match="storage_options"):
        xr.open_dataset(path, engine="zarrc", storage_options={"anon": True})
    with pytest.raises(zarrc.errors.StoreError, match="s3"):      # no remote stores (yet)
        xr.open_dataset("s3://bucket/x.zarr", engine="zarrc", storage_options={"anon": True})
    assert_same(xr.open_dataset(Path(path).as_uri(), engine="zarrc", storage_options={}),
                xr.open_dataset(path, engine="zarr"))


@pytest.mark.parametrize("zarr_format", [2, 3])
def test_missing_dimensions_named(tmp_path, zarr_format):
    # a KeyError, as engine="zarr" raises (tools catch it to skip such arrays), and a
    # MetadataError naming what is missing
    g = zarrc.open_group(str(tmp_path / "n.zarr"), mode="w", zarr_format=zarr_format)
    g.create_array("a", shape=(3,), dtype="i4")
    missing = "_ARRAY_DIMENSIONS" if zarr_format == 2 else "dimension_names"
    for engine in ("zarrc", "zarr"):
        with pytest.raises(KeyError, match=missing) as info:
            xr.open_dataset(tmp_path / "n.zarr", engine=engine, consolidated=False)
    assert isinstance(info.value, KeyError)
    with pytest.raises(zarrc.errors.MissingDimensionsError, match=missing) as mine:
        xr.open_dataset(tmp_path / "n.zarr", engine="zarrc", consolidated=False)
    assert isinstance(mine.value, zarrc.errors.MetadataError) and "'" not in str(mine.value)[:1]


@pytest.mark.parametrize("zarr_format", [2, 3])
def test_opens_a_zarrc_group(tmp_path, zarr_format):
    path = write(sample_dataset(), tmp_path / "s.zarr", zarr_format, True, group="sub")
    root = zarrc.open_group(path, mode="r")
    with xr.open_dataset(root, engine="zarrc", group="sub") as a:
        assert_same(a, xr.open_dataset(path, engine="zarr", group="sub"))
    sub = root["sub"]
    ds = xr.open_dataset(sub, engine="zarrc")
    assert_same(ds, xr.open_dataset(path, engine="zarr", group="sub"))
    ds.close()
    assert sub["temp"][0, 0, 1] == ds["temp"][0, 0, 1]      # the caller's group is left open
    assert set(xr.open_datatree(root, engine="zarrc").groups) == {"/", "/sub"}
    with pytest.raises(zarrc.errors.ArgumentError, match="zarr_format"):
        xr.open_dataset(sub, engine="zarrc", zarr_format=5 - zarr_format)
    # an array is refused, as engine="zarr" refuses zarr-python's (a TypeError)
    with pytest.raises(TypeError):
        import zarr
        xr.open_dataset(zarr.open_array(path, path="sub/temp"), engine="zarr")
    with pytest.raises(zarrc.errors.ArgumentTypeError, match="not the array"):
        xr.open_dataset(sub["temp"], engine="zarrc")


@pytest.mark.parametrize("zarr_format", [2, 3])
def test_codecs_in_the_encoding_round_trip(tmp_path, zarr_format):
    # compressors, filters and (v3) serializer as engine="zarr" gives them, so to_zarr
    # writes a dataset opened here with the same codecs
    import numcodecs
    import zarr

    ds = xr.Dataset({"v": (("x",), np.arange(40.0))})
    if zarr_format == 3:
        codecs = {"serializer": zarr.codecs.BytesCodec(endian="little"),
                  "compressors": (zarr.codecs.BloscCodec(cname="zstd", clevel=3, shuffle="shuffle",
                                                         typesize=8, blocksize=0),)}
    else:
        codecs = {"compressors": (numcodecs.Blosc(cname="zstd", clevel=3, shuffle=2),),
                  "filters": (numcodecs.Delta(dtype="<f8"),)}
    ds.to_zarr(tmp_path / "s.zarr", zarr_format=zarr_format, encoding={"v": codecs})
    a, b = open_both(str(tmp_path / "s.zarr"))
    assert_same(a, b)
    for key, value in codecs.items():
        assert a["v"].encoding[key] == value == b["v"].encoding[key]
    a.to_zarr(tmp_path / "again.zarr", zarr_format=zarr_format)
    again = zarr.open_array(tmp_path / "again.zarr", path="v")
    assert again.compressors == tuple(codecs["compressors"])


@pytest.mark.parametrize("zarr_format", [2, 3])
def test_variable_named_none(tmp_path, zarr_format):
    # xarray stores it as "__values__", a name of the reserved prefix zarrc reads
    ds = xr.Dataset({None: (("x", "y"), [[0, 1], [2, 3]])})
    ds.to_zarr(tmp_path / "s.zarr", zarr_format=zarr_format)
    a, b = open_both(str(tmp_path / "s.zarr"))
    assert_same(a, b)
    xr.testing.assert_identical(a, ds)


def test_unconsolidated_store_warns_as_engine_zarr(tmp_path):
    path = write(sample_dataset(), tmp_path / "s.zarr", 3, False)
    for engine in ("zarrc", "zarr"):
        with pytest.warns(RuntimeWarning, match="Failed to open Zarr store with consolidated"):
            xr.open_dataset(path, engine=engine)
    import warnings
    with warnings.catch_warnings():
        warnings.simplefilter("error", RuntimeWarning)
        xr.open_dataset(path, engine="zarrc", consolidated=False)
        xr.open_dataset(write(sample_dataset(), tmp_path / "c.zarr", 3, True), engine="zarrc")


@pytest.mark.parametrize("zarr_format", [2, 3])
def test_identical_on_zarrc_stores(tmp_path, zarr_format):
    path = str(tmp_path / "z.zarr")
    g = zarrc.open_group(path, mode="w", zarr_format=zarr_format)
    g.attrs.update({"source": "zarrc"})
    dims = {"dimension_names": ["t", "x"]} if zarr_format == 3 else {}
    a = g.create_array("v", shape=(10, 7), chunks=(4, 3), dtype="float64", fill_value=np.nan, **dims)
    a[:] = np.arange(70.0).reshape(10, 7)
    a[2, 2] = np.nan
    t = g.create_array("t", shape=(10,), chunks=(10,), dtype="int64", fill_value=0,
                       **({"dimension_names": ["t"]} if zarr_format == 3 else {}))
    t[:] = np.arange(10) * 3600
    t.attrs.update({"units": "seconds since 2000-01-01", "calendar": "standard"})
    i = g.create_array("i", shape=(7,), chunks=(3,), dtype="uint8", fill_value=255,
                       **({"dimension_names": ["x"]} if zarr_format == 3 else {}))
    i[:5] = np.arange(5)
    st = g.create_array("s", shape=(7,), chunks=(3,), dtype=str,
                        **({"dimension_names": ["x"]} if zarr_format == 3 else {}))
    st[:6] = np.array(["a", "bb", "", "ü", "é e", "z"], dtype=object)
    if zarr_format == 3:
        sh = g.create_array("sh", shape=(10, 7), chunks=(2, 3), shards=(4, 6), dtype="float32",
                            fill_value=-1.0, dimension_names=["t", "x"])
        sh[:7] = 1.5
    if zarr_format == 2:
        for arr, d in ((a, ["t", "x"]), (t, ["t"]), (i, ["x"]), (st, ["x"])):
            arr.attrs.update({"_ARRAY_DIMENSIONS": d})
    zarrc.consolidate_metadata(path)
    for kw in ({}, {"chunks": {}}, {"mask_and_scale": False}):
        x, y = open_both(path, **kw)
        assert_same(x, y, chunked="chunks" in kw)
        assert_same(x.compute(), y.compute())


def test_nczarr_corpus_store():
    if not CORPUS_NCZARR.exists():
        pytest.skip(f"GDAL's NCZarr corpus store is not at {CORPUS_NCZARR}")
    a, b = open_both(CORPUS_NCZARR, group="MyGroup", consolidated=False)
    assert set(a.dims) == {"lat", "lon"}
    assert_same(a, b)
    assert_same(a.load(), b.load())
    # Group_A's dset2 refers to /MyGroup/lat (3), its dset3 to /MyGroup/Group_A/lat (2):
    # xarray names dimensions by the last part of the reference, and both engines fail
    for engine in ("zarrc", "zarr"):
        with pytest.raises(ValueError, match="lat"):
            xr.open_dataset(CORPUS_NCZARR, engine=engine, group="MyGroup/Group_A", consolidated=False)


def test_nczarr_written_by_netcdf_c(tmp_path):
    path = tmp_path / "nc.zarr"
    with netcdf_nczarr(path) as nc:
        nc.createDimension("t", 5)
        nc.createDimension("x", 3)
        v = nc.createVariable("v", "f4", ("t", "x"), fill_value=-1.0)
        v[:] = np.arange(15.0).reshape(5, 3)
        v[4, 2] = -1.0
        v.units = "m"
        t = nc.createVariable("t", "i4", ("t",))
        t[:] = np.arange(5)
        t.units = "days since 2001-01-01"
        g = nc.createGroup("sub")
        w = g.createVariable("w", "i2", ("x",))
        w[:2] = [5, 6]
        nc.title = "written by netCDF-C"
    for group in (None, "sub"):
        a, b = open_both(path, group=group, consolidated=False)
        assert_same(a, b)
        assert_same(a.load(), b.load())
    xr.testing.assert_identical(xr.open_datatree(path, engine="zarrc", consolidated=False),
                                xr.open_datatree(path, engine="zarr", consolidated=False))
    # without `_ARRAY_DIMENSIONS` (netCDF-C writes it beside its own `_nczarr_array`
    # references): the dimensions come from the references, the dataset stays the same
    before = xr.open_dataset(path, engine="zarrc", consolidated=False).load()
    for zattrs in path.rglob(".zattrs"):
        attrs = json.loads(zattrs.read_text())
        if attrs.pop("_ARRAY_DIMENSIONS", None) is not None:
            zattrs.write_text(json.dumps(attrs))
    after = xr.open_dataset(path, engine="zarrc", consolidated=False).load()
    assert after["v"].dims == ("t", "x")
    assert_same(after, before)



def test_bad_options_named(tmp_path):
    path = write(sample_dataset(), tmp_path / "s.zarr", 3, True)
    with pytest.raises(zarrc.errors.ArgumentError, match="zarr_format"):
        xr.open_dataset(path, engine="zarrc", zarr_format=4)
    with pytest.raises(zarrc.errors.ArgumentTypeError, match="consolidated"):
        xr.open_dataset(path, engine="zarrc", consolidated="yes")
    with pytest.raises(zarrc.errors.ArgumentError, match="is an array"):
        xr.open_dataset(path, engine="zarrc", group="temp")
    for engine in ("zarrc", "zarr"):
        with pytest.raises(FileNotFoundError):
            xr.open_dataset(tmp_path / "missing.zarr", engine=engine)


@pytest.mark.parametrize("zarr_format", [2, 3])
def test_written_back_with_to_zarr(tmp_path, zarr_format):
    # writing stays zarr-python's: a dataset opened here, its encodings included
    # (chunks, shards, fill values), is written by to_zarr as engine="zarr"'s is
    path = write(sample_dataset(), tmp_path / "s.zarr", zarr_format, True)
    # (v2 strings: engine="zarr"'s dataset, with its vlen-utf8 filter encoding, does not
    # write back with zarr-python 3.1 and 3.4: "No Zarr data type found that matches <U5")
    drop = ["station"] if zarr_format == 2 else []
    a, b = open_both(path, drop_variables=drop)
    a.to_zarr(tmp_path / "a.zarr", zarr_format=zarr_format)
    b.to_zarr(tmp_path / "b.zarr", zarr_format=zarr_format)
    assert_same(*(xr.open_dataset(tmp_path / f"{n}.zarr", engine="zarrc") for n in "ab"))
    assert zarrc.open_array(str(tmp_path / "a.zarr"), path="temp").chunks == (5, 3, 5)


def test_store_without_consolidated_metadata_support():
    # a zarr-python store declaring it has none is opened unconsolidated, silently (as xarray)
    import warnings

    from zarr.storage import MemoryStore, WrapperStore

    class NoConsolidated(WrapperStore):
        supports_consolidated_metadata = False

    store = NoConsolidated(MemoryStore({}, read_only=False))
    ds = xr.Dataset({"v": (("x",), np.arange(4))})
    ds.to_zarr(store, consolidated=False, zarr_format=3)
    with warnings.catch_warnings():
        warnings.simplefilter("error", RuntimeWarning)
        for consolidated in (None, True):
            xr.testing.assert_identical(xr.open_dataset(store, engine="zarrc", consolidated=consolidated), ds)
