"""A damaged entry of a shard index (half empty, outside the shard's data, its end
past 2^64, overlapping another) fails the reads of its inner chunk only, with a
CodecError naming the shard key, the array and the inner chunk; the shard's other
inner chunks still read, through every read path (the native BasicReader of local
shard files, the general path of other stores, nested sharding).  A write that
wholly overwrites the damaged inner chunk repairs it; any other write of the shard
raises and changes nothing.  A corrupt index checksum still fails the whole shard
(the spec's rule)."""

from __future__ import annotations

import os
import uuid

import numpy as np
import pytest

from helpers import crc32c

import zarrc
from zarrc.errors import ChecksumError, CodecError
from zarrc.stores import LocalStore, MemoryStore, ZipStore

EMPTY = 2**64 - 1
LE = {"name": "bytes", "configuration": {"endian": "little"}}
CRC = {"name": "crc32c"}
INDEX = {"crc": [LE, CRC], "le": [LE]}


def sharding(inner, codecs, location, index) -> dict:
    return {"name": "sharding_indexed", "configuration": {
        "chunk_shape": list(inner), "codecs": codecs, "index_codecs": INDEX[index],
        "index_location": location}}


def index_span(raw: bytes, n: int, location: str, index: str, at: int = 0, size: int | None = None):
    """(first byte, end) of the index of the (sub-)shard in raw[at:at + size]."""
    size = len(raw) - at if size is None else size
    nb = 16 * n + (4 if index == "crc" else 0)
    first = at if location == "start" else at + size - nb
    return first, first + nb


def read_index(raw: bytes, n: int, location: str, index: str, at: int = 0, size: int | None = None):
    first, _ = index_span(raw, n, location, index, at, size)
    return [tuple(int(v) for v in e)
            for e in np.frombuffer(raw[first:first + 16 * n], "<u8").reshape(n, 2)]


def with_index(raw: bytes, entries, location: str, index: str, at: int = 0, size: int | None = None,
               good_crc: bool = True) -> bytes:
    """``raw`` with the (sub-)shard index in raw[at:at + size] replaced by ``entries``."""
    first, end = index_span(raw, len(entries), location, index, at, size)
    pairs = np.asarray(entries, np.uint64).astype("<u8").tobytes()
    if index == "crc":
        crc = crc32c(pairs) ^ (0 if good_crc else 1)
        pairs += crc.to_bytes(4, "little")
    return raw[:first] + pairs + raw[end:]


def damage(entries, kind: str, i: int, data_end: int) -> tuple[list, set]:
    """``entries`` with entry ``i`` damaged as ``kind``: (new entries, the entries
    that are then damaged)."""
    e = list(entries)
    off, nb = e[i]
    j = (i + 1) % len(e)
    if kind == "half-empty-offset":
        e[i] = (EMPTY, nb)
    elif kind == "half-empty-nbytes":
        e[i] = (off, EMPTY)
    elif kind == "offset-past-data":
        e[i] = (data_end + 100, nb)
    elif kind == "nbytes-past-data":
        e[i] = (off, data_end - off + 1)
    elif kind == "wraps":
        e[i] = (2**64 - 8, 16)
    elif kind == "overlap":
        e[i] = (e[j][0] + 4, 8)           # (inside entry j only)
        return e, {i, j}
    return e, {i}


KINDS = ["half-empty-offset", "half-empty-nbytes", "offset-past-data", "nbytes-past-data", "wraps", "overlap"]
SHAPE, SHARD, INNER = (8, 8), (4, 4), (2, 2)
DATA = np.arange(64, dtype="<i4").reshape(SHAPE)
KEY = "a/c/1/0"                  # the damaged shard: rows 4..8, columns 0..4


