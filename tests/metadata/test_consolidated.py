"""Consolidated metadata (zarrc.metadata.consolidated): the ``.zmetadata`` (v2) and
``consolidated_metadata`` (v3) documents zarr-python writes parse into the same node
metadata zarrc reads from each node's own documents, zarrc writes them back the way
zarr-python does, zarr-python reads what zarrc writes, and bad documents raise
MetadataError naming the document and the key."""

from __future__ import annotations

import copy
import json
import shutil
import warnings
from pathlib import Path

import numpy as np
import pytest

from helpers import NO_ZARR_PYTHON

from zarrc.errors import MetadataError
from zarrc.metadata.consolidated import (
    parse_v2,
    parse_v3,
    relative_path,
    subtree,
    to_bytes_v2,
    to_json_v2,
    to_json_v3,
)
from zarrc.metadata.v2 import ArrayMetadataV2, GroupMetadataV2
from zarrc.metadata.v3 import ArrayMetadataV3, GroupMetadataV3, metadata_from_json

zarr = pytest.importorskip("zarr", reason=NO_ZARR_PYTHON)


def _dtype(name):
    """zarr-python data types named in the parameter lists below."""
    if name == "str":
        return str
    if name == "vlen-bytes":
        from zarr.dtype import VariableLengthBytes

        return VariableLengthBytes()
    if name == "struct":
        return [("a", "<i4"), ("b", "<f8")]
    return name


V2_DTYPES = ["<i4", ">f8", "|b1", "<c16", "<M8[ns]", "<m8[s]", "<U5", "|S4", "|V3", "<f2", "|u1",
             "str", "vlen-bytes", "struct"]
V3_DTYPES = ["<i4", ">f8", "|b1", "<c16", "<f2", "<u8", "|i1", "<M8[ns]", "<U5", "|S4", "|V3",
             "str", "vlen-bytes", "struct"]


def build(path: Path, zarr_format: int, dtype=None, consolidate: bool = True) -> Path:
    """A hierarchy written by zarr-python: attributes everywhere, nested and empty
    groups, a 0-d array, names whose order depends on case, and (if given) an array
    "data" of ``dtype``."""
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        root = zarr.open_group(str(path), mode="w", zarr_format=zarr_format,
                               attributes={"title": "root", "list": [1, 2.5, None], "nested": {"k": "v"}})
        root.create_array("a", shape=(10, 6), chunks=(5, 3), dtype="<i4", fill_value=7,
                          attributes={"units": "m"})
        root.create_array("Zeta", shape=(), dtype="<i2")
        root.create_array("nan", shape=(4,), chunks=(3,), dtype="<f8", fill_value=float("nan"))
        sub = root.create_group("Sub", attributes={"level": 1})
        sub.create_array("x", shape=(4, 5), chunks=(2, 5), dtype="<f4", attributes={"é": "ü"})
        sub.create_group("deep").create_group("deeper", attributes={"leaf": True})
        root.create_group("alpha")
        root.create_group("beta").create_array("Gamma", shape=(3,), chunks=(3,), dtype="<u2")
        if dtype is not None:
            root.create_array("data", shape=(5,), chunks=(2,), dtype=_dtype(dtype),
                              attributes={"dtype": str(dtype)})
        if consolidate:
            zarr.consolidate_metadata(str(path))
    return path


def nodes_from_files_v2(root: Path) -> dict:
    """What zarrc parses from each node's own .zarray / .zgroup and .zattrs."""
    nodes = {}
    for meta in sorted(root.rglob(".z*")):
        if meta.name not in (".zarray", ".zgroup"):
            continue
        rel = meta.parent.relative_to(root).as_posix()
        rel = "" if rel == "." else rel
        zattrs = meta.parent / ".zattrs"
        attrs = zattrs.read_bytes() if zattrs.exists() else None
        cls = ArrayMetadataV2 if meta.name == ".zarray" else GroupMetadataV2
        nodes[rel] = cls.from_json(meta.read_bytes(), attrs, rel)
    return nodes


