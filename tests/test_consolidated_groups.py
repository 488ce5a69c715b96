"""Consolidated metadata on stores: zarrc.consolidate_metadata, opening groups with
it (by default, required, ignored), and interop with zarr-python both ways."""

from __future__ import annotations

import json
import warnings

import numpy as np
import pytest

from helpers import NO_ZARR_PYTHON

import zarrc
from zarrc.errors import MetadataError, NodeNotFoundError
from zarrc.stores import MemoryStore


class ReadCounter(MemoryStore):
    """A memory store that counts reads and listings."""

    def __init__(self) -> None:
        super().__init__()
        self.reads: list[str] = []

    def get(self, key):
        self.reads.append(key)
        return super().get(key)

    def exists(self, key):
        self.reads.append(key)
        return super().exists(key)

    def list_dir(self, prefix):
        self.reads.append("list:" + prefix)
        return super().list_dir(prefix)

    def list_prefix(self, prefix):
        self.reads.append("list:" + prefix)
        return super().list_prefix(prefix)


def _hierarchy(store, fmt):
    root = zarrc.group(store, zarr_format=fmt, attributes={"title": "root"})
    a = root.create_array("a", shape=(6,), chunks=(4,), dtype="<i4")
    a[:] = np.arange(6)
    sub = root.create_group("sub", attributes={"level": 1})
    s = sub.create_array("s", shape=(3,), chunks=(2,), dtype=str)
    s[:] = ["x", "yy", ""]
    sub.create_group("deeper").create_array("d", shape=(2, 2), dtype="f8")
    return root


@pytest.mark.parametrize("fmt", [2, 3])
def test_consolidate_then_open_reads_one_document(fmt):
    store = ReadCounter()
    _hierarchy(store, fmt)
    zarrc.consolidate_metadata(store)
    if fmt == 2:
        doc = json.loads(store.get(".zmetadata"))
        assert doc["zarr_consolidated_format"] == 1 and "sub/deeper/d/.zarray" in doc["metadata"]
    else:
        doc = json.loads(store.get("zarr.json"))["consolidated_metadata"]
        assert doc["kind"] == "inline" and set(doc["metadata"]) == {"a", "sub", "sub/s", "sub/deeper",
                                                                    "sub/deeper/d"}
    store.reads.clear()
    g = zarrc.open_group(store, mode="r")
    assert g.consolidated
    names = sorted(name for name, _ in g.members())
    sub = g["sub"]
    assert sorted(sub.keys()) == ["deeper", "s"] and sub.attrs["level"] == 1
    assert g["sub/deeper/d"].shape == (2, 2) and "sub/deeper" in g and "nope" not in g
    # one document for the whole tree (v2: after looking for a zarr.json)
    assert store.reads == (["zarr.json", ".zmetadata"] if fmt == 2 else ["zarr.json"])
    assert names == ["a", "sub"]
    np.testing.assert_array_equal(g["a"][:], np.arange(6))
    assert g["sub/s"][:].tolist() == ["x", "yy", ""]


@pytest.mark.parametrize("fmt", [2, 3])
@pytest.mark.parametrize("touched", [False, True])
def test_consolidated_group_and_array_pickle(tmp_path, fmt, touched):
    """xarray pickles opened datasets: groups and arrays opened through consolidated
    metadata pickle whether their entries were parsed yet or not."""
    import pickle

    _hierarchy(str(tmp_path), fmt)
    zarrc.consolidate_metadata(str(tmp_path))
    g = zarrc.open_group(str(tmp_path), mode="r")
    assert g.consolidated
    if touched:
        g["sub/deeper/d"]
    a = pickle.loads(pickle.dumps(g["a"]))
    np.testing.assert_array_equal(a[:], np.arange(6))
    back = pickle.loads(pickle.dumps(g))
    assert sorted(back["sub"].keys()) == ["deeper", "s"] and back["sub/deeper/d"].shape == (2, 2)


@pytest.mark.parametrize("fmt", [2, 3])
def test_use_consolidated_false_and_true(fmt):
    store = MemoryStore()
    root = _hierarchy(store, fmt)
    with pytest.raises(MetadataError, match="no consolidated metadata"):
        zarrc.open_group(store, mode="r", use_consolidated=True)
    zarrc.consolidate_metadata(store)
    root.create_array("late", shape=(1,), dtype="u1")           # kept in step: in the consolidated metadata
    assert "late" in zarrc.open_group(store, mode="r", use_consolidated=True)
    # a node written by another writer is not in the consolidated metadata
    if fmt == 2:
        store.set("other/.zgroup", b'{"zarr_format": 2}')
    else:
        store.set("other/zarr.json", b'{"zarr_format": 3, "node_type": "group", "attributes": {}}')
    assert "other" not in zarrc.open_group(store, mode="r")
    fresh = zarrc.open_group(store, mode="r", use_consolidated=False)
    assert not fresh.consolidated and "late" in fresh and "other" in fresh
    assert zarrc.open_consolidated(store).consolidated
    assert isinstance(zarrc.open(store, mode="r"), zarrc.Group)


def test_consolidate_errors():
    store = MemoryStore()
    with pytest.raises(NodeNotFoundError):
        zarrc.consolidate_metadata(store)
    zarrc.create_array(store, shape=(2,), dtype="u1")
    with pytest.raises(NodeNotFoundError):
        zarrc.consolidate_metadata(store)
    s2 = MemoryStore()
    zarrc.group(s2, zarr_format=2)
    with pytest.raises(MetadataError):
        zarrc.consolidate_metadata(s2, zarr_format=3)


@pytest.mark.parametrize("fmt", [2, 3])
def test_zarr_python_consolidated_opens_in_zarrc(tmp_path, fmt):
    zarr = pytest.importorskip("zarr", reason=NO_ZARR_PYTHON)
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        g = zarr.open_group(str(tmp_path), mode="w", zarr_format=fmt)
        g.attrs["k"] = "v"
        g.create_array("a", shape=(5,), chunks=(2,), dtype="i2")[:] = np.arange(5)
        g.create_group("sub").create_array("b", shape=(2,), dtype=str)[:] = ["p", "q"]
        zarr.consolidate_metadata(str(tmp_path))
    # delete the nodes' own metadata: only the consolidated metadata can answer
    for name in (".zarray", ".zgroup", ".zattrs", "zarr.json"):
        for p in tmp_path.glob(f"*/**/{name}"):
            p.unlink()
    z = zarrc.open_group(str(tmp_path), mode="r")
    assert z.consolidated and z.attrs["k"] == "v" and sorted(z.keys()) == ["a", "sub"]
    np.testing.assert_array_equal(z["a"][:], np.arange(5))
    assert z["sub"]["b"][:].tolist() == ["p", "q"]


@pytest.mark.parametrize("fmt", [2, 3])
def test_zarrc_consolidated_opens_in_zarr_python(tmp_path, fmt):
    zarr = pytest.importorskip("zarr", reason=NO_ZARR_PYTHON)
    _hierarchy(str(tmp_path), fmt)
    zarrc.consolidate_metadata(str(tmp_path))
    for name in (".zarray", ".zgroup", ".zattrs", "zarr.json"):
        for p in tmp_path.glob(f"*/**/{name}"):
            p.unlink()
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        z = zarr.open_consolidated(str(tmp_path), zarr_format=fmt)
        assert z.attrs["title"] == "root"
        np.testing.assert_array_equal(z["a"][:], np.arange(6))
        assert list(z["sub/s"][:]) == ["x", "yy", ""]
        assert z["sub"].attrs["level"] == 1 and z["sub/deeper/d"].shape == (2, 2)
