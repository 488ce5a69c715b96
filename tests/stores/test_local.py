"""LocalStore specifics: modes, atomic writes, temporary files, symlinks, file-system errors."""

from __future__ import annotations

import os
import pickle

import pytest

from zarrc.errors import StoreError
from zarrc.stores import LocalStore
from zarrc.stores.local import is_temp_name

from helpers import tree_snapshot


def files_on_disk(root) -> list[str]:
    return sorted(os.path.relpath(os.path.join(d, f), root) for d, _, fs in os.walk(root) for f in fs)


# -- modes ---------------------------------------------------------------------


def test_root_created_on_first_write(tmp_path):
    root = tmp_path / "new" / "deep.zarr"
    store = LocalStore(root)
    assert not root.exists()
    assert store.get("k") is None and list(store.list()) == [] and store.list_dir("") == ([], [])
    store.set("a/b/c", b"1")
    assert (root / "a" / "b" / "c").read_bytes() == b"1"


def test_mode_w_clears(tmp_path):
    LocalStore(tmp_path / "s").set("old/key", b"1")
    store = LocalStore(tmp_path / "s", mode="w")
    assert list(store.list()) == []
    assert (tmp_path / "s").is_dir()


def test_mode_w_refuses_to_clear_home_or_root(tmp_path, monkeypatch):
    monkeypatch.setenv("HOME", str(tmp_path))
    (tmp_path / "keep").write_bytes(b"1")
    with pytest.raises(StoreError, match="refusing to clear"):
        LocalStore(tmp_path, mode="w")
    assert (tmp_path / "keep").exists()


def test_mode_w_minus(tmp_path):
    LocalStore(tmp_path / "empty", mode="w-")
    (tmp_path / "empty").mkdir()
    LocalStore(tmp_path / "empty", mode="w-").set("k", b"1")
    with pytest.raises(StoreError, match="not empty"):
        LocalStore(tmp_path / "empty", mode="w-")


@pytest.mark.parametrize("mode", ["r", "r+"])
def test_modes_needing_an_existing_root(tmp_path, mode):
    with pytest.raises(StoreError, match="does not exist"):
        LocalStore(tmp_path / "missing", mode=mode)
    assert not (tmp_path / "missing").exists()
    LocalStore(tmp_path / "there", mode="a").set("k", b"1")
    assert LocalStore(tmp_path / "there", mode=mode).get("k") == b"1"


def test_root_is_a_file(tmp_path):
    (tmp_path / "f").write_bytes(b"")
    with pytest.raises(StoreError, match="not a directory"):
        LocalStore(tmp_path / "f")


def test_bad_mode(tmp_path):
    with pytest.raises(ValueError, match="mode"):
        LocalStore(tmp_path, mode="x")


def test_pickle_does_not_clear_again(tmp_path):
    store = LocalStore(tmp_path / "s", mode="w")
    store.set("k", b"1")
    clone = pickle.loads(pickle.dumps(store))
    assert clone.get("k") == b"1" and clone == store
    store2 = LocalStore(tmp_path / "t", mode="w-")
    store2.set("k", b"1")
    assert pickle.loads(pickle.dumps(store2)).get("k") == b"1"


def test_equality_by_root(tmp_path):
    assert LocalStore(tmp_path / "s") == LocalStore(str(tmp_path / "s") + "/")
    assert LocalStore(tmp_path / "s") != LocalStore(tmp_path / "t")
    assert repr(LocalStore(tmp_path / "s")) == f"LocalStore('{tmp_path / 's'}')"


# -- file system shapes -----------------------------------------------------------


def test_directory_is_not_a_key(tmp_path):
    store = LocalStore(tmp_path)
    store.set("a/b", b"1")
    assert store.get("a") is None
    assert store.get_range("a", 0, 1) is None
    assert store.get_range("a", -1) is None
    assert not store.exists("a")
    store.delete("a")  # a directory, not a key: nothing happens
    assert store.get("a/b") == b"1"
    with pytest.raises(StoreError, match="cannot write key 'a'"):
        store.set("a", b"2")
    assert store.get("a/b") == b"1"


