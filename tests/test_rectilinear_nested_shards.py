"""Nested sharding over a rectilinear outer grid: the sharded strategy over the
whole grid (engine.prepare: the top ShardLevel's ``offsets``, found by a boundary
search; the levels inside regular, their shapes the codecs' chunk_shape).  Every selection kind read and written against numpy, in
memory and in a directory; resize; a corrupt inner chunk and a damaged index
entry named with the shard's own inner chunk grid."""

from __future__ import annotations

import struct

import numpy as np
import pytest

from helpers import crc32c, partly_written, write_each_kind

import zarrc
from zarrc.engine.sharding.strategy import ShardedStrategy
from zarrc.errors import CodecError

SHAPE = (44, 48)
EDGES = [[8, 12, 20, 4], [12, 6, 30]]      # every edge a multiple of the sub-shards' (4, 6)
LE = {"name": "bytes", "configuration": {"endian": "little"}}
INDEX = [LE, {"name": "crc32c"}]


def sharding(chunk, codecs, location="end"):
    return {"name": "sharding_indexed", "configuration": {
        "chunk_shape": list(chunk), "codecs": codecs, "index_codecs": INDEX, "index_location": location}}


def nested(outer="end", inner="end"):
    """Sub-shards of (4, 6) holding inner chunks of (2, 3), zstd-compressed."""
    return sharding((4, 6), [sharding((2, 3), [LE, {"name": "zstd", "configuration": {"level": 1}}], inner)],
                    outer)


def _make(store, outer="end", inner="end", fill=-1):
    a = zarrc.create_array(store, shape=SHAPE, chunks=EDGES, dtype="i4", fill_value=fill, compressors=None,
                           serializer=nested(outer, inner))
    data = np.arange(np.prod(SHAPE), dtype="i4").reshape(SHAPE)
    a[...] = data
    return a, data


def _store(tmp_path, on):
    return str(tmp_path / "a") if on == "files" else zarrc.storage.MemoryStore()


@pytest.mark.parametrize("on", ["files", "memory"])
def test_one_sharded_strategy_over_the_whole_grid(tmp_path, on):
    store = _store(tmp_path, on)
    a, data = _make(store)
    for arr in (a, zarrc.open_array(store)):
        assert type(arr._engine) is ShardedStrategy
        top, middle = arr._chunked.levels
        assert [o.tolist() for o in top.offsets] == [[0, 8, 20, 40, 44], [0, 12, 18, 48]]
        assert middle.offsets is None and middle.shard_shape == (4, 6) and middle.inner_shape == (2, 3)
        assert arr._chunked.chunks == (2, 3)
        np.testing.assert_array_equal(arr[...], data)


@pytest.mark.parametrize("on", ["files", "memory"])
@pytest.mark.parametrize(("outer", "inner"), [("end", "end"), ("start", "end"), ("end", "start")])
def test_every_selection_kind(tmp_path, on, outer, inner):
    a, data = _make(_store(tmp_path, on), outer, inner)
    rng = np.random.default_rng(7)
    for _ in range(15):
        lo = [int(rng.integers(0, n)) for n in SHAPE]
        box = tuple(slice(x, int(rng.integers(x, n)) + 1, int(rng.integers(1, 4))) for x, n in zip(lo, SHAPE))
        np.testing.assert_array_equal(a[box], data[box], err_msg=str(box))
        sel = tuple(np.sort(rng.choice(n, int(rng.integers(1, n + 1)), replace=False)) for n in SHAPE)
        np.testing.assert_array_equal(a.oindex[sel], data[np.ix_(*sel)])
        pts = tuple(rng.integers(-n, n, 50) for n in SHAPE)
        np.testing.assert_array_equal(a.vindex[pts], data[pts])
        mask = rng.random(SHAPE) < 0.05
        np.testing.assert_array_equal(a.get_mask_selection(mask), data[mask])
    np.testing.assert_array_equal(a[19, 17], data[19, 17])
    np.testing.assert_array_equal(a.blocks[1, 1], data[8:20, 12:18])     # (blocks: the shards)
    for _ in range(10):
        write_each_kind(a, data, rng, -1000, -2)
        np.testing.assert_array_equal(a[...], data)
    np.testing.assert_array_equal(zarrc.open_array(a.store)[...], data)


def test_whole_shards_written_and_emptied(tmp_path):
    a, data = _make(str(tmp_path / "a"))
    a[8:20, 12:18] = -1                      # shard (1, 1), whole: all fill, deleted
    data[8:20, 12:18] = -1
    assert not (tmp_path / "a" / "c" / "1" / "1").exists()
    a[20:40, 18:48] = 3                      # shard (2, 2), whole, the largest
    data[20:40, 18:48] = 3
    a[8:20, 12:18] = 4                       # stored again
    data[8:20, 12:18] = 4
    a[40:44, 0:12] = data[40:44, 0:12] * 2   # shard (3, 0), whole
    data[40:44, 0:12] *= 2
    assert (tmp_path / "a" / "c" / "1" / "1").exists()
    np.testing.assert_array_equal(zarrc.open_array(str(tmp_path / "a"))[...], data)


