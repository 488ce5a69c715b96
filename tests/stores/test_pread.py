"""zarrc.stores.base.pread: os.pread where it exists, and the fallback Windows
uses (seek and read under a per-descriptor lock), forced here on Linux by turning
off the switch and removing os.pread, so a direct os.pread call left anywhere on
these paths fails."""

from __future__ import annotations

import os

import numpy as np
import pytest

from zarrc.stores import LocalStore, ZipStore, base
from zarrc.stores.base import FileSnapshot, read_exactly

from helpers import run_threads

DATA = np.random.default_rng(5).integers(0, 256, 1 << 20, dtype=np.uint8).tobytes()


@pytest.fixture(params=["os.pread", "fallback"])
def mode(request, monkeypatch):
    if request.param == "fallback":
        monkeypatch.setattr(base, "HAVE_PREAD", False)
        monkeypatch.delattr(os, "pread", raising=False)
    return request.param


@pytest.fixture
def fd(tmp_path):
    path = tmp_path / "data.bin"
    path.write_bytes(DATA)
    fd = os.open(path, os.O_RDONLY | getattr(os, "O_BINARY", 0))
    yield fd
    os.close(fd)


@pytest.mark.parametrize("size, offset", [(0, 0), (1, 0), (100, 12345), (4096, len(DATA) - 4096),
                                          (100, len(DATA) - 10), (10, len(DATA)), (5, len(DATA) + 7)])
def test_reads_the_bytes_at_the_offset(fd, mode, size, offset):
    assert base.pread(fd, size, offset) == DATA[offset:offset + size]
    assert read_exactly(fd, size, offset) == DATA[offset:offset + size]


def test_the_switch_is_the_os_capability(mode):
    assert base.HAVE_PREAD is (mode == "os.pread")
    assert hasattr(os, "pread") is (mode == "os.pread")


def test_concurrent_reads_of_one_descriptor(fd, mode):
    """Many threads read one descriptor at different offsets at once: each read sees
    the bytes at its own offset (without the lock, one thread's seek lands between
    another's seek and read)."""
    nthreads, reads = 8, 400

    def work(i):
        rng = np.random.default_rng(i)
        for _ in range(reads):
            offset = int(rng.integers(0, len(DATA)))
            size = int(rng.integers(1, 3000))
            got = base.pread(fd, size, offset)
            assert got == DATA[offset:offset + size], (i, offset, size)

    run_threads(nthreads, work)


def test_local_store_ranges_and_snapshots(tmp_path, mode):
    store = LocalStore(str(tmp_path / "s"), mode="w")
    store.set("a/b", DATA)
    assert store.get_range("a/b", 1000, 24) == DATA[1000:1024]
    assert store.get_ranges("a/b", [(0, 3), (-5, None), (len(DATA) - 2, 10)]) == [
        DATA[:3], DATA[-5:], DATA[-2:]]
    snap = store.snapshot("a/b")
    assert isinstance(snap, FileSnapshot)
    try:
        def work(i):
            for k in range(200):
                start = (7919 * (i * 200 + k)) % (len(DATA) - 512)
                assert snap.read(start, 512) == DATA[start:start + 512]

        run_threads(6, work)
    finally:
        snap.close()


def test_zip_store_shares_one_descriptor_between_threads(tmp_path, mode):
    path = str(tmp_path / "data.zip")
    with ZipStore(path, mode="w") as store:
        for k in range(4):
            store.set(f"k{k}", DATA[k * 1000:])
    with ZipStore(path) as store:
        def work(i):
            for k in range(150):
                key = f"k{(i + k) % 4}"
                value = DATA[((i + k) % 4) * 1000:]
                start = (104729 * (i * 150 + k)) % (len(value) - 300)
                assert store.get_range(key, start, 300) == value[start:start + 300]
                if k % 50 == 0:
                    assert store.get(key) == value

        run_threads(6, work)
