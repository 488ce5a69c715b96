"""ZipStore specifics: modes, rewrites, delete refusal, compressed members, pickling, closing."""

from __future__ import annotations

import os
import pickle
import warnings
import zipfile

import pytest

from zarrc.errors import StoreError
from zarrc.stores import ZipStore


@pytest.fixture
def path(tmp_path):
    return str(tmp_path / "data.zip")


def test_rewrite_replaces_the_member(path):
    store = ZipStore(path, mode="w")
    store.set("k", b"first")
    store.set("j", b"other")
    with warnings.catch_warnings():
        warnings.simplefilter("error")  # no duplicate-name warning: the member is replaced
        store.set("k", b"second")
        assert store.get("k") == b"second"
        store.flush()
        store.set("k", b"third")  # a member of the written archive, replaced again
        store.close()
    with zipfile.ZipFile(path) as zf:
        assert sorted(zf.namelist()) == ["j", "k"]  # one member per key
        assert zf.read("k") == b"third" and zf.read("j") == b"other"
    with ZipStore(path) as ro:
        assert ro.get("k") == b"third" and sorted(ro.list()) == ["j", "k"]


def test_delete(path):
    store = ZipStore(path, mode="w")
    store.set("a/b", b"1")
    store.set("a/c", b"2")
    store.set("x/y", b"3")
    store.flush()
    store.set("a/d", b"4")
    store.delete("a/missing")
    store.delete("a/b")  # in the written archive
    store.delete("a/d")  # staged only
    assert not store.exists("a/b") and store.get("a/d") is None and store.size("a/b") is None
    store.delete_prefix("x/")
    assert sorted(store.list()) == ["a/c"]
    store.set("a/b", b"again")
    assert store.get("a/b") == b"again"
    store.close()
    with zipfile.ZipFile(path) as zf:
        assert sorted(zf.namelist()) == ["a/b", "a/c"] and zf.read("a/b") == b"again"


def test_archive_with_duplicates_compacts_on_flush(path):
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")  # zipfile warns about the duplicate name
        with zipfile.ZipFile(path, "w") as zf:  # as older zarrc and zarr-python write rewrites
            zf.writestr("k", b"old")
            zf.writestr("d/", b"")  # a directory entry, kept as it is
            zf.writestr("k", b"new")
    with ZipStore(path, mode="a") as store:
        assert store.get("k") == b"new"
        store.set("j", b"1")
    with zipfile.ZipFile(path) as zf:
        assert zf.namelist() == ["d/", "k", "j"] and zf.read("k") == b"new"


@pytest.mark.parametrize("compression", [zipfile.ZIP_DEFLATED, zipfile.ZIP_BZIP2, zipfile.ZIP_LZMA])
def test_compressed_members(path, compression):
    value = bytes(range(256)) * 100
    with ZipStore(path, mode="w", compression=compression) as store:
        store.set("a/k", value)
        assert store.get("a/k") == value
    with zipfile.ZipFile(path) as zf:
        assert zf.getinfo("a/k").compress_type == compression
        assert zf.getinfo("a/k").compress_size < len(value)
    with ZipStore(path) as store:
        assert store.get("a/k") == value
        assert store.get_range("a/k", 300, 10) == value[300:310]
        assert store.get_range("a/k", -7) == value[-7:]
        assert store.get_ranges("a/k", [(0, 3), (25_590, None)]) == [value[:3], value[25_590:]]


def test_stored_range_reads_only_the_range(path, monkeypatch):
    value = os.urandom(1 << 20)
    with ZipStore(path, mode="w") as store:
        store.set("big", value)
    store = ZipStore(path)
    sizes = []
    real = os.pread

    def spy(fd, n, offset):
        sizes.append(n)
        return real(fd, n, offset)

    monkeypatch.setattr(os, "pread", spy)
    assert store.get_range("big", 5000, 100) == value[5000:5100]
    assert store.get_range("big", -10) == value[-10:]
    assert max(sizes) == 100
    store.close()


