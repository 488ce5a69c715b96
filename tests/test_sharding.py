"""Sharded arrays (``sharding_indexed``): creation, nested sharding against numpy,
the binary shard layout (index at start / end, index codecs), empty inner chunks,
shards overhanging the array edge, partial reads through cached shard indexes
(counted requests and bytes), partial shard writes that keep untouched inner chunks
byte for byte, and malformed shards, which must raise a zarrc error naming the
shard key.

Shards are parsed and built here by hand (numpy, a pure-Python crc32c), not with
zarrc's own index code, so that the layout checks are independent of it.
"""

from __future__ import annotations

import gzip
import itertools
import json
import math
import threading
import warnings
import zipfile

import numpy as np
import pytest

from helpers import crc32c

import zarrc
from zarrc.errors import ChecksumError, CodecError, MetadataError
from zarrc.stores import LocalStore, MemoryStore, ZipStore
from zarrc.stores.base import RangeSnapshot, Store

EMPTY = 2**64 - 1

LE = {"name": "bytes", "configuration": {"endian": "little"}}
BE = {"name": "bytes", "configuration": {"endian": "big"}}
CRC = {"name": "crc32c"}
ZSTD = {"name": "zstd", "configuration": {"level": 1, "checksum": False}}
GZIP1 = {"name": "gzip", "configuration": {"level": 1}}
INDEX_CODECS = {"crc": [LE, CRC], "le": [LE], "be": [BE], "be+crc": [BE, CRC]}


# ------------------------------------------------------------------ helpers


def test_reference_crc32c() -> None:
    assert crc32c(b"123456789") == 0xE3069283


def sharding(chunk_shape, codecs, location="end", index="crc") -> dict:
    """A sharding_indexed codec spec."""
    return {"name": "sharding_indexed", "configuration": {
        "chunk_shape": list(chunk_shape), "codecs": codecs,
        "index_codecs": INDEX_CODECS[index], "index_location": location}}


def index_nbytes(nchunks: int, index: str = "crc") -> int:
    return 16 * nchunks + (4 if "crc" in index else 0)


def parse_shard(raw: bytes, nchunks: int, location: str = "end", index: str = "crc") -> np.ndarray:
    """The (nchunks, 2) uint64 (offset, nbytes) index of a stored shard; checks the crc."""
    n = index_nbytes(nchunks, index)
    assert len(raw) >= n, f"shard of {len(raw)} bytes is shorter than its {n}-byte index"
    part = raw[:n] if location == "start" else raw[len(raw) - n:]
    if "crc" in index:
        assert int.from_bytes(part[-4:], "little") == crc32c(part[:-4]), "index crc32c mismatch"
    dt = ">u8" if index.startswith("be") else "<u8"
    return np.frombuffer(part, dt, count=2 * nchunks).astype(np.uint64).reshape(nchunks, 2)


def build_shard(entries, data: bytes, location: str = "end", index: str = "crc") -> bytes:
    """A shard from an explicit index (list of (offset, nbytes), absolute offsets) and
    the bytes of its data region (placed after a start index / before an end index)."""
    dt = ">u8" if index.startswith("be") else "<u8"
    pairs = np.asarray(entries, np.uint64).reshape(-1).astype(dt).tobytes()
    idx = pairs + (crc32c(pairs).to_bytes(4, "little") if "crc" in index else b"")
    return idx + data if location == "start" else data + idx


def pack_shard(parts, location: str = "end", index: str = "crc", gap: int = 0,
               reverse: bool = False) -> bytes:
    """A shard holding ``parts`` (bytes or None per inner chunk, C order), optionally
    with ``gap`` unused bytes before each chunk and the chunks laid out in reverse."""
    n = len(parts)
    base = index_nbytes(n, index) if location == "start" else 0
    entries = [(EMPTY, EMPTY)] * n
    data = b""
    for i in (reversed(range(n)) if reverse else range(n)):
        if parts[i] is None:
            continue
        data += b"\xa5" * gap
        entries[i] = (base + len(data), len(parts[i]))
        data += parts[i]
    return build_shard(entries, data, location, index)


def inner_chunk_bytes(raw: bytes, table: np.ndarray) -> list:
    """The encoded bytes of every inner chunk (None where empty)."""
    return [None if off == EMPTY else raw[int(off):int(off) + int(nb)] for off, nb in table]


def shard_value(store, key: str) -> bytes | None:
    v = store.get(key)
    return None if v is None else bytes(v)


class CountingStore(Store):
    """Wraps a store and records every read request: (method, key, ranges, bytes
    returned).  It has no local path, so sharded reads go through get_range /
    get_ranges (as for any remote store)."""

    def __init__(self, inner: Store) -> None:
        self.inner = inner
        self.calls: list[tuple] = []
        self.sets: list[str] = []
        self.deletes: list[str] = []
        self.lock = threading.Lock()
        self.supports_deletes = inner.supports_deletes
        self.read_only = inner.read_only

    def _log(self, method, key, ranges, value):
        if isinstance(value, list):
            nbytes = sum(len(v) for v in value)
        else:
            nbytes = 0 if value is None else len(value)
        with self.lock:
            self.calls.append((method, key, ranges, nbytes))
        return value

    def reset(self) -> None:
        self.calls.clear()
        self.sets.clear()
        self.deletes.clear()

    def on(self, key: str) -> list[tuple]:
        return [c for c in self.calls if c[1] == key]

    def chunk_calls(self) -> list[tuple]:
        return [c for c in self.calls if not c[1].endswith("zarr.json")]

    def get(self, key):
        return self._log("get", key, None, self.inner.get(key))

    def get_range(self, key, start, length=None):
        return self._log("get_range", key, [(start, length)], self.inner.get_range(key, start, length))

    def get_ranges(self, key, ranges):
        ranges = [tuple(r) for r in ranges]
        return self._log("get_ranges", key, ranges, self.inner.get_ranges(key, ranges))

    def get_many(self, keys):
        return [self.get(k) for k in keys]

    def exists(self, key):
        return self.inner.exists(key)

    def set(self, key, value):
        self.sets.append(key)
        self.inner.set(key, value)

    def delete(self, key):
        self.deletes.append(key)
        self.inner.delete(key)

    def list_prefix(self, prefix):
        return self.inner.list_prefix(prefix)