def inner_box(i: int) -> tuple[slice, slice]:
    """Array region of inner chunk ``i`` of shard KEY."""
    r, c = 4 + 2 * (i // 2), 2 * (i % 2)
    return slice(r, r + 2), slice(c, c + 2)


def build(kind_of_store: str, tmp_path, location: str, index: str, change) -> tuple:
    """An array of DATA in shards of 2x2 inner chunks, whose shard KEY is
    ``change(raw) -> raw``; (store, array opened read only, writable array)."""
    mem = MemoryStore()
    zarrc.create_array(mem, name="a", shape=SHAPE, dtype="<i4", chunks=SHARD, compressors=None,
                       serializer=sharding(INNER, [LE], location, index), fill_value=-1)[...] = DATA
    values = {k: bytes(mem.get(k)) for k in mem.list()}
    values[KEY] = change(values[KEY])
    if kind_of_store == "memory":
        store = MemoryStore()
    elif kind_of_store == "local":
        store = LocalStore(str(tmp_path / f"{uuid.uuid4().hex}.zarr"), mode="w")
    else:
        path = tmp_path / f"{uuid.uuid4().hex}.zip"
        with ZipStore(path, mode="w") as z:
            for k, v in values.items():
                z.set(k, v)
        store = ZipStore(path, mode="r")
        return store, zarrc.open_array(store, path="a", mode="r"), None
    for k, v in values.items():
        store.set(k, v)
    return store, zarrc.open_array(store, path="a", mode="r"), zarrc.open_array(store, path="a")


def damaged_shard(location, index, kind, i):
    def change(raw: bytes) -> bytes:
        entries = read_index(raw, 4, location, index)
        data_end = len(raw) - (16 * 4 + (4 if index == "crc" else 0)) if location == "end" else len(raw)
        new, bad = damage(entries, kind, i, data_end)
        change.bad = bad
        return with_index(raw, new, location, index)
    return change


CASES = [(store, location, index, kind, i)
         for store in ("local", "memory", "zip") for location in ("start", "end")
         for index in ("crc", "le") for kind in KINDS for i in (0, 3)
         if (store, index) != ("zip", "le") or kind == "overlap"]


def fresh(store):
    return zarrc.open_array(store, path="a", mode="r")


@pytest.mark.parametrize("store_kind,location,index,kind,i", CASES,
                         ids=["-".join(map(str, c)) for c in CASES])
def test_damaged_entry_fails_its_inner_chunk_only(store_kind, location, index, kind, i, tmp_path) -> None:
    change = damaged_shard(location, index, kind, i)
    store, a, _ = build(store_kind, tmp_path, location, index, change)
    bad = change.bad
    good = sorted(set(range(4)) - bad)
    for j in sorted(bad):
        box = inner_box(j)
        corner = f"\\({j // 2}, {j % 2}\\)"
        any_bad = "(" + "|".join(f"\\({k // 2}, {k % 2}\\)" for k in bad) + ")"
        for sel, which in ((box, corner), ((box[0].start, box[1].start + 1), corner),
                           (Ellipsis, any_bad), ((slice(4, 8), slice(0, 4)), any_bad)):
            with pytest.raises(CodecError, match=f"shard {KEY} of /a: inner chunk {which}") as info:
                fresh(store)[sel]
            assert type(info.value) is CodecError
            assert "damaged" in str(info.value)
        with pytest.raises(CodecError, match=KEY):
            fresh(store).oindex[[box[0].start], [box[1].start]]
        with pytest.raises(CodecError, match=KEY):
            fresh(store).vindex[[0, box[0].start], [0, box[1].start]]
    # the other inner chunks read: one by one, by slices, orthogonally and by coordinates
    for reader in (fresh(store), a):
        for j in good:
            np.testing.assert_array_equal(reader[inner_box(j)], DATA[inner_box(j)])
        np.testing.assert_array_equal(reader[0:4, :], DATA[0:4])
        np.testing.assert_array_equal(reader[:, 4:8], DATA[:, 4:8])
        rows = [r for j in good for r in range(inner_box(j)[0].start, inner_box(j)[0].stop)]
        cols = [c for j in good for c in range(inner_box(j)[1].start, inner_box(j)[1].stop)]
        pts = (np.array(rows + [0, 7]), np.array(cols + [7, 7]))
        np.testing.assert_array_equal(reader.vindex[pts], DATA[pts])
        j = good[0]
        np.testing.assert_array_equal(reader.oindex[[0, inner_box(j)[0].start], [inner_box(j)[1].start, 6]],
                                      DATA[np.ix_([0, inner_box(j)[0].start], [inner_box(j)[1].start, 6])])


def test_error_names_the_array_chunk_through_the_native_reader(tmp_path) -> None:
    change = damaged_shard("end", "crc", "offset-past-data", 3)
    _, a, _ = build("local", tmp_path, "end", "crc", change)
    with pytest.raises(CodecError) as info:
        a[6, 2]
    text = str(info.value)
    assert "shard a/c/1/0 of /a: inner chunk (1, 1)" in text
    assert "chunk (3, 1) of the array" in text
    assert "outside the shard's data" in text


@pytest.mark.parametrize("store_kind", ["local", "memory"])
@pytest.mark.parametrize("location", ["start", "end"])
def test_bad_index_checksum_fails_the_whole_shard(store_kind, location, tmp_path) -> None:
    def change(raw: bytes) -> bytes:
        entries = read_index(raw, 4, location, "crc")
        return with_index(raw, entries, location, "crc", good_crc=False)
    store, a, _ = build(store_kind, tmp_path, location, "crc", change)
    for j in range(4):
        with pytest.raises(ChecksumError, match=KEY):
            fresh(store)[inner_box(j)]
    np.testing.assert_array_equal(a[0:4, :], DATA[0:4])          # other shards read


def shard_values(store) -> dict:
    return {k: bytes(store.get(k)) for k in store.list()}


@pytest.mark.parametrize("store_kind", ["local", "memory"])
@pytest.mark.parametrize("kind", KINDS)
def test_writes_over_a_damaged_entry(store_kind, kind, tmp_path) -> None:
    change = damaged_shard("end", "crc", kind, 0)
    store, _, w = build(store_kind, tmp_path, "end", "crc", change)
    bad = sorted(change.bad)
    before = shard_values(store)
    # a partial write into a damaged inner chunk, or into another inner chunk of the
    # shard (the damaged one could be neither kept nor rebuilt): raises, changes nothing
    others = [j for j in range(4) if j not in bad]
    for sel in [(inner_box(bad[0])[0].start, inner_box(bad[0])[1].start),
                (inner_box(others[0])[0].start, inner_box(others[0])[1].start), inner_box(others[0])]:
        with pytest.raises(CodecError, match=f"shard {KEY} of /a: inner chunk") as info:
            w[sel] = 100
        assert "nothing was written" in str(info.value)
        assert shard_values(store) == before
    # a write that wholly overwrites the damaged inner chunks ({0} or {0, 1}: rows
    # 4..6) repairs them
    expected = DATA.copy()
    region = (slice(4, 6), slice(0, 2 * len(bad)))
    w[region] = 1000
    expected[region] = 1000
    np.testing.assert_array_equal(fresh(store)[...], expected)
    w[4, 0] = 7                                   # partial writes work again
    expected[4, 0] = 7
    np.testing.assert_array_equal(fresh(store)[...], expected)


@pytest.mark.parametrize("store_kind", ["local", "memory"])
def test_a_whole_shard_write_repairs_it(store_kind, tmp_path) -> None:
    change = damaged_shard("start", "le", "overlap", 2)
    store, _, w = build(store_kind, tmp_path, "start", "le", change)
    w[4:8, 0:4] = 5
    expected = DATA.copy()
    expected[4:8, 0:4] = 5
    np.testing.assert_array_equal(fresh(store)[...], expected)


# ------------------------------------------------------------------ nested sharding

def nested_array(store):
    """(8, 8) array, shards of (8, 8) holding sub-shards of (4, 4) (index at the
    start, no crc) holding inner chunks of (2, 2) (index at the end, crc)."""
    inner = sharding((2, 2), [LE], "end", "crc")
    a = zarrc.create_array(store, name="a", shape=(8, 8), dtype="<i4", chunks=(8, 8), compressors=None,
                           serializer=sharding((4, 4), [inner], "start", "le"), fill_value=-1)
    a[...] = DATA
    return a


@pytest.mark.parametrize("store_kind", ["local", "memory"])
@pytest.mark.parametrize("level", ["outer", "inner"])
def test_nested_damaged_entry(store_kind, level, tmp_path) -> None:
    store = MemoryStore() if store_kind == "memory" else LocalStore(str(tmp_path / "n.zarr"), mode="w")
    nested_array(store)
    raw = bytes(store.get("a/c/0/0"))
    outer = read_index(raw, 4, "start", "le")
    if level == "outer":        # sub-shard 1 (rows 0..4, columns 4..8): half empty
        entries = list(outer)
        entries[1] = (outer[1][0], EMPTY)
        raw = with_index(raw, entries, "start", "le")
        failing = (slice(0, 4), slice(4, 8))
        what = "inner chunk \\(0, 1\\)"
    else:                       # inner chunk 2 (rows 2..4, columns 0..2) of sub-shard 0
        at, size = outer[0]
        entries = read_index(raw, 4, "end", "crc", at, size)
        entries[2] = (entries[2][0], 10**6)
        raw = with_index(raw, entries, "end", "crc", at, size)
        failing = (slice(2, 4), slice(0, 2))
        what = "sub-shard at bytes .*: inner chunk \\(1, 0\\)"
    store.set("a/c/0/0", raw)
    with pytest.raises(CodecError, match=f"shard a/c/0/0 of /a.*{what}"):
        fresh(store)[failing]
    with pytest.raises(CodecError, match="a/c/0/0"):
        fresh(store)[...]
    expected_ok = np.ones(SHAPE, bool)
    expected_ok[failing] = False
    reader = fresh(store)
    for r in range(8):
        for c in range(8):
            if expected_ok[r, c]:
                assert reader[r, c] == DATA[r, c]
    np.testing.assert_array_equal(reader[4:8, :], DATA[4:8])
    np.testing.assert_array_equal(reader.vindex[[0, 7, 5], [0, 7, 3]], DATA[[0, 7, 5], [0, 7, 3]])
    w = zarrc.open_array(store, path="a")
    before = bytes(store.get("a/c/0/0"))
    # a partial write into the damaged part, or beside it: refused, nothing changed
    for sel in ((failing[0].start, failing[1].start), (7, 7), (slice(4, 8), slice(0, 8))):
        with pytest.raises(CodecError, match="a/c/0/0"):
            w[sel] = 100
        assert bytes(store.get("a/c/0/0")) == before
    # a write that wholly overwrites the damaged part repairs it
    w[failing] = 77
    expected = DATA.copy()
    expected[failing] = 77
    np.testing.assert_array_equal(fresh(store)[...], expected)
    w[7, 7] = 5
    expected[7, 7] = 5
    np.testing.assert_array_equal(fresh(store)[...], expected)
    # a write covering the whole shard repairs it too
    w[...] = DATA + 1
    np.testing.assert_array_equal(fresh(store)[...], DATA + 1)


# ------------------------------------------------------------------ many inner chunks

@pytest.mark.parametrize("store_kind", ["local", "memory"])
def test_many_inner_chunks_located_at_once(store_kind, tmp_path) -> None:
    """More than 64 inner chunks per read: located with numpy (stacked tables)."""
    store = MemoryStore() if store_kind == "memory" else LocalStore(str(tmp_path / "m.zarr"), mode="w")
    data = np.arange(40 * 40, dtype="<i4").reshape(40, 40)
    a = zarrc.create_array(store, name="a", shape=(40, 40), dtype="<i4", chunks=(20, 20), compressors=None,
                           serializer=sharding((2, 2), [LE], "end", "crc"), fill_value=-1)
    a[...] = data
    raw = bytes(store.get("a/c/0/0"))
    entries = read_index(raw, 100, "end", "crc")
    entries[99] = (EMPTY, entries[99][1])          # inner chunk (9, 9): rows 18..20, columns 18..20
    store.set("a/c/0/0", with_index(raw, entries, "end", "crc"))
    with pytest.raises(CodecError, match="shard a/c/0/0 of /a: inner chunk \\(9, 9\\)"):
        fresh(store)[...]
    with pytest.raises(CodecError, match="inner chunk \\(9, 9\\)"):
        fresh(store).oindex[np.arange(40), np.arange(40)]
    reader = fresh(store)
    np.testing.assert_array_equal(reader[0:18, :], data[0:18])
    np.testing.assert_array_equal(reader[:, 0:18], data[:, 0:18])
    np.testing.assert_array_equal(reader.oindex[np.arange(18), np.arange(40)], data[0:18])
    pts = (np.arange(40) % 18, np.arange(40))
    np.testing.assert_array_equal(reader.vindex[pts], data[pts])


def test_local_files_are_untouched_by_a_refused_write(tmp_path) -> None:
    change = damaged_shard("end", "crc", "wraps", 0)
    store, _, w = build("local", tmp_path, "end", "crc", change)
    path = os.path.join(store.root, "a", "c", "1", "0")
    with open(path, "rb") as f:
        before = f.read()
    with pytest.raises(CodecError):
        w[5, 3] = 1
    with open(path, "rb") as f:
        assert f.read() == before
    assert sorted(os.listdir(os.path.dirname(path))) == ["0", "1"]      # no temporary file left


# ------------------------------------------------------------------ whole shards (Python strategy)

@pytest.mark.parametrize("store_kind", ["local", "memory"])
def test_whole_shard_decodes_fail_only_reads_of_the_damaged_inner_chunk(store_kind, tmp_path) -> None:
    """[transpose, sharding_indexed]: shards decoded whole (ShardCodec).  Entry 1 is
    stored inner chunk (0, 1), array rows 6..8, columns 0..2 of shard KEY."""
    store = MemoryStore() if store_kind == "memory" else LocalStore(str(tmp_path / "t.zarr"), mode="w")
    a = zarrc.create_array(store, name="a", shape=SHAPE, dtype="<i4", chunks=SHARD, compressors=None,
                           filters=[{"name": "transpose", "configuration": {"order": [1, 0]}}],
                           serializer=sharding(INNER, [LE], "end", "crc"), fill_value=-1)
    a[...] = DATA
    raw = bytes(store.get(KEY))
    entries = read_index(raw, 4, "end", "crc")
    entries[1] = (EMPTY, entries[1][1])
    store.set(KEY, with_index(raw, entries, "end", "crc"))
    bad = (slice(6, 8), slice(0, 2))
    for sel in (bad, (7, 1), Ellipsis):
        with pytest.raises(CodecError, match=f"{KEY}.*inner chunk \\(0, 1\\).*half empty"):
            fresh(store)[sel]
    reader = fresh(store)
    np.testing.assert_array_equal(reader[4:6, 0:4], DATA[4:6, 0:4])
    np.testing.assert_array_equal(reader[4:8, 2:4], DATA[4:8, 2:4])
    np.testing.assert_array_equal(reader.vindex[[4, 5, 7], [0, 3, 3]], DATA[[4, 5, 7], [0, 3, 3]])
    w = zarrc.open_array(store, path="a")
    before = bytes(store.get(KEY))
    for sel in ((7, 1), (4, 3)):           # into the damaged inner chunk, or beside it: refused
        with pytest.raises(CodecError, match=KEY):
            w[sel] = 100
        assert bytes(store.get(KEY)) == before
    w[bad] = 50                             # wholly overwritten: repaired
    expected = DATA.copy()
    expected[bad] = 50
    np.testing.assert_array_equal(fresh(store)[...], expected)


@pytest.mark.parametrize("store_kind", ["local", "memory"])
def test_nested_many_inner_chunks(store_kind, tmp_path) -> None:
    """Shards of 20x20 holding sub-shards of 10x10 holding 2x2 chunks: reads and
    writes of more than 64 chunks locate them level by level with numpy."""
    store = MemoryStore() if store_kind == "memory" else LocalStore(str(tmp_path / "n.zarr"), mode="w")
    data = np.arange(40 * 40, dtype="<i4").reshape(40, 40)
    inner = sharding((2, 2), [LE], "end", "crc")
    a = zarrc.create_array(store, name="a", shape=(40, 40), dtype="<i4", chunks=(20, 20), compressors=None,
                           serializer=sharding((10, 10), [inner], "start", "le"), fill_value=-1)
    a[...] = data
    raw = bytes(store.get("a/c/0/0"))
    at, size = read_index(raw, 4, "start", "le")[3]               # sub-shard (1, 1): rows 10..20
    entries = read_index(raw, 25, "end", "crc", at, size)
    entries[24] = (entries[24][0], 2**64 - 2)                     # its inner chunk (4, 4): rows 18..20
    store.set("a/c/0/0", with_index(raw, entries, "end", "crc", at, size))
    with pytest.raises(CodecError, match="a/c/0/0 of /a, sub-shard .*inner chunk \\(4, 4\\)"):
        fresh(store)[0:20, 0:20]
    np.testing.assert_array_equal(fresh(store)[0:18, :], data[0:18])
    np.testing.assert_array_equal(fresh(store).oindex[np.arange(40), np.arange(18)], data[:, :18])
    w = zarrc.open_array(store, path="a")
    before = bytes(store.get("a/c/0/0"))
    with pytest.raises(CodecError, match="a/c/0/0"):
        w[0:19, 0:20] = 1                                        # (18, 0..20) written, 19 not
    assert bytes(store.get("a/c/0/0")) == before
    w[5:20, 18:20] = 3                                           # wholly over rows 18..20, columns 18..20
    expected = data.copy()
    expected[5:20, 18:20] = 3
    np.testing.assert_array_equal(fresh(store)[...], expected)
