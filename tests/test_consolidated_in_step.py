"""Consolidated metadata kept in step: every change zarrc makes to a node (its
attributes, its shape, new members, deletions) also changes the node's entry in the
consolidated metadata of the groups above it (v2 ``.zmetadata``, v3 inline
``consolidated_metadata``), whether the node was reached through a consolidated
group or opened by path.

The check after each change: the consolidated document in the store is the one
zarr-python's ``consolidate_metadata`` writes for the store as it now is (on a
copy), and a group reopened (zarrc, and zarr-python, which read the consolidated
document) shows the change.  zarr-python itself keeps only a group's own attributes
in step (3.1.6 and 3.4: its nodes' other changes leave the consolidated metadata
above them stale), so only that case is done in both libraries and compared.
"""

from __future__ import annotations

import json
import shutil
import warnings

import numpy as np
import pytest

import zarrc
from zarrc.stores import MemoryStore

FORMATS = [2, 3]


def _doc(root, fmt, group=""):
    """The consolidated document of the group at ``group`` below the store ``root``
    (a directory), or None."""
    base = root / group if group else root
    if fmt == 2:
        path = base / ".zmetadata"
        return json.loads(path.read_text()) if path.exists() else None
    path = base / "zarr.json"
    return json.loads(path.read_text()).get("consolidated_metadata") if path.exists() else None


def _zarr():
    zarr = pytest.importorskip("zarr")
    warnings.filterwarnings("ignore", category=UserWarning)
    warnings.filterwarnings("ignore", category=RuntimeWarning)
    return zarr


def _reconsolidated(root, fmt, tmp_path, group=""):
    """The consolidated document zarr-python writes for a copy of the store now."""
    zarr = _zarr()
    copy = tmp_path / f"copy-{len(list(tmp_path.iterdir()))}.zarr"
    shutil.copytree(root, copy)
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        zarr.consolidate_metadata(str(copy), path=group)
    return _doc(copy, fmt, group)


def _check(root, fmt, tmp_path, group=""):
    """The store's consolidated document at ``group`` is what consolidating it anew
    (zarr-python) gives."""
    assert _doc(root, fmt, group) == _reconsolidated(root, fmt, tmp_path, group)


def _make(root, fmt):
    g = zarrc.open_group(str(root), mode="w", zarr_format=fmt)
    g.create_group("sub").create_array("t", shape=(4,), chunks=(2,), dtype="f4")
    zarrc.consolidate_metadata(str(root))


def _attrs_seen(root):
    """Attributes of the root, sub and sub/t through a consolidated open, in zarrc
    and zarr-python."""
    h = zarrc.open_group(str(root), mode="r", use_consolidated=True)
    got = [dict(h.attrs), dict(h["sub"].attrs), dict(h["sub"]["t"].attrs)]
    zarr = _zarr()
    z = zarr.open_consolidated(str(root), mode="r")
    assert [dict(z.attrs), dict(z["sub"].attrs), dict(z["sub"]["t"].attrs)] == got
    return got


@pytest.mark.parametrize("fmt", FORMATS)
def test_attributes_through_a_consolidated_group(tmp_path, fmt):
    root = tmp_path / "x.zarr"
    _make(root, fmt)
    g = zarrc.open_group(str(root), mode="r+")
    assert g.consolidated
    g.attrs["ra"] = 2
    g["sub"].attrs["sa"] = 1
    g["sub"]["t"].attrs["units"] = "K"
    assert _attrs_seen(root) == [{"ra": 2}, {"sa": 1}, {"units": "K"}]
    _check(root, fmt, tmp_path)
    g = zarrc.open_group(str(root), mode="r+")
    del g.attrs["ra"]
    g["sub"].update_attributes({"sb": [1, 2]})
    g["sub"]["t"].attrs.update({"long_name": "temperature", "units": "C"})
    g["sub"]["t"].attrs.put({"only": True})
    assert _attrs_seen(root) == [{}, {"sa": 1, "sb": [1, 2]}, {"only": True}]
    _check(root, fmt, tmp_path)
    # nothing was added below: sub has no consolidated metadata of its own
    assert _doc(root, fmt, "sub") is None