def nodes_from_files_v3(root: Path) -> dict:
    """What zarrc parses from each node's own zarr.json (the group itself excluded)."""
    nodes = {}
    for meta in sorted(root.rglob("zarr.json")):
        rel = meta.parent.relative_to(root).as_posix()
        if rel != ".":
            nodes[rel] = metadata_from_json(meta.read_bytes(), rel)
    return nodes


def parse_files_or_skip(parse, root: Path, consolidated_parse) -> dict:
    """``parse(root)``; if zarrc cannot parse some node's own document yet, the
    consolidated document must fail the same way (naming that node), then skip."""
    try:
        return parse(root)
    except MetadataError as exc:
        with pytest.raises(MetadataError, match='key "data'):
            consolidated_parse()
        pytest.skip(f"zarrc does not parse this node's own metadata: {exc}")


def same(a, b) -> bool:
    """Node metadata equality, NaN fill values equal to themselves."""
    if type(a) is not type(b):
        return False
    if a == b:
        return True
    if isinstance(a, ArrayMetadataV3):
        return json.dumps(a.to_json(), sort_keys=True) == json.dumps(b.to_json(), sort_keys=True)
    return False


def assert_same_nodes(parsed: dict, expected: dict) -> None:
    assert sorted(parsed) == sorted(expected)
    for key in expected:
        assert same(parsed[key], expected[key]), key


# ----------------------------------------------------------- documents zarr-python writes


@pytest.mark.parametrize("dtype", V2_DTYPES)
def test_v2_document_from_zarr_python(tmp_path, dtype):
    root = build(tmp_path / "h", 2, dtype)
    raw = (root / ".zmetadata").read_bytes()
    expected = parse_files_or_skip(nodes_from_files_v2, root, lambda: parse_v2(raw, "/h"))
    nodes = parse_v2(raw, "/h")
    assert_same_nodes(nodes, expected)
    assert isinstance(nodes[""], GroupMetadataV2) and nodes[""].attributes["title"] == "root"
    assert nodes["data"].attributes == {"dtype": str(dtype)}
    # written back exactly as zarr-python wrote it, key order included
    doc = json.loads(raw)
    assert to_json_v2(nodes) == doc
    assert list(to_json_v2(nodes)["metadata"]) == list(doc["metadata"])
    assert json.loads(to_bytes_v2(nodes)) == doc
    assert parse_v2(to_bytes_v2(nodes), "/h") == nodes


@pytest.mark.parametrize("dtype", V3_DTYPES)
def test_v3_document_from_zarr_python(tmp_path, dtype):
    root = build(tmp_path / "h", 3, dtype)
    group = GroupMetadataV3.from_json((root / "zarr.json").read_bytes(), "/h")
    assert group.consolidated_metadata is not None
    expected = parse_files_or_skip(nodes_from_files_v3, root,
                                   lambda: parse_v3(group.consolidated_metadata, "/h"))
    nodes = parse_v3(group.consolidated_metadata, "/h")
    assert_same_nodes(nodes, expected)
    for node in nodes.values():  # the flat form is the whole view; entries carry none
        if isinstance(node, GroupMetadataV3):
            assert node.consolidated_metadata is None
    member = json.loads((root / "zarr.json").read_text())["consolidated_metadata"]
    written = to_json_v3(nodes)
    assert list(written) == list(member)
    assert list(written["metadata"]) == list(member["metadata"])
    for key, entry in member["metadata"].items():
        assert written["metadata"][key] == entry, key
    again = parse_v3(written, "/h")
    assert list(again) == list(nodes)
    assert all(same(again[k], nodes[k]) for k in nodes)


