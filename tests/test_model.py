"""zarrc.model, the ZEP 6 object model: ArraySpec / GroupSpec of both formats read
from stores (consolidated or not, to a depth), written in one call, and their dict,
JSON and flat forms; comparison; errors naming the node and the field; the JSON
Schema.  pydantic-zarr's side is tests/interop/test_pydantic_zarr.py."""

from __future__ import annotations

import json
import subprocess
import sys

import numpy as np
import pytest

import zarrc
from zarrc import model
from zarrc.errors import (
    ContainsNodeError,
    ExpectedArrayError,
    ExpectedGroupError,
    MetadataError,
    NodeNotFoundError,
    SpecError,
)
from zarrc.model import ArraySpec, GroupSpec


def hierarchy(store, zarr_format: int = 3):
    """A group with attributes, a chunked array with dimension names, a sharded one
    (v3), a compressed one, a string array and a nested group with an array."""
    g = zarrc.create_group(store, zarr_format=zarr_format, attributes={"title": "t", "n": [1, 2]})
    g.create_array("x", shape=(10, 10), chunks=(5, 5), dtype="f4", fill_value=np.nan,
                   dimension_names=["y", "x"] if zarr_format == 3 else None, attributes={"units": "m"})
    if zarr_format == 3:
        g.create_array("sharded", shape=(100, 8), chunks=(10, 4), shards=(50, 8), dtype="i2",
                       compressors=[{"name": "zstd", "configuration": {"level": 3}}])
        g.create_array("gz", shape=(7,), chunks=(3,), dtype="u1",
                       compressors=[{"name": "gzip", "configuration": {"level": 1}}])
    else:
        g.create_array("gz", shape=(7,), chunks=(3,), dtype="u1", compressors={"id": "zlib", "level": 1},
                       filters=[{"id": "delta", "dtype": "|u1"}])
    g.create_array("s", shape=(4,), chunks=(2,), dtype=str)
    sub = g.create_group("sub", attributes={"deep": True})
    sub.create_array("b", shape=(3,), chunks=(3,), dtype="bool")
    sub.create_group("empty")
    return g


@pytest.fixture(params=[2, 3], ids=["v2", "v3"])
def fmt(request) -> int:
    return request.param


# ------------------------------------------------------------------ reading a store


def test_from_store_describes_every_node(fmt) -> None:
    store: dict = {}
    hierarchy(store, fmt)
    spec = GroupSpec.from_store(store)
    assert spec.zarr_format == fmt
    assert dict(spec.attributes) == {"title": "t", "n": [1, 2]}
    names = {"x", "gz", "s", "sub"} | ({"sharded"} if fmt == 3 else set())
    assert set(spec.members) == names
    assert list(spec.members) == sorted(names)
    x = spec.members["x"]
    assert isinstance(x, ArraySpec) and x.shape == (10, 10) and x.dtype == np.dtype("f4")
    assert dict(x.attributes) == {"units": "m"}
    sub = spec.members["sub"]
    assert isinstance(sub, GroupSpec) and set(sub.members) == {"b", "empty"}
    assert sub.members["empty"].members == {}
    # each array's dict is its metadata document with the attributes
    opened = zarrc.open_group(store, mode="r")
    for name in names - {"sub"}:
        md = opened[name].metadata
        doc = spec.members[name].to_dict()
        assert doc["attributes"] == dict(md.attributes)
        expected = md.to_json()
        expected.pop("attributes", None)
        assert {k: v for k, v in doc.items() if k not in ("attributes", "node_type")} == \
            {k: v for k, v in expected.items() if k != "node_type"}


def test_v3_dict_is_zep6s_form() -> None:
    store: dict = {}
    hierarchy(store, 3)
    doc = GroupSpec.from_store(store).to_dict()
    assert list(doc) == ["zarr_format", "node_type", "attributes", "members"]
    sharded = doc["members"]["sharded"]
    assert list(sharded)[:3] == ["zarr_format", "node_type", "attributes"]
    assert sharded["chunk_grid"] == {"name": "regular", "configuration": {"chunk_shape": [50, 8]}}
    assert sharded["codecs"][0]["name"] == "sharding_indexed"
    assert sharded["codecs"][0]["configuration"]["chunk_shape"] == [10, 4]
    assert doc["members"]["x"]["dimension_names"] == ["y", "x"]
    assert doc["members"]["x"]["fill_value"] == "NaN"
    assert "members" not in sharded
    json.dumps(doc, allow_nan=False)     # JSON-ready as it is


