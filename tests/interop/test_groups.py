"""Group hierarchies and attributes round-trip between zarrc, zarr-python and
tensorstore: the same members, node types, attributes (nested JSON, unicode) and
array contents, whichever library wrote them."""

from __future__ import annotations

import ast

import numpy as np
import pytest

from helpers import NO_ZARR_PYTHON

import zarrc

from interop import support

zarr = pytest.importorskip("zarr", reason=NO_ZARR_PYTHON)

ROOT_ATTRS = {
    "title": "Ünïcødé ☃ — 🌍 温度",
    "nested": {"list": [1, 2.5, None, True, "x", {"deep": [[], {}]}], "empty": {}, "ß": ["値", -0.5]},
    "big": 2**53 + 1,
    "negative": -12,
    "zero": 0,
    "flag": False,
    "none": None,
}

# path -> ("group", attributes) or ("array", attributes, shape, chunks, dtype); the
# root is "".  Names include unicode; "empty" and "g1/g2/g3" have no members.
HIERARCHY = {
    "": ("group", ROOT_ATTRS),
    "a0": ("array", {"units": "m", "scale": [1, 2, 3]}, (7,), (3,), "int32"),
    "empty": ("group", {}),
    "g1": ("group", {"level": 1, "nested": {"a": {"b": {"c": "déjà vu"}}}}),
    "g1/a1": ("array", {}, (9, 5), (4, 2), "float64"),
    "g1/g2": ("group", {"level": 2}),
    "g1/g2/a2": ("array", {"complex": True, "ε": 1e-300}, (3, 4, 5), (2, 3, 2), "complex64"),
    "g1/g2/g3": ("group", {"leaf": "yes"}),
    "données": ("group", {"résumé": "über", "emoji": "🧪"}),
    "données/température": ("array", {"unité": "°C"}, (11,), (4,), "float32"),
    "données/flags": ("array", {}, (), (), "bool"),
}


def data_for(path: str) -> np.ndarray:
    _, _, shape, _, dtype = HIERARCHY[path]
    return support.sample(dtype, shape, seed=len(path))


def children(path: str) -> list[str]:
    """Names of the direct members of the group at ``path``, sorted."""
    prefix = path + "/" if path else ""
    return sorted(p[len(prefix):] for p in HIERARCHY
                  if p and p.startswith(prefix) and "/" not in p[len(prefix):])


def expected_tree(path: str = "", depth: int = 0) -> list[tuple[int, str, tuple | None]]:
    rows = []
    for name in children(path):
        child = f"{path}/{name}" if path else name
        node = HIERARCHY[child]
        rows.append((depth, name, node[2] if node[0] == "array" else None))
        if node[0] == "group":
            rows += expected_tree(child, depth + 1)
    return rows


