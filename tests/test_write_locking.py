"""Parallel partial writers lose nothing (zarrc.runtime.locks, zarrc.engine.locked; setting
``write_locking``): threads and processes writing different parts of one shard,
of one unsharded chunk, and of one nested shard, in every locking mode, each
checking after every round (a barrier) that every writer's last values are
there: zero lost.  Also: no lock file is left, whole-chunk writes take no lock,
locks that cannot be taken give a clear error and change nothing, stale lock
files are broken, a held lock makes a writer wait."""

from __future__ import annotations

import multiprocessing
import os
import shutil
import subprocess
import sys
import threading
import time
import warnings

import numpy as np
import pytest

import zarrc
from zarrc.runtime import locks
from zarrc.errors import ArgumentError, StoreError
from zarrc.stores import MemoryStore

fcntl = pytest.importorskip("fcntl")

WRITERS, ROUNDS, ROWS, COLS = 8, 20, 4, 64
SHAPE = (WRITERS * ROWS, COLS)
BYTES = {"name": "bytes", "configuration": {"endian": "little"}}
ZSTD1 = {"name": "zstd", "configuration": {"level": 1, "checksum": False}}
MODES = ["os", "lockfile"]


def sharding(chunk_shape, codecs) -> dict:
    return {"name": "sharding_indexed", "configuration": {
        "chunk_shape": list(chunk_shape), "codecs": codecs,
        "index_codecs": [BYTES, {"name": "crc32c"}], "index_location": "end"}}


# layout -> create_array keywords: every writer's rows lie in one stored key
LAYOUTS = {
    "shard": {"chunks": (ROWS, COLS), "shards": SHAPE, "compressors": [ZSTD1]},
    "chunk": {"chunks": SHAPE, "compressors": [ZSTD1]},
    "nested": {"chunks": SHAPE, "serializer": sharding((2 * ROWS, COLS), [sharding((ROWS, COLS), [BYTES, ZSTD1])])},
    "unaligned": {"chunks": (ROWS + 1, COLS), "shards": (4 * (ROWS + 1), COLS), "compressors": [ZSTD1]},
}


def create(path, layout: str, store=None):
    return zarrc.create_array(store if store is not None else str(path), shape=SHAPE, dtype="i4",
                              fill_value=-1, **LAYOUTS[layout])


def value(writer: int, rnd: int) -> int:
    return writer * 1000 + rnd + 1


def write_rounds(arr, writer: int, barrier, rounds: int = ROUNDS) -> int:
    """Write this writer's rows ``rounds`` times; after each round (all writers
    done) count its rows' elements not holding its value: the lost ones."""
    lost = 0
    rows = slice(writer * ROWS, (writer + 1) * ROWS)
    for rnd in range(rounds):
        arr[rows] = value(writer, rnd)
        barrier.wait()
        lost += int((arr[rows] != value(writer, rnd)).sum())
        barrier.wait()
    return lost


def lock_files(root) -> list[str]:
    return [os.path.join(d, f) for d, _, files in os.walk(root) for f in files
            if ".__lock" in f]


def check_final(path, layout: str) -> None:
    a = zarrc.open_array(str(path))
    expected = np.repeat([value(w, ROUNDS - 1) for w in range(WRITERS)], ROWS)[:, None]
    assert (a[...] == expected).all()
    assert lock_files(path) == []
    try:
        import zarr
    except ImportError:       # (Python 3.10: no zarr-python; zarrc's checks above hold)
        return
    z = zarr.open_array(str(path), mode="r")
    assert z.nchunks_initialized == a.nchunks_initialized      # (no lock file counted)
    np.testing.assert_array_equal(z[...], a[...])


# ------------------------------------------------------------------ threads

@pytest.mark.parametrize("mode", MODES)
@pytest.mark.parametrize("layout", list(LAYOUTS))
def test_threads_lose_nothing(layout, mode, tmp_path) -> None:
    path = tmp_path / "a.zarr"
    create(path, layout)
    with zarrc.config.set(write_locking=mode):
        lost = in_threads(lambda w: zarrc.open_array(str(path)))
    assert lost == [0] * WRITERS
    check_final(path, layout)


def in_threads(array_of) -> list:
    """Run write_rounds in WRITERS threads at once, thread w on ``array_of(w)``:
    each thread's lost values."""
    barrier = threading.Barrier(WRITERS)
    lost = [None] * WRITERS

    def run(w: int) -> None:
        lost[w] = write_rounds(array_of(w), w, barrier)

    threads = [threading.Thread(target=run, args=(w,)) for w in range(WRITERS)]
    for t in threads:
        t.start()
    for t in threads:
        t.join()
    return lost


