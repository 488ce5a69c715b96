"""Crash safety (docs/guarantees.md, "Crashes"): a writer SIGKILLed at random
points (whole chunks, partial chunks, inner chunks of shards, resize, attributes,
consolidated metadata, a v2 array) leaves every chunk and shard wholly one
version, metadata that parses, and no temporary file that
``LocalStore.remove_temp_files`` does not remove."""

from __future__ import annotations

import json
import os
import random
import signal
import time

import numpy as np
import pytest

import zarrc
from crash_writer import ARRAYS, make, run
from zarrc.stores.local import is_temp_name

pytestmark = [pytest.mark.skipif(not hasattr(signal, "SIGKILL"), reason="no SIGKILL"),
              # (3.12+ warns of fork in a process with threads: the child only writes and exits)
              pytest.mark.filterwarnings("ignore:This process .* is multi-threaded:DeprecationWarning")]

KILLS = 60


def _temp_files(root):
    return sorted(os.path.relpath(os.path.join(d, f), root)
                  for d, _, names in os.walk(root) for f in names if is_temp_name(f))


def _check_units(a, unit, region) -> None:
    """Inside ``region``, each chunk (shard) ``unit`` holds one value; outside, 0."""
    data = a[...]
    mask = np.zeros(data.shape, bool)
    mask[region] = True
    for i in range(0, data.shape[0], unit[0]):
        for j in range(0, data.shape[1], unit[1]):
            block, inside = data[i:i + unit[0], j:j + unit[1]], mask[i:i + unit[0], j:j + unit[1]]
            assert len(np.unique(block[inside])) <= 1, f"{a.path} unit {(i, j)} torn: {block}"
            assert (block[~inside] == 0).all(), f"{a.path} unit {(i, j)}: {block}"


def _check(root) -> None:
    """The store as a killed writer left it: documents parse, every unit one version."""
    for dirpath, _, names in os.walk(root):
        for name in names:
            if name in ("zarr.json", ".zarray", ".zattrs", ".zgroup"):
                with open(os.path.join(dirpath, name)) as f:
                    json.load(f)
    g = zarrc.open_group(root, mode="r")              # (consolidated: parses)
    for name, (chunks, shards, region) in ARRAYS.items():
        _check_units(zarrc.open_array(root + "/" + name, mode="r"), shards or chunks, region)
    _check_units(zarrc.open_array(root + "-v2", mode="r"), (4, 4), (slice(None), slice(None)))
    assert set(g.attrs) <= {"version"}


def _writer(root: str, seed: int) -> int:
    """A writer forked from this (warm) process: no import per kill point.  Returns
    its pid once it has opened the nodes and is about to write."""
    ready, signal_ready = os.pipe()
    pid = os.fork()
    if pid == 0:                                       # the child never returns to pytest
        try:
            os.close(ready)
            run(root, seed, lambda: os.write(signal_ready, b"r"))
        finally:
            os._exit(1)
    os.close(signal_ready)
    assert os.read(ready, 1) == b"r"
    os.close(ready)
    return pid


@pytest.mark.skipif(not hasattr(os, "fork"), reason="no fork")
def test_a_writer_killed_at_random_points_leaves_whole_versions(tmp_path):
    root = str(tmp_path / "h")
    make(root)
    rng = random.Random(41)
    stale = 0
    start = time.monotonic()
    for kill in range(KILLS):
        pid = _writer(root, kill)
        time.sleep(rng.uniform(0.001, 0.15))
        os.kill(pid, signal.SIGKILL)
        _, status = os.waitpid(pid, 0)
        assert os.WIFSIGNALED(status) and os.WTERMSIG(status) == signal.SIGKILL   # killed mid-loop
        _check(root)
        stale += len(_temp_files(root)) + len(_temp_files(root + "-v2"))
    removed = zarrc.storage.LocalStore(root).remove_temp_files()
    removed += zarrc.storage.LocalStore(root + "-v2").remove_temp_files()
    assert _temp_files(root) == _temp_files(root + "-v2") == []
    assert len(removed) <= stale
    assert time.monotonic() - start < 120


@pytest.mark.skipif(os.name == "nt", reason="no process probe on Windows")
def test_remove_temp_files_removes_dead_writers_files_only(tmp_path):
    """A temporary file named for a process that no longer runs is removed; one of a
    live process (this one) is an in-flight write and stays; keys stay."""
    from zarrc._kernels.chunk_files import temp_path

    store = zarrc.storage.LocalStore(str(tmp_path))
    store.set("a/c/0", b"x")
    child = os.fork()
    if child == 0:
        os._exit(0)
    os.waitpid(child, 0)                                  # a pid that no longer runs
    dead = temp_path(str(tmp_path / "a" / "c" / "1"), f"{child}-1-x".encode())
    live = temp_path(str(tmp_path / "a" / "2"))
    for path in (dead, live):
        with open(path, "wb") as f:
            f.write(b"partial")
    assert store.remove_temp_files() == [os.path.relpath(dead, tmp_path).replace(os.sep, "/")]
    assert os.path.exists(live) and not os.path.exists(dead)
    assert store.get("a/c/0") == b"x"
    assert store.remove_temp_files("a/c") == []