def test_v2_dict_has_no_node_type() -> None:
    store: dict = {}
    hierarchy(store, 2)
    doc = GroupSpec.from_store(store).to_dict()
    assert doc == {"zarr_format": 2, "attributes": {"title": "t", "n": [1, 2]}, "members": doc["members"]}
    gz = doc["members"]["gz"]
    assert "node_type" not in gz
    assert gz["compressor"] == {"id": "zlib", "level": 1}
    assert gz["filters"] == [{"id": "delta", "dtype": "|u1"}]
    assert set(gz) == {"zarr_format", "attributes", "shape", "chunks", "dtype", "fill_value", "order",
                       "filters", "dimension_separator", "compressor"}
    assert doc["members"]["s"]["dtype"] == "|O"


def test_round_trips(fmt, tmp_path) -> None:
    hierarchy(str(tmp_path / "src.zarr"), fmt)
    spec = GroupSpec.from_store(str(tmp_path / "src.zarr"))
    assert GroupSpec.from_dict(spec.to_dict()) == spec
    assert GroupSpec.from_json(spec.to_json()) == spec
    assert GroupSpec.from_json(spec.to_json(indent=2).encode()) == spec
    assert model.from_dict(json.loads(spec.to_json())) == spec
    assert GroupSpec.from_flat(spec.to_flat()) == spec
    assert GroupSpec.from_flat({k: v.to_dict() for k, v in spec.to_flat().items()}) == spec
    for x in spec.members.values():
        assert type(x).from_dict(x.to_dict()) == x
    # a store: the same nodes, no chunks
    node = spec.to_store(str(tmp_path / "copy.zarr"))
    assert isinstance(node, zarrc.Group) and node.metadata.zarr_format == fmt
    assert GroupSpec.from_store(str(tmp_path / "copy.zarr")) == spec
    assert sorted(p.name for p in (tmp_path / "copy.zarr" / "x").iterdir() if not p.name.startswith(".")) in (
        [], ["zarr.json"])
    assert zarrc.open_array(str(tmp_path / "copy.zarr"), path="x", mode="r")[0, 0] != 0   # the NaN fill
    # below a path of another store, the groups above created
    store: dict = {}
    spec.to_store(store, "a/b")
    assert GroupSpec.from_store(store, "a/b") == spec
    assert GroupSpec.from_store(store, depth=1).members["a"].members is None


def test_flat_form_is_pydantic_zarrs() -> None:
    store: dict = {}
    hierarchy(store, 3)
    flat = GroupSpec.from_store(store).to_flat()
    assert list(flat) == ["", "/gz", "/s", "/sharded", "/sub", "/x", "/sub/b", "/sub/empty"]
    assert flat[""].members is None and flat["/sub"].members is None
    assert isinstance(flat["/x"], ArraySpec)
    assert list(GroupSpec.from_store(store).to_flat("/root")) [:2] == ["/root", "/root/gz"]
    # keys without the leading "/" and missing groups: implicit groups
    arr = flat["/sub/b"]
    rebuilt = model.from_flat({"a/b/c": arr})
    assert isinstance(rebuilt, GroupSpec)
    assert rebuilt.members["a"].members["b"].members["c"] == arr
    assert dict(rebuilt.members["a"].attributes) == {}
    # a lone array at the root
    assert model.from_flat({"": arr}) == arr
    assert ArraySpec.from_flat({"": arr}) == arr


def test_from_store_takes_urls_nodes_and_paths(tmp_path) -> None:
    path = tmp_path / "h.zarr"
    g = hierarchy(str(path), 3)
    spec = GroupSpec.from_store(str(path))
    assert GroupSpec.from_store(path.as_uri()) == spec
    assert GroupSpec.from_store(g) == spec
    assert GroupSpec.from_store(g["sub"]) == spec.members["sub"]
    assert GroupSpec.from_store(g, "sub") == spec.members["sub"]
    assert ArraySpec.from_store(str(path), "sub/b") == spec.members["sub"].members["b"]
    assert ArraySpec.from_store(g["x"]) == spec.members["x"]
    assert GroupSpec.from_store(str(path / "zarr.json")) == spec    # (a node's document names it)
    with pytest.raises(TypeError, match="storage_options"):
        GroupSpec.from_store(str(path), storage_options={"anon": True})


