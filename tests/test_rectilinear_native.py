"""Rectilinear chunk grids read and written through the whole grid in the kernels
(engine/rectilinear.ShapeChains): the planners' boundary search (plan.pyx
plan_basic / plan_points with ``bounds``) against zarrc.core.indexing's projection
on the grid's Edges; every selection kind against numpy on plain, run-length and
irregular grids, on a store of files (the one-call BasicReader) and in memory; grids
whose last edge ends past the array (a shrunk array); errors naming the chunk key.  Sharded rectilinear arrays (the sharded
strategy over the whole grid) are compared with numpy alike."""

from __future__ import annotations

import numpy as np
import pytest
from helpers import partly_written, write_each_kind

import zarrc
from zarrc._kernels import plan as kplan
from zarrc.core import indexing
from zarrc.core.chunk_grid import Edges
from zarrc.engine.rectilinear import RectilinearStrategy
from zarrc.errors import CodecError

GRIDS = {
    "plain": ((60, 44), [[5, 25, 30], [7, 7, 20, 10]]),
    "run-length": ((96, 30), [[10] * 8 + [16], [5, 5, 5, 15]]),
    "irregular": ((120, 17, 12), [[3, 10, 11, 9, 50, 17, 20], 5, [2, 2, 5, 3]]),
    "one dimension": ((75,), [[1, 2, 3, 4, 5, 60]]),
}
ZSTD = [{"name": "zstd", "configuration": {"level": 1}}]


def _make(store, grid, compressors, fill=-7):
    shape, chunks = GRIDS[grid]
    a = zarrc.create_array(store, shape=shape, chunks=chunks, dtype="i4", fill_value=fill,
                           compressors=compressors)
    data = np.arange(int(np.prod(shape)), dtype="i4").reshape(shape)
    a[...] = data
    return a, data


def _selections(rng, shape, n=40):
    sels = [..., (), 0, -1, (Ellipsis, 1 % shape[-1])]
    for _ in range(n):
        sel = []
        for size in shape:
            r = rng.integers(0, 4)
            if r == 0:
                sel.append(int(rng.integers(-size, size)))
            else:
                lo, hi = sorted(int(x) for x in rng.integers(0, size + 1, 2))
                sel.append(slice(lo, hi, int(rng.integers(1, 6)) if r == 3 else None))
        sels.append(tuple(sel))
    return sels


@pytest.mark.parametrize("grid", list(GRIDS))
def test_kernel_plans_on_the_boundaries_as_indexing_does(grid):
    shape, chunks = GRIDS[grid]
    dims = tuple(Edges(c, n) if isinstance(c, list) else c for c, n in zip(chunks, shape))
    bounds = tuple(d.offsets if isinstance(d, Edges) else None for d in dims)
    lengths = tuple(1 if isinstance(d, Edges) else d for d in dims)
    rng = np.random.default_rng(3)
    for sel in _selections(rng, shape, 100)[2:]:
        planned = kplan.plan_basic(sel, shape, lengths, bounds)
        projections, out_shape = indexing.plan(sel, shape, dims)
        table, _, _, native_shape, dropped = planned
        assert native_shape == out_shape
        rows = np.concatenate([np.asarray(p.table, np.int64).reshape(-1, indexing.PROJECTION_COLS)
                               for p in projections])
        np.testing.assert_array_equal(table[:, :indexing.PROJECTION_COLS], rows, err_msg=str(sel))
        full = np.concatenate([np.asarray(p.full, bool) for p in projections])
        np.testing.assert_array_equal(table[:, kplan.COL_FULL].astype(bool), full, err_msg=str(sel))
        assert dropped == tuple(p.dropped for p in projections)
    # points: each chunk's local indices are in the chunk's own shape
    idx = [rng.integers(0, n, 200) for n in shape]
    table, local, out, _, coords = kplan.plan_points(idx, shape, lengths, bounds)
    for t, c in enumerate(coords):
        row = table[t]
        lo = [d.offsets[k] if isinstance(d, Edges) else k * d for d, k in zip(dims, c)]
        edge = [d.edges[k] if isinstance(d, Edges) else d for d, k in zip(dims, c)]
        at = out[row[kplan.COL_IDX]:row[kplan.COL_IDX] + row[kplan.COL_COUNT]]
        pts = np.stack([i[at] for i in idx], axis=1) - lo
        np.testing.assert_array_equal(local[row[kplan.COL_IDX]:row[kplan.COL_IDX] + row[kplan.COL_COUNT]],
                                      np.ravel_multi_index(pts.T, edge))