@pytest.mark.parametrize("zarr_format", [2, 3])
def test_consolidated_below_root_matches_subtree(tmp_path, zarr_format):
    """zarr-python consolidating at "Sub" writes what ``subtree(root nodes, "Sub")``
    holds."""
    root = build(tmp_path / "h", zarr_format)
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        zarr.consolidate_metadata(str(root), path="Sub")
    if zarr_format == 2:
        whole = parse_v2((root / ".zmetadata").read_bytes(), "/")
        own = parse_v2((root / "Sub" / ".zmetadata").read_bytes(), "/Sub")
        assert own.pop("") == whole["Sub"]
        view = subtree(whole, "Sub")
        assert to_json_v2({"": whole["Sub"], **view}) == json.loads((root / "Sub" / ".zmetadata").read_text())
    else:
        whole = parse_v3(GroupMetadataV3.from_json((root / "zarr.json").read_bytes()).consolidated_metadata)
        sub = GroupMetadataV3.from_json((root / "Sub" / "zarr.json").read_bytes(), "/Sub")
        own = parse_v3(sub.consolidated_metadata, "/Sub")
        view = subtree(whole, "Sub")
        own_doc = json.loads((root / "Sub" / "zarr.json").read_text())
        assert to_json_v3(view) == own_doc["consolidated_metadata"]
    assert list(view) == list(own) == ["deep", "x", "deep/deeper"]
    assert all(same(view[k], own[k]) for k in own)


def test_subtree():
    g = GroupMetadataV2()
    a = ArrayMetadataV2(shape=(2,), chunks=(1,), dtype="<i4")
    nodes = {"": g, "s": g, "s/a": a, "s/t": g, "s/t/b": a, "sx": a, "sx/no": a}
    assert subtree(nodes, "s") == {"a": a, "t": g, "t/b": a}
    assert subtree(nodes, "/s/") == subtree(nodes, "s")
    assert subtree(nodes, "s/t") == {"b": a}
    assert subtree(nodes, "") == subtree(nodes, "/") == {k: v for k, v in nodes.items() if k}
    assert subtree(nodes, "missing") == {}
    with pytest.raises(MetadataError, match=r"\.\."):
        subtree(nodes, "s/..")


# ---------------------------------------------------------------- zarr-python reads ours


def _reference_and_ours(tmp_path, zarr_format):
    """The same hierarchy twice: consolidated by zarr-python, and by zarrc from the
    metadata it parses from each node's own documents."""
    ours = build(tmp_path / "ours", zarr_format, consolidate=False)
    reference = tmp_path / "reference"
    shutil.copytree(ours, reference)
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        zarr.consolidate_metadata(str(reference))
    if zarr_format == 2:
        (ours / ".zmetadata").write_bytes(to_bytes_v2(nodes_from_files_v2(ours)))
    else:
        group = GroupMetadataV3.from_json((ours / "zarr.json").read_bytes())
        member = to_json_v3(nodes_from_files_v3(ours))
        group = GroupMetadataV3(attributes=group.attributes, consolidated_metadata=member)
        (ours / "zarr.json").write_bytes(group.to_bytes())
    return reference, ours


@pytest.mark.parametrize("zarr_format", [2, 3])
def test_zarr_python_reads_ours(tmp_path, zarr_format):
    reference, ours = _reference_and_ours(tmp_path, zarr_format)
    if zarr_format == 2:  # the very same document
        assert (ours / ".zmetadata").read_bytes() == (reference / ".zmetadata").read_bytes()
    else:
        ref_doc = json.loads((reference / "zarr.json").read_text())
        our_doc = json.loads((ours / "zarr.json").read_text())
        assert json.dumps(our_doc, sort_keys=True) == json.dumps(ref_doc, sort_keys=True)

    def flat(path):
        with warnings.catch_warnings():
            warnings.simplefilter("ignore")
            group = zarr.open_consolidated(str(path))
        flat = group.metadata.consolidated_metadata.flattened_metadata
        return {k: json.dumps(v.to_dict(), sort_keys=True, default=str) for k, v in flat.items()}

    expected = flat(reference)
    assert flat(ours) == expected
    # zarr-python takes the nodes from our document alone: remove their own metadata
    for meta in list(ours.rglob("*")):
        if meta.name in (".zarray", ".zgroup", ".zattrs", "zarr.json") and meta.parent != ours:
            meta.unlink()
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        group = zarr.open_group(str(ours), mode="r", use_consolidated=True)
        ref = zarr.open_group(str(reference), mode="r", use_consolidated=False)
        for path in ("a", "Zeta", "nan", "Sub", "Sub/x", "Sub/deep/deeper", "beta/Gamma", "alpha"):
            node, ref_node = group[path], ref[path]
            assert type(node) is type(ref_node), path
            assert dict(node.attrs) == dict(ref_node.attrs), path
            if isinstance(node, zarr.Array):
                assert node.shape == ref_node.shape and node.dtype == ref_node.dtype, path
                fill, ref_fill = np.asarray(node.fill_value), np.asarray(ref_node.fill_value)
                assert np.array_equal(fill, ref_fill, equal_nan=fill.dtype.kind == "f"), path
    assert flat(ours) == expected