def test_remote_urls_with_storage_options() -> None:
    """A URL and its ``storage_options`` go through the store layer as for
    ``zarrc.open`` (fsspec's memory:// here; remote servers: tests/stores)."""
    pytest.importorskip("fsspec", reason="the remote stores need fsspec (zarrc[remote])")
    spec = GroupSpec(attributes={"a": 1}, members={"x": ArraySpec.create(shape=(4,), dtype="i4", chunks=(2,))})
    url, options = "memory://zarrc-model-test/h.zarr", {"skip_instance_cache": False}
    node = spec.to_store(url, storage_options=options)
    assert isinstance(node, zarrc.Group)
    assert GroupSpec.from_store(url, storage_options=options) == spec
    assert ArraySpec.from_store(url, "x") == spec.members["x"]
    assert zarrc.open_array(url, path="x", mode="r").shape == (4,)


def test_from_store_reads_zip_stores_and_closes_what_it_opens(tmp_path) -> None:
    path = str(tmp_path / "h.zip")
    with zarrc.storage.ZipStore(path, mode="w") as zs:
        hierarchy(zs, 2)
    spec = GroupSpec.from_store(path)
    assert set(spec.members) == {"x", "gz", "s", "sub"}
    assert spec.to_store({}).metadata.zarr_format == 2
    zs = zarrc.storage.ZipStore(path, mode="r")
    assert GroupSpec.from_store(zs) == spec
    assert GroupSpec.from_store(zs, "sub") == spec.members["sub"]     # (a store given stays open)
    zs.close()


def test_spec_errors_pickle_with_their_path_and_field() -> None:
    import pickle

    with pytest.raises(SpecError) as info:
        model.from_dict({"zarr_format": 3, "members": {"a": {"zarr_format": 3, "shape": [1], "data_type": "x"}}})
    again = pickle.loads(pickle.dumps(info.value))
    assert (str(again), again.path, again.field) == (str(info.value), "/a", info.value.field)


def test_from_store_errors(tmp_path) -> None:
    store: dict = {}
    hierarchy(store, 3)
    with pytest.raises(NodeNotFoundError, match="/nothing"):
        model.from_store(store, "nothing")
    with pytest.raises(ExpectedGroupError):
        GroupSpec.from_store(store, "x")
    with pytest.raises(ExpectedArrayError):
        ArraySpec.from_store(store, "sub")
    with pytest.raises(ValueError, match="depth"):
        GroupSpec.from_store(store, depth=-1)
    store["sub/b/zarr.json"] = store["sub/b/zarr.json"].replace(b'"bool"', b'"bool9"')
    with pytest.raises(MetadataError, match="/sub/b"):
        GroupSpec.from_store(store)


# ------------------------------------------------------------------ depth and consolidated metadata


@pytest.mark.parametrize("consolidated", [False, True], ids=["listed", "consolidated"])
def test_depth_limits_the_members(fmt, consolidated) -> None:
    store: dict = {}
    hierarchy(store, fmt)
    if consolidated:
        zarrc.consolidate_metadata(store)
    full = GroupSpec.from_store(store)
    assert full == GroupSpec.from_store(store, depth=None)
    top = GroupSpec.from_store(store, depth=0)
    assert top.members is None and top.attributes == full.attributes
    one = GroupSpec.from_store(store, depth=1)
    assert set(one.members) == set(full.members)
    assert one.members["sub"].members is None
    assert one.members["x"] == full.members["x"]
    two = GroupSpec.from_store(store, depth=2)
    assert two.members["sub"].members["empty"].members is None
    assert two.members["sub"].members["b"] == full.members["sub"].members["b"]
    assert GroupSpec.from_store(store, depth=3) == full


def test_consolidated_metadata_is_used_when_present(fmt) -> None:
    store: dict = {}
    hierarchy(store, fmt)
    zarrc.consolidate_metadata(store)
    before = GroupSpec.from_store(store)
    # the members' own documents gone: only the consolidated metadata describes them
    doc = "zarr.json" if fmt == 3 else ".zarray"
    del store[f"sub/b/{doc}"]
    assert GroupSpec.from_store(store) == before
    assert "sub" in before.members
    # the consolidated document is not a field of the model
    assert "consolidated_metadata" not in before.to_dict()
    assert "consolidated_metadata" not in json.dumps(before.to_dict())
    # and a spec written back is the same hierarchy
    copy: dict = {}
    before.to_store(copy)
    assert GroupSpec.from_store(copy) == before


