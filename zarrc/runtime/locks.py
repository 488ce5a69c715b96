"""Exclusive locks on store keys, held by a read-modify-write (a write of part of
a stored chunk or shard) from before it reads the old value until the new one is
stored or deleted, so that concurrent writers of different parts lose nothing.

What is locked is named by an *ident*: the file of the key for a store of plain
files (``LocalStore``), else ``(id(store), key)`` (for a MemoryStore, the id of its
dict).  :func:`hold` takes the locks
of a set of idents in sorted order (so that two writers never wait for each
other in a circle) and releases them on exit.  Locks are re-entrant per thread:
an ident the calling thread already holds is skipped (the ``fields=`` write of
``Array._write_planned`` holds its keys around the inner write).

Every lock is first an in-process lock, from a table keyed by the ident (so that
threads of one process exclude each other whatever the OS lock does: flock on
NFS is emulated by POSIX locks, which belong to the process).  For a file, the
setting ``zarrc.config.write_locking`` then chooses the lock between processes:

``"os"`` (default)
    ``flock(LOCK_EX)`` on ``<file>.__lock`` beside the chunk (shard) file (the
    name tensorstore's file store gives its lock files).  The holder removes the
    lock file before it unlocks it; a writer that locked a file no longer at that
    path (``fstat`` of its descriptor against ``stat`` of the path) retries, so
    no lock file is left behind.  A file system without flock (ENOLCK, ENOSYS,
    EOPNOTSUPP: Lustre mounted without ``flock``) gives StoreError suggesting
    ``"lockfile"``.
``"lockfile"``
    The lock is the existence of ``<file>.__lock``, created with
    ``O_CREAT | O_EXCL`` (atomic on local file systems, NFSv3 and later, Lustre
    and GPFS) holding the writer's host name and pid, removed to unlock.  Waiters
    poll, backing off from 0.5 ms to 50 ms.  A lock file whose writer is a dead
    process of this host, or older than ``STALE_SECONDS``, is broken (renamed
    away, then removed).
``"none"``
    No lock at all (zarrc before this setting): concurrent partial writers of one
    chunk or shard can lose updates.

Stores that are not plain files (MemoryStore, ZipStore, remote ones) get the
in-process lock only, whatever the mode ("none": none).

Waiting releases the GIL (``threading.Lock.acquire``, ``fcntl.flock``,
``time.sleep``).  A forked child starts with an empty lock table (it holds none
of its parent's locks; its inherited descriptors of lock files that the parent
then removes lock nothing anyone looks at).
"""

from __future__ import annotations

import errno
import os
import socket
import threading
import time
from collections.abc import Iterator, Sequence
from contextlib import contextmanager
from typing import Any

from zarrc.errors import StoreError

try:
    import fcntl
except ImportError:         # (Windows: the in-process lock only)
    fcntl = None  # type: ignore[assignment]

MODES = ("os", "lockfile", "none")
LOCK_SUFFIX = b".__lock"
STALE_SECONDS = 300.0       # "lockfile": a lock file older than this is broken
_POLL_FIRST, _POLL_MAX = 0.0005, 0.05
# flock errors that mean the file system has no (working) flock
_NO_LOCKS = {errno.ENOLCK, errno.ENOSYS, errno.EOPNOTSUPP, errno.EINVAL}


class _Entry:
    """One ident's in-process lock and the number of threads holding or awaiting it."""

    __slots__ = ("lock", "users")

    def __init__(self) -> None:
        self.lock = threading.Lock()
        self.users = 0


_table: dict[Any, _Entry] = {}
_table_mutex = threading.Lock()
_local = threading.local()
_acquired = 0               # locks taken since import (see acquisitions())


def _reset_after_fork() -> None:
    global _table, _table_mutex, _local
    _table, _table_mutex, _local = {}, threading.Lock(), threading.local()


if hasattr(os, "register_at_fork"):
    os.register_at_fork(after_in_child=_reset_after_fork)


def acquisitions() -> int:
    """How many key locks this process has taken (each key of each :func:`hold`
    not already held by the thread): for tests and benchmarks."""
    return _acquired


def _held() -> set:
    held = getattr(_local, "held", None)
    if held is None:
        held = _local.held = set()
    return held


@contextmanager
def hold(targets: Sequence[tuple[Any, str, bytes | None]], mode: str, where: str) -> Iterator[None]:
    """Hold exclusive locks on ``targets``, each ``(ident, key, path)`` (``path``:
    the key's file, or None for a store of no files), taken in sorted order of
    ident (each once), for the ``with`` block; ``mode`` one of MODES ("none": nothing).
    ``where`` names the array in errors.  Raises StoreError naming the key if a
    lock cannot be taken (then none is held)."""
    if mode == "none" or not targets:
        yield
        return
    held = _held()
    todo = sorted({t[0]: t for t in targets if t[0] not in held}.values(), key=lambda t: t[0])
    taken: list[tuple[Any, _Entry, bytes | None, int]] = []
    try:
        for ident, key, path in todo:
            taken.append(_acquire(ident, key, path, mode, where))
            held.add(ident)
        yield
    finally:
        failed: OSError | None = None
        for ident, entry, lock_path, fd in reversed(taken):
            held.discard(ident)
            try:
                _release(ident, entry, lock_path, fd, mode)
            except OSError as exc:       # (release the others, then raise)
                failed = failed or exc
        if failed is not None:
            raise failed


