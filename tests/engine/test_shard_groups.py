"""Sharded writes a group of shards at a time (engine.sharding.writes.GROUP_BYTES): the
result does not depend on the grouping, a failure in a later group leaves every
file as it was (no shard named early, no temporary file left), and a write's
memory does not grow with the number of shards it touches."""

from __future__ import annotations

import os
import tracemalloc

import numpy as np
import pytest
from helpers import files

import zarrc
from zarrc.engine.sharding import writes as sharded
from zarrc.errors import ChecksumError
from zarrc.stores import MemoryStore


def make(store, data):
    a = zarrc.create_array(store, shape=data.shape, chunks=(4, 5), shards=(8, 10), dtype=data.dtype,
                           fill_value=0, compressors=[{"name": "zstd", "configuration": {"level": 1}}])
    a[...] = data
    return a


@pytest.mark.parametrize("group_bytes", [1, 1000, 1 << 30])
@pytest.mark.parametrize("where", ["local", "memory"])
def test_grouping_does_not_change_the_result(where, group_bytes, tmp_path, monkeypatch) -> None:
    monkeypatch.setattr(sharded, "GROUP_BYTES", group_bytes)
    rng = np.random.default_rng(1)
    data = rng.integers(1, 100, (37, 53)).astype("int32")
    a = make(str(tmp_path / "a.zarr") if where == "local" else MemoryStore(), data)
    sel = (rng.integers(0, 37, 500), rng.integers(0, 53, 500))
    a.vindex[sel] = 0
    data[sel] = 0
    a[3:30, 7:9] = 0             # inner chunks and a shard emptied: deleted
    data[3:30, 7:9] = 0
    a.oindex[[1, 36, 20], :] = 5
    data[[1, 36, 20], :] = 5
    np.testing.assert_array_equal(a[...], data)
    if where == "local":
        assert not [p for p in files(tmp_path) if os.path.basename(p).startswith(".")]


def test_failure_in_a_later_group_changes_no_file(tmp_path, monkeypatch) -> None:
    monkeypatch.setattr(sharded, "GROUP_BYTES", 1)       # one shard per group
    data = np.arange(40 * 50, dtype="int32").reshape(40, 50) + 1
    root = tmp_path / "a.zarr"
    a = make(str(root), data)
    last = root / "c" / "4" / "4"                         # the last shard touched
    raw = bytearray(last.read_bytes())
    raw[10] ^= 0xFF                                       # (inside an inner chunk's zstd frame)
    last.write_bytes(bytes(raw))
    before = files(root)
    with pytest.raises((ChecksumError, zarrc.errors.CodecError)):
        a.vindex[np.arange(0, 40, 3)[:13], np.arange(0, 50, 4)] = -1     # (33, 44): the corrupt one
    assert files(root) == before                           # no shard named, no temporary file


def test_write_memory_does_not_grow_with_the_shards_touched(tmp_path, monkeypatch) -> None:
    """Python-side peak memory of a points write over 64 shards is about that of a
    group, not of every old shard at once (tracemalloc sees the bytes objects); with
    shard files, the old shards are not held at all (their untouched inner chunks
    are copied file to file), whatever the group size."""
    rng = np.random.default_rng(2)
    data = rng.random((512, 512)).astype("float32")
    a = zarrc.create_array(str(tmp_path / "m.zarr"), shape=data.shape, chunks=(16, 16), shards=(64, 64),
                           dtype="float32", compressors=None)
    a[...] = data
    sel = (rng.integers(0, 512, 5000), rng.integers(0, 512, 5000))
    peaks = {}
    for group_bytes in (64 << 10, 1 << 30):
        monkeypatch.setattr(sharded, "GROUP_BYTES", group_bytes)
        tracemalloc.start()
        a.vindex[sel] = 1.5
        peaks[group_bytes] = tracemalloc.get_traced_memory()[1]
        tracemalloc.stop()
    # (every shard is 16 KiB, all of them 1 MiB: neither group size holds them)
    assert max(peaks.values()) < (1 << 20) / 2, peaks


def inner_parts(raw: bytes, nchunks: int) -> list[bytes | None]:
    """The inner chunks' bytes of a stored shard (index at the end, with crc32c)."""
    table = np.frombuffer(raw[len(raw) - 16 * nchunks - 4:], "<u8", count=2 * nchunks).reshape(nchunks, 2)
    return [None if o == 2**64 - 1 else raw[int(o):int(o + n)] for o, n in table]


@pytest.mark.parametrize("row", [1, 4], ids=["middle", "last"])
def test_a_store_error_staging_a_later_shard_changes_no_file(tmp_path, monkeypatch, row) -> None:
    """One shard per group: group k is staged on its own thread while group k + 1 is
    encoded.  A shard whose file cannot be made (a plain file where its directory
    should be) fails the write with StoreError, whether more groups follow it or
    not: the shards staged before and after it are discarded (no temporary file),
    none is named, and the array reads as before."""
    monkeypatch.setattr(sharded, "GROUP_BYTES", 1)
    data = np.arange(40 * 50, dtype="int32").reshape(40, 50) + 1
    root = tmp_path / "a.zarr"
    a = make(str(root), data)
    for name in os.listdir(root / "c" / str(row)):
        os.remove(root / "c" / str(row) / name)
    os.rmdir(root / "c" / str(row))
    (root / "c" / str(row)).write_bytes(b"in the way")
    before = files(root)
    with pytest.raises(zarrc.errors.StoreError):
        a[...] = -data
    assert files(root) == before
    expected = data.copy()
    expected[row * 8:row * 8 + 8] = 0                     # (its shards are gone)
    np.testing.assert_array_equal(a[...], expected)


def test_multi_shard_partial_writes_do_not_depend_on_the_grouping(tmp_path, monkeypatch) -> None:
    """A partial write over many shards, staged a shard at a time while the next is
    encoded, gives the same files as in one group, and keeps every untouched inner
    chunk byte for byte."""
    rng = np.random.default_rng(3)
    data = rng.integers(1, 1000, (40, 50)).astype("int32")
    stored = {}
    for group_bytes in (1, 1 << 30):
        monkeypatch.setattr(sharded, "GROUP_BYTES", group_bytes)
        root = tmp_path / f"g{group_bytes}.zarr"
        a = make(str(root), data)
        old = files(root)
        a[3:37, 12:41] = -7                               # inner chunks in part, whole, untouched
        a[0:4, 0:5] = 0                                   # one emptied
        expected = data.copy()
        expected[3:37, 12:41] = -7
        expected[0:4, 0:5] = 0
        np.testing.assert_array_equal(a[...], expected)
        stored[group_bytes] = new = files(root)
        touched = np.zeros((10, 10), bool)                # inner chunks (4, 5) written
        touched[0:10, 2:9] = True
        touched[0, 0] = True
        for key, raw in new.items():
            if not key.startswith("c/"):
                continue
            i, j = map(int, key.split("/")[1:])
            before, after = inner_parts(old[key], 4), inner_parts(raw, 4)
            for n in range(4):
                ci, cj = 2 * i + n // 2, 2 * j + n % 2
                if not touched[ci, cj]:
                    assert after[n] == before[n], (key, n)
    assert stored[1] == stored[1 << 30]
