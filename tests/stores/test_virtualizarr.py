"""VirtualiZarr's ManifestStore (its HDF parser's view of a netCDF4 file, the chunks
read from the file where they are) as a zarrc store: ``zarrc.open_group(store)``
reads every variable as netCDF4 reads the file, bit for bit, from local disk (obstore's
LocalStore) and from the tests' HTTP server (obstore's HTTPStore).  ManifestStore
lists only directories (no list_prefix, no exists): zarrc walks its list_dir."""

from __future__ import annotations

import pickle
import shutil

import pytest
from stores.reference_support import NETCDF_VARIABLES, netcdf4_file
from stores.servers import http_server  # noqa: F401  (fixture)

import zarrc
from zarrc.errors import ReadOnlyError, StoreError

netCDF4 = pytest.importorskip("netCDF4", reason="netCDF4 is not installed (test extra, Python 3.11+)")
parsers = pytest.importorskip("virtualizarr.parsers", reason="virtualizarr is not installed (test extra, Python 3.11+)")
registry_module = pytest.importorskip("obspec_utils.registry", reason="obspec_utils (with virtualizarr) is not installed")
obstore_store = pytest.importorskip("obstore.store", reason="obstore is not installed")

# the HDF parser describes zlib / shuffle as numcodecs codecs, which zarr-python warns of
pytestmark = pytest.mark.filterwarnings("ignore:Numcodecs codecs are not in the Zarr version 3")

VARIABLES = NETCDF_VARIABLES


@pytest.fixture(scope="module")
def nc_file(tmp_path_factory):
    return netcdf4_file(tmp_path_factory)


def check(group, expected):
    assert group.attrs["title"] == "zarrc netCDF4 test"
    assert sorted(group.array_keys()) == ["mask", "temp", "time", "x", "y"]
    assert sorted(group.group_keys()) == ["extra"]
    for name, data in expected.items():
        got = group[name][...]
        assert got.dtype == data.dtype and got.shape == data.shape, name
        assert got.tobytes() == data.tobytes(), name
    temp = group["temp"]
    assert temp.chunks == (4, 16, 10) and temp.attrs["units"] == "K"
    assert temp.metadata.dimension_names == ("time", "y", "x")
    assert temp[3:9, 15:17, 9:11].tobytes() == expected["temp"][3:9, 15:17, 9:11].tobytes()
    assert temp.store.read_only
    with pytest.raises(ReadOnlyError):
        temp[0, 0, 0] = 1


def test_manifest_store_of_a_local_file(nc_file):
    path, expected = nc_file
    registry = registry_module.ObjectStoreRegistry({"file://": obstore_store.LocalStore()})
    manifest_store = parsers.HDFParser()(f"file://{path}", registry=registry)
    group = zarrc.open_group(manifest_store, mode="r")
    check(group, expected)
    assert zarrc.open_array(manifest_store, path="extra/v", mode="r")[...].tobytes() == expected["extra/v"].tobytes()
    # zarrc's listing of it, from its list_dir; ManifestStore cannot list the chunks of an
    # array whose chunk keys use "/" (the HDF parser's): a StoreError saying so
    assert group.store.list_dir("") == (["zarr.json"], ["extra", "mask", "temp", "time", "x", "y"])
    with pytest.raises(StoreError, match="only supports '.' as chunk key separator"):
        list(group.store.list_prefix("temp/"))
    # the default mode "a" opens it read-only (the store says it is)
    assert zarrc.open_group(manifest_store).store.read_only


def test_manifest_store_over_http(nc_file, http_server):  # noqa: F811
    path, expected = nc_file
    shutil.copy(path, http_server.root + "/f.nc")
    http = obstore_store.HTTPStore.from_url(http_server.url, client_options={"allow_http": True})
    registry = registry_module.ObjectStoreRegistry({http_server.url: http})
    manifest_store = parsers.HDFParser()(f"{http_server.url}/f.nc", registry=registry)
    http_server.switches.requests.clear()
    check(zarrc.open_group(manifest_store, mode="r"), expected)
    assert any(r[2] and r[2].startswith("bytes=") for r in http_server.switches.requests)
    # a group over it pickles to the ManifestStore (its manifests and registry, no chunk data)
    clone = pickle.loads(pickle.dumps(zarrc.open_group(manifest_store, mode="r")))
    assert clone["temp"][...].tobytes() == expected["temp"].tobytes()