class VersionedCountingStore(CountingStore):
    """A CountingStore that names the versions of its values, as an object store's
    ETag does: a counter per key, bumped by every write through it.  Snapshots read
    ranges as the CountingStore does, so what an index cache saves shows."""

    def __init__(self, inner: Store) -> None:
        super().__init__(inner)
        self.versions: dict = {}

    def snapshot(self, key):
        snap = RangeSnapshot(self, key)
        snap.token = (key, self.versions.get(key, 0))
        return snap

    def set(self, key, value):
        self.versions[key] = self.versions.get(key, 0) + 1
        super().set(key, value)

    def delete(self, key):
        self.versions[key] = self.versions.get(key, 0) + 1
        super().delete(key)


def random_selection(rng: np.random.Generator, shape) -> tuple:
    """Ints (negative too), slices with steps, whole dimensions and the edge."""
    sel = []
    for n in shape:
        r = rng.random()
        if r < 0.15:
            sel.append(int(rng.integers(-n, n)))
        elif r < 0.25:
            sel.append(slice(None))
        elif r < 0.35:
            sel.append(slice(int(rng.integers(0, n)), None))           # to the edge
        else:
            a = int(rng.integers(0, n))
            b = int(rng.integers(a + 1, n + 1))
            sel.append(slice(a, b, int(rng.choice([1, 1, 2, 3, 5]))))
    return tuple(sel)


# ------------------------------------------------------------------ creation

def test_create_array_with_shards(tmp_path) -> None:
    store = LocalStore(tmp_path / "s.zarr", mode="w")
    a = zarrc.create_array(store, name="a", shape=(10, 13), dtype="uint16", chunks=(2, 3), shards=(4, 6),
                           filters=[{"name": "transpose", "configuration": {"order": [1, 0]}}],
                           compressors=[ZSTD], fill_value=7)
    assert a.chunks == (2, 3) and a.shards == (4, 6) and a.cdata_shape == (5, 5)   # (zarr-python's)
    doc = json.loads(bytes(store.get("a/zarr.json")))
    assert doc["chunk_grid"]["configuration"]["chunk_shape"] == [4, 6]
    [codec] = doc["codecs"]
    assert codec["name"] == "sharding_indexed"
    conf = codec["configuration"]
    assert conf["chunk_shape"] == [2, 3]
    assert [c["name"] for c in conf["codecs"]] == ["transpose", "bytes", "zstd"]
    assert conf["index_codecs"] == [LE, CRC] and conf["index_location"] == "end"
    data = np.arange(130, dtype=np.uint16).reshape(10, 13)
    a[...] = data
    assert sorted(k for k in store.list() if k.startswith("a/c")) == [
        f"a/c/{i}/{j}" for i in range(3) for j in range(3)]
    b = zarrc.open_array(store, path="a", mode="r")
    assert b.chunks == (2, 3) and b.shards == (4, 6)
    np.testing.assert_array_equal(b[...], data)
    plain = zarrc.create_array(MemoryStore(), shape=(4,), dtype="i4", chunks=(2,))
    assert plain.shards is None


def test_shards_as_int_and_spec_dict_equal_forms() -> None:
    s1, s2 = MemoryStore(), MemoryStore()
    a = zarrc.create_array(s1, shape=(8, 8), dtype="i4", chunks=(2, 2), shards=4, compressors=None)
    b = zarrc.create_array(s2, shape=(8, 8), dtype="i4", chunks=(4, 4), compressors=None,
                           serializer=sharding((2, 2), [LE]))
    assert a.shards == b.shards == (4, 4) and a.chunks == b.chunks == (2, 2)
    data = np.arange(64, dtype="i4").reshape(8, 8)
    a[...] = data
    b[...] = data
    assert {k: bytes(v) for k, v in s1.data.items() if "/c/" in k or k.startswith("c/")} == \
           {k: bytes(v) for k, v in s2.data.items() if "/c/" in k or k.startswith("c/")}


@pytest.mark.parametrize("kwargs", [
    dict(chunks=(3, 3), shards=(4, 6)),                                     # 3 does not divide 4
    dict(chunks=(4, 6), serializer=sharding((2, 4), [LE])),                 # 4 does not divide 6
    dict(chunks=(4, 6), serializer=sharding((2, 3), [LE], location="middle")),
    dict(chunks=(4, 6), serializer=sharding((2, 3), [LE], index="le"),
         filters=[{"name": "transpose", "configuration": {"order": [1, 0]}}]),   # 3 does not divide the transposed shard (6, 4)
])
def test_invalid_sharding_configurations(kwargs) -> None:
    kwargs = {"compressors": None, **kwargs}
    with pytest.raises(MetadataError):
        zarrc.create_array(MemoryStore(), shape=(8, 12), dtype="i4", **kwargs)


def test_compressed_index_codecs_rejected() -> None:
    spec = sharding((2, 3), [LE])
    spec["configuration"]["index_codecs"] = [LE, ZSTD]
    with pytest.raises(MetadataError, match="index_codecs"):
        zarrc.create_array(MemoryStore(), shape=(8, 12), dtype="i4", chunks=(4, 6), serializer=spec,
                           compressors=None)


# ------------------------------------------------------------------ against numpy

def nested_spec(location="end") -> dict:
    inner = sharding((2, 3), [BE, GZIP1], location="start", index="be")
    return sharding((4, 6), [inner], location=location, index="crc")


