"""Array.resize and Array.append: zarrc against a numpy model of the array (a shrink
drops the values beyond the new shape; a grow shows the fill value there), and
zarr-python reading the store zarrc resized gets the same values bit for bit,
dtype included.  The store itself is checked too: no chunk (shard) wholly outside
the shape is left, and no shard keeps an inner chunk wholly beyond the shape.
v2, v3, sharded and nested-sharded, 1-D to 3-D with edge chunks; data written by
zarrc or by zarr-python; memory, local and zip stores."""

from __future__ import annotations

import json
import math
import os
import shutil
import warnings
import zipfile

import numpy as np
import pytest
from helpers import NO_ZARR_PYTHON
from interop import support

import zarrc
from zarrc.errors import ArgumentError, ArgumentTypeError, StoreError
from zarrc.core.resize import ENUMERATE_MAX, cut_regions, outside_coords
from zarrc.stores import MemoryStore, ZipStore

zarr = pytest.importorskip("zarr", reason=NO_ZARR_PYTHON)

META = {"zarr.json", ".zarray", ".zattrs", ".zgroup"}
EMPTY = 2**64 - 1

# ndim -> (shape, chunks, shards, nested: (shard, middle)); edge chunks everywhere
LAYOUTS = {
    1: ((23,), (4,), (8,), (16, 8)),
    2: ((13, 11), (3, 4), (6, 8), (12, 8, 6, 4)),
    3: ((7, 6, 9), (2, 3, 4), (4, 3, 8), (4, 6, 8, 2, 3, 4)),
}


def zarr_python_create(store, fmt: int, kind: str, ndim: int, fill, dtype="int32", **extra):
    """An empty array made by zarr-python (in ``store``: a path or a zarr-python store)."""
    from zarr.codecs import BytesCodec, ShardingCodec, ZstdCodec
    shape, chunks, shards, nested = LAYOUTS[ndim]
    kw: dict = {"chunks": chunks}
    if kind == "sharded":
        kw["shards"] = shards
    elif kind == "nested":
        outer, middle = nested[:ndim], nested[ndim:]
        kw = {"chunks": outer, "compressors": None, "serializer": ShardingCodec(
            chunk_shape=middle, codecs=[ShardingCodec(chunk_shape=chunks,
                                                      codecs=[BytesCodec(), ZstdCodec(level=1)])])}
    return zarr.create_array(store, shape=shape, dtype=dtype, fill_value=fill, zarr_format=fmt,
                             **kw, **extra)


def shard_levels(kind: str, ndim: int) -> list[tuple[tuple[int, ...], tuple[int, ...]]]:
    """(shard shape, inner chunk shape) of each sharding level, outermost first."""
    _, chunks, shards, nested = LAYOUTS[ndim]
    if kind == "sharded":
        return [(shards, chunks)]
    if kind == "nested":
        return [(nested[:ndim], nested[ndim:]), (nested[ndim:], chunks)]
    return []