# ------------------------------------------------------------------------ v2 documents


def v2_doc():
    """A small valid .zmetadata document (as a dict) to mutate."""
    zarray = {"shape": [4], "chunks": [2], "dtype": "<i4", "fill_value": 0, "order": "C", "filters": None,
              "dimension_separator": ".", "compressor": None, "zarr_format": 2}
    nested = {"zarr_format": 2, "consolidated_metadata": {"metadata": {}, "must_understand": False,
                                                          "kind": "inline"}}
    return {"metadata": {".zgroup": {"zarr_format": 2}, ".zattrs": {"r": 1},
                         "a/.zattrs": {"x": 1}, "a/.zarray": zarray,
                         "s/.zattrs": {}, "s/.zgroup": nested,
                         "s/b/.zattrs": {}, "s/b/.zarray": copy.deepcopy(zarray)},
            "zarr_consolidated_format": 1}


def test_v2_tolerates():
    doc = v2_doc()
    nodes = parse_v2(doc, "g")
    assert list(nodes) == ["", "a", "s", "s/b"]
    # no .zattrs (attributes empty), other top-level members, nested .zgroup as in v2
    for key in [k for k in doc["metadata"] if k.endswith(".zattrs")]:
        del doc["metadata"][key]
    doc["metadata"]["s/.zgroup"] = {"zarr_format": 2}
    doc["extra"] = {"ignored": True}
    bare = parse_v2(json.dumps(doc), "g")
    assert all(not node.attributes for node in bare.values())
    # redundant slashes are normalised; without the group's own .zgroup there is no ""
    doc = v2_doc()
    doc["metadata"] = {k.replace("/", "//") + ("/" if k.startswith("a") else ""): v
                       for k, v in doc["metadata"].items() if not k.startswith(".")}
    assert list(parse_v2(doc, "g")) == ["a", "s", "s/b"]
    assert parse_v2(doc, "g")["a"] == nodes["a"]


def _v2_error(mutate, path="grp"):
    doc = v2_doc()
    mutate(doc)
    with pytest.raises(MetadataError) as info:
        dict(parse_v2(doc, path))        # (every entry parsed: some are checked when first read)
    message = str(info.value)
    assert message.startswith(f".zmetadata of /{path}: "), message
    return message


def _set(key, value):
    return lambda d: d["metadata"].__setitem__(key, value)