@pytest.mark.parametrize("fmt", FORMATS)
def test_root_attributes_as_zarr_python(tmp_path, fmt):
    """A group's own attributes: zarr-python keeps them in step too; same result."""
    zarr = _zarr()
    seen = []
    for lib, name in ((zarrc, "zarrc"), (zarr, "zarr")):
        root = tmp_path / f"{name}.zarr"
        g = lib.open_group(str(root), mode="w", zarr_format=fmt)
        g.create_group("sub")
        lib.consolidate_metadata(str(root))
        g = lib.open_group(str(root), mode="r+")
        g.attrs["a"] = 1
        g.attrs.update({"b": [1, 2], "c": "x"})
        del g.attrs["c"]
        seen.append((dict(zarrc.open_group(str(root), mode="r").attrs),
                     dict(zarr.open_group(str(root), mode="r").attrs)))
    assert seen[0] == seen[1] == ({"a": 1, "b": [1, 2]},) * 2


@pytest.mark.parametrize("fmt", FORMATS)
def test_node_opened_by_path(tmp_path, fmt):
    root = tmp_path / "x.zarr"
    _make(root, fmt)
    a = zarrc.open_array(str(root), path="sub/t", mode="r+")
    a.attrs["units"] = "K"
    zarrc.open_group(str(root), path="sub", mode="r+").attrs["level"] = 1
    assert _attrs_seen(root) == [{}, {"level": 1}, {"units": "K"}]
    _check(root, fmt, tmp_path)


@pytest.mark.parametrize("fmt", FORMATS)
def test_resize_and_append(tmp_path, fmt):
    zarr = _zarr()
    root = tmp_path / "x.zarr"
    _make(root, fmt)
    g = zarrc.open_group(str(root), mode="r+")
    g["sub"]["t"].resize((7,))
    assert zarrc.open_group(str(root), mode="r")["sub"]["t"].shape == (7,)
    a = zarrc.open_array(str(root), path="sub/t", mode="r+")
    a.append(np.ones(3, dtype="f4"))
    for h in (zarrc.open_group(str(root), mode="r"), zarr.open_consolidated(str(root), mode="r")):
        assert h["sub"]["t"].shape == (10,)
        np.testing.assert_array_equal(h["sub"]["t"][7:], np.ones(3, dtype="f4"))
    _check(root, fmt, tmp_path)


@pytest.mark.parametrize("fmt", FORMATS)
def test_new_members(tmp_path, fmt):
    zarr = _zarr()
    root = tmp_path / "x.zarr"
    _make(root, fmt)
    g = zarrc.open_group(str(root), mode="r+")
    sub = g["sub"]                                   # from the consolidated metadata
    sub.create_array("n", shape=(2,), dtype="i4", attributes={"k": 1})
    sub.create_group("sg", attributes={"s": 1}).create_group("deep")
    g.require_group("rg")
    g.require_array("ra", shape=(3,), dtype="f8")
    g["set"] = np.arange(3)
    zarrc.create_array(str(root), name="sub/api", shape=(2,), dtype="u1", zarr_format=fmt)
    zarrc.create_array(str(root), name="made/on/the/way", shape=(2,), dtype="u1", zarr_format=fmt)
    zarrc.create_group(str(root), path="sub/apig", zarr_format=fmt)
    _check(root, fmt, tmp_path)
    want = ["made", "ra", "rg", "set", "sub"]
    want_sub = ["api", "apig", "n", "sg", "t"]
    h = zarrc.open_group(str(root), mode="r", use_consolidated=True)
    z = zarr.open_consolidated(str(root), mode="r")
    for grp in (h, z):
        assert sorted(grp.keys()) == want
        assert sorted(grp["sub"].keys()) == want_sub
        assert dict(grp["sub"]["n"].attrs) == {"k": 1}
        assert grp["made/on/the/way"].shape == (2,)
    np.testing.assert_array_equal(h["set"][...], np.arange(3))


@pytest.mark.parametrize("fmt", FORMATS)
def test_create_hierarchy_under_a_consolidated_group(tmp_path, fmt):
    root = tmp_path / "x.zarr"
    _make(root, fmt)
    md = zarrc.open_group(str(root), mode="r")["sub"]["t"].metadata
    list(zarrc.create_hierarchy(store=str(root), nodes={"h/a": md}))
    assert sorted(zarrc.open_group(str(root), mode="r", use_consolidated=True).keys()) == ["h", "sub"]
    _check(root, fmt, tmp_path)