def test_directory_is_not_a_key_where_opening_one_is_refused(tmp_path, monkeypatch):
    """Windows refuses to open a directory ("access denied": PermissionError) where
    POSIX opens it; the key is absent there too, and a refused file is an error."""
    store = LocalStore(tmp_path)
    store.set("a/b", b"1")
    store.set("c", b"2")
    real_open = os.open

    def refusing_open(path, flags, *args):
        if os.path.basename(path) in ("a", "c"):
            raise PermissionError(13, "Permission denied", path)
        return real_open(path, flags, *args)

    monkeypatch.setattr(os, "open", refusing_open)
    assert store.get("a") is None
    assert store.get_range("a", 0, 1) is None
    assert store.snapshot("a") is None
    assert store.get("a/b") == b"1"
    with pytest.raises(StoreError, match="cannot read key 'c'"):
        store.get("c")
    with pytest.raises(StoreError, match="cannot read key 'c'"):
        store.get_range("c", 0, 1)


def test_key_below_a_file(tmp_path):
    store = LocalStore(tmp_path)
    store.set("a", b"1")
    assert store.get("a/b") is None
    assert store.get_range("a/b", 0) is None
    store.delete("a/b")
    with pytest.raises(StoreError, match="cannot write key 'a/b'"):
        store.set("a/b", b"2")
    assert store.get("a") == b"1"
    assert [n for n in os.listdir(tmp_path) if is_temp_name(n)] == []


def test_delete_leaves_directories(tmp_path):
    store = LocalStore(tmp_path)
    store.set("a/b/c", b"1")
    store.delete("a/b/c")
    assert (tmp_path / "a" / "b").is_dir()
    assert list(store.list()) == []


def test_files_written_with_normal_permissions(tmp_path):
    old = os.umask(0o022)
    try:
        LocalStore(tmp_path).set("k", b"1")
    finally:
        os.umask(old)
    assert (tmp_path / "k").stat().st_mode & 0o777 == 0o644


def test_read_errors_raise_store_error(tmp_path, monkeypatch):
    store = LocalStore(tmp_path)
    store.set("k", b"1")

    def denied(*args, **kwargs):
        raise PermissionError(13, "Permission denied")

    monkeypatch.setattr(os, "open", denied)
    for call in (lambda: store.get("k"), lambda: store.get_range("k", 0, 1)):
        with pytest.raises(StoreError, match="cannot read key 'k' of LocalStore.*Permission denied"):
            call()


# -- atomic writes ------------------------------------------------------------------


def test_failed_rename_keeps_old_value(tmp_path, monkeypatch):
    store = LocalStore(tmp_path)
    store.set("a/k", b"old value")

    def crash(src, dst):
        raise OSError(5, "Input/output error")

    monkeypatch.setattr(os, "replace", crash)
    with pytest.raises(StoreError, match="cannot write key 'a/k'"):
        store.set("a/k", b"new value")
    monkeypatch.undo()
    assert store.get("a/k") == b"old value"
    assert files_on_disk(tmp_path) == ["a/k"]  # the temporary file was removed


def test_failed_write_keeps_old_value(tmp_path, monkeypatch):
    store = LocalStore(tmp_path)
    store.set("k", b"old value")
    real_write = os.write

    def half_write(fd, data):
        real_write(fd, bytes(data)[:3])
        raise OSError(28, "No space left on device")

    monkeypatch.setattr(os, "write", half_write)
    with pytest.raises(StoreError, match="No space left"):
        store.set("k", b"new value")
    monkeypatch.undo()
    assert store.get("k") == b"old value"
    assert files_on_disk(tmp_path) == ["k"]


@pytest.mark.skipif(not hasattr(os, "fork"), reason="needs fork")
def test_crash_mid_write_leaves_old_value_and_hides_temp_file(tmp_path):
    """A process killed between writing the temporary file and renaming it."""
    store = LocalStore(tmp_path)
    store.set("c/0", b"old value")
    pid = os.fork()
    if pid == 0:  # the child dies just before the rename, as a killed process would
        os.replace = lambda src, dst: os._exit(9)
        try:
            store.set("c/0", b"new value" * 1000)
        finally:
            os._exit(1)
    _, status = os.waitpid(pid, 0)
    assert os.waitstatus_to_exitcode(status) == 9
    leftovers = [n for n in os.listdir(tmp_path / "c") if n != "0"]
    assert len(leftovers) == 1 and is_temp_name(leftovers[0])  # the crash left it behind
    assert store.get("c/0") == b"old value"
    assert list(store.list()) == ["c/0"]
    assert list(store.list_prefix("c/")) == ["c/0"]
    assert store.list_dir("c/") == (["0"], [])
    store.delete_prefix("c/")  # removes stale temporary files too
    assert not (tmp_path / "c").exists()     # the directory too, as zarr-python's delete_dir


