"""Hierarchies at scale (issue 40, item 4): what opening and listing a hierarchy
costs, counted rather than timed (parsed nodes, store calls, lines run), and a
fresh read of a shard of many inner chunks checking its index natively."""

from __future__ import annotations

import json
import sys
from pathlib import Path

import numpy as np
import pytest

import zarrc
from zarrc.codecs import shard_index
from zarrc.core.array import Array
from zarrc.errors import CodecError, MetadataError
from zarrc.metadata import consolidated as consolidated_docs
from zarrc.metadata.consolidated import ConsolidatedNodes, parse_v3
from zarrc.stores import LocalStore

ZARRC = str(Path(zarrc.__file__).parent)


def _array_doc(i: int) -> dict:
    return {"zarr_format": 3, "node_type": "array", "shape": [4], "data_type": "int32",
            "chunk_grid": {"name": "regular", "configuration": {"chunk_shape": [2]}},
            "chunk_key_encoding": {"name": "default", "configuration": {"separator": "/"}},
            "fill_value": 0, "codecs": [{"name": "bytes", "configuration": {"endian": "little"}}],
            "attributes": {"i": i}}


def build(root: Path, ngroups: int, narrays: int, consolidated: bool) -> None:
    """``ngroups`` groups of ``narrays`` arrays, documents only (as zarr-python writes them)."""
    entries = {}
    for g in range(ngroups):
        group = {"zarr_format": 3, "node_type": "group", "attributes": {}}
        (root / f"g{g}").mkdir(parents=True)
        (root / f"g{g}" / "zarr.json").write_text(json.dumps(group))
        entries[f"g{g}"] = group
        for a in range(narrays):
            (root / f"g{g}" / f"a{a}").mkdir()
            (root / f"g{g}" / f"a{a}" / "zarr.json").write_text(json.dumps(_array_doc(a)))
            entries[f"g{g}/a{a}"] = _array_doc(a)
    doc = {"zarr_format": 3, "node_type": "group", "attributes": {}}
    if consolidated:
        doc["consolidated_metadata"] = {"kind": "inline", "must_understand": False, "metadata": entries}
    (root / "zarr.json").write_text(json.dumps(doc))


@pytest.fixture
def parses(monkeypatch):
    """How many consolidated entries are parsed (``metadata_from_json`` calls from
    zarrc.metadata.consolidated)."""
    calls = []
    real = consolidated_docs.metadata_from_json

    def counting(doc, path=""):
        calls.append(path)
        return real(doc, path)
    monkeypatch.setattr(consolidated_docs, "metadata_from_json", counting)
    return calls


def test_reaching_one_array_parses_only_its_entry(tmp_path, parses):
    build(tmp_path, 20, 10, consolidated=True)
    g = zarrc.open_group(str(tmp_path), mode="r")
    assert g.consolidated and parses == []
    a = g["g7/a3"]
    assert isinstance(a, Array) and a.attrs["i"] == 3 and a.shape == (4,)
    assert parses == ["g7/a3"]
    sub = g["g7"]                                  # a group: its entry, and a view of those below
    assert parses == ["g7/a3", "g7"]
    assert sorted(sub)[:2] == ["a0", "a1"] and len(parses) == 2
    assert sub["a3"].attrs["i"] == 3 and len(parses) == 2      # (parsed once, kept)


def test_a_malformed_entry_is_a_metadata_error_naming_it_when_touched(tmp_path):
    build(tmp_path, 2, 3, consolidated=True)
    doc = json.loads((tmp_path / "zarr.json").read_text())
    doc["consolidated_metadata"]["metadata"]["g1/a2"]["data_type"] = "made_up_type"
    (tmp_path / "zarr.json").write_text(json.dumps(doc))
    g = zarrc.open_group(str(tmp_path), mode="r", use_consolidated=True)     # opens: structure is sound
    assert g["g1/a1"].attrs["i"] == 1
    with pytest.raises(MetadataError, match=r'^zarr.json of /: consolidated_metadata key "g1/a2": '
                                            r'.*made_up_type'):
        g["g1/a2"]
    with pytest.raises(MetadataError, match='key "g1/a2"'):
        g["g1"]["a2"]
    with pytest.warns(UserWarning, match="member 'a2' is skipped"):
        assert [name for name, _ in g["g1"].members()] == ["a0", "a1"]


def test_consolidated_nodes_views_share_their_entries():
    member = {"kind": "inline", "must_understand": False, "metadata": {
        "s": {"zarr_format": 3, "node_type": "group"}, "s/a": _array_doc(1),
        "s/t": {"zarr_format": 3, "node_type": "group"}, "s/t/b": _array_doc(2), "c": _array_doc(3)}}
    nodes = parse_v3(member, "")
    assert isinstance(nodes, ConsolidatedNodes) and nodes.parsed() == 0
    assert list(nodes) == ["c", "s", "s/a", "s/t", "s/t/b"] and len(nodes) == 5
    view = nodes.subtree("s")
    assert sorted(view) == ["a", "t", "t/b"] and len(view) == 3 and sorted(view.children()) == ["a", "t"]
    assert view["t/b"].attributes["i"] == 2 and nodes.parsed() == 1    # parsed through the view, kept
    del view["t/b"]
    assert "s/t/b" not in nodes and view.children("t") == [] and nodes.at_or_below("s") == ["s", "s/a", "s/t"]
    view["t/x"] = nodes["c"]
    assert nodes["s/t/x"] is nodes["c"] and "" not in view
    assert dict(nodes).keys() == {"c", "s", "s/a", "s/t", "s/t/x"} and nodes.parsed() == 5