def test_a_nested_consolidated_group_is_read_from_its_document() -> None:
    store: dict = {}
    hierarchy(store, 3)
    zarrc.consolidate_metadata(store, "sub")
    expected = GroupSpec.from_store(store)
    del store["sub/b/zarr.json"]
    assert GroupSpec.from_store(store) == expected


def test_unreadable_consolidated_metadata_falls_back_with_a_warning() -> None:
    store: dict = {}
    hierarchy(store, 2)
    expected = GroupSpec.from_store(store)
    zarrc.consolidate_metadata(store)
    store[".zmetadata"] = b"{not json"
    with pytest.warns(zarrc.errors.ZarrcUserWarning, match="consolidated"):
        assert GroupSpec.from_store(store) == expected


def _damage_entry(store: dict, fmt: int, key: str) -> None:
    """The consolidated entry of ``key`` given a shape that is not a list."""
    name = "zarr.json" if fmt == 3 else ".zmetadata"
    doc = json.loads(bytes(store[name]))
    entries = doc["consolidated_metadata"]["metadata"] if fmt == 3 else doc["metadata"]
    entries[key if fmt == 3 else f"{key}/.zarray"]["shape"] = "three"
    store[name] = json.dumps(doc).encode()


def test_a_malformed_consolidated_entry_is_read_from_the_nodes_document(fmt) -> None:
    store: dict = {}
    hierarchy(store, fmt)
    expected = GroupSpec.from_store(store)
    zarrc.consolidate_metadata(store)
    _damage_entry(store, fmt, "sub/b")
    with pytest.warns(zarrc.errors.ZarrcUserWarning, match=r"sub/b.*shape.*node /sub/b is read from its own"):
        assert GroupSpec.from_store(store) == expected
    # without a document of its own, the entry's error, naming the key and the field
    doc = "zarr.json" if fmt == 3 else ".zarray"
    del store[f"sub/b/{doc}"]
    with pytest.raises(MetadataError, match=r'"sub/b.*"shape" "three"'):
        GroupSpec.from_store(store)
    # and a malformed own document: its error
    store[f"sub/b/{doc}"] = b"{not json"
    with pytest.raises(MetadataError, match=f"{doc} of /sub/b: is not valid JSON"):
        GroupSpec.from_store(store)


# ------------------------------------------------------------------ writing


def test_to_store_writes_in_one_call_and_checks_first() -> None:
    store: dict = {}
    hierarchy(store, 3)
    spec = GroupSpec.from_store(store)
    with pytest.raises(ContainsNodeError):
        spec.to_store(store)
    target: dict = {"sub/zarr.json": store["sub/zarr.json"]}
    with pytest.raises(ContainsNodeError, match="sub"):
        spec.to_store(target)
    assert list(target) == ["sub/zarr.json"]       # nothing written
    changed = spec.replace(attributes={"new": 1})
    changed.to_store(store, overwrite=True)
    assert GroupSpec.from_store(store) == changed
    # a bare array spec
    arr = spec.members["sharded"]
    node = arr.to_store(store, "other/arr")
    assert isinstance(node, zarrc.Array) and node.shards == (50, 8)
    assert ArraySpec.from_store(store, "other/arr") == arr
    # members None: the group alone
    GroupSpec(members=None).to_store(store, "lone")
    assert GroupSpec.from_store(store, "lone").members == {}


def test_to_store_updates_consolidated_metadata_above() -> None:
    store: dict = {}
    zarrc.create_group(store)
    zarrc.consolidate_metadata(store)
    spec = GroupSpec(attributes={"a": 1}, members={"x": ArraySpec.create(shape=(4,), dtype="i4", chunks=(2,))})
    spec.to_store(store, "g")
    g = zarrc.open_group(store, mode="r", use_consolidated=True)
    assert g["g/x"].shape == (4,)
    assert GroupSpec.from_store(store).members["g"] == spec


def test_array_spec_create_is_create_arrays_metadata(fmt) -> None:
    kwargs = {"shape": (20, 6), "dtype": "<i4", "chunks": (5, 3), "zarr_format": fmt, "attributes": {"a": 1},
              "fill_value": 7}
    if fmt == 3:
        kwargs.update(shards=(10, 6), dimension_names=["t", "c"])
    spec = ArraySpec.create(**kwargs)
    store: dict = {}
    zarrc.create_array(store, **kwargs)
    assert ArraySpec.from_store(store) == spec
    assert spec.to_store({}).metadata == zarrc.open_array(store, mode="r").metadata


