"""dask writing and reading zarrc arrays: ``da.store(x, array, lock=False)`` and
``x.store(...)`` with dask chunks smaller than the zarr chunk (unsharded: different
regions of one chunk) and smaller than the shard (sharded: different inner chunks of
one shard, aligned with the inner chunks or not), on dask's threaded scheduler and on
a ``distributed.LocalCluster`` of two worker processes (the array pickles to its store
and path and reopens in the workers); ``da.from_array(array)`` read back on both.

Every write test compares the whole array with its source: no value may be lost to
two tasks rewriting parts of one chunk or shard at once (issue 31, item 2)."""

from __future__ import annotations

import logging

import numpy as np
import pytest

import zarrc
from zarrc.errors import ReadOnlyError

dask = pytest.importorskip("dask")
da = pytest.importorskip("dask.array")
distributed = pytest.importorskip("distributed")

SHAPE = (256, 256)

# (zarr chunks, shards, dask chunks): every dask chunk is smaller than the chunk or
# shard it falls in, so several tasks write parts of the same one at once.  The first
# two put the whole array in one chunk (256 KiB) or shard: dask hands each worker a
# run of consecutive tasks, which in an array of several chunks can keep the two
# workers in different chunks; here their read-modify-writes overlap in every run
# (seen losing values in each of 16 runs without locks).
LAYOUTS = {
    # unsharded: 64 tasks write different regions of one chunk
    "chunk-regions": ((256, 256), None, (32, 32)),
    # sharded: 64 tasks, one per inner chunk of 32 x 32 of one shard
    "inner-chunks": ((32, 32), (256, 256), (32, 32)),
    # sharded: 77 tasks whose dask chunks cross the edges of inner chunks and of the 4
    # shards of 128 x 128
    "unaligned": ((32, 32), (128, 128), (24, 40)),
}


@pytest.fixture(scope="module")
def client():
    """One LocalCluster for the module: two worker processes of one thread each, on
    the loopback address, closed (workers ended) after the module's last test."""
    with distributed.LocalCluster(n_workers=2, threads_per_worker=1, processes=True,
                                  host="127.0.0.1", dashboard_address=None,
                                  silence_logs=logging.ERROR) as cluster, \
            distributed.Client(cluster, set_as_default=False) as client:
        yield client


def source_data(seed: int) -> np.ndarray:
    """SHAPE int32 values, none of them the fill value 0 (a lost write reads as 0 or as
    an older value, never as the value written)."""
    rng = np.random.default_rng(seed)
    return rng.integers(1, 2**31 - 1, SHAPE, dtype=np.int32)


def new_array(tmp_path, layout: str, old: np.ndarray | None = None) -> zarrc.Array:
    """An array of SHAPE with ``layout``'s chunks and shards in a local directory,
    holding ``old`` if given (else empty)."""
    chunks, shards, _ = LAYOUTS[layout]
    arr = zarrc.create_array(str(tmp_path / f"{layout}.zarr"), shape=SHAPE, dtype="int32",
                             chunks=chunks, shards=shards)
    if old is not None:
        arr[...] = old
    return arr


def lost_values(arrays: dict[str, zarrc.Array], src: np.ndarray) -> dict[str, int]:
    """How many values of each array, reopened from its store, differ from ``src``."""
    return {layout: int(np.count_nonzero(zarrc.open_array(str(arr.store.root), mode="r")[...] != src))
            for layout, arr in arrays.items()}


def assert_none_lost(arrays: dict[str, zarrc.Array], src: np.ndarray) -> None:
    lost = lost_values(arrays, src)
    assert not any(lost.values()), f"values lost (of {src.size} in each array): {lost}"


@pytest.fixture(params=["threads", "processes"])
def run_on(request):
    """compute() keywords for each scheduler in turn: the threaded scheduler with 8
    threads (so that many tasks write parts of one chunk at once), the cluster (made
    when first used).  Each test runs its layouts in one graph: one hand-over to the
    cluster, not one per layout."""
    if request.param == "threads":
        return {"scheduler": "threads", "num_workers": 8}
    return {"scheduler": request.getfixturevalue("client")}