@pytest.mark.parametrize("own_store", [False, True], ids=["one-array", "store-per-thread"])
@pytest.mark.parametrize("layout", ["shard", "chunk"])
def test_threads_memory_store_lose_nothing(layout, own_store) -> None:
    store = MemoryStore()
    a = create(None, layout, store)
    # (own_store: a MemoryStore of its own over the one dict)
    lost = in_threads(lambda w: zarrc.open_array(MemoryStore(store.data)) if own_store else a)
    assert lost == [0] * WRITERS


# ------------------------------------------------------------------ processes

PROCESSES = 4


def _process_writer(path: str, layouts: list[str], mode: str, writer: int, barrier, results) -> None:
    zarrc.config.set(write_locking=mode)
    total = 0
    for layout in layouts:
        total += _rounds_two(zarrc.open_array(os.path.join(path, layout)), writer, barrier)
    results.put((writer, total))


def _rounds_two(arr, writer: int, barrier) -> int:
    """As write_rounds, a process writing the rows of writers 2p and 2p + 1 one
    after the other in each round (so every writer's rows are written)."""
    lost = 0
    mine = [2 * writer, 2 * writer + 1]
    for rnd in range(ROUNDS):
        for w in mine:
            arr[w * ROWS:(w + 1) * ROWS] = value(w, rnd)
        barrier.wait()
        for w in mine:
            lost += int((arr[w * ROWS:(w + 1) * ROWS] != value(w, rnd)).sum())
        barrier.wait()
    return lost


@pytest.mark.parametrize("mode", MODES)
def test_processes_lose_nothing(mode, tmp_path) -> None:
    layouts = ["shard", "chunk", "nested"]
    for layout in layouts:
        create(tmp_path / layout, layout)
    ctx = multiprocessing.get_context("spawn")
    barrier, results = ctx.Barrier(PROCESSES), ctx.Queue()
    procs = [ctx.Process(target=_process_writer, args=(str(tmp_path), layouts, mode, p, barrier, results))
             for p in range(PROCESSES)]
    for p in procs:
        p.start()
    got = dict(results.get(timeout=120) for _ in procs)
    for p in procs:
        p.join(timeout=60)
        assert p.exitcode == 0
    assert got == {p: 0 for p in range(PROCESSES)}
    for layout in layouts:
        check_final(tmp_path / layout, layout)


# ------------------------------------------------------------------ which writes lock

def test_whole_writes_take_no_lock(tmp_path) -> None:
    a = zarrc.create_array(str(tmp_path / "a.zarr"), shape=(96, 64), dtype="i4", chunks=(4, 64),
                           shards=(32, 64))
    u = zarrc.create_array(str(tmp_path / "u.zarr"), shape=(96, 64), dtype="i4", chunks=(32, 64))
    before = locks.acquisitions()
    a[...] = 1
    a[32:64] = 2                                  # one whole shard
    a[64:96, :] = np.arange(64)                   # the last one
    a.set_block_selection((slice(1, 2),), 3)      # block 1 = shard 1, whole
    u[...] = 5
    u[32:64] = 6
    assert locks.acquisitions() == before
    assert lock_files(tmp_path) == []
    a[4:92] = 8                                   # shards 0 and 2 in part, 1 whole
    assert locks.acquisitions() == before + 2
    u[0, 0] = 9                                   # one chunk in part
    assert locks.acquisitions() == before + 3
    # integer arrays and points are read-modify-writes of every chunk they touch
    # (the engine reads the old chunk: their projections never say "whole")
    a.set_orthogonal_selection((np.arange(32, 64), slice(None)), 4)
    assert locks.acquisitions() == before + 4
    a.vindex[[0, 40], [0, 0]] = 10                # points in shards 0 and 1
    assert locks.acquisitions() == before + 6
    a.resize((90, 64))                            # overwrites the cut part of shard 2
    assert locks.acquisitions() == before + 7
    with zarrc.config.set(write_locking="none"):
        a[1, 1] = 11
    assert locks.acquisitions() == before + 7
    assert lock_files(tmp_path) == []
    expected = np.full((96, 64), 8)
    expected[:4] = 1
    expected[32:64] = 4
    expected[92:] = np.arange(64)
    expected[0, 0] = expected[40, 0] = 10
    expected[1, 1] = 11
    np.testing.assert_array_equal(a[...], expected[:90])
    assert (u[0, 1:] == 5).all() and u[0, 0] == 9


