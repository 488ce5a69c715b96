"""Reads from stores whose reads wait on a network (``Store.fetch_window``): the
chunks are fetched in windows, the next window while the previous one decodes,
with the same results and errors as one batch."""

from __future__ import annotations

import threading

import numpy as np
import pytest

import zarrc
from zarrc.errors import CodecError
from zarrc.stores.base import Fetched
from zarrc.stores.memory import MemoryStore


class WindowedStore(MemoryStore):
    """A memory store that asks the engine for windows of 3 keys and records, per
    ``fetch_many`` call, its keys and how many windows were being decoded then."""

    fetch_window = 3

    def __init__(self) -> None:
        super().__init__()
        self.calls: list[list[str]] = []
        self.lock = threading.Lock()

    def fetch_many(self, keys):
        with self.lock:
            self.calls.append(list(keys))
        return Fetched(self.get_many(keys))


@pytest.fixture
def stored():
    store = WindowedStore()
    data = np.arange(20 * 30, dtype="f4").reshape(20, 30)
    a = zarrc.create_array(store, shape=data.shape, dtype="f4", chunks=(4, 7),
                           compressors=zarrc.codecs.Blosc(cname="lz4"), fill_value=-1)
    a[...] = data
    return store, data


@pytest.mark.parametrize("selection", [np.s_[...], np.s_[3:17, 5:29:2], np.s_[7, :], np.s_[::3, 4]])
def test_windows_give_the_same_values(stored, selection):
    store, data = stored
    store.calls.clear()
    a = zarrc.open_array(store, mode="r")
    np.testing.assert_array_equal(a[selection], data[selection])
    np.testing.assert_array_equal(a.oindex[[0, 19, 5], [29, 0]], data[np.ix_([0, 19, 5], [29, 0])])


def test_every_key_is_fetched_once_in_windows(stored):
    store, data = stored
    store.calls.clear()
    zarrc.open_array(store, mode="r")[...]
    keys = [k for call in store.calls for k in call]
    assert len(keys) == len(set(keys)) == 5 * 5            # 5 x 5 chunks
    assert all(len(call) <= 3 for call in store.calls) and len(store.calls) == 9


def test_missing_chunks_read_as_fill(stored):
    store, data = stored
    for key in [k for k in store.list() if k.startswith("c/")][::2]:
        store.delete(key)
    a = zarrc.open_array(store, mode="r")
    got = a[...]
    assert ((got == data) | (got == -1)).all() and (got == -1).any()


def test_a_damaged_chunk_in_a_later_window_is_named(stored):
    store, _ = stored
    store.set("c/4/4", b"\x02\x01\x21\x04" + b"\xff" * 30)          # a bad blosc header
    with pytest.raises(CodecError, match="c/4/4"):
        zarrc.open_array(store, mode="r")[...]


# -- sharded arrays: the shards in parts, the next parts fetched while one decodes --

@pytest.fixture
def sharded(monkeypatch):
    """A sharded array (5 x 3 shards of 2 x 3 inner chunks) on a WindowedStore, read
    in parts of two inner chunks' bytes (so each part is one shard)."""
    from zarrc.engine.sharding import reads

    monkeypatch.setattr(reads, "PART_BYTES", 2 * 4 * 7 * 4)
    store = WindowedStore()
    data = np.arange(40 * 63, dtype="f4").reshape(40, 63)
    a = zarrc.create_array(store, shape=data.shape, dtype="f4", chunks=(4, 7), shards=(8, 21),
                           compressors=zarrc.codecs.Blosc(cname="lz4"), fill_value=-1)
    a[...] = data
    return store, data


@pytest.mark.parametrize("selection", [np.s_[...], np.s_[3:37, 5:60:2], np.s_[7, :], np.s_[::3, 4]])
def test_shards_in_parts_give_the_same_values(sharded, selection):
    store, data = sharded
    a = zarrc.open_array(store, mode="r")
    np.testing.assert_array_equal(a[selection], data[selection])
    np.testing.assert_array_equal(a.oindex[[0, 39, 5], [62, 0]], data[np.ix_([0, 39, 5], [62, 0])])


def test_parts_overlap_with_decoding(sharded, monkeypatch):
    """Two parts are fetched at once (AHEAD_BYTES: two parts' worth), and the third
    is fetched while the first decodes: each waits (up to 10 s) for the other to have
    started, which only happens if they run at the same time."""
    from zarrc.engine.sharding import reads

    monkeypatch.setattr(reads, "AHEAD_BYTES", 2 * reads.PART_BYTES)
    store, data = sharded
    started: list[int] = []
    second, third = threading.Event(), threading.Event()
    waits: list[bool] = []
    real_fetch, real_run = reads._fetch_part, reads.b.run_batch

    def fetch(arr, coords, pinned, *rest):
        with store.lock:
            n = len(started)
            started.append(n)
        (second if n == 1 else third if n == 2 else threading.Event()).set()
        if n == 0:
            waits.append(second.wait(10))
        return real_fetch(arr, coords, pinned, *rest)

    def run(batch, n, *rest):
        if len(waits) == 1:
            waits.append(third.wait(10))
        return real_run(batch, n, *rest)

    monkeypatch.setattr(reads, "_fetch_part", fetch)
    monkeypatch.setattr(reads.b, "run_batch", run)
    np.testing.assert_array_equal(zarrc.open_array(store, mode="r")[...], data)
    assert waits == [True, True] and len(started) == 15


