"""zarrc arrays on remote stores through the public API: written and read back (v2,
v3, sharded) on moto's S3 server and fsspec memory://; zarr-python and zarrc reading
each other's arrays on S3 bit for bit; arrays pickled to another process as a
description of their store, never their data."""

from __future__ import annotations

import pickle
import subprocess
import sys
import uuid

import numpy as np
import pytest
from stores.servers import http_server, s3_server  # noqa: F401  (fixtures)

import zarrc
from zarrc.stores import make_store
from zarrc.stores.remote import RemoteStore
from zarrc.stores.url import store_from_url


def _data(shape, dtype="<i4"):
    return (np.arange(int(np.prod(shape)), dtype="i8") * 7 % 1001).astype(dtype).reshape(shape)


@pytest.fixture(params=["s3", "fsspec-memory"])
def remote(request, s3_server):  # noqa: F811
    """A new, empty writable RemoteStore of each kind."""
    if request.param == "s3":
        pytest.importorskip("obstore")
        return store_from_url(f"s3://{s3_server.bucket()}/arrays", "w", s3_server.options())
    pytest.importorskip("fsspec")
    return store_from_url(f"memory://zarrc-arrays-{uuid.uuid4().hex}", "w")


@pytest.mark.parametrize("layout", ["v3", "v2", "sharded", "rectilinear shards", "nested rectilinear shards"])
def test_write_read_round_trip(remote, layout):
    data = _data((37, 29))
    kwargs: dict = {"chunks": (10, 8), **({"zarr_format": 2} if layout == "v2" else {})}
    if layout == "sharded":
        kwargs["shards"] = (20, 16)
    if layout == "rectilinear shards":          # (conditional writes of shards of two sizes)
        kwargs["shards"] = [[10, 30], [16, 16]]
    if layout == "nested rectilinear shards":   # (shards of two sizes, sub-shards of (10, 8) inside)
        kwargs = {"chunks": [[10, 30], [16, 16]], "compressors": None, "serializer": _nested((10, 8), (5, 4))}
    shape = (40, 32) if "rectilinear" in layout else data.shape
    arr = zarrc.create_array(remote, name="x", shape=shape, dtype=data.dtype, **kwargs)
    arr.resize(data.shape)                  # (the last shards end past the array)
    arr[:] = data
    arr[3:9, 20:] = -1                      # a partial write: read-modify-write of chunks / shards
    data[3:9, 20:] = -1
    back = zarrc.open_array(remote, path="x", mode="r")
    np.testing.assert_array_equal(back[:], data)
    np.testing.assert_array_equal(back[5:31, 2:27:3], data[5:31, 2:27:3])
    np.testing.assert_array_equal(back.get_coordinate_selection(([0, 36, 17], [28, 0, 5])),
                                  data[[0, 36, 17], [28, 0, 5]])
    keys = set(remote.list_prefix("x/"))
    assert ("x/.zarray" if layout == "v2" else "x/zarr.json") in keys
    expected_chunks = (2 * 2) if "shard" in layout else (4 * 4)
    assert len([k for k in keys if "zarr" not in k and not k.startswith("x/.")]) == expected_chunks


def _nested(middle, inner) -> dict:
    le = {"name": "bytes", "configuration": {"endian": "little"}}

    def sharding(chunk, codecs):
        return {"name": "sharding_indexed", "configuration": {
            "chunk_shape": list(chunk), "codecs": codecs, "index_codecs": [le], "index_location": "end"}}
    return sharding(middle, [sharding(inner, [le, {"name": "zstd", "configuration": {"level": 1}}])])


def test_missing_chunks_read_as_fill_value(remote):
    arr = zarrc.create_array(remote, name="f", shape=(20,), dtype="f8", chunks=(5,), fill_value=2.5)
    arr[5:10] = 1.0
    assert sorted(remote.list_prefix("f/c/")) == ["f/c/1"]
    expected = np.full(20, 2.5)
    expected[5:10] = 1.0
    np.testing.assert_array_equal(zarrc.open_array(remote, path="f")[:], expected)