def parse_tree(text: str) -> list[tuple[int, str, tuple | None]]:
    """(depth, name, shape or None) of each line of zarrc's tree() below the root."""
    rows = []
    for line in str(text).splitlines()[1:]:
        i = line.index("── ")
        name, _, rest = line[i + 3:].partition(" ")
        shape = ast.literal_eval(rest.rsplit(" ", 1)[0]) if rest else None  # "(9, 5) float64"
        rows.append((i // 4, name, shape))
    return rows


def write_with_zarr_python(root: str) -> None:
    groups = {"": zarr.open_group(root, mode="w", attributes=ROOT_ATTRS)}
    for path, node in HIERARCHY.items():
        if not path:
            continue
        parent, _, name = path.rpartition("/")
        if node[0] == "group":
            groups[path] = groups[parent].create_group(name, attributes=node[1])
        else:
            _, attrs, shape, chunks, dtype = node
            a = groups[parent].create_array(name, shape=shape, chunks=chunks, dtype=dtype, attributes=attrs)
            a[...] = data_for(path)


def write_with_zarrc(root: str) -> None:
    groups = {"": zarrc.group(root, attributes=ROOT_ATTRS)}
    for path, node in HIERARCHY.items():
        if not path:
            continue
        parent, _, name = path.rpartition("/")
        if node[0] == "group":
            if node[1]:
                groups[path] = groups[parent].create_group(name, attributes=node[1])
            else:
                groups[path] = groups[parent].require_group(name)
        else:
            _, attrs, shape, chunks, dtype = node
            a = groups[parent].create_array(name, shape=shape, chunks=chunks, dtype=dtype, attributes=attrs)
            a[...] = data_for(path)


def check_zarrc_group(g, path: str = "") -> None:
    assert dict(g.attrs) == HIERARCHY[path][1]
    names = children(path)
    assert sorted(g.keys()) == names
    members = dict(g.members())
    assert sorted(members) == names
    kinds = {n: HIERARCHY[f"{path}/{n}".lstrip("/")][0] for n in names}
    assert sorted(n for n, _ in g.arrays()) == [n for n in names if kinds[n] == "array"]
    assert sorted(n for n, _ in g.groups()) == [n for n in names if kinds[n] == "group"]
    for name, node in members.items():
        child = f"{path}/{name}" if path else name
        kind = HIERARCHY[child][0]
        if kind == "group":
            assert isinstance(node, zarrc.Group)
            check_zarrc_group(node, child)
        else:
            _, attrs, shape, chunks, dtype = HIERARCHY[child]
            assert isinstance(node, zarrc.Array)
            assert (node.shape, node.chunks, node.dtype) == (shape, chunks, np.dtype(dtype))
            assert dict(node.attrs) == attrs
            support.assert_bit_equal(node[...], data_for(child), child)
            support.assert_bit_equal(g[name][...], data_for(child), child)


def check_zarr_python_group(g, path: str = "") -> None:
    assert dict(g.attrs) == HIERARCHY[path][1]
    members = dict(g.members())
    assert sorted(members) == children(path)
    for name, node in members.items():
        child = f"{path}/{name}" if path else name
        if HIERARCHY[child][0] == "group":
            assert isinstance(node, zarr.Group)
            check_zarr_python_group(node, child)
        else:
            _, attrs, shape, chunks, dtype = HIERARCHY[child]
            assert isinstance(node, zarr.Array)
            assert (node.shape, node.chunks) == (shape, chunks)
            assert dict(node.attrs) == attrs
            support.assert_bit_equal(np.asarray(node[...]), data_for(child), child)


def test_zarr_python_hierarchy_reads_in_zarrc(tmp_path) -> None:
    write_with_zarr_python(str(tmp_path))
    g = zarrc.open_group(str(tmp_path), mode="r")
    check_zarrc_group(g)
    assert parse_tree(g.tree()) == expected_tree()
    assert parse_tree(g["g1"].tree()) == expected_tree("g1")
    # nested paths, and open() picking the node type
    assert isinstance(zarrc.open(str(tmp_path), mode="r", path="g1/g2"), zarrc.Group)
    a2 = zarrc.open(str(tmp_path), mode="r", path="g1/g2/a2")
    support.assert_bit_equal(a2[1, 2:, ::2], data_for("g1/g2/a2")[1, 2:, ::2])
    support.assert_bit_equal(g["données/température"][3:9:2], data_for("données/température")[3:9:2])


def test_zarrc_hierarchy_reads_in_zarr_python(tmp_path) -> None:
    write_with_zarrc(str(tmp_path))
    check_zarrc_group(zarrc.open_group(str(tmp_path), mode="r"))
    g = zarr.open_group(str(tmp_path), mode="r")
    check_zarr_python_group(g)
    assert isinstance(zarr.open(str(tmp_path), mode="r", path="g1/g2/g3"), zarr.Group)


def test_zarrc_attribute_updates_visible_in_zarr_python(tmp_path) -> None:
    write_with_zarr_python(str(tmp_path))
    g = zarrc.open_group(str(tmp_path), mode="r+")
    g.attrs["title"] = "nouveau 🆕"
    g.attrs.update({"added": {"x": [1, {"y": None}]}, "ключ": "значение"}, more=[1.5, -2])
    del g.attrs["none"]
    a1 = g["g1/a1"]
    a1.attrs["units"] = "K"
    a1.attrs.update(axes=["y", "x"], calibrated=True)
    empty = g["empty"]
    empty.attrs.update({})
    expected_root = {**ROOT_ATTRS, "title": "nouveau 🆕", "added": {"x": [1, {"y": None}]},
                     "ключ": "значение", "more": [1.5, -2]}
    del expected_root["none"]

    z = zarr.open_group(str(tmp_path), mode="r")
    assert dict(z.attrs) == expected_root
    za1 = zarr.open_array(str(tmp_path / "g1" / "a1"), mode="r")
    assert dict(za1.attrs) == {"units": "K", "axes": ["y", "x"], "calibrated": True}
    support.assert_bit_equal(np.asarray(za1[...]), data_for("g1/a1"))  # the data is untouched
    assert dict(z["empty"].attrs) == {}
    assert dict(z["g1"].attrs) == HIERARCHY["g1"][1]

    # and the other way: zarr-python updates, zarrc reopens
    zw = zarr.open_group(str(tmp_path), mode="r+")
    zw.attrs["from_zarr"] = {"ok": "✓"}
    zw["g1/g2/a2"].attrs.update({"complex": False})
    root = zarrc.open_group(str(tmp_path), mode="r")
    assert root.attrs.asdict() == {**expected_root, "from_zarr": {"ok": "✓"}}
    a2 = zarrc.open_array(str(tmp_path), mode="r", path="g1/g2/a2")
    assert dict(a2.attrs) == {"complex": False, "ε": 1e-300}


def test_tensorstore_arrays_in_groups(tmp_path) -> None:
    """Arrays that tensorstore writes (with attributes and dimension names) inside a
    zarrc hierarchy are members in zarrc; arrays zarrc writes in groups open in
    tensorstore by path."""
    ts = pytest.importorskip("tensorstore")
    root = zarrc.group(str(tmp_path), attributes={"made_by": "zarrc"})
    root.create_group("g").create_group("h")
    x = support.sample("int16", (6, 10), seed=3)
    metadata = {"shape": [6, 10], "data_type": "int16",
                "chunk_grid": {"name": "regular", "configuration": {"chunk_shape": [4, 4]}},
                "chunk_key_encoding": {"name": "default"}, "fill_value": -3,
                "codecs": [{"name": "bytes", "configuration": {"endian": "big"}}],
                "attributes": {"written_by": "tensorstore", "ü": [1, None]},
                "dimension_names": ["y", None]}
    t = ts.open({"driver": "zarr3", "kvstore": {"driver": "file", "path": str(tmp_path / "g" / "h" / "t")},
                 "metadata": metadata}, create=True, dtype=ts.int16).result()
    t[:5, 1:].write(x[:5, 1:]).result()
    expected = np.full((6, 10), -3, np.int16)
    expected[:5, 1:] = x[:5, 1:]

    h = zarrc.open_group(str(tmp_path), mode="r")["g/h"]
    assert list(h.keys()) == ["t"]
    a = dict(h.arrays())["t"]
    assert dict(a.attrs) == {"written_by": "tensorstore", "ü": [1, None]}
    assert a.dimension_names == ("y", None)
    support.assert_bit_equal(a[...], expected)

    b = root["g"].create_array("b", shape=(5, 3), chunks=(2, 2), dtype="uint16", fill_value=9,
                               attributes={"k": "v"}, dimension_names=["row", "col"])
    b[1:4, 1:] = 7
    tb = ts.open({"driver": "zarr3", "kvstore": {"driver": "file", "path": str(tmp_path / "g" / "b")}},
                 open=True).result()
    expected_b = np.full((5, 3), 9, np.uint16)
    expected_b[1:4, 1:] = 7
    support.assert_bit_equal(tb.read().result(), expected_b)
    assert list(tb.domain.labels) == ["row", "col"]