def test_temp_names_are_hidden_but_similar_keys_are_not(tmp_path):
    store = LocalStore(tmp_path)
    for key in [".tmp", "a.tmp", ".zarray", ".zarrc-1-2-3.tmp.x"]:
        store.set(key, b"1")
    (tmp_path / ".k.zarrc-1-2-ab0.tmp").write_bytes(b"junk")
    assert sorted(store.list()) == sorted([".tmp", "a.tmp", ".zarray", ".zarrc-1-2-3.tmp.x"])


# -- symlinks ---------------------------------------------------------------------


@pytest.fixture
def outside(tmp_path):
    out = tmp_path / "outside"
    out.mkdir()
    (out / "secret").write_bytes(b"precious")
    (out / "sub").mkdir()
    (out / "sub" / "f").write_bytes(b"also precious")
    return out


def test_set_replaces_a_symlink_instead_of_writing_through_it(tmp_path, outside):
    store = LocalStore(tmp_path / "root")
    store.set("x", b"1")
    os.symlink(outside / "secret", tmp_path / "root" / "link")
    before = tree_snapshot(outside)
    assert store.get("link") == b"precious"  # links placed by the owner are followed for reads
    store.set("link", b"overwritten")
    assert tree_snapshot(outside) == before
    assert not os.path.islink(tmp_path / "root" / "link")
    assert store.get("link") == b"overwritten"


def test_delete_removes_the_link_not_the_target(tmp_path, outside):
    store = LocalStore(tmp_path / "root")
    store.set("x", b"1")
    os.symlink(outside / "secret", tmp_path / "root" / "link")
    before = tree_snapshot(outside)
    store.delete("link")
    assert tree_snapshot(outside) == before
    assert not os.path.lexists(tmp_path / "root" / "link")


@pytest.mark.parametrize("prefix", ["", "a/", "a", "a/lin"])
def test_delete_prefix_never_follows_directory_symlinks(tmp_path, outside, prefix):
    store = LocalStore(tmp_path / "root")
    store.set("a/k", b"1")
    os.symlink(outside, tmp_path / "root" / "a" / "linkdir")
    os.symlink(outside / "secret", tmp_path / "root" / "a" / "linkfile")
    before = tree_snapshot(outside)
    store.delete_prefix(prefix)
    assert tree_snapshot(outside) == before
    assert not os.path.lexists(tmp_path / "root" / "a" / "linkdir")


def test_recursive_listing_does_not_descend_into_symlinked_directories(tmp_path, outside):
    store = LocalStore(tmp_path / "root")
    store.set("a/k", b"1")
    os.symlink(outside, tmp_path / "root" / "a" / "linkdir")
    os.symlink(tmp_path / "root", tmp_path / "root" / "a" / "loop")
    os.symlink(outside / "secret", tmp_path / "root" / "a" / "linkfile")
    os.symlink(tmp_path / "nowhere", tmp_path / "root" / "a" / "broken")
    assert sorted(store.list()) == ["a/k", "a/linkfile"]
    # list_dir reports a symlinked directory as a child (it does not recurse)
    assert store.list_dir("a/") == (["k", "linkfile"], ["linkdir", "loop"])


def test_keys_below_a_symlinked_directory_go_through_it(tmp_path, outside):
    """A directory link the owner placed in the root is followed by get and set (the
    owner's choice); the recursive listing does not enter it (above)."""
    store = LocalStore(tmp_path / "root")
    store.set("x", b"1")
    os.symlink(outside / "sub", tmp_path / "root" / "linked")
    assert store.get("linked/f") == b"also precious"
    store.set("linked/g", b"new")
    assert (outside / "sub" / "g").read_bytes() == b"new"
    assert "linked/g" not in store.list()