@pytest.mark.parametrize("compressors", [None, ZSTD], ids=["raw", "zstd"])
@pytest.mark.parametrize("on", ["files", "memory"])
@pytest.mark.parametrize("grid", list(GRIDS))
def test_every_selection_kind_through_the_whole_grid(tmp_path, grid, on, compressors):
    store = str(tmp_path / "a") if on == "files" else {}
    a, data = _make(store, grid, compressors)
    strategy = a._engine
    assert strategy.shapes is not None
    assert (strategy.reader is not None) == (on == "files")
    shape = data.shape
    rng = np.random.default_rng(11)
    for sel in _selections(rng, shape):
        np.testing.assert_array_equal(a[sel], data[sel], err_msg=str(sel))
        out = np.full(data[sel].shape, 99, "i4")
        np.testing.assert_array_equal(a.get_basic_selection(sel, out=out), data[sel])
    for _ in range(20):
        sel = tuple(np.sort(rng.choice(n, int(rng.integers(1, n + 1)), replace=False)) for n in shape)
        np.testing.assert_array_equal(a.oindex[sel], data[np.ix_(*sel)])
        pts = tuple(rng.integers(-n, n, 60) for n in shape)
        np.testing.assert_array_equal(a.vindex[pts], data[pts])
        mask = rng.random(shape) < 0.05
        np.testing.assert_array_equal(a.get_mask_selection(mask), data[mask])
    np.testing.assert_array_equal(a.blocks[(1,) * len(shape)],
                                  data[tuple(slice(c[0], c[0] + c[1]) if isinstance(c, list) else slice(c, 2 * c)
                                             for c in GRIDS[grid][1])])
    # writes of each kind, then the whole array
    for _ in range(12):
        write_each_kind(a, data, rng, -1000, 0)
    np.testing.assert_array_equal(a[...], data)


def test_a_box_is_one_native_call(tmp_path, monkeypatch):
    a, data = _make(str(tmp_path / "a"), "irregular", ZSTD)

    def general(self, selection):
        raise AssertionError("general path")
    monkeypatch.setattr(RectilinearStrategy, "read_general", general)
    monkeypatch.setattr(RectilinearStrategy, "read_into", general)
    for sel in [..., (slice(2, 100), 3, slice(1, 11)), (slice(None, None, 3), slice(4, 5), slice(None, None, 2))]:
        np.testing.assert_array_equal(a[sel], data[sel])


def test_a_box_of_rectilinear_shards_is_one_native_call(tmp_path, monkeypatch):
    """Ints and slices of a rectilinear grid's shard files: the BasicReader locates
    each inner chunk's shard by a boundary search (``shard_starts``), in one call,
    also with shards missing and a last shard ending past the array."""
    from zarrc.engine.sharding.strategy import ShardedStrategy

    shape = (70, 33, 5)
    a = zarrc.create_array(str(tmp_path / "s"), shape=(72, 36, 5), chunks=(4, 3, 5), dtype="i4",
                           shards=[[8, 32, 4, 28], [12, 24], 5], fill_value=-1, compressors=ZSTD)
    a.resize(shape)
    data = np.arange(np.prod(shape), dtype="i4").reshape(shape)
    a[...] = data
    a[40:44, :12] = -1                        # shard (2, 0): all fill value, not stored
    data[40:44, :12] = -1

    def general(self, *args):
        raise AssertionError("general path")
    monkeypatch.setattr(ShardedStrategy, "read", general)
    monkeypatch.setattr(ShardedStrategy, "read_into", general)
    b = zarrc.open_array(str(tmp_path / "s"))
    assert not (tmp_path / "s" / "c" / "2" / "0" / "0").exists()
    rng = np.random.default_rng(4)
    for sel in [..., 41, (slice(5, 69, 3), 30), (slice(None), slice(10, 14), slice(1, 4))] + [
            tuple(slice(int(lo), int(lo) + int(rng.integers(1, n - lo + 1))) for lo, n in
                  zip(rng.integers(0, shape, 3), shape)) for _ in range(30)]:
        np.testing.assert_array_equal(b[sel], data[sel], err_msg=str(sel))


