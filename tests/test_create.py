"""Node creation and opening below the public API: ``zarrc.create`` (arguments ->
metadata, room made at a path, documents written) and ``zarrc.group``'s node
building (``open_node``, ``new_array``, ``new_group``); and the errors of bad
arguments through the public API (each a ZarrcError and the builtin a user would
catch)."""

from __future__ import annotations

import ast
import importlib
import importlib.util
import pathlib

import numpy as np
import pytest

import zarrc
from zarrc.core import node_metadata
from zarrc.core.array import Array
from zarrc.codecs import Zstd
from zarrc.errors import (
    ArgumentError,
    ArgumentTypeError,
    ContainsNodeError,
    MetadataError,
    NodeTypeError,
    ZarrcError,
)
from zarrc.core.group import Group, new_array, new_group, open_node
from zarrc.metadata.v2 import ArrayMetadataV2, GroupMetadataV2
from zarrc.metadata.v3 import ArrayMetadataV3, GroupMetadataV3
from zarrc.stores import MemoryStore

# the module zarrc/create.py (the name zarrc.create is the top-level function, as zarr-python's)
create = importlib.import_module("zarrc.core.create")


def test_array_metadata_is_built_without_touching_a_store():
    md = create.array_metadata(shape=10, dtype="i2", chunks=4, compressors=Zstd(level=1))
    assert isinstance(md, ArrayMetadataV3)
    assert md.shape == (10,) and md.chunk_shape == (4,)
    assert [c.name for c in md.codecs] == ["bytes", "zstd"]
    md2 = create.array_metadata(shape=(6, 6), dtype="f4", chunks=(3, 3), zarr_format=2)
    assert isinstance(md2, ArrayMetadataV2) and md2.compressor == {"id": "zstd", "level": 0}
    sharded = create.array_metadata(shape=(8,), dtype="u1", chunks=(2,), shards=4)
    assert sharded.chunk_shape == (4,) and sharded.codecs[0].name == "sharding_indexed"


def test_group_metadata_of_each_format():
    assert isinstance(create.group_metadata(3, {"a": 1}), GroupMetadataV3)
    g2 = create.group_metadata(2)
    assert isinstance(g2, GroupMetadataV2) and dict(g2.attributes) == {}
    with pytest.raises(MetadataError, match="zarr_format must be 2 or 3"):
        create.group_metadata(4)


def test_store_node_creates_missing_ancestors_and_refuses_to_overwrite():
    store = MemoryStore()
    md = create.store_node(store, "/a/b/c", create.group_metadata(3), overwrite=False)
    assert md.node_type == "group"
    for path in ("/", "/a", "/a/b", "/a/b/c"):
        assert node_metadata.read(store, path).node_type == "group"
    with pytest.raises(ContainsNodeError):
        create.store_node(store, "/a/b/c", create.group_metadata(3), overwrite=False)
    arr = create.array_metadata(shape=(2,), dtype="i1", chunks=(2,))
    create.store_node(store, "/a/x", arr, overwrite=False)
    before = {key: store.get(key) for key in store.list_prefix("")}
    with pytest.raises(ContainsNodeError, match="/a/x is an array"):
        create.store_node(store, "/a/x/y", create.group_metadata(3), overwrite=True)
    assert {key: store.get(key) for key in store.list_prefix("")} == before   # nothing deleted or written


def test_open_node_builds_the_node_class_of_the_metadata():
    store = MemoryStore()
    g = new_group(store, "/g", attributes={"k": "v"})
    a = new_array(store, "/g/a", create.array_metadata(shape=(3,), dtype="u1", chunks=(3,)))
    assert isinstance(g, Group) and isinstance(a, Array)
    a[:] = np.arange(3, dtype="u1")
    opened = open_node(store, "/g/a")
    assert isinstance(opened, Array) and opened[...].tolist() == [0, 1, 2]
    assert isinstance(open_node(store, "/g"), Group) and open_node(store, "/g").attrs["k"] == "v"
    assert open_node(store, "/nothing") is None
    with pytest.raises(MetadataError, match="no consolidated metadata"):
        open_node(store, "/g", use_consolidated=True)