def test_fields_write_locks_every_key(tmp_path) -> None:
    dt = np.dtype([("x", "i4"), ("y", "f8")])
    a = zarrc.create_array(str(tmp_path / "a.zarr"), shape=(64,), dtype=dt, chunks=(8,), shards=(32,))
    before = locks.acquisitions()
    a.set_orthogonal_selection((slice(None),), 5, fields="x")    # whole shards, read then written
    assert locks.acquisitions() == before + 2
    assert (a[...]["x"] == 5).all() and (a[...]["y"] == 0).all()
    assert lock_files(tmp_path) == []


def test_setting() -> None:
    assert zarrc.config.get("write_locking") == "os"
    with zarrc.config.set(write_locking="lockfile"):
        assert zarrc.config.write_locking == "lockfile"
    assert zarrc.config.write_locking == "os"
    with pytest.raises(ArgumentError, match="write_locking must be 'os', 'lockfile' or 'none'"):
        zarrc.config.set(write_locking="fcntl")
    assert zarrc.config.write_locking == "os"


# ------------------------------------------------------------------ errors, stale and held locks

@pytest.mark.parametrize("mode", MODES)
def test_lock_that_cannot_be_taken(mode, tmp_path) -> None:
    a = zarrc.create_array(str(tmp_path / "a.zarr"), shape=(8, 8), dtype="i4", chunks=(4, 4))
    a[...] = 1
    shutil.rmtree(tmp_path / "a.zarr" / "c" / "1")
    (tmp_path / "a.zarr" / "c" / "1").write_bytes(b"")   # chunk (1, *)'s folder is a file
    with zarrc.config.set(write_locking=mode), \
            pytest.raises(StoreError, match=r"cannot lock key 'c/1/0' of /.*a partial write"):
        a[2:6, 1:3] = 2              # chunks (0, 0) (locked first) and (1, 0) in part
    assert (a[:4] == 1).all()        # nothing changed
    assert lock_files(tmp_path) == []


def test_stale_lock_file_broken(tmp_path) -> None:
    a = zarrc.create_array(str(tmp_path / "a.zarr"), shape=(8,), dtype="i4", chunks=(8,))
    a[...] = 1
    dead = subprocess.run([sys.executable, "-c", "import os; print(os.getpid())"],
                          capture_output=True, text=True, check=True).stdout.strip()
    lock = tmp_path / "a.zarr" / "c" / "0.__lock"
    lock.write_text(f"{locks._HOST} {dead}\n")
    with zarrc.config.set(write_locking="lockfile"):
        a[0] = 2
    assert a[0] == 2 and lock_files(tmp_path) == []


def _held_then_released(tmp_path, mode: str, hold, release) -> None:
    a = zarrc.create_array(str(tmp_path / "a.zarr"), shape=(8,), dtype="i4", chunks=(8,))
    a[...] = 1
    lock = tmp_path / "a.zarr" / "c" / "0.__lock"
    held = hold(lock)
    with zarrc.config.set(write_locking=mode):
        t = threading.Thread(target=a.__setitem__, args=(0, 2))
        t.start()
        time.sleep(0.3)
        assert t.is_alive() and a[0] == 1          # waiting for the lock
        release(lock, held)
        t.join(timeout=10)
    assert not t.is_alive() and a[0] == 2 and lock_files(tmp_path) == []


def test_held_lock_file_waits(tmp_path) -> None:
    def hold(lock):
        lock.write_text(f"{locks._HOST} {os.getpid()}\n")      # a live holder

    _held_then_released(tmp_path, "lockfile", hold, lambda lock, held: lock.unlink())


def test_held_os_lock_waits(tmp_path) -> None:
    def hold(lock):
        fd = os.open(lock, os.O_RDWR | os.O_CREAT)
        fcntl.flock(fd, fcntl.LOCK_EX)
        return fd

    def release(lock, fd):           # (as a holder does: removed, then unlocked)
        lock.unlink()
        os.close(fd)

    _held_then_released(tmp_path, "os", hold, release)


# ------------------------------------------------------------------ fork

def _child_takes(ident, conn) -> None:
    """In a forked child: take ``ident``'s lock from a new thread (with the
    parent's lock table, whose entry is locked, that would wait forever)."""
    def take() -> None:
        with locks.hold([(ident, "k", None)], "os", "/"):
            conn.send("took")

    t = threading.Thread(target=take)
    t.start()
    t.join()


