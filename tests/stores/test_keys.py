"""Key validation: keys that would leave the store root (or are malformed) are refused everywhere."""

from __future__ import annotations

import pytest

from zarrc.errors import StoreError
from zarrc.stores import LocalStore, MemoryStore, validate_key

from helpers import tree_snapshot

ESCAPES = ["../x", "a/../../x", "/etc/passwd", "..", ".", "./x", "a/./b", "a/..", "../../../../tmp/evil"]
MALFORMED = ["a\\..\\x", "..\\x", "a//b", "", "a/", "/", "x\x00y", "a/b/"]
BAD_KEYS = ESCAPES + MALFORMED
BAD_PREFIXES = ["../", "a/../../", "/", "/etc/", "a//", "a/./", "..\\", "x\x00/"]


@pytest.mark.parametrize(
    "key", ["zarr.json", "a/b/c", ".zarray", "a/.zattrs", "c/0/0/1", "..a", "a..", "a/...", "ü/ß"]
)
def test_valid_keys(key):
    assert validate_key(key, "S") == key


@pytest.mark.parametrize("key", ESCAPES)
def test_escape_message_names_key_and_store(key):
    store = LocalStore("/data/a.zarr")
    with pytest.raises(StoreError, match="escapes the store root") as info:
        validate_key(key, store)
    assert repr(key) in str(info.value) and "LocalStore('/data/a.zarr')" in str(info.value)


@pytest.mark.parametrize("key", MALFORMED)
def test_malformed_keys(key):
    with pytest.raises(StoreError, match=r"key .* of 'S'"):
        validate_key(key, "S")


@pytest.mark.parametrize("key", [None, b"a/b", 3, ("a",)])
def test_non_str_key(key):
    with pytest.raises(TypeError, match="str"):
        validate_key(key, "S")


def _operations(store, key):
    return {
        "get": lambda: store.get(key),
        "get_range": lambda: store.get_range(key, 0, 4),
        "get_ranges": lambda: store.get_ranges(key, [(0, 1)]),
        "get_many": lambda: store.get_many(["ok", key]),
        "exists": lambda: store.exists(key),
        "set": lambda: store.set(key, b"evil"),
        "set_many": lambda: store.set_many({"fine": b"1", key: b"evil"}),
        "delete": lambda: store.delete(key),
        "local_path": lambda: store.local_path(key),
    }


@pytest.mark.parametrize("key", BAD_KEYS)
def test_bad_keys_refused_everywhere(factory, key, tmp_path):
    # the store root lies deeper in tmp_path than any escape reaches ("../" x 4), so a
    # write that escaped would land in tmp_path, the tree compared before and after
    # (not pytest's whole base directory, which grows with every test of the run)
    if factory.kind == "local":
        factory.location = str(tmp_path / "d1" / "d2" / "d3" / "d4" / "store.zarr")
    store = factory.writable()
    store.set("ok", b"data")
    store.set("a/b/c", b"data")
    (tmp_path / "x").write_bytes(b"outside")
    before = tree_snapshot(tmp_path) if factory.kind != "zip" else None
    contents = dict(factory.data)
    for name, call in _operations(store, key).items():
        if name == "local_path" and factory.kind != "local":
            continue
        with pytest.raises(StoreError):
            call()
    if factory.kind == "zip":
        store.close()
        before = None
    assert sorted(factory.read_only(store).list()) == ["a/b/c", "ok"]
    if before is not None:
        assert tree_snapshot(tmp_path) == before
    if factory.kind == "memory":
        assert factory.data == contents


@pytest.mark.parametrize("prefix", BAD_PREFIXES)
def test_bad_prefixes_refused_everywhere(store, prefix, tmp_path):
    store.set("a/b/c", b"data")
    (tmp_path / "outside").mkdir()
    (tmp_path / "outside" / "f").write_bytes(b"keep")
    before = tree_snapshot(tmp_path)
    for call in (
        lambda: list(store.list_prefix(prefix)),
        lambda: store.list_dir(prefix),
        lambda: store.delete_prefix(prefix),
    ):
        with pytest.raises(StoreError):
            call()
    assert store.get("a/b/c") == b"data"
    if store.__class__.__name__ != "ZipStore":
        assert tree_snapshot(tmp_path) == before


def test_local_store_does_not_touch_outside_files(tmp_path):
    root = tmp_path / "root"
    store = LocalStore(root)
    store.set("inside", b"1")
    (tmp_path / "victim").write_bytes(b"precious")
    before = tree_snapshot(tmp_path)
    for key in ["../victim", "a/../../victim", str(tmp_path / "victim"), "..\\victim"]:
        with pytest.raises(StoreError):
            store.set(key, b"pwned")
        with pytest.raises(StoreError):
            store.delete(key)
        with pytest.raises(StoreError):
            store.get(key)
    with pytest.raises(StoreError):
        store.delete_prefix("../")
    assert tree_snapshot(tmp_path) == before
    assert (tmp_path / "victim").read_bytes() == b"precious"


def test_memory_store_ignores_bad_keys_in_users_dict():
    data = {"../x": b"1", "ok": b"2"}
    store = MemoryStore(data)
    with pytest.raises(StoreError):
        store.get("../x")
    assert store.get("ok") == b"2"
    assert data == {"../x": b"1", "ok": b"2"}
