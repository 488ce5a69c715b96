"""The top-level API against zarr-python's same calls (issue 23, item 1): ``create``,
``zeros`` / ``ones`` / ``full`` / ``empty`` and their ``*_like`` forms, ``open_like``,
``array``, ``from_array``, ``create_array(data=, config=, storage_options=)``,
``save`` / ``save_array`` / ``save_group`` / ``load``, ``create_group``,
``create_hierarchy`` and ``tree``.

Each test makes the same call with both libraries, each into its own store (local,
memory or zip), then compares the metadata documents both wrote and the values each
library reads from the other's store, bit for bit (tests/interop/support.py)."""

from __future__ import annotations

import json
import os

import numpy as np
import pytest
from helpers import NO_ZARR_PYTHON
from interop.support import assert_bit_equal, sample

import zarrc
from zarrc.errors import ArgumentError, ArgumentTypeError, ContainsNodeError, NodeNotFoundError
from zarrc.metadata.v2 import ArrayMetadataV2, GroupMetadataV2
from zarrc.metadata.v3 import ArrayMetadataV3, GroupMetadataV3
from zarrc.stores import LocalStore, MemoryStore, ZipStore

zarr = pytest.importorskip("zarr", reason=NO_ZARR_PYTHON)
from selection_pairs import create as layout_array

ZARR_VERSION = tuple(int(p) for p in zarr.__version__.split(".")[:2])
KINDS = ["local", "memory", "zip"]


class Stores:
    """A store for each library (``zc`` for zarrc, ``zp`` for zarr-python) of one
    kind, and views of each one's keys for the other library once written."""

    def __init__(self, kind: str, root: str) -> None:
        self.kind, self.root, self.closed = kind, root, False
        self.paths = {lib: os.path.join(root, lib + (".zip" if kind == "zip" else ".zarr"))
                      for lib in ("zc", "zp")}
        if kind == "local":
            self.zc, self.zp = self.paths["zc"], self.paths["zp"]
        elif kind == "memory":
            self.zc, self.zp = {}, {}
        else:
            self.zc = ZipStore(self.paths["zc"], mode="w")
            self.zp = zarr.storage.ZipStore(self.paths["zp"], mode="w")

    def close(self) -> None:
        if self.kind == "zip" and not self.closed:
            self.closed = True
            self.zc.close()
            self.zp.close()

    def zarrc_view(self, lib: str):
        """A zarrc store reading what ``lib`` wrote."""
        if self.kind == "local":
            return LocalStore(self.paths[lib], mode="r")
        if self.kind == "zip":
            return ZipStore(self.paths[lib], mode="r")
        if lib == "zc":
            return MemoryStore(self.zc, read_only=True)
        return MemoryStore({k: v.to_bytes() for k, v in self.zp.items()}, read_only=True)

    def zarr_view(self, lib: str):
        """A zarr-python store reading what ``lib`` wrote."""
        if self.kind == "local":
            return zarr.storage.LocalStore(self.paths[lib], read_only=True)
        if self.kind == "zip":
            return zarr.storage.ZipStore(self.paths[lib], mode="r")
        from zarr.core.buffer import default_buffer_prototype

        if lib == "zp":
            return zarr.storage.MemoryStore(self.zp)
        buf = default_buffer_prototype().buffer
        return zarr.storage.MemoryStore({k: buf.from_bytes(v) for k, v in self.zc.items()})


@pytest.fixture(params=KINDS)
def stores(request, tmp_path):
    s = Stores(request.param, str(tmp_path))
    yield s
    s.close()


def node_docs(store, path: str = "") -> dict:
    """The node's metadata documents, decoded, with the keys one writer leaves out
    when empty (attributes, dimension_names, storage_transformers) dropped."""
    prefix = path.strip("/") + "/" if path.strip("/") else ""
    out = {}
    for name in ("zarr.json", ".zarray", ".zgroup", ".zattrs"):
        raw = store.get(prefix + name)
        if raw is not None:
            doc = json.loads(raw)
            for key in ("attributes", "dimension_names", "storage_transformers"):
                if doc.get(key) in ({}, None, []) and key in doc:
                    del doc[key]
            if doc != {} or name != ".zattrs":
                out[name] = doc
    assert out, f"no metadata at {path!r}"
    return out