def test_new_array_prepares_the_codecs_before_writing():
    store = MemoryStore()
    md = create.array_metadata(shape=(4,) * 33, dtype="u1", chunks=(1,) * 33)
    with pytest.raises(MetadataError):
        new_array(store, "/big", md)
    assert not node_metadata.exists(store, "/big") and not node_metadata.exists(store, "/")


def test_group_members_are_built_through_the_node_factory():
    g = zarrc.group(MemoryStore())
    a = g.create_array("x/y", shape=(2,), dtype="i4", chunks=(2,), overwrite=True, write_empty_chunks=True)
    assert isinstance(a, Array) and a.path == "x/y"
    assert isinstance(g["x"], Group) and isinstance(g["x/y"], Array)
    assert [name for name, _ in g.members()] == ["x"]


def test_public_return_types():
    """The public functions are annotated with the node class they return."""
    import typing

    hints = {name: typing.get_type_hints(getattr(zarrc.api.synchronous, name))["return"]
             for name in ("open_array", "open_group", "group", "open", "open_consolidated",
                          "create_array", "create_group", "consolidate_metadata")}
    assert hints["open_array"] is Array and hints["create_array"] is Array
    for name in ("open_group", "group", "open_consolidated", "create_group", "consolidate_metadata"):
        assert hints[name] is Group, name
    assert set(typing.get_args(hints["open"])) == {Array, Group}


# ------------------------------------------------------------ bad arguments

def _empty(store: MemoryStore) -> bool:
    return not list(store.list_prefix(""))


@pytest.mark.parametrize(("call", "cls", "builtin"), [
    (lambda s: zarrc.create_array(s, path=5, shape=(4,), dtype="i4"), ArgumentTypeError, TypeError),
    (lambda s: zarrc.create_array(s, name=b"x", shape=(4,), dtype="i4"), ArgumentTypeError, TypeError),
    (lambda s: zarrc.open_group(s, path=3), ArgumentTypeError, TypeError),
    (lambda s: zarrc.open(s, path=3.0), ArgumentTypeError, TypeError),
    (lambda s: zarrc.group(s, path=None), ArgumentTypeError, TypeError),
    (lambda s: zarrc.api.synchronous.create_group(s, path=[]), ArgumentTypeError, TypeError),
    (lambda s: zarrc.create_array(s, shape="ab", dtype="i4"), ArgumentTypeError, TypeError),
    (lambda s: zarrc.create_array(s, shape=4.5, dtype="i4"), ArgumentTypeError, TypeError),
    (lambda s: zarrc.create_array(s, shape=None, dtype="i4"), ArgumentError, ValueError),  # (zarr-python's)
    (lambda s: zarrc.create_array(s, shape=["a"], dtype="i4"), ArgumentError, ValueError),
    (lambda s: zarrc.create_array(s, shape=(4,), chunks=2.0, dtype="i4"), ArgumentTypeError, TypeError),
    (lambda s: zarrc.create_array(s, shape=(4,), chunks=(2,), shards=4.0, dtype="i4"),
     ArgumentTypeError, TypeError),
    (lambda s: zarrc.create_array(s, shape=(4,), dtype="i4", attributes=[1]), ArgumentTypeError, TypeError),
    (lambda s: zarrc.group(s, attributes="x"), ArgumentTypeError, TypeError),
    (lambda s: zarrc.open_group(s, attributes=1), ArgumentTypeError, TypeError),
    (lambda s: zarrc.create_array(s, shape=(4,), dtype="i4", compressors=object()), ArgumentTypeError, TypeError),
    (lambda s: zarrc.create_array(s, shape=(4,), dtype="i4", compressors=[5]), ArgumentTypeError, TypeError),
    (lambda s: zarrc.create_array(s, shape=(4,), dtype="i4", filters=3), ArgumentTypeError, TypeError),
    (lambda s: zarrc.create_array(s, shape=(4,), dtype="i4", serializer=3), ArgumentTypeError, TypeError),
    (lambda s: zarrc.create_array(s, shape=(4,), dtype="i4", zarr_format=2, compressors=object()),
     ArgumentTypeError, TypeError),
    (lambda s: zarrc.create_array(s, shape=(4,), dtype="i4", zarr_format=2, filters=[object()]),
     ArgumentTypeError, TypeError),
    (lambda s: zarrc.create_array(s, shape=(4,), dtype="i4", zarr_format=2, compressors={"level": 1}),
     MetadataError, ValueError),
    (lambda s: zarrc.open(s, mode="z"), ArgumentError, ValueError),
    (lambda s: zarrc.create_array(s, shape=(4,), dtype="i4", order="Q"), MetadataError, ValueError),
], ids=lambda v: "" if callable(v) or isinstance(v, type) else str(v))
def test_bad_arguments_raise_zarrc_errors_and_write_nothing(call, cls, builtin):
    store = MemoryStore()
    with pytest.raises(cls) as info:
        call(store)
    assert isinstance(info.value, ZarrcError) and isinstance(info.value, builtin)
    assert _empty(store)