@pytest.mark.parametrize("mode", ["os", "lockfile"])
def test_store_loses_nothing(tmp_path, run_on, mode):
    # each write_locking mode that excludes other processes, set where the writes run
    # (this process for the threaded scheduler, each worker through client.run)
    src = source_data(1)
    arrays = {layout: new_array(tmp_path, layout) for layout in LAYOUTS}
    sources = [da.from_array(src, chunks=LAYOUTS[layout][2]) for layout in arrays]
    scheduler = run_on["scheduler"]
    if scheduler == "threads":
        with zarrc.config.set(write_locking=mode):
            da.store(sources, list(arrays.values()), lock=False, **run_on)
    else:
        before = scheduler.run(zarrc.config.get, "write_locking")
        scheduler.run(zarrc.config.set, write_locking=mode)
        try:
            assert set(scheduler.run(zarrc.config.get, "write_locking").values()) == {mode}
            da.store(sources, list(arrays.values()), lock=False, **run_on)
        finally:
            for worker, old in before.items():
                scheduler.run(zarrc.config.set, write_locking=old, workers=[worker])
    assert_none_lost(arrays, src)


def test_store_method_over_old_data(tmp_path, run_on):
    # x.store(...) over arrays already holding other values: each task rewrites part
    # of a stored chunk or shard; compute=False, then the stores computed together
    old = source_data(2)
    src = source_data(3)
    arrays = {layout: new_array(tmp_path, layout, old) for layout in ("chunk-regions", "unaligned")}
    stores = [da.from_array(src, chunks=LAYOUTS[layout][2]).store(arr, lock=False, compute=False)
              for layout, arr in arrays.items()]
    dask.compute(*stores, **run_on)
    assert_none_lost(arrays, src)


def test_from_array_reads_back(tmp_path, run_on):
    # each layout read with dask chunks smaller than (and across) its chunks: the values,
    # and a computation over them (column sums, in int64), all in one graph
    src = source_data(4)
    xs = [da.from_array(new_array(tmp_path, layout, src), chunks=LAYOUTS[layout][2])
          for layout in LAYOUTS]
    for x in xs:
        assert x.shape == SHAPE and x.dtype == np.int32
    results = dask.compute(*xs, *[x.sum(axis=0, dtype=np.int64) for x in xs], **run_on)
    for values in results[:len(xs)]:
        np.testing.assert_array_equal(values, src)
    for sums in results[len(xs):]:
        np.testing.assert_array_equal(sums, src.sum(axis=0, dtype=np.int64))


def test_read_only_array_reopens_read_only(tmp_path, client):
    # a read-only array pickles as read-only: a worker's write through it is refused
    src = source_data(5)
    new_array(tmp_path, "unaligned", src)
    ro = zarrc.open_array(str(tmp_path / "unaligned.zarr"), mode="r")
    x = da.from_array(ro, chunks=(48, 48))
    np.testing.assert_array_equal(x.compute(scheduler=client), src)
    with pytest.raises(ReadOnlyError, match="read-only"):
        da.store(da.zeros(SHAPE, dtype=np.int32, chunks=(48, 48)), ro, lock=False,
                 scheduler=client)
    np.testing.assert_array_equal(ro[...], src)


def test_config_set_through_client_run(client):
    # zarrc.config pickles as a reference to the module's object: client.run with its
    # bound methods reads and changes each worker's settings, not a copy's
    before = client.run(zarrc.config.get, "threads")
    client.run(zarrc.config.set, threads=7)
    try:
        assert set(client.run(zarrc.config.get, "threads").values()) == {7}
    finally:
        for worker, threads in before.items():
            client.run(zarrc.config.set, threads=threads, workers=[worker])
    assert client.run(zarrc.config.get, "threads") == before


# ---------------------------------------------------------------- reads

