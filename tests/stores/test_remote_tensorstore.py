"""tensorstore and zarrc on the same remote data, both ways: zarrc writes to S3
(moto's server) and tensorstore reads it through its s3 kvstore, or over HTTP
through its http kvstore; tensorstore writes to S3 and zarrc reads.  v2, v3 and
sharded arrays, bit for bit."""

from __future__ import annotations

import numpy as np
import pytest

import zarrc
from stores.servers import http_server, s3_server  # noqa: F401  (fixtures)

ts = pytest.importorskip("tensorstore")
pytest.importorskip("obstore", reason="obstore (zarrc[remote]) is not installed")

LAYOUTS = ["v2", "v3", "sharded"]


def _data(shape, dtype="<f4"):
    return (np.arange(int(np.prod(shape))) % 509 - 200).astype(dtype).reshape(shape)


def _kwargs(layout):
    if layout == "v2":
        return {"zarr_format": 2}
    return {"shards": (20, 24)} if layout == "sharded" else {}


def _s3_spec(s3, bucket, path, layout):
    return {"driver": "zarr" if layout == "v2" else "zarr3",
            "kvstore": {"driver": "s3", "bucket": bucket, "path": path + "/",
                        "endpoint": s3.endpoint, "aws_region": "us-east-1",
                        "aws_credentials": {"type": "environment"}}}


@pytest.fixture
def aws_env(monkeypatch):
    monkeypatch.setenv("AWS_ACCESS_KEY_ID", "testing")
    monkeypatch.setenv("AWS_SECRET_ACCESS_KEY", "testing")


@pytest.mark.parametrize("layout", LAYOUTS)
def test_zarrc_writes_tensorstore_reads_s3(s3_server, aws_env, layout):  # noqa: F811
    bucket = s3_server.bucket()
    data = _data((40, 48))
    zarrc.create_array(f"s3://{bucket}/a", shape=data.shape, dtype=data.dtype, chunks=(10, 12),
                       storage_options=s3_server.options(), **_kwargs(layout))[...] = data
    got = ts.open(_s3_spec(s3_server, bucket, "a", layout), open=True).result().read().result()
    assert got.dtype == data.dtype and got.tobytes() == data.tobytes()


@pytest.mark.parametrize("layout", LAYOUTS)
def test_tensorstore_writes_zarrc_reads_s3(s3_server, aws_env, layout):  # noqa: F811
    bucket = s3_server.bucket()
    data = _data((40, 48), "<i2")
    spec = _s3_spec(s3_server, bucket, "t", layout)
    if layout == "v2":
        spec["metadata"] = {"shape": list(data.shape), "chunks": [10, 12], "dtype": "<i2"}
    else:
        codecs = [{"name": "bytes", "configuration": {"endian": "little"}}]
        if layout == "sharded":
            codecs = [{"name": "sharding_indexed",
                       "configuration": {"chunk_shape": [10, 12], "codecs": codecs}}]
        spec["metadata"] = {"shape": list(data.shape), "data_type": "int16", "codecs": codecs,
                            "chunk_grid": {"name": "regular", "configuration": {
                                "chunk_shape": [20, 24] if layout == "sharded" else [10, 12]}}}
    store = ts.open(spec, create=True).result()
    store.write(data).result()
    got = zarrc.open_array(f"s3://{bucket}/t", storage_options=s3_server.options(), mode="r")[...]
    assert got.dtype == data.dtype and got.tobytes() == data.tobytes()


@pytest.mark.parametrize("layout", LAYOUTS)
def test_tensorstore_reads_over_http(http_server, layout):  # noqa: F811
    data = _data((30, 30), "<u2")
    zarrc.create_array(http_server.root + "/h", shape=data.shape, dtype=data.dtype, chunks=(10, 12),
                       **_kwargs(layout))[...] = data
    spec = {"driver": "zarr" if layout == "v2" else "zarr3",
            "kvstore": {"driver": "http", "base_url": http_server.url + "/h/"}}
    got = ts.open(spec, open=True, read=True).result().read().result()
    assert got.tobytes() == data.tobytes()
    # and zarrc over the same server
    assert zarrc.open_array(http_server.url + "/h", mode="r")[...].tobytes() == data.tobytes()
