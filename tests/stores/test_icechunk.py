"""Icechunk repositories read and written through zarrc, on local disk and on moto's
S3 server (no mocks): zarrc writes through ``session.store`` and the user commits;
zarr-python reads the commit, and zarrc reads what zarr-python committed, bit for
bit.  Uncommitted changes stay invisible to new sessions; a read-only session refuses
writes; pickling follows Icechunk's rules (read-only and forked sessions pickle, a
writable session does not: a StoreError naming the store)."""

from __future__ import annotations

import pickle
import uuid

import numpy as np
import pytest
from stores.servers import s3_server  # noqa: F401  (fixture)

import zarrc
from zarrc.errors import GroupNotFoundError, ReadOnlyError, StoreError

icechunk = pytest.importorskip("icechunk", reason="icechunk is not installed (test extra, Python 3.11+)")
zarr = pytest.importorskip("zarr", reason="zarr-python is not installed (Python 3.11+)")


@pytest.fixture(params=["local", "s3"])
def storage(request, tmp_path):
    """A new, empty Icechunk storage: a directory, or a prefix of a bucket on moto's S3 server."""
    if request.param == "local":
        return icechunk.local_filesystem_storage(str(tmp_path / "repo"))
    s3 = request.getfixturevalue("s3_server")
    return icechunk.s3_storage(bucket=s3.bucket(), prefix=f"repo-{uuid.uuid4().hex[:8]}", endpoint_url=s3.endpoint,
                               allow_http=True, access_key_id="testing", secret_access_key="testing",
                               region="us-east-1", force_path_style=True)


def _data(shape, dtype):
    rng = np.random.default_rng(7)
    return (rng.standard_normal(shape) * 1000).astype(dtype)


def _same(got, expected, name=""):
    assert got.dtype == expected.dtype and got.shape == expected.shape, name
    assert got.tobytes() == expected.tobytes(), name


def test_zarrc_writes_commit_zarr_python_reads(storage):
    repo = icechunk.Repository.create(storage)
    session = repo.writable_session("main")
    temp, counts = _data((50, 37), "<f4"), np.arange(20 * 18 * 5, dtype="<i8").reshape(20, 18, 5)
    root = zarrc.create_group(session.store, zarr_format=3, attributes={"title": "zarrc in icechunk"})
    a = zarrc.create_array(session.store, name="temp", shape=temp.shape, dtype=temp.dtype, chunks=(16, 10),
                           fill_value=np.nan, attributes={"units": "K"})
    a[...] = temp
    s = root.create_group("grid").create_array("counts", shape=counts.shape, dtype=counts.dtype, chunks=(5, 6, 5),
                                               shards=(10, 18, 5), compressors=[{"name": "zstd"}])
    s[...] = counts
    s[3:14, 2:11, 1] = -counts[3:14, 2:11, 1]           # a partial update of two shards
    counts[3:14, 2:11, 1] *= -1
    # nothing is visible to other sessions before the commit
    assert session.has_uncommitted_changes
    with pytest.raises(GroupNotFoundError):
        zarrc.open_group(repo.readonly_session("main").store, mode="r")
    snapshot = session.commit("zarrc writes")
    assert not session.has_uncommitted_changes

    # zarr-python reads the commit (and a repository opened anew: another process would)
    for reopened in (repo, icechunk.Repository.open(storage)):
        g = zarr.open_group(reopened.readonly_session("main").store, mode="r")
        assert g.attrs["title"] == "zarrc in icechunk" and g["temp"].attrs["units"] == "K"
        _same(g["temp"][...], temp, "temp")
        _same(g["grid/counts"][...], counts, "grid/counts")
        assert g["grid/counts"].shards == (10, 18, 5)
    # zarrc reads it, by branch and by snapshot id
    for ro in (repo.readonly_session("main"), repo.readonly_session(snapshot_id=snapshot)):
        z = zarrc.open_group(ro.store, mode="r")
        assert sorted(z.array_keys()) == ["temp"] and sorted(z.group_keys()) == ["grid"]
        _same(z["temp"][...], temp)
        _same(z["temp"][7:41, 3:30:4], temp[7:41, 3:30:4])
        _same(zarrc.open_array(ro.store, path="grid/counts", mode="r")[...], counts)
        # a read-only session refuses writes (zarrc's ReadOnlyError, before anything is sent)
        with pytest.raises(ReadOnlyError):
            z["temp"][0, 0] = 1
        with pytest.raises(ReadOnlyError):
            zarrc.open_array(ro.store, path="temp", mode="r+")[0, 0] = 1

    # a second commit replaces part of an array; the first snapshot still reads as it was
    session = repo.writable_session("main")
    zarrc.open_array(session.store, path="temp", mode="r+")[:16] = 0
    session.commit("zero the first row of chunks")
    _same(zarr.open_array(repo.readonly_session("main").store, path="temp", mode="r")[:16],
          np.zeros((16, 37), "<f4"))
    _same(zarrc.open_array(repo.readonly_session(snapshot_id=snapshot).store, path="temp", mode="r")[...], temp)