def test_read_while_writing(path):
    store = ZipStore(path, mode="w")
    for i in range(50):
        store.set(f"c/{i}", bytes([i]) * (i + 1))
        assert store.get(f"c/{i // 2}") == bytes([i // 2]) * (i // 2 + 1)
    assert store.get_range("c/49", -2) == b"11"
    store.close()


def test_append_mode(path):
    with ZipStore(path, mode="w") as store:
        store.set("a", b"1")
    with ZipStore(path, mode="a") as store:
        assert store.get("a") == b"1"
        store.set("b", b"2")
    with ZipStore(path) as store:
        assert sorted(store.list()) == ["a", "b"]
    with ZipStore(os.path.join(os.path.dirname(path), "new.zip"), mode="a") as store:
        store.set("k", b"v")  # "a" creates a missing file


def test_open_errors(path, tmp_path):
    with pytest.raises(StoreError, match="does not exist"):
        ZipStore(path, mode="r")
    (tmp_path / "junk.zip").write_bytes(b"not a zip at all")
    with pytest.raises(StoreError, match="not a zip file"):
        ZipStore(tmp_path / "junk.zip", mode="r")
    with pytest.raises(StoreError, match="not a zip file"):
        ZipStore(tmp_path / "junk.zip", mode="a")
    assert (tmp_path / "junk.zip").read_bytes() == b"not a zip at all"  # untouched
    with pytest.raises(StoreError, match="exists"):
        ZipStore(tmp_path / "junk.zip", mode="x")
    with pytest.raises(ValueError, match="mode"):
        ZipStore(path, mode="w-")


def test_closed_store(path):
    store = ZipStore(path, mode="w")
    store.set("k", b"v")
    store.close()
    store.close()  # idempotent
    for call in (lambda: store.get("k"), lambda: store.set("j", b"1"), lambda: list(store.list())):
        with pytest.raises(StoreError, match="is closed"):
            call()


def test_pickle_policy(path):
    store = ZipStore(path, mode="w")
    store.set("k", b"v")
    with pytest.raises(StoreError, match="open for writing"):
        pickle.dumps(store)
    store.close()
    clone = pickle.loads(pickle.dumps(store))  # a closed writer reopens in "a" mode (no truncation)
    assert clone.mode == "a" and clone.get("k") == b"v"
    clone.set("j", b"w")
    clone.close()
    with ZipStore(path) as ro:
        assert sorted(ro.list()) == ["j", "k"]
        clone = pickle.loads(pickle.dumps(ro))
        assert clone.read_only and clone.get("j") == b"w"
        clone.close()


def test_directory_entries_are_not_keys(path):
    with zipfile.ZipFile(path, "w") as zf:
        zf.writestr("a/", b"")
        zf.writestr("a/b", b"1")
    with ZipStore(path) as store:
        assert list(store.list()) == ["a/b"]
        assert store.list_dir("") == ([], ["a"])
        assert store.list_dir("a/") == (["b"], [])


def test_unsafe_member_names_are_unreachable(path):
    with zipfile.ZipFile(path, "w") as zf:
        zf.writestr("../evil", b"x")
        zf.writestr("ok", b"1")
    with ZipStore(path) as store:
        with pytest.raises(StoreError, match="escapes"):
            store.get("../evil")
        assert store.get("ok") == b"1"
        assert list(store.list()) == ["ok"]


def test_corrupt_compressed_member(path):
    with ZipStore(path, mode="w", compression=zipfile.ZIP_DEFLATED) as store:
        store.set("k", b"hello world" * 100)
    with open(path, "r+b") as f:
        f.seek(40)
        f.write(b"\xff" * 8)  # inside the deflate stream
    with ZipStore(path) as store, pytest.raises(StoreError, match="cannot read key 'k' of ZipStore"):
        store.get("k")