def test_groups_and_listing(remote):
    root = zarrc.open_group(remote, mode="w")
    root.create_group("g").create_array("a", shape=(4,), dtype="u1")[:] = [1, 2, 3, 4]
    reopened = zarrc.open_group(remote, mode="r")
    assert sorted(reopened.group_keys()) == ["g"]
    np.testing.assert_array_equal(reopened["g/a"][:], [1, 2, 3, 4])


def _s3_objectstore(s3, bucket: str, prefix: str, read_only: bool = False):
    zarr_storage = pytest.importorskip("zarr.storage")
    obstore_store = pytest.importorskip("obstore.store")
    inner = obstore_store.S3Store(bucket, prefix=prefix, endpoint=s3.endpoint, access_key_id="testing",
                                  secret_access_key="testing", region="us-east-1",
                                  client_options={"allow_http": True})
    return zarr_storage.ObjectStore(inner, read_only=read_only)


@pytest.mark.parametrize("layout", ["v3", "v2", "sharded"])
def test_zarr_python_writes_zarrc_reads(s3_server, layout):  # noqa: F811
    zarr = pytest.importorskip("zarr")
    bucket = s3_server.bucket()
    data = _data((30, 22), "<f4")
    kwargs = {"zarr_format": 2} if layout == "v2" else {}
    if layout == "sharded":
        kwargs["shards"] = (10, 22)
    z = zarr.create_array(_s3_objectstore(s3_server, bucket, "zp"), name="a", shape=data.shape,
                          dtype=data.dtype, chunks=(5, 11), **kwargs)
    z[:] = data
    store = store_from_url(f"s3://{bucket}/zp", "r", s3_server.options())
    got = zarrc.open_array(store, path="a", mode="r")[:]
    assert got.dtype == data.dtype and got.tobytes() == data.tobytes()
    # the same through zarr-python's store object handed to zarrc
    wrapped = make_store(_s3_objectstore(s3_server, bucket, "zp", read_only=True))
    assert isinstance(wrapped, RemoteStore) and wrapped.read_only
    assert zarrc.open_array(wrapped, path="a")[:].tobytes() == data.tobytes()


@pytest.mark.parametrize("layout", ["v3", "v2", "sharded"])
def test_zarrc_writes_zarr_python_reads(s3_server, layout):  # noqa: F811
    zarr = pytest.importorskip("zarr")
    bucket = s3_server.bucket()
    data = _data((25, 18), "<u2")
    kwargs = {"zarr_format": 2} if layout == "v2" else {}
    if layout == "sharded":
        kwargs["shards"] = (10, 18)
    store = store_from_url(f"s3://{bucket}/zc", "w", s3_server.options())
    zarrc.create_array(store, name="a", shape=data.shape, dtype=data.dtype, chunks=(5, 9), **kwargs)[:] = data
    z = zarr.open_array(_s3_objectstore(s3_server, bucket, "zc", read_only=True), path="a", mode="r")
    got = z[:]
    assert got.dtype == data.dtype and got.tobytes() == data.tobytes()


def test_http_reads_an_array(http_server, tmp_path):  # noqa: F811
    """An array written locally and served over HTTP reads the same (read-only)."""
    pytest.importorskip("obstore")
    data = _data((12, 12))
    zarrc.create_array(http_server.root + "/arr", shape=data.shape, dtype=data.dtype, chunks=(5, 5),
                       shards=(10, 10))[:] = data
    arr = zarrc.open_array(make_store(http_server.url + "/arr", mode="r"), mode="r")
    np.testing.assert_array_equal(arr[:], data)
    np.testing.assert_array_equal(arr[7:11, 1:12:2], data[7:11, 1:12:2])
    with pytest.raises(zarrc.errors.ReadOnlyError):
        arr[0, 0] = 5