@pytest.mark.parametrize("on", ["files", "memory"])
def test_resize(tmp_path, on):
    store = _store(tmp_path, on)
    a, data = _make(store)
    a.resize((30, 40))                       # cuts shards (2, *) and (*, 2); (3, *) deleted
    np.testing.assert_array_equal(a[...], data[:30, :40])
    a.resize((44, 54))                       # (an edge of 6 added to the columns)
    want = np.full((44, 54), -1, "i4")
    want[:30, :40] = data[:30, :40]
    np.testing.assert_array_equal(a[...], want)
    a[25:44, 35:54] = 9
    want[25:44, 35:54] = 9
    b = zarrc.open_array(store)
    assert type(b._engine) is ShardedStrategy
    np.testing.assert_array_equal(b[...], want)
    np.testing.assert_array_equal(b.vindex[[0, 29, 43], [53, 39, 35]], want[[0, 29, 43], [53, 39, 35]])


def _index(raw: bytes, n: int, at: int = 0, size: int | None = None) -> tuple[np.ndarray, int]:
    """The entries of the index (at the end, crc32c) of the (sub-)shard raw[at:at+size],
    and where the index starts."""
    end = len(raw) if size is None else at + size
    start = end - 16 * n - 4
    return np.frombuffer(raw[start:end - 4], "<u8").reshape(n, 2).copy(), start


def test_a_corrupt_inner_chunk_is_named(tmp_path):
    a, data = _make(str(tmp_path / "a"))
    path = tmp_path / "a" / "c" / "1" / "1"           # rows 8..20, columns 12..18: 3 x 1 sub-shards
    raw = bytearray(path.read_bytes())
    outer, _ = _index(bytes(raw), 3)
    inner, _ = _index(bytes(raw), 4, int(outer[1, 0]), int(outer[1, 1]))   # sub-shard 1: rows 12..16
    off, nb = (int(x) for x in inner[3])              # its inner chunk (1, 1): rows 14..16, columns 15..18
    off += int(outer[1, 0])                           # (offsets in the sub-shard)
    raw[off:off + nb] = b"\0" * nb
    path.write_bytes(bytes(raw))
    b = zarrc.open_array(str(tmp_path / "a"))
    for read in (lambda: b[...], lambda: b[14, 15:18], lambda: b.oindex[[0, 15], [16, 40]],
                 lambda: b.vindex[[15], [17]]):
        with pytest.raises(CodecError, match=r"c/1/1 \(inner chunk \(7, 5\)\)"):
            read()
    np.testing.assert_array_equal(b[:14], data[:14])
    np.testing.assert_array_equal(b.vindex[[14, 13], [14, 17]], data[[14, 13], [14, 17]])


def test_a_damaged_entry_is_named_in_the_shards_own_grid(tmp_path):
    """A damaged sub-shard entry of shard (1, 1) (3 x 1 sub-shards, not the largest
    shard's 5 x 5): its corner named in that shard's grid; a write must wholly
    overwrite it to repair it."""
    a, data = _make(str(tmp_path / "a"))
    path = tmp_path / "a" / "c" / "1" / "1"
    raw = bytearray(path.read_bytes())
    outer, at = _index(bytes(raw), 3)
    outer[1, 1] = 10**6                                 # sub-shard 1 (rows 12..16) ends past the shard
    table = outer.astype("<u8").tobytes()
    raw[at:] = table + struct.pack("<I", crc32c(table))
    path.write_bytes(bytes(raw))
    b = zarrc.open_array(str(tmp_path / "a"))
    for read in (lambda: b[12:16, 12:18], lambda: b.vindex[[13], [13]], lambda: b[...]):
        with pytest.raises(CodecError, match=r"shard c/1/1 of .*inner chunk \(1, 0\)"):
            read()
    np.testing.assert_array_equal(b[8:12, 12:18], data[8:12, 12:18])
    with pytest.raises(CodecError, match="c/1/1"):
        b[8:14, 12] = 0                                # (partly over it: refused)
    b[12:16, 12:18] = 7                                # wholly over it: repaired
    data[12:16, 12:18] = 7
    np.testing.assert_array_equal(zarrc.open_array(str(tmp_path / "a"))[...], data)


def test_a_shard_emptied_where_the_store_cannot_delete(tmp_path):
    """A store that cannot delete keeps an emptied shard as an index of empty entries:
    as many as that shard holds (3 x 1 sub-shards here, not the largest shard's 5 x 5)."""
    store = zarrc.storage.MemoryStore()
    store.supports_deletes = False
    a, data = _make(store)
    a[8:20, 12:18] = -1
    data[8:20, 12:18] = -1
    assert len(store.get("c/1/1")) == 3 * 16 + 4
    np.testing.assert_array_equal(zarrc.open_array(store)[...], data)
    a[10, 13] = 2
    data[10, 13] = 2
    np.testing.assert_array_equal(zarrc.open_array(store)[...], data)


def test_writes_lock_the_shards_written_in_part(tmp_path):
    """engine.locked.stored_coords: the top level's shards a write covers in part,
    found by the boundary search (the inner chunks planned are the innermost)."""
    a, _ = _make(str(tmp_path / "a"))

    def partial(sel, points=False):
        return partly_written(a, sel, points)

    assert partial(np.s_[8:20, :]) == set()                    # a whole row of shards
    assert partial(np.s_[8:20, 12:17]) == {(1, 1)}
    assert partial(np.s_[8:40, 12:18]) == set()
    assert partial(np.s_[[0, 21], 20]) == {(0, 2), (2, 2)}
    assert partial((np.array([7, 8, 43]), np.array([0, 12, 47])), points=True) == {(0, 0), (1, 1), (3, 2)}