def _acquire(ident: Any, key: str, path: bytes | None, mode: str,
             where: str) -> tuple[Any, _Entry, bytes | None, int]:
    """Take ident's in-process lock, then (a file, a mode with one) its lock file:
    (ident, entry, lock file path or None, descriptor or -1)."""
    global _acquired
    with _table_mutex:
        entry = _table.get(ident)
        if entry is None:
            entry = _table[ident] = _Entry()
        entry.users += 1
        _acquired += 1
    entry.lock.acquire()
    if path is None or fcntl is None:
        return ident, entry, None, -1
    lock_path = path + LOCK_SUFFIX
    try:
        fd = _lock_os(lock_path) if mode == "os" else _lock_file(lock_path)
    except OSError as exc:
        _release(ident, entry, None, -1, mode)
        raise _lock_error(exc, key, lock_path, mode, where) from None
    except BaseException:
        _release(ident, entry, None, -1, mode)
        raise
    return ident, entry, lock_path, fd


def _release(ident: Any, entry: _Entry, lock_path: bytes | None, fd: int, mode: str) -> None:
    try:
        if lock_path is not None:
            try:
                _unlink_own(lock_path, fd)
            finally:
                os.close(fd)       # (after the unlink: see the module docstring)
    finally:
        entry.lock.release()
        with _table_mutex:
            entry.users -= 1
            if entry.users == 0 and _table.get(ident) is entry:
                del _table[ident]


def _unlink_own(lock_path: bytes, fd: int) -> None:
    """Remove ``lock_path`` if it is still the file open as ``fd``."""
    try:
        st, cur = os.fstat(fd), os.stat(lock_path)
        if (st.st_dev, st.st_ino) == (cur.st_dev, cur.st_ino):
            os.unlink(lock_path)
    except FileNotFoundError:
        pass


def _open_creating(lock_path: bytes, flags: int) -> int:
    """``os.open(lock_path, flags)``, creating the directories above it if missing
    (a partial write of a chunk not stored yet)."""
    try:
        return os.open(lock_path, flags, 0o666)
    except FileNotFoundError:
        os.makedirs(os.path.dirname(lock_path), exist_ok=True)
        return os.open(lock_path, flags, 0o666)


def _lock_os(lock_path: bytes) -> int:
    """A descriptor of ``lock_path`` holding ``flock(LOCK_EX)`` on it, the file
    still at that path."""
    while True:
        fd = _open_creating(lock_path, os.O_RDWR | os.O_CREAT | os.O_CLOEXEC)
        try:
            fcntl.flock(fd, fcntl.LOCK_EX)
            st = os.fstat(fd)
            try:
                cur = os.stat(lock_path)
            except FileNotFoundError:
                cur = None
        except BaseException:
            os.close(fd)
            raise
        if cur is not None and (cur.st_dev, cur.st_ino) == (st.st_dev, st.st_ino):
            return fd
        os.close(fd)          # (its holder removed it meanwhile: lock the new one)


_HOST = socket.gethostname()


def _lock_file(lock_path: bytes) -> int:
    """A descriptor of ``lock_path``, created exclusively by this call."""
    delay = _POLL_FIRST
    while True:
        try:
            fd = _open_creating(lock_path, os.O_WRONLY | os.O_CREAT | os.O_EXCL | os.O_CLOEXEC)
        except FileExistsError:
            if not _break_stale(lock_path):
                time.sleep(delay)
                delay = min(delay * 2, _POLL_MAX)
            continue
        try:
            os.write(fd, f"{_HOST} {os.getpid()}\n".encode())
        except BaseException:
            os.close(fd)
            os.unlink(lock_path)
            raise
        return fd


def _break_stale(lock_path: bytes) -> bool:
    """Remove ``lock_path`` if it is stale (its writer a dead process of this
    host, or older than STALE_SECONDS): True if it is gone now."""
    try:
        fd = os.open(lock_path, os.O_RDONLY | os.O_CLOEXEC)
    except FileNotFoundError:
        return True
    try:
        st = os.fstat(fd)
        text = os.read(fd, 512).decode(errors="replace").split()
    finally:
        os.close(fd)
    stale = time.time() - st.st_mtime > STALE_SECONDS
    if not stale and len(text) == 2 and text[0] == _HOST and text[1].isdigit():
        stale = not _alive(int(text[1]))
    if not stale:
        return False
    aside = lock_path + f".{os.getpid()}.{threading.get_ident()}.stale".encode()
    try:
        os.rename(lock_path, aside)
    except FileNotFoundError:
        return True
    moved = os.stat(aside)
    if (moved.st_dev, moved.st_ino) != (st.st_dev, st.st_ino):
        try:                   # (a new lock replaced the stale one meanwhile: put it back)
            os.link(aside, lock_path)
        except FileExistsError:
            pass
    os.unlink(aside)
    return True


def _alive(pid: int) -> bool:
    try:
        os.kill(pid, 0)
    except ProcessLookupError:
        return False
    except PermissionError:
        return True
    return True


def _lock_error(exc: OSError, key: str, lock_path: bytes, mode: str, where: str) -> StoreError:
    """The StoreError for a lock that could not be taken."""
    name = os.fsdecode(lock_path)
    if mode == "os" and exc.errno in _NO_LOCKS:
        return StoreError(f"cannot lock key {key!r} of {where} for a partial write: flock on {name} "
                          f"failed ({exc.strerror}); this file system has no OS locks (Lustre "
                          "mounted without -o flock?): use zarrc.config.set(write_locking='lockfile')")
    return StoreError(f"cannot lock key {key!r} of {where} for a partial write: {name}: {exc.strerror}")