def test_missing_chunks_fill_and_fill_chunks_are_deleted(tmp_path):
    root = tmp_path / "a"
    a = zarrc.create_array(str(root), shape=(60, 44), chunks=GRIDS["plain"][1], dtype="i4", fill_value=-1)
    a[0:5, 7:14] = 3
    want = np.full((60, 44), -1, "i4")
    want[0:5, 7:14] = 3
    np.testing.assert_array_equal(a[...], want)
    np.testing.assert_array_equal(a[2:40, 3:30], want[2:40, 3:30])
    np.testing.assert_array_equal(a.vindex[[0, 4, 59], [7, 13, 43]], [3, 3, -1])
    assert sorted(p.name for p in (root / "c" / "0").iterdir()) == ["1"]
    a[0:5, 7:14] = -1
    assert not (root / "c" / "0" / "1").exists()


@pytest.mark.parametrize("on", ["files", "memory"])
def test_edges_ending_past_the_array(tmp_path, on):
    """A shrunk array keeps its edges: the last chunk of a dimension is stored whole,
    of its own edge, though the array ends inside it."""
    store = str(tmp_path / "a") if on == "files" else {}
    a, data = _make(store, "irregular", ZSTD)
    a.resize((100, 15, 10))
    b = zarrc.open_array(store, mode="r+")
    data = data[:100, :15, :10].copy()
    assert b.metadata.chunk_edges[0][-2:] == (17, 20)
    np.testing.assert_array_equal(b[...], data)
    np.testing.assert_array_equal(b[95:, 13:, 8:], data[95:, 13:, 8:])
    np.testing.assert_array_equal(b.vindex[[99, 0], [14, 0], [9, 0]], data[[99, 0], [14, 0], [9, 0]])
    np.testing.assert_array_equal(b.get_mask_selection(data > 5000), data[data > 5000])
    b[90:, 10:, 7:] = -3
    data[90:, 10:, 7:] = -3
    b.vindex[[99], [14], [9]] = 12
    data[99, 14, 9] = 12
    np.testing.assert_array_equal(zarrc.open_array(store, mode="r")[...], data)


def test_a_corrupt_chunk_is_named(tmp_path):
    a, data = _make(str(tmp_path / "a"), "plain", ZSTD)
    (tmp_path / "a" / "c" / "1" / "2").write_bytes(b"not zstd")
    for read in (lambda: a[...], lambda: a[:, 10:30], lambda: a.oindex[[6, 7], [15, 30]],
                 lambda: a.vindex[[6], [15]]):
        with pytest.raises(CodecError, match="chunk c/1/2 of"):
            read()
    np.testing.assert_array_equal(a[:5], data[:5])


def test_sharded_rectilinear_every_kind(tmp_path):
    shape = (60, 48, 5)
    a = zarrc.create_array(str(tmp_path / "s"), shape=shape, chunks=(4, 12, 5), dtype="i4",
                           shards=[[20, 16, 24], [24, 12, 12], 5], fill_value=-1, compressors=ZSTD)
    data = np.arange(np.prod(shape), dtype="i4").reshape(shape)
    a[...] = data
    rng = np.random.default_rng(5)
    for sel in _selections(rng, shape, 20):
        np.testing.assert_array_equal(a[sel], data[sel], err_msg=str(sel))
    sel = (np.array([0, 19, 20, 59]), slice(None, None, 5), [4])
    np.testing.assert_array_equal(a.oindex[sel], data[np.ix_(sel[0], np.arange(48)[::5], [4])])
    pts = tuple(rng.integers(0, n, 40) for n in shape)
    np.testing.assert_array_equal(a.vindex[pts], data[pts])
    a.vindex[pts] = 0
    data[pts] = 0
    np.testing.assert_array_equal(a[...], data)