@pytest.mark.parametrize("mutate, expected", [
    (lambda d: d.pop("zarr_consolidated_format"), '"zarr_consolidated_format" is missing'),
    (lambda d: d.__setitem__("zarr_consolidated_format", 2), '"zarr_consolidated_format" 2 is not supported'),
    (lambda d: d.__setitem__("zarr_consolidated_format", "1"), '"zarr_consolidated_format" "1"'),
    (lambda d: d.__setitem__("zarr_consolidated_format", True), '"zarr_consolidated_format" true'),
    (lambda d: d.pop("metadata"), '"metadata" is missing'),
    (lambda d: d.__setitem__("metadata", []), '"metadata" [] must be an object'),
    (_set("a/.zfoo", {}), 'key "a/.zfoo" is not a v2 metadata key'),
    (_set("zarr.json", {}), 'key "zarr.json" is not a v2 metadata key'),
    (_set("a/0.0", {}), 'key "a/0.0" is not a v2 metadata key'),
    (_set("../x/.zarray", {}), 'key "../x/.zarray" must not have a "." or ".." segment'),
    (_set("a/../../.zgroup", {}), 'key "a/../../.zgroup" must not have'),
    (_set("a/./.zgroup", {}), 'key "a/./.zgroup" must not have'),
    (_set("/etc/.zgroup", {}), 'key "/etc/.zgroup" must be a relative path'),
    (_set("..\\..\\x/.zgroup", {}), "must not contain a backslash"),
    (_set("a\x00/.zgroup", {}), "must not contain a NUL"),
    (_set("a//.zarray", {}), 'keys "a/.zarray" and "a//.zarray" name the same document'),
    (_set("a/.zgroup", {"zarr_format": 2}), 'keys "a/.zarray" and "a/.zgroup": a node cannot be both'),
    (_set(".zattrs", [1]), 'key ".zattrs": [1] must be an object'),
    (_set("a/.zarray", "x"), 'key "a/.zarray": "x" must be an object'),
    (lambda d: d["metadata"]["a/.zarray"].__setitem__("order", "K"),
     'key "a/.zarray": "order" "K" must be "C" or "F"'),
    (lambda d: d["metadata"]["a/.zarray"].pop("shape"), 'key "a/.zarray": "shape" is missing'),
    (lambda d: d["metadata"]["s/b/.zarray"].__setitem__("zarr_format", 3),
     'key "s/b/.zarray": "zarr_format" 3 must be 2'),
    (_set("a/c/.zgroup", {"zarr_format": 2}),
     'key "a/c/.zgroup": node "a/c" is below "a", which is an array'),
])
def test_v2_errors(mutate, expected):
    message = _v2_error(mutate)
    assert expected in message, message


@pytest.mark.parametrize("raw, expected", [
    (b"{not json", "is not valid JSON"),
    (b"[]", "must hold a JSON object"),
    (b'"x"', "must hold a JSON object"),
    ("[" * 1000 + "]" * 1000, ""),
])
def test_v2_errors_raw(raw, expected):
    with pytest.raises(MetadataError) as info:
        parse_v2(raw, "/grp")
    assert str(info.value).startswith(".zmetadata of /grp: ")
    assert expected in str(info.value)


def test_v2_to_json_checks():
    nodes = parse_v2(v2_doc(), "")
    with pytest.raises(MetadataError, match=r'key "\.\./a" must not have'):
        to_json_v2({**nodes, "../a": nodes["a"]})
    with pytest.raises(MetadataError, match="name the same node"):
        to_json_v2({**nodes, "a/": nodes["a"]})
    with pytest.raises(TypeError, match="GroupMetadataV3"):
        to_json_v2({"x": GroupMetadataV3()})
    # the group's own entries are written only when "" is given
    del nodes[""]
    assert [k for k in to_json_v2(nodes)["metadata"] if "/" not in k] == []


def test_v2_to_json_form():
    nodes = parse_v2(v2_doc(), "")
    doc = to_json_v2(nodes)
    assert list(doc) == ["metadata", "zarr_consolidated_format"]
    assert list(doc["metadata"]) == [".zgroup", ".zattrs", "a/.zattrs", "a/.zarray", "s/.zattrs",
                                     "s/.zgroup", "s/b/.zattrs", "s/b/.zarray"]
    assert doc["metadata"][".zgroup"] == {"zarr_format": 2}
    assert doc == v2_doc()
    assert to_bytes_v2(nodes).startswith(b'{"metadata": {".zgroup": {"zarr_format": 2}, ".zattrs": {"r": 1}')


# ------------------------------------------------------------------------ v3 documents


def v3_member(array_doc):
    group = {"attributes": {"g": 1}, "zarr_format": 3, "node_type": "group",
             "consolidated_metadata": {"kind": "inline", "must_understand": False, "metadata": {}}}
    return {"kind": "inline", "must_understand": False,
            "metadata": {"a": array_doc(attributes={"x": 1}), "s": copy.deepcopy(group),
                         "s/b": array_doc(), "s/t": copy.deepcopy(group)}}