READ_LAYOUTS = {
    # (zarr chunks, shards, dask chunks)
    "chunked, dask = zarr chunks": ((64, 48), None, (64, 48)),
    "chunked, dask across chunks": ((64, 48), None, (100, 70)),
    "sharded, dask = shards": ((32, 32), (128, 128), (128, 128)),
    "sharded, dask = inner chunks": ((32, 32), (128, 128), (32, 32)),
    "sharded, dask across shards": ((32, 32), (128, 128), (96, 200)),
}


def float_array(tmp_path, name: str, chunks, shards, src: np.ndarray) -> zarrc.Array:
    arr = zarrc.create_array(str(tmp_path / f"{name}.zarr"), shape=src.shape, dtype=src.dtype,
                             chunks=chunks, shards=shards, compressors={"name": "zstd"})
    arr[...] = src
    return arr


def test_from_array_reductions_match_numpy(tmp_path, run_on):
    # float64 values read through da.from_array with chunks equal to, inside and across
    # the zarr chunks and shards: the values, and mean / std / max / a strided slice's
    # sum per axis, against numpy's on the same values, in one graph per scheduler
    rng = np.random.default_rng(6)
    src = rng.standard_normal((256, 200))
    xs = [da.from_array(float_array(tmp_path, f"r{i}", chunks, shards, src), chunks=dchunks)
          for i, (chunks, shards, dchunks) in enumerate(READ_LAYOUTS.values())]
    for x, (_, _, dchunks) in zip(xs, READ_LAYOUTS.values()):
        assert x.chunksize == tuple(min(c, s) for c, s in zip(dchunks, src.shape))
    wanted = [src, src.mean(), src.std(axis=0), src.max(axis=1), src[3:250:7, ::3].sum(axis=0)]
    graphs = [(x, x.mean(), x.std(axis=0), x.max(axis=1), x[3:250:7, ::3].sum(axis=0)) for x in xs]
    results = dask.compute(*graphs, **run_on)
    for layout, got in zip(READ_LAYOUTS, results):
        for value, want in zip(got, wanted):
            np.testing.assert_allclose(value, want, rtol=1e-12, err_msg=layout)


def test_array_pickles_to_its_store_and_path(tmp_path, client):
    # a zarrc Array sent to a worker as a task argument (not through from_array): the
    # worker reopens it from its store and path and reads, and writes, the same data
    src = source_data(7)
    arr = new_array(tmp_path, "unaligned", src)
    got = client.submit(lambda a: (a.shape, a.dtype.str, a.shards, a[10:200, 5:77]), arr).result()
    assert got[:3] == (arr.shape, arr.dtype.str, arr.shards)
    np.testing.assert_array_equal(got[3], src[10:200, 5:77])

    def write(a):
        a[0:24, 0:40] = -1
    client.submit(write, arr).result()
    src[0:24, 0:40] = -1
    np.testing.assert_array_equal(arr[...], src)


def test_dask_zarr_functions_and_zarrc(tmp_path):
    # dask's from_zarr / to_zarr open their argument with zarr-python: a zarrc Array is
    # refused (docs/dask.md gives da.from_array and x.store instead), while the path of
    # an array zarrc wrote opens there, and zarrc reads what to_zarr wrote
    pytest.importorskip("zarr")
    src = source_data(8)
    arr = new_array(tmp_path, "inner-chunks", src)
    with pytest.raises(TypeError, match="store_like"):
        da.from_zarr(arr)
    with pytest.raises(TypeError, match="store_like"):
        da.to_zarr(da.from_array(src, chunks=(64, 64)), arr)
    np.testing.assert_array_equal(da.from_zarr(str(arr.store.root)).compute(scheduler="threads"), src)
    path = str(tmp_path / "from-dask.zarr")
    da.to_zarr(da.from_array(src, chunks=(64, 64)), path)
    np.testing.assert_array_equal(zarrc.open_array(path, mode="r")[...], src)
