"""zarrc.api.asynchronous (also zarrc.api.asynchronous): AsyncArray, AsyncGroup and the
async API functions.  The same async code runs against zarr-python's
zarr.api.asynchronous and zarrc's and gives the same results; each library reads
what the other wrote; the event loop keeps running while a large read or write is
in progress; calls gathered at once return the right data.  (asyncio.run in each
test: no pytest-asyncio.)"""

from __future__ import annotations

import asyncio
import inspect
import pickle
import time

import numpy as np
import pytest
import zarrc.api.asynchronous as zca

import zarrc
from zarrc.errors import ArgumentError, ArgumentTypeError, NodeNotFoundError, ReadOnlyError, SelectionError
from zarrc.stores import LocalStore, MemoryStore


def _kind(obj, name):
    """How ``name`` is defined on ``obj``: "coroutine", "asyncgen", "property" (or instance
    attribute), "plain"."""
    try:
        raw = inspect.getattr_static(obj, name)
    except AttributeError:
        return "property"           # (a dataclass field of zarr-python's: an instance attribute)
    fn = getattr(raw, "__func__", raw)
    fn = inspect.unwrap(fn) if callable(fn) else fn       # (zarr-python's deprecated wrappers)
    if inspect.iscoroutinefunction(fn):
        return "coroutine"
    if inspect.isasyncgenfunction(fn):
        return "asyncgen"
    if isinstance(raw, property):
        return "property"
    return "plain"


ARRAY_NAMES = ["open", "getitem", "setitem", "get_orthogonal_selection", "get_mask_selection",
               "get_coordinate_selection", "resize", "append", "update_attributes", "info_complete",
               "nchunks_initialized", "nbytes_stored", "with_config", "shape", "dtype", "chunks",
               "shards", "attrs", "metadata", "store_path", "store", "path", "name", "basename", "ndim",
               "size", "order", "read_only", "nbytes", "nchunks", "cdata_shape", "info", "oindex",
               "vindex", "compressors", "compressor", "filters", "serializer"]
GROUP_NAMES = ["create_hierarchy", "open", "from_store", "getitem", "get", "delitem", "setitem", "contains", "create_group",
               "require_group", "require_groups", "create_array", "require_array", "members", "keys",
               "arrays", "groups", "array_keys", "group_keys", "array_values", "group_values",
               "nmembers", "update_attributes", "tree", "info", "info_complete", "attrs", "metadata",
               "store_path", "store", "path", "name", "basename", "read_only", "zeros", "ones", "full",
               "empty", "zeros_like", "ones_like", "full_like", "empty_like"]


def test_names_are_zarr_pythons_and_of_the_same_kind():
    zarr = pytest.importorskip("zarr")
    import zarr.api.asynchronous as za

    for name in [n for n in za.__all__ if not n.startswith("copy")]:
        assert _kind(zca, name) == _kind(za, name), name
    assert _kind(zca, "create_group") == _kind(za, "create_group") == "coroutine"
    for ours, theirs, names in [(zarrc.AsyncArray, zarr.AsyncArray, ARRAY_NAMES),
                                (zarrc.AsyncGroup, zarr.AsyncGroup, GROUP_NAMES)]:
        for name in names:
            assert _kind(ours, name) == _kind(theirs, name), (ours.__name__, name)
    for name in ["AsyncArray", "AsyncGroup"]:
        assert getattr(zca, name) is getattr(zarrc, name) is getattr(zarrc.api.asynchronous, name)
    from zarrc.api import asynchronous
    assert asynchronous is zca is zarrc.api.asynchronous