def test_group_spec_constructor() -> None:
    arr = ArraySpec.create(shape=(3,), dtype="f8", chunks=(3,))
    g = GroupSpec(attributes={"a": 1}, members={"x": arr, "y": arr.to_dict(),
                                                "g": GroupSpec(members=None)})
    assert g.members["y"] == arr and g.members["g"].members is None
    assert GroupSpec().to_dict() == {"zarr_format": 3, "node_type": "group", "attributes": {}, "members": {}}
    assert GroupSpec(zarr_format=2).to_dict() == {"zarr_format": 2, "attributes": {}, "members": {}}
    with pytest.raises(TypeError):
        g.members["z"] = arr        # read only
    assert hash(g) == hash(GroupSpec.from_dict(g.to_dict()))
    assert "members=['x', 'y', 'g']" in repr(g)
    assert "shape=(3,)" in repr(arr)
    assert zarrc.model is model


# ------------------------------------------------------------------ comparison


def test_like_with_include_and_exclude() -> None:
    store: dict = {}
    hierarchy(store, 3)
    a = GroupSpec.from_store(store)
    b = a.replace(attributes={"other": 1})
    assert a.like(a) and a.like(a.to_dict()) and a.like(zarrc.open_group(store, mode="r"))
    assert not a.like(b)
    assert a.like(b, exclude={"attributes"})
    assert a.like(b, include={"members"})
    assert not a.like(b, include={"attributes"})
    x = a.members["x"]
    y = x.replace(attributes={"units": "km"}, shape=[20, 10])
    assert not x.like(y)
    assert not x.like(y, exclude={"attributes"})
    assert x.like(y, exclude={"attributes", "shape"})
    assert x.like(y, exclude=["attributes", "shape"])
    # nested: pydantic's forms
    members = {**a.to_dict()["members"], "x": y.to_dict()}
    c = a.replace(members=members)
    assert not a.like(c, exclude={"attributes"})
    assert a.like(c, exclude={"members": {"x": {"attributes", "shape"}}})
    assert a.like(c, exclude={"members": {"__all__": {"attributes": True, "shape": True}}})
    assert a.like(c, exclude={"members": {"x": True}})
    assert not a.like(c, include={"members": {"x": {"shape"}}})
    assert a.like(c, include={"members": {"x": {"dtype", "chunk_grid"}}})
    with pytest.raises(TypeError):
        a.like(c, exclude=3)
    # equality: the dicts
    assert x == ArraySpec(x.to_dict()) and x != y and x != a and a != x.to_dict()


# ------------------------------------------------------------------ errors


def bad(doc: dict, path: str, field: str | None, match: str) -> None:
    with pytest.raises(SpecError, match=match) as info:
        model.from_dict(doc)
    assert info.value.path == path and info.value.field == field, (info.value, info.value.path, info.value.field)
    assert str(info.value).split(":")[0].endswith(f" {path}")
    assert isinstance(info.value, MetadataError) and isinstance(info.value, ValueError)