def compare(stores: Stores, path: str = "", expected=None) -> None:
    """Both libraries wrote the same documents at ``path``; each reads the other's
    array (if it is one) as the same values (``expected`` if given)."""
    stores.close()
    zc_view, zp_view = stores.zarrc_view("zc"), stores.zarrc_view("zp")
    assert node_docs(zc_view, path) == node_docs(zp_view, path)
    node = zarrc.open(zp_view, mode="r", path=path)
    if isinstance(node, zarrc.Array):
        theirs = node[...]                                            # zarrc reads zarr-python's
        ours = zarr.open_array(stores.zarr_view("zc"), mode="r", path=path)[...]  # and back
        assert_bit_equal(ours, theirs, f"{stores.kind} {path}")
        if expected is not None:
            assert_bit_equal(theirs, np.asarray(expected), f"{stores.kind} {path} values")


# ---------------------------------------------------------------- create, zeros ...

SHARDING = {"name": "sharding_indexed", "configuration": {
    "chunk_shape": [2, 3], "codecs": [{"name": "bytes", "configuration": {"endian": "little"}},
                                      {"name": "zstd", "configuration": {"level": 1, "checksum": False}}],
    "index_codecs": [{"name": "bytes", "configuration": {"endian": "little"}}, {"name": "crc32c"}],
    "index_location": "end"}}

CREATE_CASES = {
    "v3": {"shape": (13, 7), "chunks": (4, 3), "dtype": "int16", "fill_value": 3, "attributes": {"a": 1},
           "dimension_names": ["y", "x"]},
    "v3-codecs": {"shape": (20,), "chunks": 5, "dtype": "<f4", "chunk_key_encoding": ("default", "."),
                  "codecs": [{"name": "bytes", "configuration": {"endian": "big"}},
                             {"name": "gzip", "configuration": {"level": 1}}]},
    "v3-sharded": {"shape": (13, 7), "chunk_shape": (4, 6), "dtype": "uint16", "codecs": [SHARDING]},
    "v3-float64-default": {"shape": (30,), "chunks": (7,)},
    "v2": {"shape": (13, 7), "chunks": (5, 5), "dtype": "uint32", "zarr_format": 2, "order": "F",
           "dimension_separator": "/", "attributes": {"b": [1, 2]}},
    "v2-compressor": {"shape": (17,), "chunks": (4,), "dtype": "int32", "zarr_format": 2, "fill_value": None,
                      "compressor": {"id": "zlib", "level": 3},
                      "filters": [{"id": "delta", "dtype": "<i4", "astype": "<i4"}]},
    "v2-config-order": {"shape": (6, 4), "chunks": (3, 3), "dtype": "int16", "zarr_format": 2,
                        "config": {"order": "F"}},
    "v2-chunks-false": {"shape": (6, 5), "chunks": False, "dtype": "int8", "zarr_format": 2, "compressor": None},
    "v2-chunks-minus-one": {"shape": (6, 5), "chunks": (-1, 2), "dtype": "<c8", "zarr_format": 2},
}


@pytest.mark.parametrize("case", list(CREATE_CASES))
def test_create(stores, case):
    kw = CREATE_CASES[case]
    data = sample(kw.get("dtype", "float64"), kw["shape"], seed=1)
    if case == "v3-sharded":
        data = np.arange(91, dtype="uint16").reshape(13, 7)
    zc = zarrc.create(store=stores.zc, path="g/arr", **kw)
    zp = zarr.create(store=stores.zp, path="g/arr", **kw)
    zc[...] = data
    zp[...] = data
    assert (zc.shape, zc.chunks, zc.dtype, zc.zarr_format) == (zp.shape, zp.chunks, zp.dtype, zp.metadata.zarr_format)
    compare(stores, "g/arr", data)
    compare(stores, "g")


@pytest.mark.parametrize("fmt", [2, 3])
@pytest.mark.parametrize("func", ["zeros", "ones", "full", "empty"])
def test_filled(stores, func, fmt):
    kw = {"shape": (9, 4), "chunks": (4, 4), "dtype": "int32", "zarr_format": fmt}
    if func == "full":
        kw["fill_value"] = -7
    getattr(zarrc, func)(store=stores.zc, **kw)
    getattr(zarr, func)(store=stores.zp, **kw)
    compare(stores)