async def scenario(lib, store, zarr_format):
    """The same async code for zarr.api.asynchronous and zarrc.api.asynchronous;
    returns what it saw."""
    seen = {}
    root = await lib.open_group(store=store, mode="w", zarr_format=zarr_format, attributes={"title": "t"})
    a = await root.create_array("a", shape=(20, 30), chunks=(8, 7), dtype="int32", fill_value=-1)
    data = np.arange(600, dtype="int32").reshape(20, 30)
    await a.setitem((slice(0, 17), slice(None)), data[:17])
    await a.setitem((19, 3), 7)
    seen["whole"] = await a.getitem(...)
    seen["part"] = await a.getitem((slice(3, 11), slice(5, 29)))
    seen["scalar"] = await a.getitem((2, 4))
    seen["ortho"] = await a.get_orthogonal_selection(([0, 5, 19], [2, 1, 29]))
    seen["oindex"] = await a.oindex.getitem(([1, 3], slice(2, 9)))
    seen["coord"] = await a.get_coordinate_selection(([0, 5, 19], [2, 1, 3]))
    seen["vindex"] = await a.vindex.getitem((np.array([4, 4, 18]), np.array([0, 29, 1])))
    mask = (data % 7) == 0
    seen["mask"] = await a.get_mask_selection(mask)
    seen["nchunks_initialized"] = await a.nchunks_initialized()
    seen["nbytes_stored>0"] = await a.nbytes_stored() > 0
    await a.update_attributes({"units": "m", "n": 3})
    seen["array attrs"] = dict(a.attrs)
    seen["props"] = (a.shape, str(a.dtype), a.chunks, a.shards, a.ndim, a.size, a.nchunks, a.cdata_shape,
                     a.path, a.name, a.basename, a.read_only, a.nbytes)
    await a.resize((24, 30))
    seen["grown"] = await a.getitem(...)
    seen["appended"] = await a.append(np.full((2, 30), 5, dtype="int32"))
    seen["after append"] = await a.getitem(...)
    sub = await root.create_group("sub", attributes={"k": [1, 2]})
    b = await sub.create_array("b", shape=(5,), dtype="float64", chunks=(2,))
    await b.setitem(slice(None), np.linspace(0, 1, 5))
    c = await root.require_array("c", shape=(4,), dtype="uint8")
    seen["c fill"] = await c.getitem(...)
    await root.require_group("sub")
    await root.require_group("other")
    seen["keys"] = sorted([k async for k in root.keys()])  # noqa: SIM118 (an async generator)
    seen["members"] = sorted([(k, type(v).__name__) async for k, v in root.members()])
    seen["deep"] = sorted([k async for k, _ in root.members(max_depth=None)])
    seen["arrays"] = sorted([k async for k, _ in root.arrays()])
    seen["groups"] = sorted([k async for k, _ in root.groups()])
    seen["array_keys"] = sorted([k async for k in root.array_keys()])
    seen["group_keys"] = sorted([k async for k in root.group_keys()])
    seen["array_values"] = sorted([v.name async for v in root.array_values()])
    seen["group_values"] = sorted([v.name async for v in root.group_values()])
    seen["nmembers"] = (await root.nmembers(), await root.nmembers(max_depth=None))
    seen["contains"] = (await root.contains("sub"), await root.contains("sub/b"), await root.contains("zz"))
    got = await root.getitem("sub/b")
    seen["sub/b"] = await got.getitem(...)
    seen["get missing"] = await root.get("nope", "default")
    await root.delitem("other")
    seen["after delitem"] = sorted([k async for k in root.keys()])  # noqa: SIM118 (an async generator)
    await root.update_attributes({"more": True})
    seen["group attrs"] = dict(root.attrs)
    seen["sub attrs"] = dict((await root.getitem("sub")).attrs)
    again = await lib.open_group(store=store, mode="r")
    names = sorted([k async for k in again.keys()])  # noqa: SIM118 (an async generator)
    seen["reopened"] = (names, again.read_only, dict(again.attrs))
    arr = await lib.open_array(store=store, path="a", mode="r")
    seen["open_array"] = (arr.shape, await arr.getitem((slice(0, 2), slice(0, 3))))
    node = await lib.open(store=store, path="sub/b", mode="r")
    seen["open"] = (type(node).__name__, await node.getitem(slice(1, 3)))
    return seen