def test_errors_name_the_node_and_the_field() -> None:
    store: dict = {}
    hierarchy(store, 3)
    doc = GroupSpec.from_store(store).to_dict()

    def with_x(**changes):
        out = json.loads(json.dumps(doc))
        out["members"]["sub"]["members"]["b"].update(changes)
        return out

    where = "/sub/b"
    bad(with_x(shape=[1, "a"]), where, "shape", r'array /sub/b: "shape" \[1, "a"\] must be an array of integers')
    bad(with_x(shape=[3, 3]), where, "chunk_grid", "chunk_shape")
    bad(with_x(data_type="float99"), where, "data_type", "float99")
    bad(with_x(codecs=[{"name": "nope"}]), where, "codecs", "nope")
    bad(with_x(codecs=[]), where, "codecs", "codecs")
    bad(with_x(fill_value="x"), where, "fill_value", "fill_value")
    bad(with_x(dimension_names=["a", "b"]), where, "dimension_names", "dimension_names")
    bad(with_x(attributes=[1]), where, "attributes", "must be an object")
    bad(with_x(chunk_key_encoding={"name": "default", "configuration": {"separator": "-"}}), where,
        "chunk_key_encoding", "chunk_key_encoding")
    bad(with_x(members={}), where, "members", "an array has no members")
    v2 = json.loads(json.dumps(doc))
    v2["members"]["sub"]["members"]["b"] = ArraySpec.create(shape=(2,), dtype="i1", zarr_format=2).to_dict()
    bad(v2, "/sub", "members", "'b' is a Zarr format 2 array in a format 3 group")
    bad(with_x(node_type="file"), where, "node_type", "must be \"array\" or \"group\"")
    bad(with_x(unknown=1), where, "unknown", "not a known field")
    missing = with_x()
    del missing["members"]["sub"]["members"]["b"]["codecs"]
    bad(missing, where, "codecs", '"codecs" is missing')
    del missing["members"]["sub"]["members"]["b"]["zarr_format"]
    bad(missing, where, "zarr_format", '"zarr_format" is missing')
    named = json.loads(json.dumps(doc))
    named["members"]["sub"]["members"]["a/b"] = {"zarr_format": 3}
    bad(named, "/sub", "members", "must not contain '/'")
    named["members"]["sub"]["members"] = [1]
    bad(named, "/sub", "members", "must be an object or null")
    bad({"zarr_format": 3, "node_type": "group", "attributes": 1}, "/", "attributes", "must be an object")
    bad({"zarr_format": 4}, "/", "zarr_format", "must be 2 or 3")
    with pytest.raises(SpecError, match="not valid JSON"):
        model.from_json("{")


def test_v2_errors_name_the_node_and_the_field() -> None:
    store: dict = {}
    hierarchy(store, 2)
    doc = GroupSpec.from_store(store).to_dict()

    def with_gz(**changes):
        out = json.loads(json.dumps(doc))
        out["members"]["gz"].update(changes)
        return out

    bad(with_gz(order="K"), "/gz", "order", '"order" "K" must be "C" or "F"')
    bad(with_gz(chunks=[0]), "/gz", "chunks", "chunks")
    bad(with_gz(dtype="<q9"), "/gz", "dtype", "dtype")
    bad(with_gz(compressor={"level": 1}), "/gz", "compressor", "compressor")
    bad(with_gz(dimension_names=["x"]), "/gz", "dimension_names", "not a field of a Zarr v2 array")
    bad(with_gz(dimension_separator="-"), "/gz", "dimension_separator", "dimension_separator")
    out = json.loads(json.dumps(doc))
    out["members"]["sub"]["consolidated"] = True
    bad(out, "/sub", "consolidated", "not a field of a Zarr v2 group")


def test_other_kind_and_flat_errors() -> None:
    arr = ArraySpec.create(shape=(3,), dtype="f8", chunks=(3,))
    with pytest.raises(ExpectedArrayError):
        ArraySpec.from_dict(GroupSpec().to_dict())
    with pytest.raises(ExpectedGroupError):
        GroupSpec.from_json(arr.to_json())
    with pytest.raises(SpecError, match="below /a, which is an array"):
        model.from_flat({"/a": arr, "/a/b": arr})
    with pytest.raises(SpecError, match="mix Zarr formats"):
        model.from_flat({"/a": arr, "/b": GroupSpec(zarr_format=2)})
    with pytest.raises(SpecError, match="given twice"):
        model.from_flat({"a": arr, "/a": arr})
    with pytest.raises(SpecError, match="given both"):
        model.from_flat({"": GroupSpec(members={"a": arr}), "/a": arr})
    with pytest.raises(SpecError, match="periods"):
        model.from_flat({"/a/..": arr})
    with pytest.raises(SpecError, match="zarr_format"):
        GroupSpec(zarr_format=1)
    with pytest.raises(SpecError, match="format 2 group in a format 3"):
        GroupSpec(members={"g": GroupSpec(zarr_format=2)})