@pytest.mark.skipif(not hasattr(os, "register_at_fork"), reason="no fork")
def test_forked_child_holds_no_lock_of_its_parent() -> None:
    ctx = multiprocessing.get_context("fork")
    ident = ("fork-test", "k")
    parent, child = ctx.Pipe()
    with locks.hold([(ident, "k", None)], "os", "/"):
        with warnings.catch_warnings():
            warnings.simplefilter("ignore", DeprecationWarning)     # (fork with threads, 3.12+)
            p = ctx.Process(target=_child_takes, args=(ident, child))
            p.start()
        took = parent.poll(20) and parent.recv() == "took"
        p.join(20)
        if p.is_alive():
            p.kill()
    assert took and p.exitcode == 0


# ------------------------------------------------------------------ which keys, against brute force

def _random_item(rng, size: int):
    kind = rng.integers(4)
    if kind == 0:
        return int(rng.integers(size))
    if kind == 1:
        return np.unique(rng.integers(0, size, rng.integers(1, 6)))
    start, stop = sorted(int(x) for x in rng.integers(0, size + 1, 2))
    return slice(start, max(stop, start + 1), int(rng.integers(1, 3)) if kind == 2 else 1)


@pytest.mark.parametrize("seed", range(4))
def test_partial_keys_match_brute_force(seed) -> None:
    """The stored keys engine.locked finds written in part (or touched at all)
    are those a boolean mask of the selection says: touched, and not wholly
    covered (or selected by an integer array, which the engine always reads)."""
    from zarrc.core import indexing
    from zarrc.engine.locked import stored_coords
    rng = np.random.default_rng(seed)
    for _ in range(60):
        inner = tuple(int(c) for c in rng.integers(1, 4, 2))
        ratio = tuple(int(r) for r in rng.integers(1, 4, 2))
        outer = tuple(i * r for i, r in zip(inner, ratio))
        shape = (int(rng.integers(1, 250)), int(rng.integers(1, 14)))     # (long: numpy tables)
        kw = {"chunks": outer} if ratio == (1, 1) else {"chunks": inner, "shards": outer}
        a = zarrc.create_array(MemoryStore(), shape=shape, dtype="u1", **kw)
        sel = tuple(_random_item(rng, s) for s in shape)
        dims = indexing.plan_orthogonal(sel, shape, a._chunked.chunks)[0]
        mask = np.zeros(shape, bool)
        mask[np.ix_(*[np.atleast_1d(np.arange(s)[i]) for i, s in zip(sel, shape)])] = True
        arrays = any(isinstance(i, np.ndarray) for i in sel)
        grid = [-(-s // o) for s, o in zip(shape, outer)]
        touched, partial = set(), set()
        for key in np.ndindex(*grid):
            region = mask[tuple(slice(k * o, (k + 1) * o) for k, o in zip(key, outer))]
            if region.any():
                touched.add(key)
                if arrays or not region.all():
                    partial.add(key)
        for only, want in ((True, partial), (False, touched)):
            got = stored_coords(a._chunked, dims, partial_only=only)
            got = set() if got is None else {tuple(int(c) for c in row) for row in got}
            assert got == want, (shape, inner, outer, sel, only)
        # points: every stored key they touch (the engine reads each)
        coords = tuple(rng.integers(0, s, 5) for s in shape)
        points = indexing.plan_coordinate(coords, shape, a._chunked.chunks)
        want = {tuple(int(c) // o for c, o in zip(p, outer)) for p in zip(*coords)}
        for only in (True, False):
            got = stored_coords(a._chunked, points, partial_only=only)
            assert {tuple(int(c) for c in row) for row in got} == want


def test_no_flock_error_suggests_lockfile() -> None:
    """The error for a file system without flock (ENOLCK, ENOSYS, EOPNOTSUPP; none
    is at hand to provoke it here): it names the key and the other mode."""
    import errno
    for code in (errno.ENOLCK, errno.ENOSYS, errno.EOPNOTSUPP):
        err = locks._lock_error(OSError(code, os.strerror(code)), "c/0/1", b"/d/a/c/0/1.__lock", "os",
                                "/temperature")
        assert isinstance(err, StoreError)
        assert "cannot lock key 'c/0/1' of /temperature" in str(err)
        assert "write_locking='lockfile'" in str(err)
    other = locks._lock_error(OSError(errno.EACCES, "Permission denied"), "c/0", b"/d/c/0.__lock",
                              "os", "/t")
    assert "lockfile" not in str(other) and "Permission denied" in str(other)