def _same(left, right):
    assert left.keys() == right.keys()
    for key in left:
        lv, rv = left[key], right[key]
        if isinstance(lv, np.ndarray) or isinstance(rv, np.ndarray):
            np.testing.assert_array_equal(np.asarray(lv), np.asarray(rv), err_msg=key)
            assert np.asarray(lv).dtype == np.asarray(rv).dtype, key
        elif isinstance(lv, tuple) and any(isinstance(v, np.ndarray) for v in lv):
            for x, y in zip(lv, rv):
                np.testing.assert_array_equal(x, y, err_msg=key)
        else:
            assert lv == rv, key


def _names(seen):
    """zarr-python's class names in ``seen`` as zarrc's."""
    seen["members"] = [(k, v) for k, v in seen["members"]]
    return seen


@pytest.mark.parametrize("zarr_format", [2, 3])
def test_same_async_code_gives_the_same_results(tmp_path, zarr_format):
    pytest.importorskip("zarr")
    import zarr.api.asynchronous as za

    theirs = asyncio.run(scenario(za, str(tmp_path / "zarr"), zarr_format))
    ours = asyncio.run(scenario(zca, str(tmp_path / "zarrc"), zarr_format))
    _same(_names(theirs), _names(ours))
    assert [v for _, v in ours["members"]] == ["AsyncArray", "AsyncArray", "AsyncGroup", "AsyncGroup"]


@pytest.mark.parametrize("zarr_format", [2, 3])
def test_each_library_reads_what_the_other_wrote(tmp_path, zarr_format):
    pytest.importorskip("zarr")
    import zarr.api.asynchronous as za

    data = np.random.default_rng(1).standard_normal((40, 50)).astype("float32")

    async def write(lib, path):
        g = await lib.open_group(store=path, mode="w", zarr_format=zarr_format)
        await g.update_attributes({"from": lib.__name__})
        a = await g.create_array("x", shape=data.shape, dtype=data.dtype, chunks=(16, 16),
                                 **({"shards": (32, 32)} if zarr_format == 3 else {}))
        await a.setitem(..., data)
        await a.update_attributes({"scale": 2.5})

    async def read(lib, path):
        g = await lib.open_group(store=path, mode="r")
        a = await g.getitem("x")
        return (dict(g.attrs), dict(a.attrs), a.shape, a.chunks,
                await a.getitem(...), await a.get_orthogonal_selection(([3, 39], slice(None, None, 1))))

    for writer, reader in [(za, zca), (zca, za)]:
        path = str(tmp_path / writer.__name__)
        asyncio.run(write(writer, path))
        gattrs, aattrs, shape, chunks, values, ortho = asyncio.run(read(reader, path))
        assert gattrs == {"from": writer.__name__} and aattrs == {"scale": 2.5}
        assert shape == data.shape and chunks == (16, 16)
        np.testing.assert_array_equal(values, data)
        np.testing.assert_array_equal(ortho, data[[3, 39]])


async def _timed(call):
    """(result, seconds, gaps): ``call`` awaited while a task ticks every 2 ms; gaps
    are the seconds between its ticks."""
    gaps = []
    done = asyncio.Event()

    async def ticker():
        last = time.perf_counter()
        while not done.is_set():
            await asyncio.sleep(0.002)
            now = time.perf_counter()
            gaps.append(now - last)
            last = now

    tick = asyncio.create_task(ticker())
    await asyncio.sleep(0.01)
    start = time.perf_counter()
    result = await call
    took = time.perf_counter() - start
    done.set()
    await tick
    return result, took, gaps


def _long_call(make_array, run, tiles, max_tiles):
    """(array, data, result, seconds, gaps) of ``run(async_array, data)`` timed, the
    data (``tiles`` MiB: tiles x 256 rows of 1024 int32) grown fourfold until the
    call takes over half a second (or reaches ``max_tiles``)."""
    block = np.random.default_rng(0).integers(0, 1000, size=(256, 1024), dtype="int32")
    while True:
        data = np.tile(block, (tiles, 1))
        a = make_array(data)
        result, took, gaps = asyncio.run(_timed(run(a.async_array, data)))
        if took > 0.5 or tiles >= max_tiles:
            return a, data, result, took, gaps
        tiles *= 4


