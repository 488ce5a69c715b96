"""The public API on URLs with ``storage_options``, over real servers on 127.0.0.1
(moto's S3 server, the tests' HTTP server): create / open / consolidate by URL, a
URL naming a node's document, pickling by URL to another process (reads and
writes), zarr-python with ZarrcCodecPipeline on its ObjectStore running natively,
and xarray's ``engine="zarrc"`` with ``storage_options``."""

from __future__ import annotations

import pickle
import subprocess
import sys

import numpy as np
import pytest

import zarrc
from stores.servers import http_server, s3_server  # noqa: F401  (fixtures)
from zarrc.errors import ArgumentTypeError, ReadOnlyError

pytest.importorskip("obstore", reason="obstore (zarrc[remote]) is not installed")


def _data(shape, dtype="<f4"):
    return (np.arange(int(np.prod(shape))) % 251).astype(dtype).reshape(shape)


@pytest.mark.parametrize("zarr_format", [2, 3])
def test_create_open_consolidate_by_url(s3_server, zarr_format):  # noqa: F811
    url, opts = f"s3://{s3_server.bucket()}/run", s3_server.options()
    data = _data((40, 30))
    root = zarrc.open_group(url, mode="w", storage_options=opts, zarr_format=zarr_format)
    a = root.create_array("temp", shape=data.shape, dtype=data.dtype, chunks=(10, 15))
    a[...] = data
    zarrc.create_array(url, name="sharded", shape=data.shape, dtype=data.dtype, chunks=(5, 5),
                       shards=None if zarr_format == 2 else (20, 15), zarr_format=zarr_format,
                       storage_options=opts)[...] = data
    zarrc.consolidate_metadata(root.store)
    g = zarrc.open_consolidated(url, storage_options=opts, mode="r")
    assert sorted(g.array_keys()) == ["sharded", "temp"]
    np.testing.assert_array_equal(g["temp"][3:33, 1:29:3], data[3:33, 1:29:3])
    np.testing.assert_array_equal(zarrc.open_array(url, path="sharded", storage_options=opts, mode="r")[...],
                                  data)
    doc = "zarr.json" if zarr_format == 3 else ".zarray"
    np.testing.assert_array_equal(zarrc.open_array(f"{url}/temp/{doc}", storage_options=opts, mode="r")[5],
                                  data[5])


def test_storage_options_need_a_url(tmp_path):
    with pytest.raises(ArgumentTypeError, match="storage_options"):
        zarrc.open_group(str(tmp_path / "x"), storage_options={"anon": True})


def test_http_urls_are_read_only(http_server):  # noqa: F811
    data = _data((9, 9), "<i2")
    zarrc.create_array(http_server.root + "/arr", shape=data.shape, dtype=data.dtype, chunks=(4, 4))[...] = data
    arr = zarrc.open_array(http_server.url + "/arr", mode="r")
    np.testing.assert_array_equal(arr[...], data)
    with pytest.raises(ReadOnlyError):
        zarrc.open_array(http_server.url + "/arr", mode="a")[0, 0] = 1


def test_a_url_array_pickles_to_its_description(s3_server):  # noqa: F811
    """Opened by URL, an array pickles to (URL, options, mode): another process reads
    it and writes to it, and this process sees the write."""
    url, opts = f"s3://{s3_server.bucket()}/p", s3_server.options()
    data = _data((64, 64), "<i8")
    zarrc.create_array(url, shape=data.shape, dtype=data.dtype, chunks=(16, 16), storage_options=opts)[...] = data
    arr = zarrc.open_array(url, storage_options=opts, mode="r+")
    blob = pickle.dumps(arr)
    assert len(blob) < 2000 and data[5, 5:13].tobytes() not in blob
    script = ("import pickle, sys, numpy as np\n"
              "arr = pickle.loads(sys.stdin.buffer.read())\n"
              "total = int(arr[...].sum())\n"
              "arr[0, :] = -1\n"
              "print(total)\n")
    done = subprocess.run([sys.executable, "-c", script], input=blob, capture_output=True, timeout=120,
                          check=False)
    assert done.returncode == 0, done.stderr.decode()
    assert int(done.stdout) == int(data.sum())
    np.testing.assert_array_equal(arr[0], np.full(64, -1))