def test_v3_parse(array_doc):
    assert parse_v3(None, "g") is None
    member = v3_member(array_doc)
    nodes = parse_v3(member, "g")
    assert list(nodes) == ["a", "s", "s/b", "s/t"]
    assert isinstance(nodes["a"], ArrayMetadataV3) and nodes["a"].attributes == {"x": 1}
    assert nodes["s"] == GroupMetadataV3(attributes={"g": 1})
    assert to_json_v3(nodes)["metadata"]["s"] == member["metadata"]["s"]
    # from a parsed zarr.json (frozen values) as the group layer hands it over
    group = GroupMetadataV3.from_json({"zarr_format": 3, "node_type": "group",
                                       "consolidated_metadata": member})
    assert parse_v3(group.consolidated_metadata, "g") == nodes


def test_v3_nested_members(array_doc):
    """A group entry whose own member is missing, null or non-empty is accepted; its
    nodes only fill in what the flat form lacks."""
    member = v3_member(array_doc)
    del member["metadata"]["s/t"]["consolidated_metadata"]
    member["metadata"]["s"]["consolidated_metadata"] = None
    assert list(parse_v3(member, "g")) == ["a", "s", "s/b", "s/t"]
    member["metadata"]["s"]["consolidated_metadata"] = {
        "kind": "inline", "must_understand": False,
        "metadata": {"b": array_doc(attributes={"nested": True}), "c": array_doc(shape=[3, 3]),
                     "t": {"zarr_format": 3, "node_type": "group", "consolidated_metadata": {
                         "kind": "inline", "metadata": {"u": array_doc()}}}}}
    nodes = parse_v3(member, "g")
    assert list(nodes) == ["a", "s", "s/b", "s/c", "s/t", "s/t/u"]
    assert nodes["s/b"].attributes == {}  # the flat entry wins
    assert nodes["s/c"].shape == (3, 3)


def _v3_error(mutate, array_doc, path="grp"):
    member = v3_member(array_doc)
    mutate(member)
    with pytest.raises(MetadataError) as info:
        dict(parse_v3(member, path))     # (every entry parsed: some are checked when first read)
    message = str(info.value)
    assert message.startswith(f"zarr.json of /{path}: consolidated_metadata"), message
    return message


def _set3(key, value):
    return lambda m: m["metadata"].__setitem__(key, value)


@pytest.mark.parametrize("mutate, expected", [
    (lambda m: m.pop("kind"), '"kind" null is not supported (only "inline" is)'),
    (lambda m: m.__setitem__("kind", "external"), '"kind" "external" is not supported'),
    (lambda m: m.pop("metadata"), '"metadata" is missing'),
    (lambda m: m.__setitem__("metadata", None), '"metadata" null must be an object'),
    (_set3("", {}), 'key "" must name a node below the group'),
    (_set3("../x", {}), 'key "../x" must not have a "." or ".." segment'),
    (_set3(".", {}), 'key "." must not have'),
    (_set3("/a", {}), 'key "/a" must be a relative path'),
    (_set3("a\\b", {}), "must not contain a backslash"),
    (_set3("s/", {}), 'keys "s" and "s/" name the same node'),
    (_set3("q", [1]), 'key "q": [1] must be an object'),
    (lambda m: m["metadata"]["a"].__setitem__("fill_value", "x"), 'key "a": "fill_value" "x"'),
    (lambda m: m["metadata"]["s/b"].pop("node_type"), 'key "s/b": "node_type" is missing'),
    (lambda m: m["metadata"]["s"].__setitem__("zarr_format", 2), 'key "s": "zarr_format" 2 must be 3'),
    (lambda m: m["metadata"]["s"].__setitem__("unknown", 1), 'key "s": "unknown" 1 is not a known field'),
    (_set3("a/c", {"zarr_format": 3, "node_type": "group"}),
     'key "a/c": node "a/c" is below "a", which is an array'),
    (lambda m: m["metadata"]["s"].__setitem__("consolidated_metadata", []),
     'key "s": "consolidated_metadata" [] must be an object'),
    (lambda m: m["metadata"]["s"]["consolidated_metadata"].__setitem__("kind", "x"),
     'key "s" consolidated_metadata "kind" "x" is not supported'),
    (lambda m: m["metadata"]["s"]["consolidated_metadata"].__setitem__("metadata", {"..": {}}),
     'key "s" consolidated_metadata key ".." must not have'),
    (lambda m: m["metadata"]["s"]["consolidated_metadata"].__setitem__("metadata", {"z": {"zarr_format": 3}}),
     'key "s" consolidated_metadata key "z": "node_type" is missing'),
])
def test_v3_errors(mutate, expected, array_doc):
    message = _v3_error(mutate, array_doc)
    assert expected in message, message