def test_sharded_rectilinear_writes_lock_the_shards_written_in_part(tmp_path):
    """The stored keys a write covers only in part (engine.locked.stored_coords) are
    the rectilinear grid's shards, found by a boundary search: for slices, lists and
    points; shards wholly written (up to the array's end) are not."""
    a = zarrc.create_array(str(tmp_path / "s"), shape=(60, 50), chunks=(4, 10), dtype="i4",
                           shards=[[20, 16, 24], [20, 30]])
    a.resize((60, 40))              # (the last column of shards now ends past the array)

    def partial(sel, points=False):
        return partly_written(a, sel, points)

    assert partial(np.s_[20:36, :]) == set()                       # a whole row of shards
    assert partial(np.s_[20:36, 20:]) == set()                     # (1, 1) whole up to the array's end
    assert partial(np.s_[20:35, 20:]) == {(1, 1)}
    assert partial(np.s_[0:24, 0:20]) == {(1, 0)}
    assert partial(np.s_[[0, 37], 5]) == {(0, 0), (2, 0)}
    assert partial((np.array([19, 20, 59]), np.array([0, 39, 39])), points=True) == {(0, 0), (1, 1), (2, 1)}
    a[:] = 1
    a[19:21, 15:25] = 2                                               # four shards in part
    want = np.ones((60, 40), "i4")
    want[19:21, 15:25] = 2
    np.testing.assert_array_equal(zarrc.open_array(str(tmp_path / "s"))[...], want)


# A grid whose chunks are nearly all of different shapes (24 x 24 edges, 576 shapes):
# every selection is one batch in the kernels, each task with its shape's chain.
MANY = [list(range(1, 25)), list(range(24, 0, -1))]
MANY_SHAPE = (300, 300)


def _many(store, filters=None, compressors=ZSTD):
    a = zarrc.create_array(store, shape=MANY_SHAPE, chunks=MANY, dtype="i4", fill_value=-7,
                           compressors=compressors, filters=filters)
    data = np.arange(np.prod(MANY_SHAPE), dtype="i4").reshape(MANY_SHAPE)
    a[...] = data
    return a, data


@pytest.fixture
def batches(monkeypatch):
    """The read and write batches the engine makes, by kind."""
    from zarrc.engine import native, rectilinear
    made = {"read": 0, "write": 0}

    def counting(module, name, kind):
        cls = getattr(module, name)

        def make(*args, **kwargs):
            made[kind] += 1
            return cls(*args, **kwargs)
        monkeypatch.setattr(module, name, make)
    counting(rectilinear, "ReadBatch", "read")
    counting(native, "WriteBatch", "write")
    return made


@pytest.mark.parametrize("on", ["files", "memory"])
@pytest.mark.parametrize("filters", [None, [{"name": "transpose", "configuration": {"order": [1, 0]}}]])
def test_many_shapes_are_one_batch(tmp_path, batches, on, filters):
    a, data = _many(str(tmp_path / "a") if on == "files" else zarrc.storage.MemoryStore(), filters)
    rng = np.random.default_rng(3)
    rows, cols = np.sort(rng.choice(300, 120, replace=False)), np.sort(rng.choice(300, 90, replace=False))
    px, py = rng.integers(0, 300, 2000), rng.integers(0, 300, 2000)
    mask = np.zeros(MANY_SHAPE, bool)
    mask[px, py] = True
    batches.update(read=0, write=0)
    np.testing.assert_array_equal(a.oindex[rows, cols], data[np.ix_(rows, cols)])
    np.testing.assert_array_equal(a.vindex[px, py], data[px, py])
    np.testing.assert_array_equal(a.vindex[mask], data[mask])
    np.testing.assert_array_equal(a.oindex[::7, [0, 1, 299]], data[::7, [0, 1, 299]])
    assert batches["read"] == 4              # (one per selection: not one per chunk shape)
    data[np.ix_(rows, cols)] = -data[np.ix_(rows, cols)]
    a.oindex[rows, cols] = data[np.ix_(rows, cols)]
    data[px, py] = 5
    a.vindex[px, py] = 5
    data[mask] += 1
    a.vindex[mask] = data[mask]
    data[10:290, 3:297] = 11                # (whole chunks and edges, at once)
    a[10:290, 3:297] = 11
    assert batches["write"] == 4
    np.testing.assert_array_equal(a[...], data)
    np.testing.assert_array_equal(a.oindex[rows, cols], data[np.ix_(rows, cols)])


def test_many_shapes_a_corrupt_chunk_is_named(tmp_path):
    a, data = _many(str(tmp_path / "a"))
    (tmp_path / "a" / "c" / "5" / "4").write_bytes(b"not zstd")     # rows 15..20, cols 90..109
    for read in (lambda: a[...], lambda: a.oindex[np.arange(0, 300, 3), np.arange(0, 300, 2)],
                 lambda: a.vindex[[0, 17, 299], [0, 92, 299]]):
        with pytest.raises(CodecError, match="chunk c/5/4 of"):
            read()
    np.testing.assert_array_equal(a[:15], data[:15])
