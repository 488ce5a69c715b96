"""Kerchunk references of a netCDF4 file (written by the netCDF4 package, translated
by kerchunk's SingleHdf5ToZarr) through zarrc's public API: ``reference://`` with
``storage_options``, the path or URL of the references JSON, and xarray's
``engine="zarrc"``; the file and the references served by the tests' HTTP server on
127.0.0.1.  Every variable equals netCDF4's own read of the file, bit for bit."""

from __future__ import annotations

import json
import shutil

import numpy as np
import pytest
from stores.reference_support import NETCDF_VARIABLES, netcdf4_file
from stores.servers import http_server  # noqa: F401  (fixture)

import zarrc
from zarrc.errors import ArgumentTypeError, ReadOnlyError

netCDF4 = pytest.importorskip("netCDF4", reason="netCDF4 is not installed (test extra, Python 3.11+)")
kerchunk_hdf = pytest.importorskip("kerchunk.hdf", reason="kerchunk is not installed (test extra, Python 3.11+)")
pytest.importorskip("fsspec", reason="fsspec (zarrc[remote]) is not installed")
pytest.importorskip("aiohttp", reason="aiohttp (fsspec's http://) is not installed")

VARIABLES = NETCDF_VARIABLES


@pytest.fixture(scope="module")
def nc_file(tmp_path_factory):
    return netcdf4_file(tmp_path_factory)


@pytest.fixture
def served(nc_file, http_server):  # noqa: F811
    """The netCDF4 file on the HTTP server, and its references: (server, expected data,
    refs with absolute http:// URLs, local path of refs with protocol-less URLs)."""
    path, expected = nc_file
    shutil.copy(path, http_server.root + "/f.nc")
    refs = kerchunk_hdf.SingleHdf5ToZarr(f"{http_server.url}/f.nc").translate()
    with open(http_server.root + "/refs.json", "w") as f:
        json.dump(refs, f)
    # references (version 1) whose targets are a template, pointed at the server by
    # storage_options' template_overrides
    templated = {k: [v[0].replace(http_server.url, "{{u}}"), *v[1:]] if isinstance(v, list) else v
                 for k, v in refs["refs"].items()}
    templated_path = http_server.root + "/templated.json"
    with open(templated_path, "w") as f:
        json.dump({"version": 1, "templates": {"u": "http://127.0.0.1:9/nothing"}, "refs": templated}, f)
    return http_server, expected, refs, templated_path


def check(group, expected):
    assert group.attrs["title"] == "zarrc netCDF4 test"
    for name, data in expected.items():
        got = group[name][...]
        assert got.dtype == data.dtype and got.shape == data.shape, name
        assert got.tobytes() == data.tobytes(), name
    temp = group["temp"]
    assert temp.attrs["units"] == "K" and temp.attrs["_ARRAY_DIMENSIONS"] == ["time", "y", "x"]
    assert temp.chunks == (4, 16, 10)
    assert temp[3:9, 15:17, 9:11].tobytes() == expected["temp"][3:9, 15:17, 9:11].tobytes()


def test_reference_url_through_the_api(served):
    server, expected, _, templated_path = served
    for fo in (server.root + "/refs.json", f"{server.url}/refs.json"):
        options = {"fo": fo, "remote_protocol": "http"}
        group = zarrc.open_group("reference://", storage_options=options, mode="r")
        check(group, expected)
        arr = zarrc.open_array("reference://", path="temp", storage_options=options, mode="r")
        assert arr[...].tobytes() == expected["temp"].tobytes()
        assert type(group.store).__name__ == "ReferenceStore"
    # the targets' URL from template_overrides; the default mode ("a") opens read-only
    group = zarrc.open_group("reference://", storage_options={"fo": templated_path, "remote_protocol": "http",
                                                              "template_overrides": {"u": server.url}})
    check(group, expected)
    with pytest.raises(ReadOnlyError):
        group["temp"][0, 0, 0] = 0
    with pytest.raises(ReadOnlyError):
        zarrc.open_group("reference://", storage_options={"fo": templated_path}, mode="w")


def test_reference_json_path_through_the_api(served):
    server, expected, _, templated_path = served
    # the path (or file:// URL, or http:// URL) of the references JSON as the store
    for where in (server.root + "/refs.json", "file://" + server.root + "/refs.json", f"{server.url}/refs.json"):
        check(zarrc.open_group(where, mode="r"), expected)
        assert zarrc.open_array(where, path="extra/v", mode="r")[...].tobytes() == expected["extra/v"].tobytes()
    options = {"template_overrides": {"u": server.url}, "remote_protocol": "http"}
    check(zarrc.open_group(templated_path, storage_options=options, mode="r"), expected)
    check(zarrc.open(templated_path, storage_options=options, mode="r"), expected)
    with pytest.raises(ReadOnlyError):
        zarrc.open_array(templated_path, path="new", mode="w-", shape=(1,), dtype="i1")
    with pytest.raises(ArgumentTypeError, match="storage_options"):   # a directory is no reference file
        zarrc.open_group(server.root, storage_options={"remote_protocol": "http"})


def test_xarray_engine_zarrc_on_references(served):
    xr = pytest.importorskip("xarray", reason="xarray is not installed (test extra, Python 3.11+)")
    server = served[0]
    options = {"fo": f"{server.url}/refs.json", "remote_protocol": "http"}
    ds = xr.open_dataset("reference://", engine="zarrc", storage_options=options, mask_and_scale=False,
                         decode_times=False, consolidated=False)
    with netCDF4.Dataset(server.root + "/f.nc") as nc:
        nc.set_auto_maskandscale(False)
        for name in ("time", "y", "x", "temp", "mask"):
            got = ds[name].values
            assert got.tobytes() == np.asarray(nc[name][...]).astype(got.dtype).tobytes(), name
        assert ds["temp"].dims == ("time", "y", "x") and ds["temp"].attrs["units"] == "K"
        assert ds.attrs["title"] == nc.title
    # decoded as xarray decodes the netCDF4 file itself (fill value masked, times decoded)
    decoded = xr.open_dataset("reference://", engine="zarrc", storage_options=options, consolidated=False)
    with xr.open_dataset(server.root + "/f.nc", engine="netcdf4") as reference:
        xr.testing.assert_identical(decoded[["temp", "mask"]].load().reset_coords(drop=True),
                                    reference[["temp", "mask"]].load().reset_coords(drop=True))