def test_group_member_names_must_be_str():
    g = zarrc.group(MemoryStore())
    for call in (lambda: g[3], lambda: g.create_group(3), lambda: g.create_array(3, shape=(2,), dtype="i1")):
        with pytest.raises(ArgumentTypeError) as info:
            call()
        assert isinstance(info.value, TypeError)
    assert 3 not in g and list(g) == []


def test_require_group_on_an_array_is_a_node_type_error():
    g = zarrc.group(MemoryStore())
    g.create_array("a", shape=(2,), dtype="i1")
    with pytest.raises(NodeTypeError, match="/a is an array, not a group") as info:
        g.require_group("a")
    assert isinstance(info.value, TypeError) and isinstance(info.value, ZarrcError)


def test_attribute_errors_are_zarrc_errors_and_write_nothing():
    store = MemoryStore()
    g = zarrc.group(store, attributes={"keep": 1})
    before = {key: store.get(key) for key in store.list_prefix("")}
    for call, cls, builtin in [
        (lambda: g.attrs.put([1]), ArgumentTypeError, TypeError),
        (lambda: g.attrs.update(5), ArgumentTypeError, TypeError),
        (lambda: g.attrs.update([(1,)]), ArgumentError, ValueError),
        (lambda: g.attrs.update({"a": object()}), ArgumentTypeError, TypeError),
        (lambda: g.attrs.__setitem__("a", {1j}), ArgumentTypeError, TypeError),
    ]:
        with pytest.raises(cls) as info:
            call()
        assert isinstance(info.value, ZarrcError) and isinstance(info.value, builtin)
    assert {key: store.get(key) for key in store.list_prefix("")} == before
    assert g.attrs.asdict() == {"keep": 1}


def test_a_new_node_with_attributes_that_are_not_json_writes_nothing():
    store = MemoryStore()
    with pytest.raises(ArgumentTypeError, match="cannot be written as JSON") as info:
        zarrc.create_array(store, path="a/b", shape=(2,), dtype="i1", attributes={"x": object()})
    assert isinstance(info.value, TypeError)
    assert _empty(store)                 # not even the missing ancestor groups


def _imports(module: str) -> set[str]:
    """The zarrc modules ``module``'s source imports (anywhere in it)."""
    tree = ast.parse(pathlib.Path(importlib.util.find_spec(module).origin).read_text())
    found = set()
    for node in ast.walk(tree):
        if isinstance(node, ast.Import):
            found.update(a.name for a in node.names)
        elif isinstance(node, ast.ImportFrom) and node.module:
            found.add(node.module)
            found.update(f"{node.module}.{a.name}" for a in node.names)
    return {m for m in found if m.startswith("zarrc")}


def test_node_creation_sits_below_the_node_classes_and_the_api_on_top():
    api = {"zarrc.api.synchronous", "zarrc.api.data", "zarrc.api.asynchronous"}
    above = api | {"zarrc.core.group", "zarrc.core.array", "zarrc.core.node"}
    for module in ("zarrc.core.create", "zarrc.core.create_v2", "zarrc.core.consolidate",
                   "zarrc.core.node_metadata"):
        assert not _imports(module) & above, module
    assert not _imports("zarrc.core.group") & api
    assert not _imports("zarrc.core.node") & (api | {"zarrc.core.group", "zarrc.core.array"})