def test_parts_ahead_fill_the_byte_budget_and_decode_as_they_come(sharded, monkeypatch):
    """As many parts are fetched ahead as AHEAD_BYTES holds (here 5 of the 15), and
    a part fetched decodes before the parts ahead of it that are still being fetched."""
    from zarrc.engine.sharding import reads

    monkeypatch.setattr(reads, "AHEAD_BYTES", 5 * reads.PART_BYTES)
    store, data = sharded
    started: list[int] = []
    decoded: list[int] = []
    first_late = threading.Event()
    real_fetch, real_run = reads._fetch_part, reads.b.run_batch
    late_ahead: list[int] = []

    def fetch(arr, coords, pinned, *rest):
        with store.lock:
            n = len(started)
            started.append(n)
        if n == 0:             # (the first part comes last of the first five)
            late_ahead.append(first_late.wait(10))
        return real_fetch(arr, coords, pinned, *rest)

    def run(batch, n, *rest):
        decoded.append(len(decoded))
        if len(decoded) == 4:
            first_late.set()
        return real_run(batch, n, *rest)

    monkeypatch.setattr(reads, "_fetch_part", fetch)
    monkeypatch.setattr(reads.b, "run_batch", run)
    np.testing.assert_array_equal(zarrc.open_array(store, mode="r")[...], data)
    assert late_ahead == [True] and len(started) == len(decoded) == 15


def test_a_damaged_shard_in_a_later_part_is_named(sharded):
    store, data = sharded
    store.set("c/4/2", b"\xff" * 64)                          # (shorter than its index: damaged)
    with pytest.raises(CodecError, match="c/4/2"):
        zarrc.open_array(store, mode="r")[...]
    np.testing.assert_array_equal(zarrc.open_array(store, mode="r")[:32], data[:32])


# -- rectilinear grids: the whole grid's chunks in windows, as a regular grid's --

@pytest.mark.parametrize("sharded", [False, True])
def test_a_rectilinear_grid_streams_in_windows(sharded, monkeypatch):
    """Every chunk fetched once, in windows of at most 3 keys (unsharded), or the
    shards in parts (sharded), with every selection kind equal to numpy's; a damaged
    chunk of a later window is named."""
    from zarrc.engine.sharding import reads

    monkeypatch.setattr(reads, "PART_BYTES", 2 * 4 * 3 * 4)
    parts = []
    fetch_part = reads._fetch_part
    monkeypatch.setattr(reads, "_fetch_part", lambda arr, coords, *rest: parts.append(len(coords)) or
                        fetch_part(arr, coords, *rest))
    store = WindowedStore()
    data = np.arange(40 * 30, dtype="f4").reshape(40, 30)
    layout = ({"chunks": (4, 3), "shards": [[8, 4, 12, 16], [6, 24]]} if sharded else
              {"chunks": [[3, 5, 12, 20], [7, 7, 16]]})
    a = zarrc.create_array(store, shape=data.shape, dtype="f4", compressors=zarrc.codecs.Blosc(cname="lz4"),
                           fill_value=-1, **layout)
    a[...] = data
    store.calls.clear()
    b = zarrc.open_array(store, mode="r")
    np.testing.assert_array_equal(b[...], data)
    keys = [k for call in store.calls for k in call]
    if not sharded:
        assert len(keys) == len(set(keys)) == 4 * 3 and len(store.calls) == 4
        assert all(len(call) <= 3 for call in store.calls)
    else:        # (each of the 8 shards a part of its own; 10 x 10 inner chunks)
        assert sum(parts) == 10 * 10 and len(parts) == 8
    rng = np.random.default_rng(2)
    pts = (rng.integers(0, 40, 30), rng.integers(0, 30, 30))
    np.testing.assert_array_equal(b[3:37, 2:29:2], data[3:37, 2:29:2])
    np.testing.assert_array_equal(b.oindex[[0, 39, 8], [29, 0, 7]], data[np.ix_([0, 39, 8], [29, 0, 7])])
    np.testing.assert_array_equal(b.vindex[pts], data[pts])
    np.testing.assert_array_equal(b.vindex[data % 7 == 0], data[data % 7 == 0])
    if not sharded:
        store.set("c/3/2", b"\x02\x01\x21\x04" + b"\xff" * 30)          # a bad blosc header
        with pytest.raises(CodecError, match="c/3/2"):
            zarrc.open_array(store, mode="r")[...]


def test_a_damaged_chunk_in_a_later_window_leaves_out_partly_written(stored):
    """Windows decode straight into ``out``: those before the damaged chunk's are
    there, and the error says so (docs/guarantees.md)."""
    store, data = stored
    store.set("c/4/4", b"\x02\x01\x21\x04" + b"\xff" * 30)
    out = np.full(data.shape, -7, "f4")
    with zarrc.config.set(threads=1), pytest.raises(CodecError, match="c/4/4") as info:
        zarrc.open_array(store, mode="r").get_basic_selection(..., out=out)
    assert info.value.destination_partly_written is True
    np.testing.assert_array_equal(out[:4], data[:4])              # the first window's chunks
    assert (out[16:, 28:] == -7).all()                            # the damaged chunk's place