@pytest.mark.parametrize("layout", ["v2", "v3", "sharded"])
@pytest.mark.parametrize("func", ["zeros_like", "ones_like", "full_like", "empty_like"])
def test_like(stores, tmp_path, func, layout):
    """Like an array of either library, into a new store of each kind (the source
    format kept, codecs copied), and like a numpy array."""
    zc_src = layout_array(zarrc, str(tmp_path / "src-zc"), layout, 2)
    zp_src = layout_array(zarr, str(tmp_path / "src-zp"), layout, 2)
    # (zarr-python 3.1 neither keeps the source's format nor its fill value: given here)
    old = {} if ZARR_VERSION >= (3, 4) else {"zarr_format": 2 if layout == "v2" else 3}
    if ZARR_VERSION < (3, 4) and func == "full_like":
        old["fill_value"] = 0
    getattr(zarrc, func)(zc_src, store=stores.zc, path="a")
    getattr(zarr, func)(zp_src, store=stores.zp, path="a", **old)
    x = np.arange(12, dtype="<u2").reshape(3, 4)
    kw = {"fill_value": 5} if func == "full_like" else {}
    getattr(zarrc, func)(x, store=stores.zc, path="b", **kw)
    getattr(zarr, func)(x, store=stores.zp, path="b", **kw)
    compare(stores, "a")
    compare(stores, "b")


@pytest.mark.skipif(ZARR_VERSION < (3, 4), reason="zarr-python 3.1 copies v3 codecs to a v2 array")
def test_like_other_format(stores, tmp_path):
    """zarr_format= other than the source's: the new format's default codecs."""
    zc_src = layout_array(zarrc, str(tmp_path / "src-zc"), "v3", 2)
    zp_src = layout_array(zarr, str(tmp_path / "src-zp"), "v3", 2)
    zarrc.zeros_like(zc_src, store=stores.zc, zarr_format=2)
    zarr.zeros_like(zp_src, store=stores.zp, zarr_format=2)
    compare(stores)


@pytest.mark.parametrize("fmt", [2, 3])
def test_open_like(stores, fmt):
    src_zc = zarrc.create(shape=(8,), chunks=(3,), dtype="int64", fill_value=2, zarr_format=fmt)
    src_zp = zarr.create(shape=(8,), chunks=(3,), dtype="int64", fill_value=2, zarr_format=fmt)
    zc = zarrc.open_like(src_zc, "x", store=stores.zc, zarr_format=fmt)
    zp = zarr.open_like(src_zp, "x", store=stores.zp, zarr_format=fmt, mode="a")   # (3.1: no default)
    zc[2:5] = 9
    zp[2:5] = 9
    again = zarrc.open_like(src_zc, "x", store=stores.zc)    # opens the existing array
    assert_bit_equal(again[...], zc[...])
    compare(stores, "x", zp[...])


@pytest.mark.parametrize("fmt", [2, 3])
def test_array(stores, fmt):
    data = sample("float32", (11, 6), seed=3)
    zc = zarrc.array(data, store=stores.zc, path="a", chunks=(4, 4), zarr_format=fmt)
    zp = zarr.array(data, store=stores.zp, path="a", chunks=(4, 4), zarr_format=fmt)
    assert_bit_equal(zc[...], zp[...])
    zarrc.array([[1, 2], [3, 4]], store=stores.zc, path="list", dtype="int16", zarr_format=fmt)
    zarr.array([[1, 2], [3, 4]], store=stores.zp, path="list", dtype="int16", zarr_format=fmt)
    compare(stores, "a", data)
    compare(stores, "list")


def test_array_of_an_array(stores):
    """``array`` of an Array copies it with from_array (its chunks and codecs kept)."""
    src_zc = zarrc.create_array({}, shape=(9,), chunks=(2,), shards=(4,), dtype="int8")
    src_zp = zarr.create_array({}, shape=(9,), chunks=(2,), shards=(4,), dtype="int8")
    src_zc[...] = src_zp[...] = np.arange(9, dtype="int8")
    zarrc.array(src_zc, store=stores.zc, name="c")
    zarr.array(src_zp, store=stores.zp, name="c")
    compare(stores, "c", np.arange(9, dtype="int8"))