@pytest.mark.parametrize("fmt", FORMATS)
def test_overwrite_and_delete(tmp_path, fmt):
    zarr = _zarr()
    root = tmp_path / "x.zarr"
    _make(root, fmt)
    g = zarrc.open_group(str(root), mode="r+")
    g["sub"].create_group("sg").create_array("x", shape=(1,), dtype="i1")
    g.create_group("sub", overwrite=True, attributes={"new": True})   # replaces sub and all below
    _check(root, fmt, tmp_path)
    assert list(zarrc.open_group(str(root), mode="r")["sub"].keys()) == []
    g = zarrc.open_group(str(root), mode="r+")
    g["sub"].create_array("t", shape=(1,), dtype="i1")
    g["sub"].create_array("u", shape=(1,), dtype="i1")
    g = zarrc.open_group(str(root), mode="r+")
    del g["sub"]["t"]                                 # through a group from the consolidated root
    _check(root, fmt, tmp_path)
    for h in (zarrc.open_group(str(root), mode="r"), zarr.open_consolidated(str(root), mode="r")):
        assert list(h["sub"].keys()) == ["u"]
    del zarrc.open_group(str(root), mode="r+")["sub"]
    _check(root, fmt, tmp_path)
    for h in (zarrc.open_group(str(root), mode="r"), zarr.open_consolidated(str(root), mode="r")):
        assert list(h.keys()) == []


@pytest.mark.parametrize("fmt", FORMATS)
def test_nested_consolidated_documents(tmp_path, fmt):
    """A group below that has its own consolidated metadata is kept in step too."""
    zarr = _zarr()
    root = tmp_path / "x.zarr"
    _make(root, fmt)
    zarrc.consolidate_metadata(str(root), path="sub")
    zarrc.open_array(str(root), path="sub/t", mode="r+").attrs["units"] = "K"
    zarrc.open_group(str(root), mode="r+")["sub"].create_array("n", shape=(1,), dtype="i1")
    _check(root, fmt, tmp_path)
    _check(root, fmt, tmp_path, "sub")
    for h in (zarrc.open_group(str(root), path="sub", mode="r", use_consolidated=True),
              zarr.open_consolidated(str(root), path="sub", mode="r")):
        assert sorted(h.keys()) == ["n", "t"] and dict(h["t"].attrs) == {"units": "K"}


@pytest.mark.parametrize("fmt", FORMATS)
def test_a_group_writing_its_attributes_keeps_what_others_changed(tmp_path, fmt):
    """A v3 group holds its consolidated metadata in its own zarr.json: writing its
    attributes from an object opened earlier keeps the entries changed since."""
    root = tmp_path / "x.zarr"
    _make(root, fmt)
    g = zarrc.open_group(str(root), mode="r+")
    zarrc.open_array(str(root), path="sub/t", mode="r+").attrs["units"] = "K"
    g.attrs["later"] = 1
    assert _attrs_seen(root) == [{"later": 1}, {}, {"units": "K"}]
    _check(root, fmt, tmp_path)


@pytest.mark.parametrize("fmt", FORMATS)
def test_no_consolidated_metadata_is_added(tmp_path, fmt):
    root = tmp_path / "x.zarr"
    g = zarrc.open_group(str(root), mode="w", zarr_format=fmt)
    sub = g.create_group("sub")
    sub.create_array("t", shape=(2,), dtype="i1").attrs["a"] = 1
    sub.attrs["b"] = 2
    g.attrs["c"] = 3
    sub["t"].resize((3,))
    del sub["t"]
    assert _doc(root, fmt) is None and _doc(root, fmt, "sub") is None
    assert not list(root.rglob(".zmetadata"))


class WriteCounter(MemoryStore):
    """A memory store that counts its write calls (instrumentation of the real store)."""

    def __init__(self) -> None:
        super().__init__()
        self.writes = 0

    def set(self, key, value):
        self.writes += 1
        super().set(key, value)

    def set_many(self, items):
        self.writes += 1
        for key, value in items.items():
            MemoryStore.set(self, key, value)


@pytest.mark.parametrize("fmt", FORMATS)
def test_one_write_per_update_call(fmt):
    store = WriteCounter()
    a = zarrc.create_array(store, name="a", shape=(2,), dtype="i1", zarr_format=fmt)
    store.writes = 0
    a.attrs.update({f"k{i}": i for i in range(2000)})
    a.update_attributes({"x": 1, "y": 2})
    a.attrs["z"] = 3
    del a.attrs["z"]
    assert store.writes == 4
    # with consolidated metadata: one more write for the group holding it
    zarrc.consolidate_metadata(store)
    a = zarrc.open_group(store, mode="r+")["a"]
    store.writes = 0
    a.attrs.update({f"j{i}": i for i in range(100)})
    assert store.writes == 2
    assert len(zarrc.open_group(store, mode="r", use_consolidated=True)["a"].attrs) == 2102