def stored_inner_origins(blob: bytes, levels, origin: np.ndarray) -> list[tuple[int, ...]]:
    """Array index of the first element of each innermost chunk stored in the shard
    ``blob`` (index at the end, crc32c: zarr-python's default layout), whose first
    element is at ``origin``."""
    (shard, inner), rest = levels[0], levels[1:]
    cps = tuple(s // i for s, i in zip(shard, inner))
    n = math.prod(cps)
    index = np.frombuffer(blob[len(blob) - 16 * n - 4:len(blob) - 4], "<u8").reshape(n, 2)
    out = []
    for (offset, nbytes), corner in zip(index.tolist(), np.ndindex(*cps)):
        if offset == EMPTY:
            continue
        at = origin + np.asarray(corner, np.int64) * np.asarray(inner, np.int64)
        if rest:
            out += stored_inner_origins(blob[offset:offset + nbytes], rest, at)
        else:
            out.append(tuple(int(x) for x in at))
    return out


def chunk_coords(key: str, fmt: int) -> tuple[int, ...]:
    return tuple(int(x) for x in (key.split(".") if fmt == 2 else key.split("/")[1:]))


def check_store(files: dict[str, bytes], fmt: int, kind: str, shape: tuple[int, ...],
                outer: tuple[int, ...]) -> None:
    """Every stored chunk (shard) meets ``shape``; so does every inner chunk a shard holds."""
    levels = shard_levels(kind, len(shape))
    for key, blob in files.items():
        if key in META:
            continue
        coords = chunk_coords(key, fmt)
        assert all(c * n < s for c, n, s in zip(coords, outer, shape)), \
            f"chunk {key} lies wholly outside the shape {shape}"
        if levels:
            origin = np.asarray(coords, np.int64) * np.asarray(outer, np.int64)
            for at in stored_inner_origins(blob, levels, origin):
                assert all(a < s for a, s in zip(at, shape)), \
                    f"shard {key} holds an inner chunk at {at}, wholly outside the shape {shape}"


class Model:
    """The values an array must hold: a shrink drops what is beyond the new shape,
    a grow adds the fill value."""

    def __init__(self, data: np.ndarray, fill) -> None:
        self.data, self.fill = data.copy(), fill

    def resize(self, shape: tuple[int, ...]) -> None:
        new = np.full(shape, self.fill, self.data.dtype)
        both = tuple(slice(0, min(a, b)) for a, b in zip(shape, self.data.shape))
        new[both] = self.data[both]
        self.data = new


class Subject:
    """An array zarrc resizes, in a memory store or a directory, with its model."""

    def __init__(self, store, fmt: int, kind: str, model: Model) -> None:
        self.store, self.fmt, self.kind, self.model = store, fmt, kind, model
        self.a = zarrc.open_array(store, mode="r+")
        self.outer = self.a.shards or self.a.chunks

    def files(self) -> dict[str, bytes]:
        if isinstance(self.store, MemoryStore):
            return {k: bytes(v) for k, v in self.store.data.items()}
        return read_tree(self.store)

    def check(self, what: str) -> None:
        """zarrc and zarr-python (reading the same bytes) both read the model; the
        store holds nothing wholly outside the shape."""
        expected = self.model.data
        assert self.a.shape == expected.shape, what
        support.assert_bit_equal(self.a[...], expected, f"zarrc after {what}")
        files = self.files()
        zp = zarr.open_array(memory_store(files), mode="r")
        assert zp.shape == expected.shape, what
        support.assert_bit_equal(zp[...], expected, f"zarr-python after {what}")
        check_store(files, self.fmt, self.kind, expected.shape, self.outer)

    def resize(self, shape: tuple[int, ...]) -> None:
        self.a.resize(shape)
        self.model.resize(shape)
        self.check(f"resize to {shape}")

    def append(self, data, axis: int = 0) -> None:
        got = self.a.append(data, axis=axis)
        data = np.asarray(data, self.model.data.dtype)
        self.model.data = np.concatenate([self.model.data, data], axis=axis)
        assert got == self.model.data.shape
        self.check(f"append of {np.shape(data)} along {axis}")


def read_tree(root: str) -> dict[str, bytes]:
    out = {}
    for base, _, files in os.walk(root):
        for name in files:
            full = os.path.join(base, name)
            with open(full, "rb") as f:
                out[os.path.relpath(full, root).replace(os.sep, "/")] = f.read()
    return out


def memory_store(files: dict[str, bytes]):
    return zarr.storage.MemoryStore({k: zarr.core.buffer.cpu.Buffer.from_bytes(v)
                                     for k, v in files.items()})


def made(fmt: int, kind: str, ndim: int, writer: str, store_kind: str, tmp_path,
         fill=-7) -> Subject:
    """An array made by zarr-python, written (all but the last rows of every
    dimension) by ``writer``, opened by zarrc in a store of ``store_kind``."""
    path = str(tmp_path / "a")
    z = zarr_python_create(path, fmt, kind, ndim, fill)
    shape = z.shape
    data = support.sample("int32", shape, seed=ndim)
    region = tuple(slice(0, n - 2) for n in shape)
    target = z if writer == "zarr-python" else zarrc.open_array(path, mode="r+")
    target[region] = data[region]
    expected = np.full(shape, fill, "int32")
    expected[region] = data[region]
    store = path if store_kind == "local" else MemoryStore(read_tree(path))
    return Subject(store, fmt, kind, Model(expected, fill))


CASES = [(fmt, kind, ndim) for fmt in (2, 3) for kind in ("plain", "sharded", "nested")
         for ndim in (1, 2, 3) if fmt == 3 or kind == "plain"]
STORES = [("memory", "zarrc"), ("local", "zarrc"), ("local", "zarr-python")]


@pytest.mark.parametrize(("store_kind", "writer"), STORES, ids=[f"{s}-by-{w}" for s, w in STORES])
@pytest.mark.parametrize(("fmt", "kind", "ndim"), CASES,
                         ids=[f"v{f}-{k}-{n}d" for f, k, n in CASES])
def test_resize_and_append(fmt, kind, ndim, store_kind, writer, tmp_path) -> None:
    s = made(fmt, kind, ndim, writer, store_kind, tmp_path)
    shape = s.a.shape
    s.check("opening")
    # shrink: cuts chunks (cleared beyond the new edge) and drops those wholly outside
    s.resize(tuple(max(1, n // 2 - 1) for n in shape))
    # grow: fill value beyond the shrunk edge, in zarrc and in zarr-python
    s.resize(tuple(n + 3 for n in shape))
    # shrink then grow back, one dimension at a time
    s.resize((1,) + tuple(n + 3 for n in shape[1:]))
    s.resize(shape)
    # writes after a grow, into chunks beyond the old shape
    grown = tuple(n + 5 for n in shape)
    s.resize(grown)
    region = tuple(slice(n - 4, n) for n in grown)
    s.a[region] = s.model.data[region] = support.sample("int32", grown, seed=40)[region]
    s.check("a write after growing")
    # a shrink through the chunks just written (they are cut), then a grow
    s.resize(tuple(n - 2 for n in grown))
    s.resize(grown)
    # append along axis 0 (and 1): the data lands in the new rows
    s.append(support.sample("int32", (3,) + grown[1:], seed=41))
    if ndim > 1:
        s.append(support.sample("int32", (s.a.shape[0], 2) + grown[2:], seed=42), axis=1)
    s.append(support.sample("int32", (1,) + s.a.shape[1:], seed=43).tolist())   # (a list)
    # shrink to nothing along one dimension (no chunk left), then grow
    s.resize((0,) + s.a.shape[1:])
    assert set(s.files()) <= META
    s.resize(grown)


@pytest.mark.parametrize("kind", ["sharded", "nested"])
@pytest.mark.parametrize("ndim", [1, 2, 3])
def test_cut_shard_keeps_no_inner_chunk_beyond_edge(kind, ndim, tmp_path) -> None:
    """A shard the shrink cuts is rewritten without its inner chunks beyond the new
    edge; the same shrink done by changing only the metadata would leave them (the
    check sees that)."""
    s = made(3, kind, ndim, "zarr-python", "local", tmp_path)
    small = tuple(max(1, n // 2 - 1) for n in s.a.shape)
    stale = str(tmp_path / "stale")
    shutil.copytree(s.store, stale)
    with open(os.path.join(stale, "zarr.json")) as f:
        doc = json.load(f)
    doc["shape"] = list(small)
    with open(os.path.join(stale, "zarr.json"), "w") as f:
        json.dump(doc, f)
    with pytest.raises(AssertionError, match="wholly outside the shape"):
        check_store(read_tree(stale), 3, kind, small, s.outer)
    before = {k for k in read_tree(s.store) if k not in META}
    s.resize(small)                                 # (check_store included)
    after = {k for k in read_tree(s.store) if k not in META}
    cut = {k for k in after if any((c + 1) * n > m for c, n, m in
                                   zip(chunk_coords(k, 3), s.outer, small))}
    assert cut and cut <= before


@pytest.mark.parametrize("kind", ["plain", "sharded", "nested"])
def test_store_written_beyond_new_shape_only(kind, tmp_path) -> None:
    """Data only beyond the new shape, in chunks it cuts and chunks wholly outside:
    after the shrink no chunk is left (the cut ones became all fill)."""
    s = made(3, kind, 2, "zarrc", "memory", tmp_path)
    s.a[...] = s.model.data = np.full(s.a.shape, -7, "int32")
    s.check("clearing")
    assert set(s.files()) <= META
    s.a[5:, :] = s.model.data[5:, :] = 3
    s.a[:, 6:] = s.model.data[:, 6:] = 4
    s.check("writing beyond (5, 6)")
    s.resize((5, 6))
    assert set(s.files()) <= META
    s.resize((13, 11))


@pytest.mark.parametrize("kind", ["plain", "sharded", "nested"])
def test_write_in_bounds_part_of_edge_shard_then_grow(kind, tmp_path) -> None:
    """After a shrink, a write covering the whole (in-bounds part of the) edge
    chunks and shards, then a grow: the fill value beyond the shrunk edge."""
    s = made(3, kind, 2, "zarr-python", "local", tmp_path)
    s.resize((5, 5))
    s.a[...] = s.model.data[...] = 100
    s.check("a write over the whole shrunk array")
    s.resize((13, 11))


@pytest.mark.parametrize("kind", ["plain", "sharded"])
def test_write_empty_chunks(kind, tmp_path) -> None:
    """With write_empty_chunks, the cut chunks (shards) are rewritten and kept, with
    the fill value beyond the new edge; those wholly outside are deleted."""
    path = str(tmp_path / "a")
    shards = (4, 4) if kind == "sharded" else None
    a = zarrc.create_array(path, shape=(8, 8), chunks=(2, 2), shards=shards, dtype="u2",
                           fill_value=7, write_empty_chunks=True)
    a[...] = 1
    a[:3, :3] = 7                           # the chunk (shard) cut below is all fill inside
    a.resize((3, 3))
    keys = {k for k in read_tree(path) if k not in META}
    grid = 2 if kind == "plain" else 1
    assert keys == {f"c/{i}/{j}" for i in range(grid) for j in range(grid)}
    a.resize((8, 8))
    expected = np.full((8, 8), 7, "u2")
    support.assert_bit_equal(a[...], expected)
    support.assert_bit_equal(zarr.open_array(path, mode="r")[...], expected, "zarr-python")
    b = zarrc.open_array(path, mode="r+", write_empty_chunks=True)
    b[...] = 2
    b.resize((5, 3))
    b.resize((8, 8))
    expected[:5, :3] = 2
    support.assert_bit_equal(b[...], expected)
    support.assert_bit_equal(zarr.open_array(path, mode="r")[...], expected, "zarr-python")


@pytest.mark.parametrize(("dtype", "fill"), [("int16", None), ("float64", None), ("<f4", np.nan),
                                             (">u4", 3)])
def test_v2_fill_values(dtype, fill, tmp_path) -> None:
    """v2, also without a fill value: after shrink-then-grow both libraries read
    what zarrc reads for chunks never written."""
    path = str(tmp_path / "a")
    a = zarrc.create_array(path, shape=(9, 7), chunks=(4, 3), dtype=dtype, fill_value=fill,
                           zarr_format=2)
    missing = a[...]
    data = support.sample(np.dtype(dtype).newbyteorder("="), (9, 7), seed=5)
    a[...] = data
    a.resize((5, 4))
    a.resize((9, 7))
    expected = missing.copy()
    expected[:5, :4] = data[:5, :4]
    support.assert_bit_equal(a[...], expected, "zarrc")
    support.assert_bit_equal(zarr.open_array(path, mode="r")[...], expected, "zarr-python")


@pytest.mark.parametrize(("fmt", "dtype", "fill"), [
    (2, str, None), (3, str, None), (2, [("x", "<i2"), ("y", "<f4")], None),
    (3, "complex64", 1 + 2j)])
def test_other_dtypes(fmt, dtype, fill, tmp_path) -> None:
    """Strings, structured items, complex: shrink-then-grow reads the fill value
    (what zarrc reads for chunks never written) in both libraries."""
    path = str(tmp_path / "a")
    a = zarrc.create_array(path, shape=(7, 5), chunks=(3, 2), dtype=dtype, fill_value=fill,
                           zarr_format=fmt)
    expected = a[...]
    data = np.arange(35).reshape(7, 5)
    if expected.dtype.kind == "O":
        data = data.astype(str).astype(object)
    elif expected.dtype.names:
        data = np.rec.fromarrays([data, data * 0.5], dtype=expected.dtype).view(np.ndarray)
    else:
        data = data.astype(expected.dtype)
    a[...] = data
    a.resize((4, 3))
    a.resize((7, 5))
    expected[:4, :3] = data[:4, :3]
    got = {"zarrc": a[...], "zarr-python": zarr.open_array(path, mode="r")[...]}
    for name, values in got.items():
        if expected.dtype.kind == "O":
            assert values.tolist() == expected.tolist(), name
        else:
            support.assert_bit_equal(values, expected, name)


def test_chunks_outside_are_deleted(tmp_path) -> None:
    """After a shrink the store holds only chunks of the new grid, for v2 and v3."""
    for fmt in (2, 3):
        path = str(tmp_path / f"a{fmt}")
        a = zarrc.create_array(path, shape=(10, 10), chunks=(3, 3), dtype="u1", zarr_format=fmt,
                               fill_value=0)
        a[...] = 1
        a.resize((4, 5))
        keys = {k for k in a.store.list_prefix("") if k not in META}
        sep = "." if fmt == 2 else "/"
        lead = "" if fmt == 2 else "c/"
        assert keys == {f"{lead}{i}{sep}{j}" for i in range(2) for j in range(2)}
        assert a.shape == (4, 5) and a.nchunks_initialized == 4
        a.resize((10, 10))
        expected = np.zeros((10, 10), "u1")
        expected[:4, :5] = 1
        support.assert_bit_equal(a[...], expected)


def test_many_chunks_outside_listed(monkeypatch) -> None:
    """Above ENUMERATE_MAX candidates, the stored keys are listed and only those
    inside the old grid and outside the new one go."""
    from zarrc.core import resize
    monkeypatch.setattr(resize, "ENUMERATE_MAX", 2)
    store = MemoryStore()
    a = zarrc.create_array(store, shape=(8, 8), chunks=(2, 2), dtype="u1", fill_value=0)
    a[...] = 5
    store.set("c/9/9", b"stray")                   # beyond the old grid: left
    store.set("c/notakey", b"x")
    a.resize((4, 4))
    keys = {k for k in store.list_prefix("") if k not in META}
    assert keys == {"c/0/0", "c/0/1", "c/1/0", "c/1/1", "c/9/9", "c/notakey"}
    assert ENUMERATE_MAX >= 1 << 10


@pytest.mark.parametrize(("old", "new"), [((5, 4, 3), (2, 4, 1)), ((3, 3), (0, 0)),
                                          ((4,), (4,)), ((2, 7), (5, 3)), ((), ())])
def test_outside_coords(old, new) -> None:
    import itertools
    want = set(itertools.product(*map(range, old))) - set(itertools.product(*map(range, new)))
    got = outside_coords(old, new)
    assert got.shape == (len(want), len(old))
    assert {tuple(int(c) for c in row) for row in got} == want


@pytest.mark.parametrize(("old", "chunks", "new"), [
    ((10, 7, 5), (3, 2, 5), (4, 3, 5)), ((10, 7), (3, 2), (6, 4)), ((10, 7), (3, 2), (11, 1)),
    ((9,), (4,), (2,)), ((9,), (4,), (0,)), ((5, 5), (2, 2), (5, 5)), ((7, 9), (4, 4), (5, 12)),
    ((), (), ())])
def test_cut_regions(old, chunks, new) -> None:
    """The regions cover each element of the old shape that lies in a chunk the
    new shape keeps but outside the new shape, once; nothing else."""
    covered = np.zeros(old, np.int64)
    for region in cut_regions(old, chunks, new):
        covered[region] += 1
    idx = np.indices(old)
    kept = np.ones(old, bool)
    inside = np.ones(old, bool)
    for d in range(len(old)):
        kept &= idx[d] // chunks[d] < -(-new[d] // chunks[d])
        inside &= idx[d] < new[d]
    np.testing.assert_array_equal(covered, (kept & ~inside).astype(np.int64))


def test_other_objects_keep_their_view(tmp_path) -> None:
    path = str(tmp_path / "a")
    a = zarrc.create_array(path, shape=(6,), chunks=(2,), dtype="i2", fill_value=9)
    a[...] = np.arange(6)
    b = zarrc.open_array(path, mode="r")
    a.resize((10,))
    assert a.shape == (10,) and b.shape == (6,)
    support.assert_bit_equal(b[...], np.arange(6, dtype="i2"))
    assert zarrc.open_array(path, mode="r").shape == (10,)


@pytest.mark.filterwarnings("ignore:Consolidated metadata")
def test_consolidated_metadata_kept_in_step(tmp_path) -> None:
    """The parent's consolidated metadata gets the new shape (zarr-python leaves it
    stale): the store is then what zarr-python's resize and re-consolidation make."""
    path = str(tmp_path / "g")
    g = zarrc.open_group(path, mode="w")
    g.create_array("x", shape=(4,), chunks=(2,), dtype="f4")
    zarrc.consolidate_metadata(path)
    shutil.copytree(path, str(tmp_path / "zp"))
    zarrc.open_array(path, path="x", mode="r+").resize((9,))
    zarr.open_array(str(tmp_path / "zp"), path="x", mode="r+").resize((9,))
    assert zarrc.open_consolidated(path)["x"].shape == (9,)
    assert zarr.open_consolidated(path)["x"].shape == (9,)
    zarr.consolidate_metadata(str(tmp_path / "zp"))
    ours, theirs = read_tree(path), read_tree(str(tmp_path / "zp"))
    assert set(ours) == set(theirs)
    assert {k: json.loads(v) for k, v in ours.items()} == {k: json.loads(v) for k, v in theirs.items()}


def test_errors(tmp_path) -> None:
    a = zarrc.create_array(str(tmp_path / "a"), shape=(4, 5), chunks=(2, 2), dtype="i4")
    with pytest.raises(ArgumentError, match=r"\[4\].*1 dimensions") as e:
        a.resize((4,))
    assert isinstance(e.value, ValueError)
    with pytest.raises(ValueError, match=r"-1"):
        a.resize((4, -1))
    for bad in ((4, 2.5), (4, True), "45"):
        with pytest.raises(ArgumentTypeError):
            a.resize(bad)
    a.resize(np.array([4, 5]))
    with pytest.raises(ValueError, match="compatible"):
        a.append(np.zeros((3, 4)))
    with pytest.raises(ValueError, match="compatible"):
        a.append(np.zeros((3, 5, 1)))
    with pytest.raises(ArgumentError, match="axis 2"):
        a.append(np.zeros((4, 1)), axis=2)
    assert a.append(np.ones((4, 1), "i4"), axis=-1) == (4, 6)
    assert a.shape == (4, 6)
    ro = zarrc.open_array(str(tmp_path / "a"), mode="r")
    for call in (lambda: ro.resize((1, 1)), lambda: ro.append(np.zeros((1, 6)))):
        with pytest.raises(StoreError, match="read-only"):
            call()
    assert zarrc.open_array(str(tmp_path / "a"), mode="r").shape == (4, 6)
    support.assert_bit_equal(ro[...], np.pad(np.ones((4, 1), "i4"), ((0, 0), (5, 0))))


@pytest.mark.parametrize("shards", [None, (4, 4)])
def test_zip(shards, tmp_path) -> None:
    """A zip grows, appends and shrinks like any store (a rewritten key replaces its
    member and chunks outside the shape are deleted, with no warning); zarr-python
    reads the result, which holds one member per key."""
    zipped = str(tmp_path / "a.zip")
    store = ZipStore(zipped, mode="w")
    data = support.sample("int32", (10, 4), seed=3)
    a = zarrc.create_array(store, shape=(10, 4), dtype="int32", chunks=(2, 2), shards=shards,
                           fill_value=0)
    a[...] = data
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        assert a.append(data[:3]) == (13, 4)
        a.resize((13, 6))
        store.flush()
        a.resize((3, 3))                                      # deletes chunks (shards) outside
        a.resize((5, 6))
    expected = np.zeros((5, 6), "int32")
    expected[:3, :3] = data[:3, :3]
    support.assert_bit_equal(a[...], expected)
    keys = sorted(store.list())
    store.close()
    support.assert_bit_equal(zarr.open_array(zarr.storage.ZipStore(zipped, mode="r"))[...],
                             expected, "zarr-python")
    reopened = zarrc.open_array(zipped, mode="r")
    assert reopened.shape == (5, 6)
    support.assert_bit_equal(reopened[...], expected, "zarrc")
    with zipfile.ZipFile(zipped) as z:
        assert sorted(z.namelist()) == keys