# id -> (shape, create_array keywords); every layout has edge shards that overhang
LAYOUTS = {
    "shards=": ((13, 17), dict(chunks=(2, 3), shards=(4, 6), compressors=[ZSTD])),
    "start+crc": ((13, 17), dict(chunks=(4, 6), serializer=sharding((2, 3), [LE, GZIP1], "start"))),
    "end+le": ((13, 17), dict(chunks=(4, 6), serializer=sharding((2, 3), [LE], "end", "le"))),
    "start+be+transpose": ((13, 17), dict(chunks=(4, 6), serializer=sharding(
        (2, 3), [{"name": "transpose", "configuration": {"order": [1, 0]}}, BE, CRC], "start", "be"))),
    "nested": ((13, 17), dict(chunks=(8, 12), serializer=nested_spec())),
    "nested-start": ((13, 17), dict(chunks=(8, 12), serializer=nested_spec("start"))),
    "nested-3-levels": ((9, 11, 5), dict(chunks=(8, 8, 4), serializer=sharding(
        (4, 8, 4), [sharding((4, 4, 2), [sharding((2, 2, 2), [LE, ZSTD], "end", "le")], "start")],
        "end", "be+crc"))),
    "1-d": ((29,), dict(chunks=(12,), serializer=sharding((3,), [LE, CRC], "end"))),
    # more than 64 inner chunks per selection: zarrc locates them with numpy, not in Python
    "many-chunks": ((31, 41), dict(chunks=(6, 9), serializer=sharding((2, 3), [LE, ZSTD], "start"))),
    "nested-many-chunks": ((31, 41), dict(chunks=(12, 18), serializer=nested_spec())),
}


def make_layout(store, layout: str, dtype="int32", fill_value=-1, **extra) -> zarrc.Array:
    shape, kwargs = LAYOUTS[layout]
    kwargs = {"compressors": None, **kwargs, **extra}
    return zarrc.create_array(store, name="a", shape=shape, dtype=dtype, fill_value=fill_value, **kwargs)


@pytest.mark.parametrize("layout", list(LAYOUTS))
def test_random_writes_and_reads_match_numpy(layout, rw_store_maker) -> None:
    store = rw_store_maker.new()
    a = make_layout(store, layout)
    expected = np.full(a.shape, -1, np.int32)
    rng = np.random.default_rng(sum(map(ord, layout)))
    np.testing.assert_array_equal(a[...], expected)                 # nothing stored yet
    for step in range(30):
        sel = random_selection(rng, a.shape)
        if step % 5 == 4:
            value = -1                                               # the fill value: chunks emptied
        else:
            value = rng.integers(-1000, 1000, np.shape(expected[sel]), dtype=np.int32)
        a[sel] = value
        expected[sel] = value
        for _ in range(3):
            sel = random_selection(rng, a.shape)
            np.testing.assert_array_equal(a[sel], expected[sel], err_msg=f"writer, step {step}, {sel}")
        reader = zarrc.open_array(store, path="a", mode="r")
        np.testing.assert_array_equal(reader[...], expected, err_msg=f"reopened, step {step}")
    # the last (edge) element of every dimension and a whole edge row
    last = tuple(n - 1 for n in a.shape)
    a[last] = 12345
    expected[last] = 12345
    np.testing.assert_array_equal(zarrc.open_array(store, path="a", mode="r")[...], expected)
    np.testing.assert_array_equal(a[last[:1]], expected[last[:1]])


@pytest.mark.parametrize("layout", ["shards=", "nested"])
def test_zip_store_round_trip(layout, tmp_path) -> None:
    path = str(tmp_path / "a.zip")
    rng = np.random.default_rng(5)
    with ZipStore(path, mode="w") as store:
        a = make_layout(store, layout, dtype="float64", fill_value=0.0, compressors=None)
        data = rng.standard_normal(a.shape)
        a[...] = data
        with warnings.catch_warnings():
            warnings.simplefilter("ignore")           # a rewritten key appends a member
            a[2:9, 5:] = 0.0
            data[2:9, 5:] = 0.0
        np.testing.assert_array_equal(a[...], data)
    with ZipStore(path, mode="r") as store:
        np.testing.assert_array_equal(zarrc.open_array(store, path="a", mode="r")[...], data)


def test_threads_read_one_sharded_array(tmp_path) -> None:
    a = make_layout(LocalStore(tmp_path / "t.zarr", mode="w"), "shards=")
    data = np.arange(math.prod(a.shape), dtype=np.int32).reshape(a.shape)
    a[...] = data
    reader = zarrc.open_array(str(tmp_path / "t.zarr"), path="a", mode="r")
    errors = []

    def work(seed):
        rng = np.random.default_rng(seed)
        try:
            for _ in range(40):
                sel = random_selection(rng, a.shape)
                np.testing.assert_array_equal(reader[sel], data[sel])
        except Exception as e:          # noqa: BLE001 -- reported below
            errors.append(e)
    threads = [threading.Thread(target=work, args=(s,)) for s in range(8)]
    for t in threads:
        t.start()
    for t in threads:
        t.join()
    assert not errors, errors[0]


# ------------------------------------------------------------------ binary layout

@pytest.mark.parametrize("location", ["start", "end"])
@pytest.mark.parametrize("index", ["crc", "le", "be", "be+crc"])
def test_shard_layout(location, index) -> None:
    """Index at the given end, in the given byte order, crc32c over the pairs; each
    inner chunk's bytes are its C-order values (bytes codec only)."""
    store = MemoryStore()
    a = zarrc.create_array(store, name="a", shape=(6, 8), dtype="<i4", chunks=(4, 8), compressors=None,
                           serializer=sharding((2, 4), [LE], location, index))
    data = np.arange(48, dtype="<i4").reshape(6, 8)
    data[0:2, 4:8] = 0                                    # inner chunk (0, 1): all fill -> empty
    a[...] = data
    raw = shard_value(store, "a/c/0/0")
    table = parse_shard(raw, 4, location, index)
    n = index_nbytes(4, index)
    assert len(raw) == n + 3 * 32
    assert tuple(table[1]) == (EMPTY, EMPTY)
    for i, (r, c) in enumerate([(0, 0), (0, 1), (1, 0), (1, 1)]):
        if i == 1:
            continue
        off, nb = int(table[i, 0]), int(table[i, 1])
        assert nb == 32
        assert (n <= off and off + nb <= len(raw)) if location == "start" else off + nb <= len(raw) - n
        assert raw[off:off + nb] == data[2 * r:2 * r + 2, 4 * c:4 * c + 4].tobytes()
    # the edge shard (rows 4..8 of a 6-row array): its index still has all 4 entries,
    # the out-of-bounds inner chunks (row 1) are empty
    edge = parse_shard(shard_value(store, "a/c/1/0"), 4, location, index)
    assert [tuple(map(int, e)) for e in edge[2:]] == [(EMPTY, EMPTY)] * 2
    assert all(int(o) != EMPTY for o in edge[:2, 0])
    np.testing.assert_array_equal(a[...], data)