def test_zarr_python_pipeline_on_object_store_runs_natively(s3_server):  # noqa: F811
    zarr = pytest.importorskip("zarr")
    obstore_store = pytest.importorskip("obstore.store")
    bucket = s3_server.bucket()
    inner = obstore_store.S3Store(bucket, prefix="zp", endpoint=s3_server.endpoint, access_key_id="testing",
                                  secret_access_key="testing", region="us-east-1",
                                  client_options={"allow_http": True})
    store = zarr.storage.ObjectStore(inner)
    data = _data((50, 40))
    with zarr.config.set({"codec_pipeline.path": "zarrc.ZarrcCodecPipeline", "codec_pipeline.strict": True}):
        z = zarr.create_array(store, shape=data.shape, dtype=data.dtype, chunks=(10, 10), shards=(20, 40))
        z[...] = data
        np.testing.assert_array_equal(z[7:43, 3:31], data[7:43, 3:31])
        pipe = z._async_array.codec_pipeline
        assert pipe.unsupported is None and pipe.native_calls >= 2 and pipe.fallback_calls == 0
    got = zarrc.open_array(f"s3://{bucket}/zp", storage_options=s3_server.options(), mode="r")[...]
    assert got.tobytes() == data.tobytes()


def test_xarray_engine_with_storage_options(s3_server):  # noqa: F811
    xr = pytest.importorskip("xarray")
    url, opts = f"s3://{s3_server.bucket()}/ds", s3_server.options()
    g = zarrc.open_group(url, mode="w", storage_options=opts)
    v = g.create_array("v", shape=(6, 4), dtype="f4", chunks=(3, 2), dimension_names=["t", "x"])
    v[...] = _data((6, 4))
    ds = xr.open_dataset(url, engine="zarrc", storage_options=opts, consolidated=False)
    np.testing.assert_array_equal(ds["v"].values, _data((6, 4)))
    assert ds["v"].dims == ("t", "x")


@pytest.mark.parametrize("zarr_format", [2, 3])
def test_consolidated_hierarchies_both_ways(s3_server, zarr_format):  # noqa: F811
    """zarrc consolidates a hierarchy on S3 and zarr-python opens it consolidated
    (through its ObjectStore), and the reverse."""
    zarr = pytest.importorskip("zarr")
    obstore_store = pytest.importorskip("obstore.store")
    bucket, opts = s3_server.bucket(), s3_server.options()

    def zarr_store(prefix):
        return zarr.storage.ObjectStore(obstore_store.S3Store(
            bucket, prefix=prefix, endpoint=s3_server.endpoint, access_key_id="testing",
            secret_access_key="testing", region="us-east-1", client_options={"allow_http": True}))

    data = _data((12, 10))
    g = zarrc.open_group(f"s3://{bucket}/zc", mode="w", storage_options=opts, zarr_format=zarr_format)
    g.create_group("sub").create_array("x", shape=data.shape, dtype=data.dtype, chunks=(5, 5))[...] = data
    zarrc.consolidate_metadata(g.store)
    zg = zarr.open_consolidated(zarr_store("zc"), zarr_format=zarr_format)
    np.testing.assert_array_equal(zg["sub/x"][...], data)

    zg = zarr.open_group(zarr_store("zp"), mode="w", zarr_format=zarr_format)
    zg.create_group("sub").create_array("y", shape=data.shape, dtype=data.dtype, chunks=(4, 4))[...] = data
    zarr.consolidate_metadata(zarr_store("zp"))
    got = zarrc.open_consolidated(f"s3://{bucket}/zp", storage_options=opts, mode="r")
    np.testing.assert_array_equal(got["sub/y"][...], data)


def test_sharded_reads_over_http_take_few_requests(http_server):  # noqa: F811
    """A read that covers most of a remote shard fetches it whole, one GET a shard; a
    small read of a shard takes its version and index in one ranged GET (the
    response names the ETag and size), then the inner chunk's range with If-Match."""
    data = _data((64, 64))
    zarrc.create_array(http_server.root + "/s", shape=data.shape, dtype=data.dtype, chunks=(8, 8),
                       shards=(32, 32))[...] = data                    # 4 shards of 16 inner chunks
    arr = zarrc.open_array(http_server.url + "/s", mode="r")
    seen = http_server.switches.requests
    before = len(seen)
    np.testing.assert_array_equal(arr[...], data)
    full = seen[before:]
    assert len(full) == 4 and all(method == "GET" and rng is None for method, _, rng in full), full
    before = len(seen)
    np.testing.assert_array_equal(arr[3:5, 40:42], data[3:5, 40:42])
    small = seen[before:]
    assert [(method, rng is not None) for method, _, rng in small] == [("GET", True)] * 2, small
    assert all(p.endswith("/s/c/0/1") for _, p, _ in small), small
