"""Array and Group calls of zarr-python 3 (issue 23, item 2), each compared with
zarr-python in the same test: v2, v3, sharded and nested-sharded arrays; local
(zarr-python opening zarrc's files), memory and zip stores."""

from __future__ import annotations

import os
import zipfile

import numpy as np
import pytest
from helpers import NO_ZARR_PYTHON
from interop.support import assert_bit_equal, sample
from selection_pairs import GEOMETRY, LAYOUTS, create

import zarrc
from zarrc.errors import ArgumentError, NodeTypeError
from zarrc.stores import LocalStore, MemoryStore, ZipStore

zarr = pytest.importorskip("zarr", reason=NO_ZARR_PYTHON)
pytestmark = pytest.mark.filterwarnings("ignore::DeprecationWarning")

STORES = ("local", "memory", "zip")


def zarrc_store(kind: str, root: str):
    if kind == "local":
        return LocalStore(os.path.join(root, "c.zarr"), mode="w")
    if kind == "zip":
        return ZipStore(os.path.join(root, "c.zip"), mode="w")
    return MemoryStore()


def stored_bytes(store, prefix: str = "") -> int:
    return sum(len(store.get(k)) for k in store.list_prefix(prefix))


def half(a) -> tuple:
    """The first half of the array along its first dimension."""
    return (slice(0, a.shape[0] // 2),)


# ------------------------------------------------------------------ arrays


@pytest.mark.parametrize("kind", STORES)
@pytest.mark.parametrize("layout", list(LAYOUTS))
def test_array_grid_counts_and_metadata_match_zarr_python(tmp_path, layout, kind):
    """chunks, shards, cdata_shape, nchunks, nchunks_initialized (before and after a
    partial write), metadata.to_dict(), nbytes_stored, compressor and values."""
    z = create(zarr, str(tmp_path / "z"), layout, 2)
    a = create(zarrc, zarrc_store(kind, str(tmp_path)), layout, 2)
    data = sample(LAYOUTS[layout], GEOMETRY[2][0], seed=5)
    assert a.nchunks_initialized == z.nchunks_initialized == 0
    for arr in (z, a):
        arr[half(arr)] = data[half(arr)]
    what = f"{layout} {kind}"
    assert (a.chunks, a.shards, a.cdata_shape, a.nchunks) == (z.chunks, z.shards, z.cdata_shape, z.nchunks), what
    assert a.nchunks_initialized == z.nchunks_initialized, what
    assert a.metadata.to_dict() == z.metadata.to_dict(), what
    assert_bit_equal(a[...], z[...], what)
    assert a.nbytes_stored() == stored_bytes(a.store, "" if not a.path else a.path + "/")
    if layout == "v2":
        with pytest.warns(Warning):
            expected = z.compressor
        assert a.compressor.get_config() == expected.get_config()
    else:
        for arr in (z, a):
            with pytest.raises(TypeError):
                _ = arr.compressor
    if kind == "local":                          # zarr-python on zarrc's files
        other = zarr.open_array(str(tmp_path / "c.zarr"), mode="r")
        assert a.nbytes_stored() == other.nbytes_stored()
        assert a.nchunks_initialized == other.nchunks_initialized
        assert a.metadata.to_dict() == other.metadata.to_dict()
        assert_bit_equal(a[...], other[...], what)


@pytest.mark.parametrize("layout", list(LAYOUTS))
def test_to_dict_of_opened_zarr_python_arrays(tmp_path, layout):
    z = create(zarr, str(tmp_path / "z"), layout, 3)
    z.update_attributes({"units": "m", "list": [1, 2]})
    a = zarrc.open_array(str(tmp_path / "z"), mode="r")
    assert a.metadata.to_dict() == z.metadata.to_dict()
    assert a.store_path.path == z.store_path.path == ""
    assert isinstance(str(a.store_path), str)


@pytest.mark.parametrize("spec", [
    {"dtype": "complex128", "fill_value": 1 + 2j},
    {"dtype": "float32", "fill_value": float("nan"), "dimension_names": ["x", None]},
    {"dtype": "bool", "fill_value": True, "filters": [{"name": "transpose", "configuration": {"order": [1, 0]}}]},
    {"dtype": "int8", "compressors": [{"name": "blosc", "configuration": {"cname": "lz4", "clevel": 3,
                                                                         "shuffle": "bitshuffle"}}]},
    {"dtype": "float64", "fill_value": -np.inf, "zarr_format": 2},
    {"dtype": "<U3", "zarr_format": 2},
    {"dtype": str, "zarr_format": 2},
    {"dtype": str},
])
def test_to_dict_of_other_metadata(tmp_path, spec):
    z = zarr.create_array(str(tmp_path / "z"), shape=(4, 6), chunks=(2, 3), **spec)
    a = zarrc.open_array(str(tmp_path / "z"), mode="r")
    assert a.metadata.to_dict() == z.metadata.to_dict()


@pytest.mark.parametrize("kind", STORES)
@pytest.mark.parametrize("layout", list(LAYOUTS))
def test_update_attributes_info_and_store_path(tmp_path, layout, kind):
    store = zarrc_store(kind, str(tmp_path))
    a = create(zarrc, store, layout, 2)
    z = create(zarr, str(tmp_path / "z"), layout, 2)
    for arr in (a, z):
        arr.attrs["keep"] = 1
        assert arr.update_attributes({"units": "m", "keep": 2}) is arr or arr.attrs.asdict() == {
            "keep": 2, "units": "m"}
    assert a.attrs.asdict() == z.attrs.asdict() == {"keep": 2, "units": "m"}
    a[...] = z[...] = sample(LAYOUTS[layout], GEOMETRY[2][0], seed=1)
    info = a.info_complete()
    rows = dict(info.rows)
    assert rows["No. bytes stored"] == a.nbytes_stored()
    initialized = "Shards Initialized" if a.shards else "Chunks Initialized"
    expected_count = z._nshards_initialized
    assert rows[initialized] == expected_count
    assert rows["Shape"] == z.shape and rows["Chunk shape"] == z.chunks
    assert ("Shard shape" in rows) == (z.shards is not None)
    assert "No. bytes stored" not in dict(a.info.rows) and "No. bytes stored" in repr(info)
    assert a.store_path.store is a.store and a.store_path.path == ""
    if kind == "local":
        z2 = zarr.open_array(str(tmp_path / "c.zarr"), mode="r")
        assert z2.attrs.asdict() == {"keep": 2, "units": "m"}


@pytest.mark.parametrize("layout", list(LAYOUTS))
def test_with_config_write_empty_chunks(tmp_path, layout):
    z = create(zarr, str(tmp_path / "z"), layout, 2)
    a = create(zarrc, MemoryStore(), layout, 2)
    assert a.write_empty_chunks is False
    for arr in (z.with_config({"write_empty_chunks": True}), a.with_config({"write_empty_chunks": True})):
        arr[...] = 0
    assert a.nchunks_initialized == z.nchunks_initialized == z.with_config({}).nchunks_initialized > 0
    b = a.with_config({"write_empty_chunks": False, "order": "C", "read_missing_chunks": True})
    b[...] = 0
    assert b.nchunks_initialized == 0 and a.write_empty_chunks is False
    with pytest.raises(ArgumentError, match="order"):
        a.with_config({"order": "F"})
    with pytest.raises(ArgumentError, match="nope"):
        a.with_config({"nope": 1})
    from zarr.core.array_spec import ArrayConfig
    assert a.with_config(ArrayConfig.from_dict({"write_empty_chunks": True})).write_empty_chunks


def test_config_takes_zarr_python_keys(tmp_path):
    before = zarrc.config.threads
    with zarrc.config.set({"array.write_empty_chunks": True, "threading.max_workers": 3}):
        assert zarrc.config.get("array.write_empty_chunks") is True and zarrc.config.threads == 3
        # (Group.create_array and opened arrays read the setting; zarrc.create_array
        # takes write_empty_chunks=False unless api.py's default becomes None)
        store = MemoryStore()
        zarrc.group(store).create_array("a", shape=(8,), chunks=(2,), dtype="i4")
        a = zarrc.open_array(store, path="a")
        with zarr.config.set({"array.write_empty_chunks": True}):
            z = zarr.create_array(str(tmp_path / "z"), shape=(8,), chunks=(2,), dtype="i4")
            z[...] = 0
        a[...] = 0
        assert a.nchunks_initialized == z.nchunks_initialized == 4
    assert zarrc.config.threads == before and zarrc.config.write_empty_chunks is False
    with zarrc.config.set({"async.concurrency": 2, "threading.max_workers": 2}, split_bytes=4096):
        assert zarrc.config.get("async.concurrency") == zarrc.config.concurrency == 2
        assert zarrc.config.get("threading.max_workers") == zarrc.config.threads == 2
        assert zarrc.config.split_bytes == 4096
    with zarrc.config.set({"threading.max_workers": None, "array.order": "C"}):
        assert zarrc.config.threads >= 1 and zarrc.config.get("array.order") == "C"
    for bad, message in [({"array.order": "F"}, "array.order"), ({"array.write_empty_chunks": 1}, "True or False"),
                         ({"codecs.zstd": "x"}, "no setting 'codecs.zstd'"),
                         ({"async.concurrency": 0}, "positive integer")]:
        with pytest.raises(ArgumentError, match=message):
            zarrc.config.set(bad)
    assert zarrc.config.threads == before


def test_nested_sharding_counts_the_outer_codecs_chunks(tmp_path):
    """zarr-python's chunks on nested sharding: the outer sharding codec's chunk
    shape; nchunks_initialized counts those of every stored shard (edge shards
    whole, so it can exceed nchunks)."""
    z = create(zarr, str(tmp_path / "z"), "nested", 3)
    a = create(zarrc, MemoryStore(), "nested", 3)
    for arr in (z, a):
        arr[...] = 1
    assert (a.chunks, a.shards, a.cdata_shape, a.nchunks, a.nchunks_initialized) == (
        z.chunks, z.shards, z.cdata_shape, z.nchunks, z.nchunks_initialized)
    assert a.nchunks_initialized > a.nchunks


# ------------------------------------------------------------------ groups


def zarrc_group(kind: str, root: str, fmt: int):
    return zarrc.open_group(zarrc_store(kind, root), mode="w", zarr_format=fmt)


def build(g, lib) -> None:
    """The same hierarchy, made with the same calls in zarrc and zarr-python."""
    g["x"] = np.arange(12, dtype="i2").reshape(3, 4)
    sub = g.create_group("sub")
    sub.create_array("y", shape=(5,), dtype="f4", chunks=(2,), fill_value=1.5)
    deep = sub.create_group("deep")
    deep.create_array("z", shape=(2, 2), dtype="u1", chunks=(1, 2))
    g.require_groups("r1", "sub")


def member_summary(members) -> dict:
    return {name: (type(node).__name__, getattr(node, "shape", None)) for name, node in members}


@pytest.mark.parametrize("kind", STORES)
@pytest.mark.parametrize("fmt", [2, 3])
def test_group_members_setitem_and_listing(tmp_path, kind, fmt):
    g = zarrc_group(kind, str(tmp_path), fmt)
    zg = zarr.open_group(str(tmp_path / "z"), mode="w", zarr_format=fmt)
    build(g, zarrc)
    build(zg, zarr)
    assert_bit_equal(g["x"][...], zg["x"][...])
    assert g["x"].metadata.to_dict()["shape"] == zg["x"].metadata.to_dict()["shape"]
    for depth in (0, 1, 2, None):
        assert member_summary(g.members(max_depth=depth)) == member_summary(zg.members(max_depth=depth)), depth
        assert g.nmembers(max_depth=depth) == zg.nmembers(max_depth=depth)
    assert sorted(g) == sorted(zg) and len(g) == len(zg)
    assert sorted(a.path for a in g.array_values()) == sorted(a.path for a in zg.array_values())
    assert sorted(s.path for s in g.group_values()) == sorted(s.path for s in zg.group_values())
    assert g.get("sub/deep/z").shape == zg.get("sub/deep/z").shape
    assert g.get("nope") is None and g.get("nope", 7) == zg.get("nope", 7) == 7
    assert g.update_attributes({"a": 1}) is g
    zg.update_attributes({"a": 1})
    assert g.attrs.asdict() == zg.attrs.asdict()
    rows = dict(g.info_complete().rows)
    assert (rows["No. members"], rows["No. arrays"], rows["No. groups"]) == (3, 1, 2)
    assert "No. members" not in dict(g.info.rows) and "Zarr format" in repr(g.info)
    assert g.store_path.path == zg.store_path.path == ""
    assert g["sub/deep"].store_path.path == zg["sub/deep"].store_path.path == "sub/deep"
    if kind == "local":                          # zarr-python reads zarrc's hierarchy
        other = zarr.open_group(str(tmp_path / "c.zarr"), mode="r")
        assert member_summary(other.members(max_depth=None)) == member_summary(g.members(max_depth=None))
        assert_bit_equal(other["sub/y"][...], g["sub/y"][...])


@pytest.mark.parametrize("kind", STORES)
@pytest.mark.parametrize("fmt", [2, 3])
def test_require_array(tmp_path, kind, fmt):
    g = zarrc_group(kind, str(tmp_path), fmt)
    zg = zarr.open_group(str(tmp_path / "z"), mode="w", zarr_format=fmt)
    for grp in (g, zg):
        made = grp.require_array("r", shape=(6,), dtype="i4", chunks=(4,))
        made[...] = np.arange(6, dtype="i4")
        again = grp.require_array("r", shape=(6,), dtype="i8")      # i4 casts to i8
        assert again.dtype == np.dtype("i4")
        grp.create_group("grp")
    assert_bit_equal(g["r"][...], zg["r"][...])
    assert g.require_array("r", shape=6, dtype="i4", exact=True).shape == (6,)
    for call in (lambda x: x.require_array("r", shape=(7,), dtype="i4"),
                 lambda x: x.require_array("r", shape=(6,), dtype="i2"),
                 lambda x: x.require_array("r", shape=(6,), dtype="i8", exact=True),
                 lambda x: x.require_array("grp", shape=(6,), dtype="i4")):
        with pytest.raises(TypeError):
            call(zg)
        with pytest.raises(NodeTypeError):
            call(g)
    cfg = g.require_array("r", shape=(6,), dtype="i4", config={"write_empty_chunks": True})
    assert cfg.write_empty_chunks is True


@pytest.mark.parametrize("kind", ["local", "memory", "zip"])
@pytest.mark.parametrize("fmt", [2, 3])
@pytest.mark.parametrize("consolidated", [False, True])
def test_delitem(tmp_path, kind, fmt, consolidated):
    g = zarrc_group(kind, str(tmp_path), fmt)
    zg = zarr.open_group(str(tmp_path / "z"), mode="w", zarr_format=fmt)
    build(g, zarrc)
    build(zg, zarr)
    if consolidated:
        g = zarrc.consolidate_metadata(g.store)
        zg = zarr.consolidate_metadata(str(tmp_path / "z"))
    for grp in (g, zg):
        del grp["sub"]
        del grp["x"]
        del grp["missing"]                          # (nothing there: nothing happens, as zarr-python)
    assert member_summary(g.members(max_depth=None)) == member_summary(zg.members(max_depth=None)) == {
        "r1": ("Group", None)}
    assert not [k for k in g.store.list() if k.startswith(("sub/", "x/"))]
    reopened = zarrc.open_group(g.store, mode="r")
    assert reopened.consolidated == consolidated
    assert member_summary(reopened.members(max_depth=None)) == {"r1": ("Group", None)}
    if consolidated and fmt == 3:     # (zarrc's v2 group metadata holds no .zmetadata)
        assert reopened.metadata.to_dict() == zarr.open_group(str(tmp_path / "z"), mode="r").metadata.to_dict()
    if kind == "local":
        other = zarr.open_group(str(tmp_path / "c.zarr"), mode="r")
        assert sorted(other) == ["r1"]


def test_delitem_on_a_zip_store_removes_the_members_from_the_archive(tmp_path):
    g = zarrc_group("zip", str(tmp_path), 3)
    g["x"] = np.arange(3)
    g["y"] = np.arange(2)
    g.store.flush()
    del g["x"]
    g.store.close()
    with zipfile.ZipFile(g.store.path) as zf:
        assert not [n for n in zf.namelist() if n.startswith("x/")]
    assert sorted(zarrc.open_group(g.store.path, mode="r")) == ["y"]


MAKERS = [
    ("zeros", {"shape": (5, 7), "chunks": (2, 3)}),
    ("ones", {"shape": (5, 7), "dtype": "i2"}),
    ("full", {"shape": (4,), "fill_value": 3.5, "dtype": "f4"}),
    ("empty", {"shape": (6,), "dtype": "u2", "chunks": (4,)}),
]


@pytest.mark.parametrize("kind", STORES)
@pytest.mark.parametrize("fmt", [2, 3])
def test_group_array_makers(tmp_path, kind, fmt):
    g = zarrc_group(kind, str(tmp_path), fmt)
    zg = zarr.open_group(str(tmp_path / "z"), mode="w", zarr_format=fmt)
    for method, kwargs in MAKERS:
        a = getattr(g, method)(name=method, **kwargs)
        z = getattr(zg, method)(name=method, **kwargs)
        assert_bit_equal(a[...], z[...], method)
        assert a.fill_value == z.fill_value or (method == "empty" and fmt == 2)
    src = zg.create_array("src", shape=(6, 4), chunks=(3, 2), dtype="i4", fill_value=9)
    src[...] = np.arange(24, dtype="i4").reshape(6, 4)
    src_c = g.create_array("src", shape=(6, 4), chunks=(3, 2), dtype="i4", fill_value=9)
    src_c[...] = src[...]
    numpy_data = np.arange(10, dtype="f4")
    for method in ("zeros_like", "ones_like", "full_like", "empty_like"):
        extra = {"fill_value": 4} if method == "full_like" else {}
        for data_c, data_z in ((src_c, src), (numpy_data, numpy_data)):
            name = f"{method}-{type(data_z).__name__}"
            a = getattr(g, method)(name=name, data=data_c, **extra)
            try:
                z = getattr(zg, method)(name=name, data=data_z, **extra)
            except ValueError:       # zarr-python 3.1 makes a v3 array like a v2 one: its error
                assert fmt == 2 and data_z is src and zarr.__version__.startswith("3.1.")
                fill = {"zeros_like": 0, "ones_like": 1, "full_like": 4, "empty_like": 9}[method]
                z = zg.full(name=name, shape=src.shape, dtype=src.dtype, chunks=src.chunks,
                            fill_value=fill)
            assert_bit_equal(a[...], z[...], method)
            assert a.chunks == z.chunks or not hasattr(data_z, "chunks")
    if hasattr(zg, "array"):                      # (zarr-python 3.1; gone in 3.4)
        with pytest.warns(Warning):
            z = zg.array("arr", shape=(5,), dtype="i8", data=np.arange(5, dtype="i8"))
    else:
        z = zg.create_array("arr", data=np.arange(5, dtype="i8"))
    a = g.array("arr", shape=(5,), dtype="i8", data=np.arange(5, dtype="i8"))
    assert_bit_equal(a[...], z[...])
    assert_bit_equal(g.array("arr2", data=np.arange(3, dtype="u2"))[...], np.arange(3, dtype="u2"))
    with pytest.raises(ArgumentError):
        g.array("arr3", shape=(4,), dtype="i8", data=np.arange(5))
    like = g.zeros_like(name="sh", data=create(zarrc, MemoryStore(), "sharded", 2)) if fmt == 3 else None
    if like is not None:        # (as zarr-python: the inner chunks as the grid, tests/test_like_parity.py)
        assert like.shards == GEOMETRY[2][2] and like.chunks == GEOMETRY[2][2]
    with pytest.raises(ArgumentError):
        g.create_array("other", shape=(2,), dtype="i4", zarr_format=5 - fmt)
    with pytest.raises(ArgumentError):
        g.create_array("both", shape=(2,), dtype="i4", data=np.zeros(2))