def test_documents_from_other_writers() -> None:
    """pydantic-zarr's Python-mode dumps (tuples), ZEP 6's defaults (no node_type, a
    null storage_transformers), a zarr.json's consolidated metadata (ignored)."""
    arr = {"zarr_format": 3, "shape": (4,), "data_type": "uint8",
           "chunk_grid": {"name": "regular", "configuration": {"chunk_shape": (2,)}},
           "chunk_key_encoding": {"name": "default", "configuration": {"separator": "/"}},
           "fill_value": 0, "codecs": ({"name": "bytes"},), "storage_transformers": None,
           "dimension_names": None}
    spec = model.from_dict({"zarr_format": 3, "members": {"a": arr}, "consolidated_metadata": {
        "kind": "inline", "must_understand": False, "metadata": {}}})
    assert isinstance(spec, GroupSpec) and spec.members["a"].shape == (4,)
    assert spec.members["a"].to_dict()["storage_transformers"] == []
    assert "dimension_names" not in spec.members["a"].to_dict()
    v2 = model.from_dict({"zarr_format": 2, "attributes": {}, "shape": (3,), "chunks": (3,), "dtype": "<f8",
                          "fill_value": "NaN", "order": "C", "filters": None, "dimension_separator": "/",
                          "compressor": None})
    assert isinstance(v2, ArraySpec) and np.isnan(v2.metadata.fill_value)


# ------------------------------------------------------------------ JSON Schema


def test_json_schema_validates_real_documents(tmp_path) -> None:
    jsonschema = pytest.importorskip("jsonschema", reason="the test extra installs jsonschema")
    schema = model.json_schema()
    validator = jsonschema.Draft202012Validator
    validator.check_schema(schema)
    assert model.json_schema() is not model.json_schema()
    for fmt in (2, 3):
        store: dict = {}
        hierarchy(store, fmt)
        doc = json.loads(GroupSpec.from_store(store).to_json())
        validator(schema).validate(doc)
        validator(model.json_schema(fmt)).validate(doc)
        validator(model.json_schema(fmt, "group")).validate(doc)
        assert not validator(model.json_schema(5 - fmt)).is_valid(doc)
        assert not validator(model.json_schema(fmt, "array")).is_valid(doc)
        for arr in doc["members"].values():
            validator(schema).validate(arr)
        for node in GroupSpec.from_store(store, depth=1).to_flat().values():
            validator(schema).validate(json.loads(node.to_json()))
    # ZEP 6's own v3 example (its GZip codec and |u1 type are illustrations: the schema
    # is structural; from_dict checks the values)
    zep6 = {"zarr_format": 3, "node_type": "group", "attributes": {"foo": 42, "bar": False}, "members": {
        "array": {"zarr_format": 3, "node_type": "array", "attributes": {"baz": [1, 2, 3]},
                  "shape": [1000, 1000], "data_type": "|u1",
                  "chunk_grid": {"name": "regular", "configuration": {"chunk_shape": [1000, 100]}},
                  "chunk_key_encoding": {"name": "default", "configuration": {"separator": "/"}},
                  "fill_value": 0, "codecs": [{"name": "GZip", "configuration": {"level": 1}}],
                  "storage_transformers": None, "dimension_names": ["rows", "columns"]}}}
    validator(schema).validate(zep6)


def test_json_schema_rejects_invalid_documents() -> None:
    jsonschema = pytest.importorskip("jsonschema", reason="the test extra installs jsonschema")
    store: dict = {}
    hierarchy(store, 3)
    doc = json.loads(GroupSpec.from_store(store).to_json())
    v = jsonschema.Draft202012Validator(model.json_schema())
    x = doc["members"]["x"]
    for broken in ({**x, "shape": "10"}, {**x, "zarr_format": 4}, {**x, "members": {}},
                   {**x, "codecs": []}, {**x, "extra": 1}, {k: v for k, v in x.items() if k != "codecs"},
                   {**doc, "members": {"a/b": x}}, {**doc, "members": {"x": {**x, "fill_value": None}}}):
        assert not v.is_valid(broken), broken
    assert v.is_valid({**x, "extra": {"must_understand": False}})
    store2: dict = {}
    hierarchy(store2, 2)
    gz = json.loads(GroupSpec.from_store(store2).to_json())["members"]["gz"]
    for broken in ({**gz, "order": "K"}, {**gz, "chunks": [0]}, {**gz, "codecs": []}):
        assert not v.is_valid(broken), broken


def test_import_zarrc_does_not_import_the_model() -> None:
    code = ("import sys, zarrc\nassert 'zarrc.model' not in sys.modules\n"
            "assert zarrc.model.GroupSpec().zarr_format == 3\nassert 'zarrc.model' in sys.modules\n"
            "assert 'pydantic' not in sys.modules and 'jsonschema' not in sys.modules")
    subprocess.run([sys.executable, "-c", code], check=True)