@pytest.mark.parametrize("location", ["start", "end"])
def test_hand_built_shards_read(location, rw_store_maker) -> None:
    """Shards as another writer may lay them out: chunks in reverse order with unused
    bytes between them, empty entries, an all-empty shard, the big-endian index."""
    store = rw_store_maker.new()
    a = zarrc.create_array(store, name="a", shape=(4, 8), dtype="<u2", chunks=(4, 4), compressors=None,
                           serializer=sharding((2, 2), [LE, GZIP1], location, "be"), fill_value=9)
    data = np.arange(32, dtype="<u2").reshape(4, 8)
    parts = [gzip.compress(data[2 * r:2 * r + 2, 2 * c:2 * c + 2].tobytes(), mtime=1)
             for r in range(2) for c in range(2)]
    parts[2] = None
    store.set("a/c/0/0", pack_shard(parts, location, "be", gap=5, reverse=True))
    store.set("a/c/0/1", pack_shard([None] * 4, location, "be"))
    expected = np.full((4, 8), 9, "<u2")
    expected[:, :4] = data[:, :4]
    expected[2:4, 0:2] = 9
    np.testing.assert_array_equal(a[...], expected)
    np.testing.assert_array_equal(a[1:3, 1:3], expected[1:3, 1:3])
    np.testing.assert_array_equal(a[2, :], expected[2, :])


# ------------------------------------------------------------------ checksums

@pytest.mark.parametrize("location", ["start", "end"])
@pytest.mark.parametrize("where", ["entry", "crc"])
def test_corrupt_index_raises_checksum_error(location, where, rw_store_maker) -> None:
    store = rw_store_maker.new()
    a = zarrc.create_array(store, name="a", shape=(8, 8), dtype="i4", chunks=(4, 4), compressors=None,
                           serializer=sharding((2, 2), [LE], location))
    data = np.arange(64, dtype="i4").reshape(8, 8)
    a[...] = data
    raw = bytearray(shard_value(store, "a/c/0/1"))
    n = index_nbytes(4)
    at = (0 if location == "start" else len(raw) - n) + (3 if where == "entry" else n - 2)
    raw[at] ^= 0x10
    store.set("a/c/0/1", bytes(raw))
    reader = zarrc.open_array(store, path="a", mode="r")
    with pytest.raises(ChecksumError, match="a/c/0/1"):
        reader[...]
    with pytest.raises(ChecksumError, match="a/c/0/1"):
        reader[1, 5]
    np.testing.assert_array_equal(reader[:, :4], data[:, :4])       # other shards are fine
    np.testing.assert_array_equal(reader[4:, 4:], data[4:, 4:])


# ------------------------------------------------------------------ partial reads

def counting_array(layout_kwargs, shape=(8, 16), dtype="i4", seed=0, versioned=False):
    """(counting store, array, data): an array of ``shape`` written in full, then
    reopened through the counting store (``versioned``: one that names versions)
    with the counts reset."""
    inner = MemoryStore()
    a = zarrc.create_array(inner, name="a", shape=shape, dtype=dtype, fill_value=0, compressors=None,
                           **layout_kwargs)
    data = np.random.default_rng(seed).integers(1, 1000, shape).astype(dtype)
    a[...] = data
    store = (VersionedCountingStore if versioned else CountingStore)(inner)
    reader = zarrc.open_array(store, path="a", mode="r")
    store.reset()
    return store, reader, data


def kinds(calls) -> list[str]:
    return [c[0] for c in calls]


@pytest.mark.parametrize("location", ["start", "end"])
def test_one_inner_chunk_one_index_read_one_range_read(location) -> None:
    # shard (4, 8) of inner chunks (2, 2): 8 inner chunks, zstd, so sizes differ
    store, a, data = counting_array(dict(chunks=(4, 8), serializer=sharding((2, 2), [LE, ZSTD], location)))
    raw = shard_value(store.inner, "a/c/0/1")
    table = parse_shard(raw, 8, location)
    n = index_nbytes(8)

    np.testing.assert_array_equal(a[2:4, 10:12], data[2:4, 10:12])    # inner chunk (1, 1) of shard (0, 1)
    calls = store.chunk_calls()
    assert kinds(calls) == ["get_range", "get_ranges"], calls
    assert all(c[1] == "a/c/0/1" for c in calls)
    assert calls[0][3] == n                                          # the index, and only it
    off, nb = map(int, table[5])
    assert calls[1][2] == [(off, nb)] and calls[1][3] == nb

    # another inner chunk of the same shard: this store cannot name the versions of
    # its values, so a cached index could be another version's; it is read again
    store.reset()
    np.testing.assert_array_equal(a[0, 8], data[0, 8])
    calls = store.chunk_calls()
    assert kinds(calls) == ["get_range", "get_ranges"], calls
    assert calls[0][3] == n and calls[1][2] == [tuple(map(int, table[0]))]


