"""Attribute lookups cost what the value costs, as in zarr-python: no copy of the
whole attribute document per lookup, listing or membership test, and the values
are the ones the node's metadata holds (zarr-python's semantics: a lookup returns
the held value; ``asdict`` a shallow copy; a change goes through the store)."""

from __future__ import annotations

import tracemalloc

import pytest

import zarrc
from zarrc.errors import ArgumentTypeError
from zarrc.stores import MemoryStore

FORMATS = [2, 3]
BIG = list(range(50_000))


def _big_array(fmt):
    store = MemoryStore()
    a = zarrc.create_array(store, name="a", shape=(4,), dtype="f4", zarr_format=fmt)
    a.attrs.update({**{f"k{i}": i for i in range(2000)}, "big": BIG, "nested": {"x": [1, {"y": 2}]}})
    return store, zarrc.open_array(store, path="a", mode="r+")


def _allocated(fn):
    """The peak bytes Python allocates while ``fn`` runs."""
    tracemalloc.start()
    try:
        fn()
        return tracemalloc.get_traced_memory()[1]
    finally:
        tracemalloc.stop()


@pytest.mark.parametrize("fmt", FORMATS)
def test_lookups_do_not_copy_the_document(fmt):
    _, a = _big_array(fmt)
    attrs = a.attrs

    def lookups():
        for i in range(2000):
            attrs[f"k{i}"]
        for _ in range(100):
            len(attrs), "big" in attrs, "missing" in attrs, attrs["big"], attrs.get("k3")

    # the document is over 500 kB as Python objects; one copy of it per lookup would
    # allocate that much again and again
    assert _allocated(lookups) < 64 << 10
    assert attrs["big"] is attrs["big"] and attrs["big"] == BIG and type(attrs["big"]) is list
    assert attrs["nested"] == {"x": [1, {"y": 2}]} and type(attrs["nested"]) is dict
    assert sorted(attrs)[:2] == ["big", "k0"] and len(attrs) == 2002


@pytest.mark.parametrize("fmt", FORMATS)
def test_semantics_as_zarr_python(tmp_path, fmt):
    """A held value changed in place is what zarr-python gives too: the node's
    metadata holds it (and the next write stores it); ``asdict`` is a shallow copy
    whose top level can change freely; the metadata's mapping stays read-only."""
    zarr = pytest.importorskip("zarr")
    seen = []
    for lib in (zarrc, zarr):
        path = str(tmp_path / f"{lib.__name__}.zarr")
        a = lib.create_array(path, shape=(2,), dtype="i1", zarr_format=fmt, attributes={"l": [1], "n": 0})
        a.attrs["l"].append(2)
        copy = a.attrs.asdict()
        copy["other"] = 1
        before = dict(a.attrs)
        a.attrs["n"] = 1                                  # a write stores the changed list
        seen.append((before, dict(lib.open_array(path, mode="r").attrs)))
    assert seen[0] == seen[1] == ({"l": [1, 2], "n": 0}, {"l": [1, 2], "n": 1})
    a = zarrc.open_array(str(tmp_path / "zarrc.zarr"), mode="r+")
    with pytest.raises(TypeError):
        a.metadata.attributes["x"] = 1                    # type: ignore[index]


@pytest.mark.parametrize("fmt", FORMATS)
def test_values_written_are_not_shared_with_the_caller(fmt):
    """What a write was given is stored, then read back: changing the caller's
    object afterwards changes nothing in the node."""
    store = MemoryStore()
    a = zarrc.create_array(store, name="a", shape=(2,), dtype="i1", zarr_format=fmt)
    value = {"x": [1, 2]}
    a.attrs["v"] = value
    value["x"].append(3)
    assert a.attrs["v"] == {"x": [1, 2]}
    assert zarrc.open_array(store, path="a").attrs["v"] == {"x": [1, 2]}
    with pytest.raises(ArgumentTypeError):
        a.attrs["bad"] = object()
    assert dict(a.attrs) == {"v": {"x": [1, 2]}}


@pytest.mark.parametrize("fmt", FORMATS)
def test_open_does_not_freeze_the_document(fmt):
    """Opening keeps the parsed JSON values: a large attribute is a plain list."""
    store, _ = _big_array(fmt)
    a = zarrc.open_array(store, path="a")
    assert type(a.metadata.attributes["big"]) is list
    g = zarrc.open_group(store)
    assert type(g["a"].attrs["nested"]["x"]) is list


def test_equal_metadata_hash_equal():
    store, a = _big_array(3)
    b = zarrc.open_array(store, path="a")
    assert a.metadata == b.metadata and hash(a.metadata) == hash(b.metadata)
    g1, g2 = zarrc.group(MemoryStore(), attributes={"x": [1]}), zarrc.group(MemoryStore(), attributes={"x": [1]})
    assert g1.metadata == g2.metadata and hash(g1.metadata) == hash(g2.metadata)