def test_zarr_python_writes_zarrc_reads(storage):
    repo = icechunk.Repository.create(storage)
    session = repo.writable_session("main")
    g = zarr.create_group(session.store, attributes={"by": "zarr-python"})
    cases = {
        "plain": (_data((33, 21), "<f8"), {"chunks": (8, 8)}),
        "sharded": (np.arange(40 * 30, dtype="<u2").reshape(40, 30), {"chunks": (5, 6), "shards": (20, 30)}),
        "nested/ints": (np.arange(1000, dtype="<i4")[::-1].copy(), {"chunks": (100,),
                                                                    "compressors": [zarr.codecs.ZstdCodec()]}),
    }
    for name, (data, kwargs) in cases.items():
        g.create_array(name, shape=data.shape, dtype=data.dtype, **kwargs)[...] = data
    session.commit("zarr-python writes")
    ro = repo.readonly_session("main")
    z = zarrc.open_group(ro.store, mode="r")
    assert z.attrs["by"] == "zarr-python"
    for name, (data, _) in cases.items():
        _same(z[name][...], data, name)
        _same(zarrc.open_array(ro.store, path=name, mode="r")[1:-1], data[1:-1], name)
    # zarrc and zarr-python in one writable session: each sees the other's uncommitted writes
    session = repo.writable_session("main")
    zarrc.open_array(session.store, path="plain", mode="r+")[0] = -1.0
    assert (zarr.open_array(session.store, path="plain")[0] == -1.0).all()
    zarr.open_array(session.store, path="sharded")[0, 0] = 7
    assert zarrc.open_array(session.store, path="sharded", mode="r")[0, 0] == 7


def test_overwrite_and_delete_in_a_session(tmp_path):
    repo = icechunk.Repository.create(icechunk.local_filesystem_storage(str(tmp_path / "repo")))
    session = repo.writable_session("main")
    zarrc.create_array(session.store, name="a", shape=(10,), dtype="i4", chunks=(3,))[...] = np.arange(10)
    session.commit("first")
    session = repo.writable_session("main")
    a = zarrc.create_array(session.store, name="a", shape=(4, 4), dtype="f8", chunks=(2, 2), overwrite=True)
    a[...] = 1.5
    a[:2, :2] = 0.0             # the fill value: the chunk is deleted
    session.commit("overwrite")
    got = zarr.open_array(repo.readonly_session("main").store, path="a", mode="r")
    assert got.shape == (4, 4) and got[...].sum() == 1.5 * 12
    keys = sorted(zarrc.open_group(repo.readonly_session("main").store, mode="r").store.list_prefix("a/c"))
    assert keys == ["a/c/0/1", "a/c/1/0", "a/c/1/1"]


def test_pickling_follows_icechunk(tmp_path):
    repo = icechunk.Repository.create(icechunk.local_filesystem_storage(str(tmp_path / "repo")))
    session = repo.writable_session("main")
    data = np.arange(12 * 12, dtype="<i2").reshape(12, 12)
    arr = zarrc.create_array(session.store, name="x", shape=data.shape, dtype=data.dtype, chunks=(4, 4))
    # a writable session's store refuses to be pickled (Icechunk: only forks are): zarrc's error names it
    with pytest.raises(StoreError, match=r"(?s)cannot pickle.*IcechunkStore.*main.*fork"):
        pickle.dumps(arr)
    session.commit("the array")
    # a fork (of a session without changes) pickles to a worker; the worker's writes come
    # back with the fork, are merged into the session and committed
    session = repo.writable_session("main")
    arr = zarrc.open_array(session.store, path="x", mode="r+")
    fork = session.fork()
    worker = pickle.loads(pickle.dumps(zarrc.open_array(fork.store, path="x", mode="r+")))
    worker[4:, :] = data[4:]
    returned = pickle.loads(pickle.dumps(worker.store.backend.store.session))
    session.merge(returned)
    arr[:4, :] = data[:4]
    session.commit("written by a fork and the session")
    # a read-only session pickles to its description; the clone reads the same bytes
    ro = zarrc.open_array(repo.readonly_session("main").store, path="x", mode="r")
    clone = pickle.loads(pickle.dumps(ro))
    _same(clone[...], data)
    assert clone.store.read_only
    _same(zarr.open_array(repo.readonly_session("main").store, path="x", mode="r")[...], data)