def test_row_of_adjacent_inner_chunks_is_one_merged_range() -> None:
    store, a, data = counting_array(dict(chunks=(4, 16), serializer=sharding((2, 4), [LE, ZSTD])))
    table = parse_shard(shard_value(store.inner, "a/c/0/0"), 8)
    np.testing.assert_array_equal(a[2:4, :], data[2:4, :])            # inner chunks 4..7: one row
    index_call, call = store.chunk_calls()
    assert index_call[0] == "get_range"
    row = table[4:8]
    start, end = int(row[:, 0].min()), int((row[:, 0] + row[:, 1]).max())
    assert call[0] == "get_ranges" and call[2] == [(start, end - start)]
    assert call[3] == int(row[:, 1].sum())

    store.reset()   # a column of inner chunks is not contiguous: one request, two ranges
    np.testing.assert_array_equal(a[0:4, 5], data[0:4, 5])
    index_call, call = store.chunk_calls()
    assert call[0] == "get_ranges" and sorted(call[2]) == [tuple(map(int, table[i])) for i in (1, 5)]


@pytest.mark.parametrize("layout", ["end", "start", "nested", "many-chunks", "nested-many-chunks"])
def test_bytes_fetched_are_bounded(layout) -> None:
    """Over random selections, a fresh reader fetches at most the index of every shard
    it touches plus the encoded sizes of the inner chunks selected, one request per
    shard for the data."""
    if layout in LAYOUTS:
        shape, kwargs = LAYOUTS[layout]
    elif layout == "nested":
        kwargs = dict(chunks=(8, 12), serializer=nested_spec())
        shape = (13, 17)
    else:
        kwargs = dict(chunks=(4, 6), serializer=sharding((2, 3), [LE, ZSTD], layout))
        shape = (13, 17)
    rng = np.random.default_rng(3)
    inner = MemoryStore()
    w = zarrc.create_array(inner, name="a", shape=shape, dtype="i4", fill_value=0, compressors=None, **kwargs)
    data = rng.integers(0, 50, shape).astype("i4")
    data[0:2, 0:3] = 0                                             # one empty inner chunk
    w[...] = data
    sizes, index_sizes = innermost_sizes(inner, w, kwargs)
    for _ in range(25):
        sel = random_selection(rng, shape)
        store = CountingStore(inner)
        a = zarrc.open_array(store, path="a", mode="r")
        store.reset()
        np.testing.assert_array_equal(a[sel], data[sel])
        innermost = a._chunked.chunks        # (a.chunks: the outer sharding codec's, as zarr-python)
        touched = touched_inner_chunks(shape, innermost, sel)
        shard_shape = a.shards
        shards = {tuple(c * i // s for c, i, s in zip(t, innermost, shard_shape)) for t in touched}
        bound = sum(index_sizes[s] for s in shards) + sum(sizes.get(t, 0) for t in touched)
        calls = store.chunk_calls()
        assert sum(c[3] for c in calls) <= bound, (sel, calls)
        assert not [c for c in calls if c[0] in ("get", "get_many")]
        for s in shards:
            key = "a/c/" + "/".join(map(str, s))
            assert kinds(store.on(key)).count("get_ranges") <= 1


def innermost_sizes(store, arr, kwargs):
    """{innermost chunk coords: encoded nbytes}, {shard coords: bytes of all the
    indexes read to locate chunks in it}, from the shards parsed by hand."""
    conf = json.loads(bytes(store.get("a/zarr.json")))["codecs"][0]["configuration"]
    sizes, index_sizes = {}, {}
    shard_shape = arr.shards
    grid = [math.ceil(n / s) for n, s in zip(arr.shape, shard_shape)]
    for shard in np.ndindex(*grid):
        raw = shard_value(store, "a/c/" + "/".join(map(str, shard)))
        if raw is None:
            index_sizes[shard] = 0
            continue
        origin = [c * s for c, s in zip(shard, shard_shape)]
        total = [0]
        walk(raw, conf, shard_shape, origin, arr._chunked.chunks, sizes, total)
        index_sizes[shard] = total[0]
    return sizes, index_sizes


def walk(raw, conf, shape, origin, innermost, sizes, total) -> None:
    inner_shape = conf["chunk_shape"]
    cps = [s // i for s, i in zip(shape, inner_shape)]
    index = "crc" if len(conf["index_codecs"]) == 2 else "le"
    if conf["index_codecs"][0].get("configuration", {}).get("endian") == "big":
        index = "be" + ("+crc" if index == "crc" else "")
    table = parse_shard(raw, math.prod(cps), conf["index_location"], index)
    total[0] += index_nbytes(math.prod(cps), index)
    nested = conf["codecs"][0]["name"] == "sharding_indexed"
    for i, corner in enumerate(np.ndindex(*cps)):
        off, nb = table[i]
        if off == EMPTY:
            continue
        o = [a + c * s for a, c, s in zip(origin, corner, inner_shape)]
        part = raw[int(off):int(off) + int(nb)]
        if nested:
            walk(part, conf["codecs"][0]["configuration"], inner_shape, o, innermost, sizes, total)
        else:
            sizes[tuple(x // c for x, c in zip(o, innermost))] = int(nb)


def touched_inner_chunks(shape, chunks, sel) -> set:
    """The innermost chunk coordinates a basic selection touches."""
    per_dim = [sorted(set((np.atleast_1d(np.arange(n)[s]) // c).tolist()))
               for s, n, c in zip(sel, shape, chunks)]
    return set(itertools.product(*per_dim))


def test_nested_reads_one_index_per_level() -> None:
    store, a, data = counting_array(dict(chunks=(8, 12), serializer=nested_spec()), shape=(13, 17),
                                    versioned=True)
    np.testing.assert_array_equal(a[0, 0], data[0, 0])
    calls = store.chunk_calls()
    # the outer index (suffix), the nested shard's index (at its start), the inner chunk
    assert kinds(calls) == ["get_range", "get_range", "get_ranges"], calls
    assert calls[0][3] == index_nbytes(4) and calls[1][3] == index_nbytes(4, "be")
    store.reset()
    np.testing.assert_array_equal(a[1, 4], data[1, 4])    # same nested shard, another inner chunk
    assert kinds(store.chunk_calls()) == ["get_ranges"]
    store.reset()
    np.testing.assert_array_equal(a[5, 0], data[5, 0])    # another nested shard of the same shard
    assert kinds(store.chunk_calls()) == ["get_range", "get_ranges"]


def test_unversioned_store_indexes_are_kept_for_one_call() -> None:
    """A store that cannot name versions: a cached index could be another version's,
    so each call reads the indexes it needs, once each."""
    store, a, data = counting_array(dict(chunks=(8, 12), serializer=nested_spec()), shape=(13, 17))
    for _ in range(2):
        store.reset()
        np.testing.assert_array_equal(a[0:2, 0:6], data[0:2, 0:6])   # two inner chunks of one nested shard
        assert kinds(store.chunk_calls()) == ["get_range", "get_range", "get_ranges"]


def test_missing_shard_is_fill_and_asked_for_once_per_call() -> None:
    inner = MemoryStore()
    zarrc.create_array(inner, name="a", shape=(8, 8), dtype="i4", chunks=(2, 2), shards=(4, 4), fill_value=3)
    store = CountingStore(inner)
    a = zarrc.open_array(store, path="a", mode="r")
    store.reset()
    np.testing.assert_array_equal(a[...], np.full((8, 8), 3))
    assert kinds(store.chunk_calls()) == ["get_range"] * 4
    store.reset()   # (asked again: another writer may have written it since)
    np.testing.assert_array_equal(a[1:3, 1:7], np.full((2, 6), 3))
    assert kinds(store.chunk_calls()) == ["get_range"] * 2
    zarrc.open_array(inner, path="a", mode="r+")[1, 1] = 5
    np.testing.assert_array_equal(a[0:2, 0:2], [[3, 3], [3, 5]])


def test_cached_index_invalidated_by_the_array_writing_the_shard() -> None:
    store, _, data = counting_array(dict(chunks=(4, 8), serializer=sharding((2, 2), [LE, ZSTD])),
                                    versioned=True)
    a = zarrc.open_array(store, path="a", mode="r+")
    np.testing.assert_array_equal(a[...], data)
    before = zarrc.open_array(store.inner, path="a", mode="r")
    np.testing.assert_array_equal(before[0, 0], data[0, 0])
    store.reset()
    a[0:2, 0:2] = -7                     # rewrites shard (0, 0): its inner chunks move
    data[0:2, 0:2] = -7
    store.reset()
    np.testing.assert_array_equal(a[...], data)                        # the writer sees new data
    assert kinds(store.on("a/c/0/0")) == ["get_range", "get_ranges"]  # its index was re-read
    assert kinds(store.on("a/c/0/1")) == ["get_ranges"]               # other shards' stay cached
    np.testing.assert_array_equal(zarrc.open_array(store.inner, path="a", mode="r")[...], data)


# ------------------------------------------------------------------ writes

def test_whole_shard_writes_never_read_old_shards() -> None:
    inner = MemoryStore()
    a = zarrc.create_array(inner, name="a", shape=(10, 13), dtype="i4", chunks=(2, 3), shards=(4, 6))
    a[...] = 1                                                  # every shard exists
    store = CountingStore(inner)
    a = zarrc.open_array(store, path="a", mode="r+")
    store.reset()
    a[0:4, 6:12] = 5                                             # exactly shard (0, 1)
    a[8:10, 12:13] = 6      # shard (2, 2) overhangs: this is all of its in-bounds inner chunks
    a[4:8, :] = np.arange(52).reshape(4, 13)                     # shards (1, 0..2)
    assert store.chunk_calls() == [], store.chunk_calls()
    assert sorted(store.sets) == sorted(["a/c/0/1", "a/c/2/2", "a/c/1/0", "a/c/1/1", "a/c/1/2"])
    expected = np.ones((10, 13), "i4")
    expected[0:4, 6:12] = 5
    expected[8:10, 12:13] = 6
    expected[4:8, :] = np.arange(52).reshape(4, 13)
    np.testing.assert_array_equal(zarrc.open_array(inner, path="a")[...], expected)

    store.reset()   # one element short of the shard: the shard is read (once) and rewritten
    a[0:4, 0:5] = 8
    assert kinds(store.chunk_calls()) == ["get"] and store.sets == ["a/c/0/0"]


@pytest.mark.parametrize("location", ["start", "end"])
def test_partial_write_keeps_untouched_inner_chunks_byte_for_byte(location, rw_store_maker) -> None:
    """The old shard's inner chunks were gzipped elsewhere (mtime set, level 9, a gap,
    reverse order): zarrc would encode them differently, so identical bytes after a
    partial write show they were copied, not re-encoded."""
    store = rw_store_maker.new()
    a = zarrc.create_array(store, name="a", shape=(6, 8), dtype="<i8", chunks=(4, 8), compressors=None,
                           serializer=sharding((2, 2), [LE, GZIP1], location))
    data = np.arange(48, dtype="<i8").reshape(6, 8) * 1000 + 1
    parts = [gzip.compress(data[2 * r:2 * r + 2, 2 * c:2 * c + 2].tobytes(), 9, mtime=123456789)
             for r in range(2) for c in range(4)]
    parts[6] = None                                                  # inner chunk (1, 2) empty
    store.set("a/c/0/0", pack_shard(parts, location, gap=3, reverse=True))
    a[1, 1] = -5                                                     # inner chunk (0, 0), partly
    a[2:4, 2:4] = 0                                                  # inner chunk (1, 1): all fill
    a[2, 4] = 77                                                     # inner chunk (1, 2): was empty
    data[1, 1], data[2:4, 2:4], data[2:4, 4:6], data[2, 4] = -5, 0, 0, 77
    np.testing.assert_array_equal(a[...][:4], data[:4])
    raw = shard_value(store, "a/c/0/0")
    new = inner_chunk_bytes(raw, parse_shard(raw, 8, location))
    for i in (1, 2, 3, 4, 7):
        assert new[i] == parts[i], f"inner chunk {i} was not kept byte for byte"
    assert new[0] != parts[0] and new[5] is None and new[6] is not None
    assert gzip.decompress(new[0]) == data[0:2, 0:2].tobytes()
    assert gzip.decompress(new[6]) == data[2:4, 4:6].tobytes()
    # no unused space is carried over: the new shard is exactly its chunks and index
    assert len(raw) == sum(len(p) for p in new if p is not None) + index_nbytes(8)
    np.testing.assert_array_equal(zarrc.open_array(store, path="a", mode="r")[0:4], data[:4])


def test_nested_partial_write_keeps_other_data(rw_store_maker) -> None:
    store = rw_store_maker.new()
    a = make_layout(store, "nested")
    data = np.arange(13 * 17, dtype="i4").reshape(13, 17)
    a[...] = data
    a[3:6, 4:9:2] = 0
    data[3:6, 4:9:2] = 0
    np.testing.assert_array_equal(zarrc.open_array(store, path="a", mode="r")[...], data)


def test_nested_partial_write_keeps_untouched_bytes(rw_store_maker) -> None:
    """A nested shard built by hand (gzip with an mtime, gaps, reverse order): a write
    into one inner chunk keeps the other sub-shards byte for byte, and the other inner
    chunks of the touched sub-shard too."""
    store = rw_store_maker.new()
    a = make_layout(store, "nested")                      # shards (8, 12) > (4, 6) > (2, 3)
    data = (np.arange(8 * 12).reshape(8, 12) * 7).astype(">i4")   # the inner codec is big endian

    def sub_shard(r0, c0):
        parts = [gzip.compress(data[r0 + 2 * r:r0 + 2 * r + 2, c0 + 3 * c:c0 + 3 * c + 3].tobytes(), 9,
                               mtime=987654321) for r in range(2) for c in range(2)]
        return pack_shard(parts, "start", "be", gap=2, reverse=True)
    subs = [sub_shard(4 * r, 6 * c) for r in range(2) for c in range(2)]
    store.set("a/c/0/0", pack_shard(subs, "end", "crc", gap=7, reverse=True))
    expected = np.full((13, 17), -1, np.int32)
    expected[:8, :12] = data
    np.testing.assert_array_equal(a[...], expected)
    a[5, 8] = 1                             # sub-shard (1, 1) = 3, its inner chunk (0, 0) = 0
    expected[5, 8] = 1
    np.testing.assert_array_equal(zarrc.open_array(store, path="a", mode="r")[...], expected)
    raw = shard_value(store, "a/c/0/0")
    new_subs = inner_chunk_bytes(raw, parse_shard(raw, 4, "end", "crc"))
    assert new_subs[:3] == subs[:3]
    old_inner = inner_chunk_bytes(subs[3], parse_shard(subs[3], 4, "start", "be"))
    new_inner = inner_chunk_bytes(new_subs[3], parse_shard(new_subs[3], 4, "start", "be"))
    assert new_inner[1:] == old_inner[1:] and new_inner[0] != old_inner[0]


@pytest.mark.parametrize("layout", ["shards=", "start+crc", "nested", "nested-3-levels"])
def test_writer_with_a_stale_cached_index(layout) -> None:
    """Two open arrays write the same shards one after the other: the second one's
    cached indexes of the shards the first rewrote must not be used to copy bytes."""
    store = MemoryStore()
    a1 = make_layout(store, layout)
    data = np.arange(math.prod(a1.shape), dtype="i4").reshape(a1.shape)
    a1[...] = data
    a2 = zarrc.open_array(store, path="a", mode="r+")
    np.testing.assert_array_equal(a2[...], data)          # a2 caches every index
    corner = (slice(0, 2),) * a1.ndim
    a1[corner] = 100000 + data[corner] * 3                 # inner chunks change size and move
    data[corner] = 100000 + data[corner] * 3
    a1[(0,) * (a1.ndim - 1) + (4,)] = -1                   # an inner chunk emptied
    data[(0,) * (a1.ndim - 1) + (4,)] = -1
    last = tuple(min(5, n - 1) for n in a1.shape)
    a2[last] = -9                                           # same shard, other inner chunk
    data[last] = -9
    np.testing.assert_array_equal(zarrc.open_array(store, path="a", mode="r")[...], data)


def test_fill_inner_chunks_are_empty_and_write_empty_chunks_keeps_them() -> None:
    for write_empty in (False, True):
        store = MemoryStore()
        a = zarrc.create_array(store, name="a", shape=(4, 4), dtype="i4", chunks=(2, 2), shards=(4, 4),
                               fill_value=0, write_empty_chunks=write_empty)
        data = np.zeros((4, 4), "i4")
        data[0, 0] = 1
        data[3, 3] = 2
        a[...] = data
        table = parse_shard(shard_value(store, "a/c/0/0"), 4)
        empty = [tuple(map(int, e)) == (EMPTY, EMPTY) for e in table]
        assert empty == ([False] * 4 if write_empty else [False, True, True, False])
        np.testing.assert_array_equal(a[...], data)


def test_shard_without_data_is_not_stored(rw_store_maker) -> None:
    store = rw_store_maker.new()
    a = zarrc.create_array(store, name="a", shape=(8, 8), dtype="i4", chunks=(2, 2), shards=(4, 4),
                           fill_value=-1)
    a[0:4, 0:4] = -1                                            # whole shard of fill: nothing stored
    a[5, 5] = -1                                                # part of a missing shard: same
    assert list(store.list_prefix("a/c")) == []
    a[...] = np.arange(64).reshape(8, 8)
    a[0:4, 0:4] = -1                                            # whole shard: deleted
    a[4:8, 4:7] = -1
    a[4:8, 7] = -1                                              # the last non-fill part: deleted
    assert sorted(store.list_prefix("a/c")) == ["a/c/0/1", "a/c/1/0"]
    expected = np.arange(64).reshape(8, 8)
    expected[0:4, 0:4] = expected[4:8, 4:8] = -1
    np.testing.assert_array_equal(zarrc.open_array(store, path="a")[...], expected)


def test_zip_store_deletes_an_all_fill_shard(tmp_path) -> None:
    with ZipStore(tmp_path / "a.zip", mode="w") as store:
        a = zarrc.create_array(store, name="a", shape=(8, 8), dtype="i4", chunks=(2, 2), shards=(4, 4),
                               fill_value=-1)
        a[0:4, 0:4] = -1                              # never existed: nothing is stored
        assert list(store.list_prefix("a/c")) == []
        a[0:4, 0:4] = 5
        assert list(store.list_prefix("a/c")) == ["a/c/0/0"]
        store.flush()                                 # the shard is in the archive on disk
        a[0:4, 0:4] = -1                              # all fill: the member is deleted, as elsewhere
        assert list(store.list_prefix("a/c")) == []
        np.testing.assert_array_equal(a[...], np.full((8, 8), -1))
    with zipfile.ZipFile(tmp_path / "a.zip") as zf:
        assert not [n for n in zf.namelist() if n.startswith("a/c")]


# ------------------------------------------------------------------ malformed shards

def malformed_shards(location: str) -> dict:
    """name -> (shard bytes, expected error, the bad inner chunk or None for the whole
    shard).  The well-formed shard holds 4 inner chunks of 16 bytes (2x2 int32, bytes
    codec) back to back, its index with crc32c at ``location``."""
    n = index_nbytes(4)
    base = n if location == "start" else 0
    good_entries = [(base + 16 * i, 16) for i in range(4)]
    payload = b"".join(np.full((2, 2), i + 1, "<i4").tobytes() for i in range(4))

    def with_entry(i, entry):
        e = list(good_entries)
        e[i] = entry
        return build_shard(e, payload, location), CodecError, i
    shards = {
        "offset-past-end": with_entry(0, (base + 1000, 16)),
        "length-past-end": with_entry(3, (base + 48, 32)),
        "offset-wraps": with_entry(1, (2**64 - 8, 16)),
        "huge-length": with_entry(2, (base, 2**63)),
        "overlap": with_entry(1, (base + 8, 16)),
        "half-empty-offset": with_entry(2, (EMPTY, 16)),
        "half-empty-nbytes": with_entry(2, (base + 32, EMPTY)),
        "wrong-nbytes": with_entry(0, (base, 12)),
        "zero-nbytes": with_entry(0, (base, 0)),
        "zero-nbytes-past-end": with_entry(0, (base + 5000, 0)),
    }
    if location == "start":
        shards["into-index"] = with_entry(0, (base - 8, 16))
    good = build_shard(good_entries, payload, location)
    shards["truncated"] = (good[:-10], ChecksumError if location == "end" else CodecError, None)
    short = good[:n - 20] if location == "start" else good[-(n - 20):]
    shards["shorter-than-index"] = (short, CodecError, None)
    shards["empty-value"] = (b"", CodecError, None)
    bad = bytearray(good)
    bad[(0 if location == "start" else len(good) - n) + 9] ^= 1
    shards["bad-crc"] = (bytes(bad), ChecksumError, None)
    return shards


MALFORMED = [(loc, name) for loc in ("start", "end") for name in malformed_shards(loc)]


@pytest.mark.parametrize("location,variant", MALFORMED, ids=[f"{l}-{n}" for l, n in MALFORMED])
def test_malformed_shard_raises_naming_the_key(location, variant, rw_store_maker) -> None:
    raw, error, bad = malformed_shards(location)[variant]
    store = rw_store_maker.new()
    a = zarrc.create_array(store, name="a", shape=(8, 8), dtype="<i4", chunks=(4, 4), compressors=None,
                           serializer=sharding((2, 2), [LE], location), fill_value=0)
    a[...] = 9
    store.set("a/c/1/0", raw)
    reader = zarrc.open_array(store, path="a", mode="r")
    # the whole array, the bad shard, the bad inner chunk (each with a fresh index cache)
    selections = [Ellipsis, (slice(4, 8), slice(0, 4))]
    if bad is not None:
        selections.append((4 + 2 * (bad // 2), 2 * (bad % 2)))
    for sel in selections:
        with pytest.raises(error, match="a/c/1/0") as info:
            zarrc.open_array(store, path="a", mode="r")[sel]
        assert type(info.value) is error
    np.testing.assert_array_equal(reader[0:4, :], np.full((4, 8), 9))    # other shards read
    # a partial write of the bad shard raises and stores nothing ...
    before = {k: shard_value(store, k) for k in store.list()}
    with pytest.raises(CodecError, match="a/c/1/0"):
        a[4, 0] = 1
    assert {k: shard_value(store, k) for k in store.list()} == before
    # ... a write of the whole shard replaces it without reading it
    a[4:8, 0:4] = 2
    np.testing.assert_array_equal(zarrc.open_array(store, path="a", mode="r")[4:8, 0:4], np.full((4, 4), 2))


def test_malformed_nested_shard_index(rw_store_maker) -> None:
    store = rw_store_maker.new()
    a = make_layout(store, "nested")
    a[...] = np.arange(13 * 17, dtype="i4").reshape(13, 17)
    raw = bytearray(shard_value(store, "a/c/0/1"))
    outer = parse_shard(bytes(raw), 4)
    off = int(outer[0, 0])
    # the nested shard's index is at its start, big endian, no crc: entry 0's offset
    raw[off:off + 8] = (2**40).to_bytes(8, "big")
    store.set("a/c/0/1", bytes(raw))
    reader = zarrc.open_array(store, path="a", mode="r")
    with pytest.raises(CodecError, match="a/c/0/1"):
        reader[0, 12]
    with pytest.raises(CodecError, match="a/c/0/1"):
        reader[...]
    np.testing.assert_array_equal(reader[:, :12], np.arange(13 * 17).reshape(13, 17)[:, :12])