def test_create_with_data():
    """create(data=) writes values after creating the array (zarr-python 3.4)."""
    data = np.arange(10, dtype="i2")
    a = zarrc.create(shape=(10,), chunks=(3,), dtype="i2", data=data)
    assert_bit_equal(a[...], data)
    if ZARR_VERSION >= (3, 4):
        assert_bit_equal(zarr.create(shape=(10,), chunks=(3,), dtype="i2", data=data)[...], a[...])


def test_array_is_the_function():
    """``zarrc.array`` is the function although zarrc/array.py is a module, also
    after ``import zarrc.core.array``."""
    import zarrc.core.array

    assert callable(zarrc.array)
    assert_bit_equal(zarrc.array(np.arange(3))[...], np.arange(3))
    from zarrc.core.array import Array

    assert Array is zarrc.Array


# ---------------------------------------------------------------- from_array, create_array(data=)

@pytest.mark.parametrize("layout", ["v2", "v3", "sharded", "nested"])
def test_from_array_keeps(stores, tmp_path, layout):
    """From an array of each layout: chunks, shards, codecs, fill value, chunk key
    encoding and attributes kept, the values copied."""
    data = sample({"v2": "int32", "v3": "float64", "sharded": "uint16", "nested": "complex64"}[layout],
                  (13, 11), seed=4)
    srcs = []
    for lib in (zarrc, zarr):
        src = layout_array(lib, str(tmp_path / f"src-{lib.__name__}"), layout, 2)
        src[...] = data
        src.attrs["units"] = "m"
        srcs.append(src)
    zc = zarrc.from_array(stores.zc, data=srcs[0], name="copy")
    old = {} if ZARR_VERSION >= (3, 4) else {"attributes": {"units": "m"}}    # (3.1 drops them)
    zp = zarr.from_array(stores.zp, data=srcs[1], name="copy", **old)
    if layout != "nested":       # (Array.chunks of nested shards: the innermost, in zarrc)
        assert (zc.chunks, zc.shards) == (zp.chunks, zp.shards)
    compare(stores, "copy", data)


@pytest.mark.parametrize("kw", [{"zarr_format": 2}, {"zarr_format": 3}, {"shards": (8, 6), "chunks": (4, 3)},
                                {"write_data": False, "fill_value": 1}, {"chunks": (5, 5), "compressors": None}],
                         ids=["to-v2", "v3", "resharded", "no-data", "other-codecs"])
def test_from_array_overrides(stores, tmp_path, kw):
    data = sample("int32", (13, 11), seed=5)
    srcs = []
    for lib in (zarrc, zarr):
        src = layout_array(lib, str(tmp_path / f"src-{lib.__name__}"), "v3", 2)
        src[...] = data
        srcs.append(src)
    zarrc.from_array(stores.zc, data=srcs[0], **kw)
    zarr.from_array(stores.zp, data=srcs[1], **kw)
    compare(stores)


@pytest.mark.parametrize("kw", [{}, {"zarr_format": 2}, {"chunks": (4, 4), "shards": (8, 8)}],
                         ids=["v3", "v2", "sharded"])
def test_from_numpy_and_create_array_data(stores, kw):
    data = sample("<i8", (10, 9), seed=6)
    zarrc.from_array(stores.zc, data=data, name="f", **kw)
    zarr.from_array(stores.zp, data=data, name="f", **kw)
    zarrc.create_array(stores.zc, name="c", data=data, attributes={"k": "v"}, **kw)
    zarr.create_array(stores.zp, name="c", data=data, attributes={"k": "v"}, **kw)
    compare(stores, "f", data)
    compare(stores, "c", data)


@pytest.mark.parametrize("fmt", [2, 3])
def test_create_array_config(stores, fmt):
    """config: write_empty_chunks decides whether fill-valued chunks are stored;
    order is a v2 array's chunk order."""
    kw = {"shape": (8,), "chunks": (2,), "dtype": "uint8", "fill_value": 0, "zarr_format": fmt,
              "config": {"write_empty_chunks": True, "order": "F"}}
    zc = zarrc.create_array(stores.zc, **kw)
    zp = zarr.create_array(stores.zp, **kw)
    zc[...] = 0
    zp[...] = 0
    assert zc.nchunks_initialized == zp.nchunks_initialized == 4
    compare(stores)