@pytest.mark.parametrize("layout", [{"chunks": [[3, 5, 4], [7, 5]]}, {"chunks": (2, 4), "shards": [[4, 8], [8, 4]]}])
def test_http_reads_a_rectilinear_array(http_server, layout):  # noqa: F811
    """A rectilinear grid (plain chunks, and shards) served over HTTP reads the same,
    every selection kind (the chunks in windows, the shards in parts)."""
    pytest.importorskip("obstore")
    data = _data((12, 12))
    zarrc.create_array(http_server.root + "/arr", shape=data.shape, dtype=data.dtype, **layout)[:] = data
    arr = zarrc.open_array(make_store(http_server.url + "/arr", mode="r"), mode="r")
    np.testing.assert_array_equal(arr[:], data)
    np.testing.assert_array_equal(arr[7:11, 1:12:2], data[7:11, 1:12:2])
    np.testing.assert_array_equal(arr.oindex[[0, 11, 4], [3, 9]], data[np.ix_([0, 11, 4], [3, 9])])
    np.testing.assert_array_equal(arr.vindex[[0, 11, 4], [3, 9, 5]], data[[0, 11, 4], [3, 9, 5]])


def test_pickled_array_reads_in_another_process(s3_server):  # noqa: F811
    """An array on S3 pickles to its store's URL and options: small, no chunk bytes;
    another process unpickles it and reads the same data."""
    pytest.importorskip("obstore")
    url = f"s3://{s3_server.bucket()}/p"
    data = _data((64, 64), "<i8")
    store = store_from_url(url, "w", s3_server.options())
    arr = zarrc.create_array(store, shape=data.shape, dtype=data.dtype, chunks=(16, 16))
    arr[:] = data
    blob = pickle.dumps(zarrc.open_array(store, mode="r"))
    assert len(blob) < 2000, len(blob)          # the data is 32 KiB
    assert url.encode() in blob and data[5, 5:13].tobytes() not in blob
    script = ("import pickle, sys, numpy as np\n"
              "arr = pickle.loads(sys.stdin.buffer.read())\n"
              "sys.stdout.write(f'{int(arr[:].astype(np.int64).sum())} {arr.shape} {arr.store.url}')\n")
    done = subprocess.run([sys.executable, "-c", script], input=blob, capture_output=True, timeout=120,
                          check=False)
    assert done.returncode == 0, done.stderr.decode()
    assert done.stdout.decode() == f"{int(data.sum())} (64, 64) {url}"


def _fork_and_get(store, key):
    """What ``store.get(key)`` gives in a forked child (the store inherited, not
    pickled): ("ok", value) or ("error", message)."""
    import multiprocessing

    if "fork" not in multiprocessing.get_all_start_methods():
        pytest.skip("no fork on this platform")
    ctx = multiprocessing.get_context("fork")
    queue = ctx.Queue()
    child = ctx.Process(target=_child, args=(store, key, queue))
    child.start()
    try:
        return queue.get(timeout=60)
    finally:
        child.join(60)


def _child(store, key, queue):
    try:
        queue.put(("ok", store.get(key)))
    except Exception as e:  # noqa: BLE001  (sent to the parent, which checks it)
        queue.put(("error", f"{type(e).__name__}: {e}"))


def test_forked_child_gets_a_new_io_loop():
    """zarrc's I/O loop thread is not copied by fork: the child starts its own
    (os.register_at_fork) and reads through the inherited store."""
    pytest.importorskip("fsspec")
    store = store_from_url(f"memory://zarrc-fork-{uuid.uuid4().hex}", "w")
    store.set("k", b"before fork")
    assert store.get("k") == b"before fork"        # (the parent's loop is running)
    assert _fork_and_get(store, "k") == ("ok", b"before fork")


def test_obstore_in_a_forked_child_fails_fast(s3_server):  # noqa: F811
    """obstore's runtime does not survive fork: the child gets a StoreError saying
    so, not a hang."""
    pytest.importorskip("obstore")
    store = store_from_url(f"s3://{s3_server.bucket()}/f", "w", s3_server.options())
    store.set("k", b"v")
    kind, message = _fork_and_get(store, "k")
    assert kind == "error" and "StoreError" in message and "forked" in message and "spawn" in message