def test_v3_errors_not_object():
    with pytest.raises(MetadataError, match=r'^zarr.json of /g: "consolidated_metadata" \[\] must be'):
        parse_v3([], "/g")
    deep = {"kind": "inline", "metadata": {}}
    for _ in range(300):
        deep = {"kind": "inline", "metadata": {"s": {"zarr_format": 3, "node_type": "group",
                                                     "consolidated_metadata": deep}}}
    with pytest.raises(MetadataError, match="nested too deeply"):
        parse_v3(deep, "/g")


def test_v3_to_json_checks(array_doc):
    nodes = parse_v3(v3_member(array_doc), "")
    with pytest.raises(MetadataError, match='key "" must name a node below'):
        to_json_v3({**nodes, "": GroupMetadataV3()})
    with pytest.raises(MetadataError, match="must be a relative path"):
        to_json_v3({"/a": nodes["a"]})
    with pytest.raises(TypeError, match="ArrayMetadataV3 or GroupMetadataV3"):
        to_json_v3({"a": GroupMetadataV2()})
    # a group's own consolidated member is never written into its entry but as empty
    full = GroupMetadataV3(consolidated_metadata={"kind": "inline", "metadata": {"x": array_doc()}})
    assert to_json_v3({"s": full})["metadata"]["s"]["consolidated_metadata"] == {
        "kind": "inline", "must_understand": False, "metadata": {}}


def test_v3_to_json_order(array_doc):
    g = GroupMetadataV3()
    a = ArrayMetadataV3.from_json(array_doc())
    nodes = {"b/c": a, "B": g, "a": a, "b": g, "Á": a, "A/z/y": a, "A": g, "A/z": g}
    assert list(to_json_v3(nodes)["metadata"]) == ["A", "a", "B", "b", "Á", "A/z", "b/c", "A/z/y"]
    assert list(to_json_v3(nodes)) == ["kind", "must_understand", "metadata"]


# ---------------------------------------------------------------------------- keys


@pytest.mark.parametrize("key, expected", [
    ("", ""), ("a", "a"), ("a/b", "a/b"), ("a//b", "a/b"), ("a/b/", "a/b"), ("a///b//", "a/b"),
    (".zarray", ".zarray"), ("...", "..."), ("__x", "__x"), ("a b/é", "a b/é"),
])
def test_relative_path(key, expected):
    assert relative_path(key) == expected


@pytest.mark.parametrize("key", ["..", ".", "a/..", "../a", "a/./b", "/a", "/", "a\\b", "a\x00", 1, None])
def test_relative_path_refused(key):
    with pytest.raises(MetadataError):
        relative_path(key)


@pytest.mark.parametrize("key", ["a", "a/b", "a//b", "a/b/", ".x", "a/.x", "...", "..", "a/./b", "/a", "",
                                 "a\\b", "a\x00", "é/ü b"])
def test_v3_keys_checked_alike_in_a_large_document(key, array_doc):
    """A document whose keys all pass the joined check (``_plain_keys``) and one with a
    key that must be checked alone give what ``relative_path`` says for each key."""
    metadata = {f"n{i}": array_doc() for i in range(50)}
    metadata[key] = array_doc()
    try:
        rel = relative_path(key)
    except MetadataError as exc:
        with pytest.raises(MetadataError, match="consolidated_metadata key") as info:
            parse_v3({"kind": "inline", "metadata": metadata}, "g")
        assert str(exc) in str(info.value)
        return
    if not rel:
        with pytest.raises(MetadataError, match="must name a node below the group"):
            parse_v3({"kind": "inline", "metadata": metadata}, "g")
        return
    nodes = parse_v3({"kind": "inline", "metadata": metadata}, "g")
    assert sorted(nodes) == sorted([f"n{i}" for i in range(50)] + [rel])
    assert isinstance(nodes[rel], ArrayMetadataV3)