def test_create_array_errors(tmp_path):
    data = np.arange(4)
    for lib in (zarrc, zarr):
        with pytest.raises(ValueError):                 # data and shape
            lib.create_array({}, data=data, shape=(4,))
        with pytest.raises(ValueError):                 # data and dtype
            lib.create_array({}, data=data, dtype="i4")
        with pytest.raises(ValueError):                 # neither
            lib.create_array({}, dtype="i4")
        with pytest.raises(TypeError):                  # storage_options with a local path
            lib.create_array(str(tmp_path / lib.__name__), shape=(2,), dtype="i4", storage_options={"a": 1})
        with pytest.raises(TypeError):                  # ... with a dict
            lib.create_array({}, shape=(2,), dtype="i4", storage_options={"a": 1})
    with pytest.raises(ArgumentError):
        zarrc.create_array({}, data=data, shape=(4,))
    with pytest.raises(ArgumentTypeError, match="storage_options"):
        zarrc.create_array(MemoryStore(), shape=(2,), dtype="i4", storage_options={})
    libs = (zarrc, zarr) if ZARR_VERSION >= (3, 4) else (zarrc,)     # 3.1 ignores unknown keys
    for lib in libs:
        with pytest.raises(TypeError):
            lib.create_array({}, shape=(2,), dtype="i4", config={"no_such_setting": 1})


def test_storage_options_with_a_file_url(tmp_path):
    a = zarrc.create_array((tmp_path / "u.zarr").as_uri(), shape=(3,), dtype="i2", storage_options={})
    a[...] = [1, 2, 3]
    assert_bit_equal(zarrc.open_array(str(tmp_path / "u.zarr"))[...], np.array([1, 2, 3], "i2"))


def test_from_array_overlapping_overwrite():
    store = {}
    src = zarrc.create_array(store, name="a", shape=(4,), dtype="i4")
    with pytest.raises(ArgumentError, match="overlap"):
        zarrc.from_array(store, data=src, name="a", overwrite=True)
    if ZARR_VERSION >= (3, 4):
        zsrc = zarr.create_array(zstore := {}, name="a", shape=(4,), dtype="i4")
        with pytest.raises(ValueError):
            zarr.from_array(zstore, data=zsrc, name="a", overwrite=True)


# ---------------------------------------------------------------- save, load

@pytest.mark.parametrize("fmt", [2, 3])
def test_save_and_load(stores, fmt):
    x = sample("float64", (7, 5), seed=7)
    y = sample("int8", (9,), seed=8)
    zarrc.save(stores.zc, x, zarr_format=fmt, path="one")
    zarr.save(stores.zp, x, zarr_format=fmt, path="one")
    zarrc.save(stores.zc, x, zarr_format=fmt, path="many", extra=y)
    zarr.save(stores.zp, x, zarr_format=fmt, path="many", extra=y)
    zarrc.save_array(stores.zc, y, zarr_format=fmt, path="sa")
    zarr.save_array(stores.zp, y, zarr_format=fmt, path="sa")
    zarrc.save_group(stores.zc, y, x, zarr_format=fmt, path="sg")
    zarr.save_group(stores.zp, y, x, zarr_format=fmt, path="sg")
    for path, values in (("one", x), ("many/arr_0", x), ("many/extra", y), ("sa", y), ("sg/arr_0", y),
                         ("sg/arr_1", x)):
        compare(stores, path, values)
    compare(stores, "many")
    # load: an array's values; a group's arrays by name
    for lib in ("zc", "zp"):
        view = stores.zarrc_view(lib)
        assert_bit_equal(zarrc.load(view, path="one"), zarr.load(stores.zarr_view(lib), path="one"))
        loaded = zarrc.load(view, path="many")
        assert sorted(loaded) == ["arr_0", "extra"]
        assert_bit_equal(loaded["extra"], y)


