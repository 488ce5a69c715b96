"""zarrc.Group and group creation: members, ancestors, names, read-only groups."""

from __future__ import annotations

import json
import pickle

import pytest

import zarrc
from zarrc.errors import ContainsNodeError, MetadataError, NodeNotFoundError, NodeTypeError, StoreError
from zarrc.stores import MemoryStore


def build(store):
    root = zarrc.group(store, attributes={"title": "t"})
    root.create_group("b")
    root.create_array("a", shape=(3,), dtype="int8")
    root.create_array("b/c/d", shape=(2, 2), dtype="float32")      # creates b/c on the way
    return root


def test_members(store_maker):
    store = store_maker.new()
    root = build(store)
    if store_maker.kind == "zip":
        root = zarrc.open_group(store_maker.reopen_read_only(store), mode="r")
    assert list(root.keys()) == ["a", "b"] and list(root) == ["a", "b"] and len(root) == 2
    assert [n for n, _ in root.arrays()] == ["a"] and list(root.array_keys()) == ["a"]
    assert [n for n, _ in root.groups()] == ["b"] and list(root.group_keys()) == ["b"]
    assert isinstance(root["a"], zarrc.Array) and isinstance(root["b"], zarrc.Group)
    assert root["b/c/d"].shape == (2, 2) and root["b"]["c"]["d"].path == "b/c/d"
    assert "a" in root and "b/c" in root and "b/c/d" in root
    assert "x" not in root and "b/x" not in root and 3 not in root and "../a" not in root
    assert root.attrs["title"] == "t"
    with pytest.raises(NodeNotFoundError) as info:
        root["nope"]
    assert isinstance(info.value, KeyError)
    assert root.get("nope") is None and root.get("a").shape == (3,)
    assert root["b"].path == "b" and root["b"].name == "/b" and root["b"].basename == "b"


def test_ancestors_are_created():
    store = {}
    zarrc.create_array(store, path="x/y/z/arr", shape=(1,), dtype="i1")
    for path in ("zarr.json", "x/zarr.json", "x/y/zarr.json", "x/y/z/zarr.json"):
        assert json.loads(store[path])["node_type"] == "group"
    zarrc.open_group(store, path="p/q")
    assert "p/zarr.json" in store
    g = zarrc.open_group(store, mode="r")
    assert sorted(g.keys()) == ["p", "x"] and isinstance(g["x/y/z/arr"], zarrc.Array)


def test_create_require_group():
    root = zarrc.group({})
    g = root.create_group("g", attributes={"k": 1})
    assert g.attrs.asdict() == {"k": 1} and g.path == "g"
    with pytest.raises(ContainsNodeError):
        root.create_group("g")
    assert root.require_group("g") == g
    assert root.require_group("h").path == "h"
    root.create_array("arr", shape=(1,), dtype="i1")
    with pytest.raises(TypeError):
        root.require_group("arr")
    with pytest.raises(ContainsNodeError):
        root.create_group("arr/sub")                       # below an array
    fresh = root.create_group("g", overwrite=True)
    assert fresh.attrs.asdict() == {}
    assert zarrc.group(root.store, path="g") == fresh       # group() opens an existing group
    with pytest.raises(ContainsNodeError):
        zarrc.group(root.store, path="arr")


def test_group_attributes_persist(rw_store_maker):
    store = rw_store_maker.new()
    g = zarrc.group(store, path="g")
    g.attrs["a"] = {"b": [1, 2.5, None]}
    assert zarrc.open_group(store, path="g", mode="r").attrs.asdict() == {"a": {"b": [1, 2.5, None]}}


@pytest.mark.parametrize("name", [".", "..", "__x", "a/../b", "./a", "a/./b", "__zarr", "..."])
def test_invalid_node_names_are_refused(name):
    store = {}
    root = zarrc.group(store)
    before = dict(store)
    for make in (lambda: root.create_group(name), lambda: root.require_group(name),
                 lambda: root.create_array(name, shape=(1,), dtype="i1"),
                 lambda: zarrc.create_array(store, path=name, shape=(1,), dtype="i1"),
                 lambda: zarrc.open_group(store, path=name)):
        with pytest.raises(MetadataError):
            make()
    # a reserved name is only not created: one that another writer made is read
    with pytest.raises(KeyError if name.startswith("__") else MetadataError):
        root[name]
    assert name not in root
    assert store == before


def test_reserved_names_written_by_zarr_python_are_read(tmp_path):
    zarr = pytest.importorskip("zarr")
    path = str(tmp_path / "r.zarr")
    zarr.open_group(path, mode="w").create_array("__values__", shape=(2,), dtype="i4")[:] = [4, 5]
    root = zarrc.open_group(path, mode="r")
    assert [name for name, _ in root.arrays()] == ["__values__"]
    assert root["__values__"][:].tolist() == [4, 5]


def test_read_only_groups_refuse_changes():
    store = MemoryStore()
    build(store)
    before = dict(store.data)
    ro = zarrc.open_group(store, mode="r")
    assert ro.read_only and ro["b"].read_only and ro["a"].read_only
    for change in (lambda: ro.create_group("n"), lambda: ro.create_array("n", shape=(1,), dtype="i1"),
                   lambda: ro.require_group("n"), lambda: ro.attrs.update(x=1)):
        with pytest.raises(StoreError, match="read-only"):
            change()
    with pytest.raises(StoreError):
        ro["a"][0] = 1
    assert ro.require_group("b").path == "b"                # an existing group is just opened
    assert dict(store.data) == before


def test_tree():
    root = build({})
    text = str(root.tree())
    assert text.splitlines() == [
        "/",
        "├── a (3,) int8",
        "└── b",
        "    └── c",
        "        └── d (2, 2) float32",
    ]
    assert str(root.tree(level=1)).splitlines() == ["/", "├── a (3,) int8", "└── b"]


def test_open_dispatches_on_node_type(tmp_path):
    build(str(tmp_path / "h.zarr"))
    assert isinstance(zarrc.open(tmp_path / "h.zarr"), zarrc.Group)
    assert isinstance(zarrc.open(tmp_path / "h.zarr", path="a"), zarrc.Array)
    assert isinstance(zarrc.open(tmp_path / "h.zarr", path="new"), zarrc.Group)   # "a" creates
    with pytest.raises(NodeNotFoundError):
        zarrc.open(tmp_path / "h.zarr", path="none", mode="r")
    with pytest.raises(NodeTypeError, match="is an array, not a group"):   # (a ValueError too)
        zarrc.open_group(tmp_path / "h.zarr", path="a")
    with pytest.raises(NodeTypeError, match="is a group, not an array"):
        zarrc.open_array(tmp_path / "h.zarr", path="b")


def test_group_equality_and_pickle(tmp_path):
    g = zarrc.group(tmp_path / "e.zarr", path="x")
    assert g == zarrc.open_group(tmp_path / "e.zarr", path="x") and hash(g) == hash(
        zarrc.open_group(tmp_path / "e.zarr", path="x"))
    clone = pickle.loads(pickle.dumps(g))
    assert clone.path == "x" and isinstance(clone, zarrc.Group)