class CountingStore(LocalStore):
    """A LocalStore counting the calls a listing makes."""

    calls = 0

    def get(self, key, *args, **kwargs):
        type(self).calls += 1
        return super().get(key, *args, **kwargs)

    def exists(self, key):
        type(self).calls += 1
        return super().exists(key)

    def list_dir(self, prefix):
        type(self).calls += 1
        return super().list_dir(prefix)


def _lines_run(fn) -> int:
    """Lines of zarrc's Python code run by ``fn()`` (a count of work, not a time)."""
    count = 0

    def trace(frame, event, arg):
        nonlocal count
        if not frame.f_code.co_filename.startswith(ZARRC):
            return None
        if event == "line":
            count += 1
        return trace
    sys.settrace(trace)
    try:
        fn()
    finally:
        sys.settrace(None)
    return count


@pytest.mark.parametrize("consolidated", [True, False])
def test_listing_a_hierarchy_grows_linearly(tmp_path, consolidated):
    """Four times the groups, four times the work: lines of zarrc run (the old
    consolidated listing copied the whole document's dict for every group) and
    store calls."""
    work, calls = [], []
    for ngroups in (40, 160):
        root = tmp_path / f"h{ngroups}"
        build(root, ngroups, 2, consolidated)
        store = CountingStore(str(root), mode="r")

        def listing(store=store, ngroups=ngroups):
            g = zarrc.open_group(store, mode="r", use_consolidated=consolidated)
            assert len(g.members(max_depth=None)) == 3 * ngroups
        CountingStore.calls = 0
        work.append(_lines_run(listing))
        calls.append(CountingStore.calls)
    assert work[1] <= 4.4 * work[0], work
    assert calls[1] <= 4.1 * calls[0], calls
    if consolidated:
        assert calls == [1, 1]           # (the root's zarr.json; nothing else read)


def test_listed_arrays_are_prepared_when_first_used(tmp_path):
    build(tmp_path, 1, 2, consolidated=True)
    g = zarrc.open_group(str(tmp_path), mode="r+")
    members = dict(g.members(max_depth=None))
    a = members["g0/a1"]
    assert "_engine" not in vars(a)
    a[...] = [1, 2, 3, 4]
    assert "_engine" in vars(a) and list(a[...]) == [1, 2, 3, 4]
    assert "_engine" in vars(g["g0/a0"])           # (reached by name: prepared when opened)
    with pytest.raises(AttributeError, match="no_such_thing"):
        getattr(members["g0/a0"], "no_such_thing")  # noqa: B009


def _sharded(tmp_path, n_side: int):
    a = zarrc.create_array(str(tmp_path / f"s{n_side}"), shape=(n_side * 2, n_side * 2), dtype="int32",
                           chunks=(2, 2), shards=(n_side * 2, n_side * 2))
    a[...] = np.arange(a.size, dtype="int32").reshape(a.shape)
    return a


def test_a_fresh_read_of_a_big_shard_checks_its_index_natively(tmp_path, monkeypatch):
    """One pass in the kernel, no numpy sort, for a shard whose inner chunks lie
    in offset order (as writers lay them out)."""
    a = _sharded(tmp_path, 64)                     # 4,096 inner chunks
    sorts = []
    real = np.argsort
    monkeypatch.setattr(np, "argsort", lambda *args, **kw: sorts.append(1) or real(*args, **kw))
    fresh = zarrc.open_array(a.store, mode="r")
    assert fresh[:2, :2].tolist() == [[0, 1], [128, 129]]
    assert not sorts


@pytest.mark.parametrize("table, message", [
    ([[0, 8], [8, 8]], None),
    ([[8, 8], [0, 8]], None),                              # out of order: sorted by numpy
    ([[0, 8], [shard_index.EMPTY, shard_index.EMPTY], [8, 0], [8, 8]], None),
    ([[0, 8], [shard_index.EMPTY, 3]], "entry 1 is half empty"),
    ([[0, 8], [30, 8]], r"entry 1 \(offset 30, nbytes 8\) lies outside the shard's data \[0, 32\)"),
    ([[0, 8], [2**64 - 8, 16]], "entry 1 .* lies outside"),  # wraps around
    ([[0, 8], [4, 8]], "entries 0 and 1 overlap"),
    ([[16, 8], [0, 8], [4, 8]], "entries 1 and 2 overlap"),  # out of order
])
def test_check_index(table, message):
    arr = np.array(table, np.uint64)
    if message is None:
        shard_index.check_index(arr, 0, 32, "shard c/0")
    else:
        with pytest.raises(CodecError, match=f"^shard c/0: shard index {message}"):
            shard_index.check_index(arr, 0, 32, "shard c/0")
    shard_index.check_index(np.zeros((0, 2), np.uint64), 0, None, "shard c/0")