def _loop_ran(label, took, gaps):
    # A blocked loop would show one gap as long as the call: the bound is well
    # below that, and generous (at most 200 ms) for loaded machines.
    assert took > 0.1, f"the {label} took only {took:.3f} s: too short to tell"
    assert max(gaps) < min(0.2, took / 3), f"{label} of {took:.2f} s: the loop stalled {max(gaps):.3f} s"
    assert len(gaps) >= took / 0.05, f"{label} of {took:.2f} s: only {len(gaps)} ticks"


def test_the_event_loop_keeps_running_during_a_long_write():
    # zstd at level 12 compresses slowly (natively, without the GIL)
    def make(data):
        return zarrc.create_array(MemoryStore(), shape=data.shape, dtype=data.dtype, chunks=(1024, 1024),
                                  compressors=[{"name": "zstd", "configuration": {"level": 12}}])

    a, data, _, took, gaps = _long_call(make, lambda aa, data: aa.setitem(..., data), 16, 256)
    np.testing.assert_array_equal(a[...], data)
    _loop_ran("write", took, gaps)


def test_the_event_loop_keeps_running_during_a_long_read(tmp_path):
    def make(data):
        a = zarrc.create_array(LocalStore(str(tmp_path / f"r{data.shape[0]}")), shape=data.shape,
                               dtype=data.dtype, chunks=(1024, 1024),
                               compressors=[{"name": "gzip", "configuration": {"level": 1}}])
        a[...] = data
        return a

    _, data, got, took, gaps = _long_call(make, lambda aa, data: aa.getitem(...), 32, 512)
    np.testing.assert_array_equal(got, data)
    _loop_ran("read", took, gaps)


def test_gathered_reads_and_writes_run_at_once_and_return_the_right_data():
    data = np.arange(64 * 64 * 8, dtype="float64").reshape(64 * 8, 64)
    a = zarrc.create_array(MemoryStore(), shape=data.shape, dtype=data.dtype, chunks=(16, 16))
    aa = zarrc.AsyncArray(a)

    async def run():
        await asyncio.gather(*(aa.setitem(slice(i, i + 64), data[i:i + 64]) for i in range(0, 512, 64)))
        sels = [(slice(i, i + 37), slice(j, j + 20)) for i in range(0, 470, 13) for j in (0, 9, 44)]
        got = await asyncio.gather(*(aa.getitem(s) for s in sels))
        for s, values in zip(sels, got):
            np.testing.assert_array_equal(values, data[s])
        return len(got)

    assert asyncio.run(run()) > 100


def test_async_and_sync_nodes_share_the_array():
    a = zarrc.create_array(MemoryStore(), shape=(10,), dtype="i2", chunks=(4,), attributes={"x": 1})
    aa = a.async_array
    assert isinstance(aa, zarrc.AsyncArray) and a._async_array == aa == zarrc.AsyncArray(a)
    asyncio.run(aa.resize(14))
    assert a.shape == (14,) == aa.shape
    asyncio.run(aa.setitem(slice(10, 14), 9))
    np.testing.assert_array_equal(a[10:], [9, 9, 9, 9])
    assert aa.attrs == {"x": 1} and aa.dtype == np.dtype("i2") and aa.fill_value == 0
    assert pickle.loads(pickle.dumps(aa)).shape == (14,)
    g = zarrc.group(MemoryStore())
    ag = g._async_group
    assert isinstance(ag, zarrc.AsyncGroup) and ag.path == ""
    sub = asyncio.run(ag.create_group("s"))
    assert "s" in g and isinstance(sub, zarrc.AsyncGroup)


