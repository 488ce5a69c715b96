"""OS errors of a local store (a read-only file system, no permission, a full disk)
are StoreErrors naming the path, on every write path: metadata documents
(``Store.set``), clearing a root (mode "w"), deletes, and the kernels' chunk
file writes."""

from __future__ import annotations

import errno
import os

import numpy as np
import pytest

import zarrc
from zarrc.errors import StoreError, ZarrcError
from zarrc.stores import LocalStore

ROOT = hasattr(os, "geteuid") and os.geteuid() == 0


def failing(err: int, real):
    """A stand-in for an os function that fails with ``err`` (naming its path)."""
    def call(path, *args, **kwargs):
        raise OSError(err, os.strerror(err), path)
    call.real = real
    return call


@pytest.mark.parametrize("err", [errno.EROFS, errno.EACCES, errno.ENOSPC])
def test_set_failure_is_a_store_error_naming_the_path(err, tmp_path, monkeypatch) -> None:
    store = LocalStore(tmp_path / "s.zarr", mode="w")
    monkeypatch.setattr(os, "open", failing(err, os.open))
    with pytest.raises(StoreError, match=rf"s\.zarr.*{os.strerror(err)}") as info:
        zarrc.create_array(store, name="a", shape=(4,), dtype="i4", chunks=(2,))
    assert "zarr.json" in str(info.value)


@pytest.mark.parametrize("err", [errno.EROFS, errno.EACCES, errno.EPERM])
def test_clearing_a_root_is_a_store_error_naming_the_path(err, tmp_path, monkeypatch) -> None:
    root = tmp_path / "s.zarr"
    zarrc.create_array(LocalStore(root, mode="w"), name="a", shape=(4,), dtype="i4", chunks=(2,))[...] = 1
    monkeypatch.setattr(os, "unlink", failing(err, os.unlink))
    with pytest.raises(StoreError, match=rf"cannot delete .*s\.zarr.*{os.strerror(err)}"):
        LocalStore(root, mode="w")                     # mode "w" clears the root


def test_delete_failure_is_a_store_error(tmp_path, monkeypatch) -> None:
    store = LocalStore(tmp_path / "s.zarr", mode="w")
    store.set("a/b", b"x")
    monkeypatch.setattr(os, "unlink", failing(errno.EROFS, os.unlink))
    with pytest.raises(StoreError, match="cannot delete key 'a/b'"):
        store.delete("a/b")
    with pytest.raises(StoreError, match="cannot delete"):
        store.delete_prefix("a/")


def test_native_chunk_write_failure_is_a_store_error(tmp_path) -> None:
    """The kernels write chunk files themselves: a failed open (here a file where a
    chunk directory must be) is a StoreError naming the chunk."""
    root = tmp_path / "s.zarr"
    a = zarrc.create_array(LocalStore(root, mode="w"), name="a", shape=(4, 4), dtype="i4", chunks=(2, 2))
    (root / "a" / "c").write_bytes(b"in the way")
    with pytest.raises(StoreError) as info:
        a[...] = np.ones((4, 4), "i4")
    assert isinstance(info.value, ZarrcError)
    assert "c/0/0" in str(info.value) or "a/c" in str(info.value)


@pytest.mark.skipif(ROOT, reason="as root, permissions do not refuse writes: EACCES cannot be provoked "
                                 "by a directory's mode (a read-only mount needs privileges too)")
def test_read_only_directory(tmp_path) -> None:
    root = tmp_path / "s.zarr"
    a = zarrc.create_array(LocalStore(root, mode="w"), name="a", shape=(4, 4), dtype="i4", chunks=(2, 2))
    a[...] = 1
    modes = {}
    for d, _, _ in os.walk(root):
        modes[d] = os.stat(d).st_mode
        os.chmod(d, 0o555)
    try:
        with pytest.raises(StoreError):
            a[...] = 2                                 # the kernels' chunk file writes
        with pytest.raises(StoreError):
            a[0, 0] = 3                                # a partial write (lock, read, write)
        with pytest.raises(StoreError):
            zarrc.create_array(LocalStore(root), name="b", shape=(4,), dtype="i4", chunks=(2,))
        with pytest.raises(StoreError):
            LocalStore(root, mode="w")
        np.testing.assert_array_equal(zarrc.open_array(LocalStore(root, mode="r"), path="a")[...],
                                      np.ones((4, 4), "i4"))
    finally:
        for d, m in modes.items():
            os.chmod(d, m)
