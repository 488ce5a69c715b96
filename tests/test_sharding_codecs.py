"""Codecs around ``sharding_indexed`` and variable-length items in it, against
zarr-python: bytes->bytes codecs after it (``[sharding_indexed, zstd]``: the
whole shard compressed), array->array codecs before it (``[transpose,
sharding_indexed]``: the inner chunk grid over the transposed shard), vlen-utf8 /
vlen-bytes inner chunks, and nested sharding with a codec after the inner
sharding.  Each layout written by zarr-python is read by zarrc, and written by
zarrc (whole and partial writes, over existing shards) read by zarr-python, on
local, memory and zip stores."""

from __future__ import annotations

import json
import os
import shutil
import warnings

import numpy as np
import pytest
from helpers import NO_ZARR_PYTHON, files, snapshot
from interop.support import assert_bit_equal, sample
from selection_pairs import GEOMETRY

import zarrc
from zarrc.errors import ChecksumError, CodecError
from zarrc.stores import LocalStore, MemoryStore, ZipStore

zarr = pytest.importorskip("zarr", reason=NO_ZARR_PYTHON)
# zarr-python warns that codecs around sharding_indexed disable its partial reads
pytestmark = [pytest.mark.filterwarnings("ignore:Combining a `sharding_indexed` codec")]

LE = {"name": "bytes", "configuration": {"endian": "little"}}
ZSTD = {"name": "zstd", "configuration": {"level": 3, "checksum": False}}
GZIP = {"name": "gzip", "configuration": {"level": 1}}
# (transpose order, inner chunks dividing both the shard shape and the transposed
# shard shape: zarr-python checks the first, the spec the second)
TRANSPOSED = {1: ((0,), (3,)), 2: ((1, 0), (2, 2)), 3: ((2, 0, 1), (2, 2, 2))}
STRINGS = ["", "a", "héllo wörld", "日本語", "x" * 300, "tab\tnew\nline", "\x00nul"]
BLOBS = [b"", b"\x00", b"\xff\xfe", b"abc" * 50, b"z", b"\x00\x01\x02", b"q" * 7]


def sharding(inner, codecs, location="end") -> dict:
    return {"name": "sharding_indexed", "configuration": {
        "chunk_shape": list(inner), "codecs": codecs,
        "index_codecs": [LE, {"name": "crc32c"}], "index_location": location}}


def transpose(order) -> dict:
    return {"name": "transpose", "configuration": {"order": list(order)}}


def layout(name: str, ndim: int) -> dict:
    """create_array keywords (both libraries take these JSON forms) of a layout."""
    shape, inner, middle, shards = GEOMETRY[ndim]
    order, inner_t = TRANSPOSED[ndim]
    kw: dict = {"shape": shape, "chunks": shards, "filters": None, "compressors": None}
    if name == "zstd-after":
        kw.update(dtype="uint16", fill_value=7, serializer=sharding(inner, [LE]), compressors=[ZSTD])
    elif name == "transpose":
        kw.update(dtype="float64", fill_value=0, filters=[transpose(order)],
                  serializer=sharding(inner_t, [LE, ZSTD]))
    elif name == "transpose-gzip-start":
        kw.update(dtype="int32", fill_value=-1, filters=[transpose(order)],
                  serializer=sharding(inner_t, [LE], "start"), compressors=[GZIP])
    elif name == "vlen-utf8":
        kw.update(dtype="str", fill_value="", serializer=sharding(inner, [{"name": "vlen-utf8"}, ZSTD]))
    elif name == "vlen-bytes":
        kw.update(dtype="bytes", fill_value=b"", serializer=sharding(inner, [{"name": "vlen-bytes"}]),
                  compressors=[ZSTD])
    elif name == "vlen-nested":
        kw.update(dtype="str", fill_value="",
                  serializer=sharding(middle, [sharding(inner, [{"name": "vlen-utf8"}], "start")]))
    elif name == "nested-zstd":
        kw.update(dtype="int16", fill_value=0,
                  serializer=sharding(middle, [sharding(inner, [LE], "start"), ZSTD]))
    else:
        raise AssertionError(name)
    return kw