def test_classmethods_open_and_from_store(tmp_path):
    async def run():
        g = await zarrc.AsyncGroup.from_store(str(tmp_path / "g"), attributes={"a": 1})
        with pytest.raises(zarrc.errors.ContainsNodeError):
            await zarrc.AsyncGroup.from_store(str(tmp_path / "g"))
        again = await zarrc.AsyncGroup.open(str(tmp_path / "g"))
        assert again.attrs == {"a": 1} and g == again
        with pytest.raises(NodeNotFoundError):
            await zarrc.AsyncGroup.open(str(tmp_path / "g"), zarr_format=2)
        await zarrc.api.asynchronous.create_array(str(tmp_path / "a"), shape=(3,), dtype="u1", fill_value=4)
        a = await zarrc.AsyncArray.open(str(tmp_path / "a"))
        assert not a.read_only
        await a.setitem(0, 1)
        return await a.getitem(...)

    np.testing.assert_array_equal(asyncio.run(run()), [1, 4, 4])


def test_bad_calls_raise_zarrcs_errors_and_change_nothing():
    a = zarrc.create_array(MemoryStore(), shape=(6,), dtype="i4", chunks=(3,))
    a[:] = np.arange(6)
    aa = a.async_array
    with pytest.raises(ArgumentTypeError, match="AsyncArray wraps a zarrc Array"):
        zarrc.AsyncArray(np.zeros(3))
    with pytest.raises(ArgumentTypeError, match="AsyncGroup wraps a zarrc Group"):
        zarrc.AsyncGroup(a)
    with pytest.raises(SelectionError):
        asyncio.run(aa.getitem(7))
    with pytest.raises(ArgumentError, match="delete_outside_chunks=False"):
        asyncio.run(aa.resize(3, delete_outside_chunks=False))
    assert a.shape == (6,)
    ro = zarrc.open_array(a.store, mode="r").async_array
    with pytest.raises(ReadOnlyError):
        asyncio.run(ro.setitem(0, 5))
    np.testing.assert_array_equal(asyncio.run(ro.getitem(...)), np.arange(6))


def test_api_functions_take_and_give_async_nodes(tmp_path):
    async def run():
        src = await zca.array(np.arange(12, dtype="u2").reshape(3, 4), chunks=(2, 2))
        assert isinstance(src, zarrc.AsyncArray)
        z = await zca.zeros_like(src)
        assert z.shape == (3, 4) and z.dtype == np.dtype("u2")
        copy = await zca.from_array(str(tmp_path / "c"), data=src)
        np.testing.assert_array_equal(await copy.getitem(...), np.arange(12).reshape(3, 4))
        await zca.save_group(str(tmp_path / "s"), x=np.ones(3), y=np.arange(2))
        loaded = await zca.load(store=str(tmp_path / "s"))
        assert sorted(loaded) == ["x", "y"]
        g = await zca.consolidate_metadata(str(tmp_path / "s"))
        assert isinstance(g, zarrc.AsyncGroup) and g._group.consolidated
        created = [(p, type(n).__name__) async for p, n in zca.create_hierarchy(
            store=MemoryStore(), nodes={"a/b": {"zarr_format": 3, "node_type": "group", "attributes": {}}})]
        return created

    assert asyncio.run(run()) == [("", "AsyncGroup"), ("a", "AsyncGroup"), ("a/b", "AsyncGroup")]


def test_group_create_hierarchy_as_zarr_pythons():
    zarr = pytest.importorskip("zarr")
    import zarr.api.asynchronous as za
    from zarr.core.group import GroupMetadata

    async def run(lib, store):
        root = await lib.open_group(store=store, mode="w")
        top = await root.create_group("top")
        nodes = {"a/b": GroupMetadata(attributes={"q": 1}), "c": GroupMetadata()}
        made = sorted([(k, type(v).__name__, v.path, dict(v.attrs)) async for k, v in top.create_hierarchy(nodes)])
        listed = sorted([k async for k, _ in top.members(max_depth=None)])
        return made, listed

    assert asyncio.run(run(za, zarr.storage.MemoryStore())) == asyncio.run(run(zca, MemoryStore())) == (
        [("a", "AsyncGroup", "top/a", {}), ("a/b", "AsyncGroup", "top/a/b", {"q": 1}),
         ("c", "AsyncGroup", "top/c", {})], ["a", "a/b", "c"])