def test_save_errors():
    for lib in (zarrc, zarr):
        with pytest.raises(ValueError):
            lib.save({})
        with pytest.raises(ValueError):
            lib.save_group({})
        with pytest.raises(TypeError):
            lib.save_array({}, [1, 2, 3])
        with pytest.raises(TypeError):
            lib.save_group({}, np.arange(2), b=[1, 2])
    with pytest.raises(NodeNotFoundError):
        zarrc.load({}, path="nothing")
    with pytest.raises(FileNotFoundError):
        zarrc.load({}, path="nothing")


def test_save_group_checks_before_replacing():
    store = {}
    zarrc.save_group(store, np.arange(3), path="g")
    with pytest.raises(TypeError):
        zarrc.save_group(store, np.arange(2), "not an array", path="g")
    assert_bit_equal(zarrc.load(store, path="g")["arr_0"], np.arange(3))


# ---------------------------------------------------------------- create_group, create_hierarchy, tree

@pytest.mark.parametrize("fmt", [2, 3])
def test_create_group(stores, fmt):
    zarrc.create_group(stores.zc, path="a/b", attributes={"x": 1}, zarr_format=fmt)
    zarr.create_group(stores.zp, path="a/b", attributes={"x": 1}, zarr_format=fmt)
    compare(stores, "a/b")
    compare(stores, "a")


def _zarr_python_nodes(fmt: int) -> dict:
    from zarr.core.group import GroupMetadata

    arr = zarr.create_array({}, shape=(6, 4), chunks=(3, 2), dtype="int16", fill_value=1, zarr_format=fmt,
                            attributes={"n": 1})
    return {"": GroupMetadata(zarr_format=fmt, attributes={"root": True}), "a/b/arr": arr.metadata,
            "c": GroupMetadata(zarr_format=fmt)}


@pytest.mark.parametrize("form", ["objects", "dicts", "zarr-python"])
@pytest.mark.parametrize("fmt", [2, 3])
def test_create_hierarchy(stores, fmt, form):
    zp_nodes = _zarr_python_nodes(fmt)
    if form == "zarr-python":
        zc_nodes = zp_nodes
    elif form == "dicts":
        zc_nodes = {k: v.to_dict() for k, v in zp_nodes.items()}
    else:
        array_docs = json.loads(zarrc.create_array({}, shape=(6, 4), chunks=(3, 2), dtype="int16", fill_value=1,
                                                   zarr_format=fmt).metadata.to_bytes())
        if fmt == 3:
            arr = ArrayMetadataV3.from_json({**array_docs, "attributes": {"n": 1}})
            groups = (GroupMetadataV3(attributes={"root": True}), GroupMetadataV3())
        else:
            arr = ArrayMetadataV2.from_json(array_docs, {"n": 1})
            groups = (GroupMetadataV2(attributes={"root": True}), GroupMetadataV2())
        zc_nodes = {"": groups[0], "a/b/arr": arr, "c": groups[1]}
    made = dict(zarrc.create_hierarchy(store=stores.zc, nodes=zc_nodes))
    zp_store = {"local": lambda: zarr.storage.LocalStore(stores.zp), "zip": lambda: stores.zp,
                "memory": lambda: zarr.storage.MemoryStore(stores.zp)}[stores.kind]()
    if not zp_store._is_open:        # (zarr-python's create_hierarchy takes an open store)
        zarr.core.sync.sync(zp_store._open())
    theirs = dict(zarr.create_hierarchy(store=zp_store, nodes=zp_nodes))
    assert sorted(made) == sorted(theirs) == ["", "a", "a/b", "a/b/arr", "c"]
    assert isinstance(made["a/b/arr"], zarrc.Array) and isinstance(made["a"], zarrc.Group)
    for path in made:
        compare(stores, path)