LAYOUTS = ["zstd-after", "transpose", "transpose-gzip-start", "vlen-utf8", "vlen-bytes", "vlen-nested",
           "nested-zstd"]
CASES = [(lay, nd, st) for lay in LAYOUTS for nd in GEOMETRY if nd <= 3
         for st in ("local", "memory", "zip") if st == "local" or nd == 2]


def values(kw: dict, seed: int) -> np.ndarray:
    shape = kw["shape"]
    if kw["dtype"] in ("str", "bytes"):
        pool = STRINGS if kw["dtype"] == "str" else BLOBS
        out = np.empty(shape, object)
        for i, idx in enumerate(np.ndindex(*shape)):
            out[idx] = pool[(i * 3 + i // 5 + seed) % len(pool)]
        return out
    return sample(kw["dtype"], shape, seed=seed)


def zarr_create(root: str, kw: dict):
    kw = dict(kw)
    if kw["dtype"] == "bytes":
        from zarr.core.dtype import VariableLengthBytes
        kw["dtype"] = VariableLengthBytes()
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")        # zarr-python warns that partial reads are off
        return zarr.create_array(root, **kw)


def zarr_open(root: str):
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        return zarr.open_array(root, mode="r")


def zarrc_dtype(kw: dict) -> dict:
    return {**kw, "dtype": {"str": str, "bytes": bytes}.get(kw["dtype"], kw["dtype"])}


def assert_same(actual, expected, what: str) -> None:
    """Bit for bit for numbers; the same items of the same types for strings and bytes
    (object arrays; zarr-python may give numpy's StringDType)."""
    actual, expected = np.asarray(actual), np.asarray(expected)
    if actual.dtype.kind in "OTUS" or expected.dtype.kind in "OTUS":
        assert actual.dtype.kind in "OTUS" and expected.dtype.kind in "OTUS", what
        assert actual.shape == expected.shape, what
        got, want = actual.ravel().tolist(), expected.ravel().tolist()
        assert got == want, what
        assert [type(v) for v in got] == [type(v) for v in want], what
        return
    assert_bit_equal(actual, expected, what)


def edits(kw: dict, ndim: int) -> list:
    """(selection, value seed or None for the fill value) of partial writes that
    touch parts of shards, whole inner chunks (left missing when fill) and cross
    shard boundaries."""
    shape, inner = kw["shape"], GEOMETRY[ndim][1]
    first_inner = tuple(slice(0, n) for n in inner)
    across = tuple(slice(max(0, s // 2 - 3), min(s, s // 2 + 2)) for s in shape)
    tail = tuple(slice(s - 1, s) for s in shape)
    strided = tuple(slice(1, None, 3) for _ in shape)
    return [(first_inner, None), (across, 11), (tail, 12), (strided, 13)]


def put(a, sel, seed, kw) -> None:
    if seed is None:
        a[sel] = kw["fill_value"]
        return
    a[sel] = values({**kw, "shape": np.empty(kw["shape"], np.int8)[sel].shape}, seed)


def zarrc_store(kind: str, where: str):
    if kind == "local":
        return LocalStore(where, mode="w")
    if kind == "zip":
        return ZipStore(where + ".zip", mode="w")
    return MemoryStore()


def copy_into(store, root: str) -> None:
    for rel, data in files(root).items():
        store.set(rel.replace(os.sep, "/"), data)


def copy_out(store, root: str) -> None:
    for key, data in snapshot(store).items():
        path = os.path.join(root, *key.split("/"))
        os.makedirs(os.path.dirname(path), exist_ok=True)
        with open(path, "wb") as f:
            f.write(data)


@pytest.mark.parametrize("case", CASES, ids=lambda c: f"{c[0]}-{c[1]}d-{c[2]}")
def test_zarr_python_writes_zarrc_reads(tmp_path, case) -> None:
    name, ndim, kind = case
    kw = layout(name, ndim)
    root = str(tmp_path / "z")
    z = zarr_create(root, kw)
    # the last shard of every dimension stays unwritten; fill-value inner chunks missing
    head = tuple(slice(0, s - 1) for s in kw["shape"])
    put(z, head, 1, kw)
    for sel, seed in edits(kw, ndim):
        put(z, sel, seed, kw)
    expected = zarr_open(root)[...]
    if kind == "local":
        a = zarrc.open_array(root, mode="r")
    else:
        store = zarrc_store(kind, str(tmp_path / "c"))
        copy_into(store, root)
        a = zarrc.open_array(store, mode="r")
    what = f"{name} {ndim}-d {kind}"
    assert_same(a[...], expected, what)
    for sel, _ in edits(kw, ndim):
        assert_same(a[sel], expected[sel], f"{what} {sel}")
    point = tuple(s // 2 for s in kw["shape"])
    assert_same(a[point], expected[point], f"{what} {point}")
    # zarr-python's chunks / shards: inner chunks and shards where sharding_indexed is
    # the only codec, else the shard is the chunk
    zr = zarr_open(root)
    assert (a.chunks, a.shards, a.cdata_shape, a.nchunks) == (zr.chunks, zr.shards, zr.cdata_shape, zr.nchunks)


@pytest.mark.parametrize("case", CASES, ids=lambda c: f"{c[0]}-{c[1]}d-{c[2]}")
def test_zarrc_writes_zarr_python_reads(tmp_path, case) -> None:
    name, ndim, kind = case
    kw = layout(name, ndim)
    z = zarr_create(str(tmp_path / "z"), kw)
    store = zarrc_store(kind, str(tmp_path / "c"))
    a = zarrc.create_array(store, **zarrc_dtype(kw))
    what = f"{name} {ndim}-d {kind}"
    for target in (z, a):
        put(target, Ellipsis, 1, kw)                     # whole shards
        for sel, seed in edits(kw, ndim):                # parts of existing shards
            put(target, sel, seed, kw)
    expected = zarr_open(str(tmp_path / "z"))[...]
    assert_same(a[...], expected, f"{what}: zarrc")
    out = str(tmp_path / "out")
    if kind == "local":
        out = store.root
    else:
        copy_out(store, out)
    assert_same(zarr_open(out)[...], expected, f"{what}: zarr-python reads zarrc")
    assert sorted(k for k in files(out) if "zarr.json" not in k) == \
        sorted(k for k in files(str(tmp_path / "z")) if "zarr.json" not in k), what


@pytest.mark.parametrize("name", LAYOUTS)
def test_fill_shards_deleted_and_new_shards_partly_written(tmp_path, name) -> None:
    kw = layout(name, 2)
    z = zarr_create(str(tmp_path / "z"), kw)
    a = zarrc.create_array(str(tmp_path / "c"), **zarrc_dtype(kw))
    shards = kw["chunks"]
    first = tuple(slice(0, s) for s in shards)
    inside = tuple(slice(1, 3) for _ in shards)             # part of a shard never written
    for target in (z, a):
        put(target, Ellipsis, 2, kw)
        target[first] = kw["fill_value"]                    # a whole shard of fill: deleted
        put(target, tuple(slice(s + 1, s + 3) for s in shards), 5, kw)
    b = zarrc.create_array(str(tmp_path / "d"), **zarrc_dtype(kw))
    put(b, inside, 3, kw)
    zb = zarr_create(str(tmp_path / "zb"), kw)
    put(zb, inside, 3, kw)
    for mine, theirs in ((tmp_path / "c", tmp_path / "z"), (tmp_path / "d", tmp_path / "zb")):
        assert_same(zarr_open(str(mine))[...], zarr_open(str(theirs))[...], name)
        assert sorted(k for k in files(mine) if "zarr.json" not in k) == \
            sorted(k for k in files(theirs) if "zarr.json" not in k)
    assert not os.path.exists(tmp_path / "c" / "c" / "0" / "0")


def test_write_empty_chunks_keeps_fill_inner_chunks(tmp_path) -> None:
    """write_empty_chunks: shards of fill values stored, every inner chunk in them."""
    kw = layout("zstd-after", 2)
    a = zarrc.create_array(str(tmp_path / "c"), **zarrc_dtype(kw), write_empty_chunks=True)
    a[...] = kw["fill_value"]
    assert_same(zarr_open(str(tmp_path / "c"))[...], np.full(kw["shape"], kw["fill_value"], kw["dtype"]),
                "write_empty_chunks")
    assert len([k for k in files(tmp_path / "c") if "zarr.json" not in k]) == 4
    z = zarr_open(str(tmp_path / "c"))
    from zarrc.codecs.zstd import Zstd
    with open(tmp_path / "c" / "c" / "1" / "1", "rb") as f:
        shard = Zstd().decode(f.read())
    index = np.frombuffer(shard[-(2 * 8 * 8 + 4):-4], "<u8").reshape(-1, 2)
    assert (index[:, 0] != 2**64 - 1).all() and z.shape == kw["shape"]


@pytest.mark.parametrize("name", ["zstd-after", "vlen-utf8", "nested-zstd"])
def test_partial_writes_store_each_shard_once(tmp_path, name) -> None:
    """A write touching parts of two shards stores each once, whole, with the store's
    (atomic) set: a reader sees the old shard or the new one."""
    kw = layout(name, 2)

    class Recording(MemoryStore):
        def set(self, key, value):
            calls.append(key)
            super().set(key, value)

    calls: list[str] = []
    store = Recording()
    a = zarrc.create_array(store, **zarrc_dtype(kw))
    put(a, Ellipsis, 1, kw)
    calls.clear()
    shards = kw["chunks"]
    put(a, (slice(shards[0] - 1, shards[0] + 1), slice(0, 2)), 4, kw)
    assert sorted(calls) == ["c/0/0", "c/1/0"]


def test_failed_write_stores_nothing(tmp_path) -> None:
    kw = layout("vlen-utf8", 2)
    a = zarrc.create_array(str(tmp_path / "c"), **zarrc_dtype(kw))
    put(a, Ellipsis, 1, kw)
    before = files(tmp_path / "c")
    value = values({**kw, "shape": (12, 2)}, 2)
    value[11, 1] = b"\xff"                        # not UTF-8: the second shard fails to encode
    with pytest.raises(CodecError, match=r"item \(11, 1\) of /: vlen-utf8"):
        a[:12, :2] = value
    assert files(tmp_path / "c") == before


@pytest.mark.parametrize("damage", ["flip", "truncate", "garbage"])
def test_corrupt_compressed_shard_names_the_key(tmp_path, damage) -> None:
    kw = layout("zstd-after", 2)
    root = str(tmp_path / "z")
    z = zarr_create(root, kw)
    put(z, Ellipsis, 1, kw)
    path = os.path.join(root, "c", "1", "0")
    with open(path, "rb") as f:
        data = bytearray(f.read())
    if damage == "flip":
        data[0] ^= 0xFF                              # the zstd frame's magic number
    elif damage == "truncate":
        data = data[:len(data) // 2]
    else:                        # a valid zstd frame too small to hold the shard index
        from zarrc.codecs.zstd import Zstd
        data = bytearray(Zstd(level=1).encode(b"not a shard"))
    with open(path, "wb") as f:
        f.write(data)
    a = zarrc.open_array(root, mode="r")
    with pytest.raises(CodecError, match="c/1/0"):
        a[...]
    assert_same(a[:8], zarr_open(root)[:8], "the other shards still read")


def test_corrupt_index_of_transposed_shard(tmp_path) -> None:
    kw = layout("transpose", 2)
    root = str(tmp_path / "z")
    put(zarr_create(root, kw), Ellipsis, 1, kw)
    path = os.path.join(root, "c", "0", "1")
    with open(path, "r+b") as f:
        f.seek(-6, os.SEEK_END)
        byte = f.read(1)
        f.seek(-6, os.SEEK_END)
        f.write(bytes([byte[0] ^ 1]))
    a = zarrc.open_array(root, mode="r")
    with pytest.raises(ChecksumError, match="c/0/1"):
        a[:, 6:]


def test_inner_grid_is_over_the_transposed_shard(tmp_path) -> None:
    """The spec's rule: the inner chunk shape divides the transposed shard (a shard of
    (4, 6) stored as (6, 4), inner chunks (3, 2)); zarr-python cannot create this, so
    the layout is checked against the inner chunks read by hand."""
    data = np.arange(8 * 12, dtype="<i4").reshape(8, 12)
    a = zarrc.create_array(str(tmp_path), shape=(8, 12), chunks=(4, 6), dtype="i4", fill_value=0,
                           filters=[transpose((1, 0))], serializer=sharding((3, 2), [LE]),
                           compressors=None)
    a[...] = data
    assert_bit_equal(a[...], data)
    with open(tmp_path / "c" / "1" / "0", "rb") as f:
        shard = f.read()
    index = np.frombuffer(shard[-(2 * 8 * 4 + 4):-4], "<u8").reshape(2, 2, 2)
    off, nb = index[1, 1]                            # inner chunk (1, 1) of the stored (6, 4) shard
    inner = np.frombuffer(shard[off:off + nb], "<i4").reshape(3, 2)
    assert_bit_equal(inner, data[4:8, 0:6].T[3:6, 2:4])


def test_plain_sharding_keeps_its_strategy(tmp_path) -> None:
    a = zarrc.create_array(str(tmp_path / "a"), shape=(8, 8), chunks=(2, 2), shards=(4, 4), dtype="i4")
    b = zarrc.create_array(MemoryStore(), shape=(8, 8), chunks=(2, 2), shards=(4, 4), dtype="i4")
    names = {type(x._engine).__name__ for x in (a, b)}
    assert "PythonStrategy" not in names
    c = zarrc.create_array(MemoryStore(), **zarrc_dtype(layout("zstd-after", 2)))
    assert type(c._engine).__name__ == "PythonStrategy"


def test_nested_levels_read_by_zarrc_after_zarr_python_update(tmp_path) -> None:
    """zarr-python rewrites one shard of a zarrc-written nested array; zarrc then reads
    the new version (no stale index)."""
    kw = layout("nested-zstd", 1)
    a = zarrc.create_array(str(tmp_path), **zarrc_dtype(kw))
    put(a, Ellipsis, 1, kw)
    first = a[...]
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        z = zarr.open_array(str(tmp_path), mode="r+")
        z[2:5] = 99
    first[2:5] = 99
    assert_bit_equal(a[...], first)
    shutil.rmtree(tmp_path / "c")
    assert_bit_equal(a[...], np.zeros_like(first))


@pytest.mark.parametrize("kind", ["str", "bytes"])
def test_shards_keyword_with_variable_length_items(tmp_path, kind) -> None:
    """create_array(shards=...) for strings and bytes: the same codecs as zarr-python
    chooses (vlen codec and zstd inside the sharding codec), readable both ways."""
    kw = {"shape": (11, 5), "chunks": (2, 3), "shards": (4, 6)}
    data = values({"shape": kw["shape"], "dtype": kind}, 4)
    a = zarrc.create_array(str(tmp_path / "c"), dtype=str if kind == "str" else bytes, **kw)
    z = zarr_create(str(tmp_path / "z"), {**kw, "dtype": kind})
    for target in (a, z):
        target[...] = data
        put(target, (slice(3, 9), slice(1, 2)), 6, {"shape": kw["shape"], "dtype": kind,
                                                   "fill_value": "" if kind == "str" else b""})
    with open(tmp_path / "c" / "zarr.json") as f, open(tmp_path / "z" / "zarr.json") as g:
        assert json.load(f)["codecs"] == json.load(g)["codecs"]
    expected = zarr_open(str(tmp_path / "z"))[...]
    assert_same(zarr_open(str(tmp_path / "c"))[...], expected, "zarr-python reads zarrc")
    assert_same(zarrc.open_array(str(tmp_path / "z"), mode="r")[...], expected, "zarrc reads zarr-python")


@pytest.mark.parametrize("name", ["vlen-utf8", "nested-zstd", "transpose"])
def test_corrupt_inner_chunk_names_shard_and_inner_chunk(tmp_path, name) -> None:
    kw = layout(name, 2)
    root = str(tmp_path / "z")
    put(zarr_create(root, kw), Ellipsis, 1, kw)
    path = os.path.join(root, "c", "1", "0")
    with open(path, "r+b") as f:       # (index at the end: the first inner chunk's zstd frame
        f.write(b"\xde\xad\xbe\xef")    # starts the file; this is its magic number)
    a = zarrc.open_array(root, mode="r")
    with pytest.raises(CodecError, match=r"c/1/0 .*inner chunk \("):
        a[8:, :6]