@pytest.mark.parametrize("fmt", FORMATS)
def test_the_group_in_hand_sees_the_changes(tmp_path, fmt):
    """A group opened with consolidated metadata answers from what it read; changes
    made through it (or nodes reached through it) show in its answers too, as in
    zarr-python for attributes."""
    zarr = _zarr()
    seen = []
    for lib, name in ((zarrc, "zarrc"), (zarr, "zarr")):
        root = tmp_path / f"{name}.zarr"
        g = lib.open_group(str(root), mode="w", zarr_format=fmt)
        g.create_group("sub").create_array("t", shape=(4,), chunks=(2,), dtype="f4")
        lib.consolidate_metadata(str(root))
        g = lib.open_group(str(root), mode="r+")
        g["sub"]["t"].attrs["units"] = "K"
        g["sub"].attrs["s"] = 1
        g.attrs["r"] = 2
        seen.append((dict(g["sub"]["t"].attrs), dict(g["sub"].attrs), dict(g.attrs)))
    assert seen[0] == seen[1] == ({"units": "K"}, {"s": 1}, {"r": 2})
    root = tmp_path / "zarrc.zarr"
    g = zarrc.open_group(str(root), mode="r+")
    assert g.consolidated
    g["sub"]["t"].resize((6,))
    g["sub"].create_array("n", shape=(1,), dtype="i1")
    g["sub"].create_array("deep/er/x", shape=(1,), dtype="i1")
    g.create_group("new")
    assert g["sub"]["t"].shape == (6,)
    assert sorted(g["sub"].keys()) == ["deep", "n", "t"] and sorted(g.keys()) == ["new", "sub"]
    assert g["sub/deep/er/x"].shape == (1,) and list(g["sub"]["deep"].keys()) == ["er"]
    del g["sub"]["n"]
    assert sorted(g["sub"].keys()) == ["deep", "t"]
    del g["sub"]
    assert list(g.keys()) == ["new"] and "sub" not in g
    assert g.consolidated
    _check(root, fmt, tmp_path)


def test_nested_form_folded_in(tmp_path):
    """Consolidated metadata holding a node only in a group entry's own member (the
    nested form) is edited as zarrc reads it: folded into the flat form."""
    zarr = _zarr()
    root = tmp_path / "x.zarr"
    _make(root, 3)
    doc = json.loads((root / "zarr.json").read_text())
    entries = doc["consolidated_metadata"]["metadata"]
    entries["sub"]["consolidated_metadata"]["metadata"] = {"t": entries.pop("sub/t")}
    (root / "zarr.json").write_text(json.dumps(doc))
    assert zarrc.open_group(str(root), mode="r")["sub"]["t"].shape == (4,)
    zarrc.open_array(str(root), path="sub/t", mode="r+").attrs["units"] = "K"
    _check(root, 3, tmp_path)
    assert dict(zarr.open_consolidated(str(root), mode="r")["sub"]["t"].attrs) == {"units": "K"}
    del zarrc.open_group(str(root), mode="r+", use_consolidated=False)["sub"]["t"]
    assert list(zarrc.open_group(str(root), mode="r")["sub"].keys()) == []
    _check(root, 3, tmp_path)


@pytest.mark.parametrize("fmt", FORMATS)
def test_unreadable_consolidated_metadata_is_left_alone(tmp_path, fmt):
    root = tmp_path / "x.zarr"
    _make(root, fmt)
    if fmt == 2:
        (root / ".zmetadata").write_text("{not json")
    else:
        doc = json.loads((root / "zarr.json").read_text())
        doc["consolidated_metadata"]["kind"] = "remote"
        (root / "zarr.json").write_text(json.dumps(doc))
    before = sorted((p.name, p.read_bytes()) for p in root.iterdir() if p.is_file())
    zarrc.open_array(str(root), path="sub/t", mode="r+").attrs["units"] = "K"
    assert sorted((p.name, p.read_bytes()) for p in root.iterdir() if p.is_file()) == before
    assert dict(zarrc.open_array(str(root), path="sub/t").attrs) == {"units": "K"}


def test_an_array_opened_again_with_other_settings(tmp_path):
    root = tmp_path / "x.zarr"
    _make(root, 3)
    g = zarrc.open_group(str(root), mode="r+")
    g["sub"]["t"].with_config({"write_empty_chunks": True}).attrs["units"] = "K"
    assert dict(g["sub"]["t"].attrs) == {"units": "K"}
    assert dict(zarrc.open_group(str(root), mode="r")["sub"]["t"].attrs) == {"units": "K"}