def test_create_hierarchy_errors():
    from zarr.core.group import GroupMetadata

    store = {}
    zarrc.create_group(store, "x")
    existing = {"x": GroupMetadataV3()}
    with pytest.raises(ContainsNodeError):
        dict(zarrc.create_hierarchy(store=store, nodes=existing))
    dict(zarrc.create_hierarchy(store=store, nodes={"x": GroupMetadataV3(attributes={"new": 1})}, overwrite=True))
    assert dict(zarrc.open_group(store, path="x").attrs) == {"new": 1}
    with pytest.raises(ValueError):                                 # mixed formats
        zarrc.create_hierarchy(store={}, nodes={"a": GroupMetadataV3(), "b": GroupMetadataV2()})
    with pytest.raises(ValueError):                                 # not metadata
        zarrc.create_hierarchy(store={}, nodes={"a": 5})
    below_an_array = {"a": zarrc.create_array({}, shape=(2,), dtype="i1").metadata, "a/b": GroupMetadataV3()}
    with pytest.raises(ValueError):
        zarrc.create_hierarchy(store={}, nodes=below_an_array)
    with pytest.raises(ValueError):
        dict(zarr.create_hierarchy(store=zarr.storage.MemoryStore(), nodes={
            "a": zarr.create_array({}, shape=(2,), dtype="i1").metadata, "a/b": GroupMetadata()}))
    zstore = zarr.storage.MemoryStore()
    dict(zarr.create_hierarchy(store=zstore, nodes={"x": GroupMetadata()}))
    with pytest.raises(ValueError):                                 # zarr-python: ContainsGroupError
        dict(zarr.create_hierarchy(store=zstore, nodes={"x": GroupMetadata()}))


def test_tree():
    g = zarrc.group()
    g.create_array("a", shape=(3,), dtype="i1")
    with pytest.warns(DeprecationWarning):
        assert str(zarrc.tree(g)) == str(g.tree())


# ---------------------------------------------------------------- create's errors

@pytest.mark.parametrize("kw", [
    {"zarr_format": 3, "compressor": {"id": "zlib"}}, {"zarr_format": 3, "filters": [{"id": "delta", "dtype": "<i4"}]},
    {"zarr_format": 3, "dimension_separator": "/"}, {"zarr_format": 2, "codecs": [{"name": "bytes"}]},
    {"zarr_format": 2, "dimension_names": ["x"]}, {"zarr_format": 2, "chunk_key_encoding": ("v2", ".")},
    {"chunks": True}], ids=str)
def test_create_errors(kw):
    old = ZARR_VERSION < (3, 4) and kw.get("chunks") is True     # (3.1 takes chunks=True)
    for lib in (zarrc,) if old else (zarrc, zarr):
        with pytest.raises(ValueError):
            lib.create(shape=(4,), dtype="i4", **kw)
    with pytest.raises(ArgumentError):
        zarrc.create(shape=(4,), dtype="i4", **kw)


def test_create_existing_and_modes(tmp_path):
    where = str(tmp_path / "m.zarr")
    zarrc.create(shape=(4,), store=where, fill_value=1)
    with pytest.raises(ContainsNodeError):
        zarrc.create(shape=(4,), store=where)
    zarrc.create(shape=(5,), store=where, mode="w")
    assert zarrc.open_array(where).shape == (5,)
    with pytest.raises(ContainsNodeError):
        zarrc.create(shape=(4,), store=where, mode="w-")
    with pytest.raises(ValueError):
        zarrc.create(shape=(4,), store=where, mode="r")
    with pytest.warns(RuntimeWarning, match="synchronizer"):
        zarrc.create(shape=(4,), synchronizer=object())
    with pytest.raises(TypeError):
        zarrc.create(shape=(4,), no_such_keyword=1)


@pytest.mark.parametrize(("shape", "chunks", "dtype"), [
    ((1000, 1000), "auto", "f8"), ((100,), (10,), "i4"), ((4096, 4096), (256, 256), "f4"),
    ((5, 3000), "auto", "u1"), ((300, 7, 90), (10, 7, 9), "u2"),
])
def test_auto_chunks_and_shards_as_zarr_python(tmp_path, shape, chunks, dtype):
    """chunks="auto" (zarr-python's heuristic) and shards="auto" (two chunks along each
    dimension with more than 8) give zarr-python's documents."""
    import warnings
    docs = []
    for lib, name in ((zarr, "z"), (zarrc, "c")):
        with warnings.catch_warnings():
            warnings.simplefilter("ignore")
            a = lib.create_array(str(tmp_path / name), shape=shape, chunks=chunks, shards="auto", dtype=dtype)
            b = lib.create_array(str(tmp_path / (name + "-plain")), shape=shape, chunks=chunks, dtype=dtype)
        docs.append((a.chunks, a.shards, b.chunks, json.loads((tmp_path / name / "zarr.json").read_text())))
    assert docs[0] == docs[1]
