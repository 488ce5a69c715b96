"""Partial shard writes on shard files (engine.sharding.writes): only the index and
the inner chunks written in part are read; the untouched inner chunks are copied
file to file into the new shard's temporary file (chunk_files.stage_spliced),
byte for byte; memory holds the touched inner chunks, never the shard.  The
result is read back by zarr-python and tensorstore."""

from __future__ import annotations

import os
import subprocess
import sys
import textwrap
from pathlib import Path

import numpy as np
import pytest

import zarrc

EMPTY = 2**64 - 1
LE = {"name": "bytes", "configuration": {"endian": "little"}}
CRC = {"name": "crc32c"}
ZSTD = {"name": "zstd", "configuration": {"level": 1, "checksum": False}}


def sharding(location: str, crc: bool) -> dict:
    return {"name": "sharding_indexed", "configuration": {
        "chunk_shape": [4, 4], "codecs": [LE, ZSTD],
        "index_codecs": [LE, CRC] if crc else [LE], "index_location": location}}


def shard_index(raw: bytes, nchunks: int, location: str, crc: bool) -> np.ndarray:
    """The (offset, nbytes) table of a stored shard, read by hand."""
    n = 16 * nchunks + (4 if crc else 0)
    part = raw[:n] if location == "start" else raw[len(raw) - n:]
    return np.frombuffer(part, "<u8", count=2 * nchunks).reshape(nchunks, 2)


def run(script: str) -> str:
    """Run ``script`` in a fresh interpreter (its own peak memory, its own limits)."""
    done = subprocess.run([sys.executable, "-c", textwrap.dedent(script)], check=False, capture_output=True,
                          text=True, timeout=300)
    assert done.returncode == 0, done.stderr
    return done.stdout


@pytest.mark.skipif(not os.path.exists("/proc/self/clear_refs"), reason="needs Linux's VmHWM reset")
def test_updating_one_inner_chunk_of_a_64_MiB_shard_holds_no_shard_in_memory(tmp_path) -> None:
    """Peak memory (VmHWM, reset just before the write) grows by far less than the
    shard: one 256 KiB inner chunk of a 64 MiB shard of random, incompressible data
    (zstd) rewritten.  (Reading the whole shard, as before, grew it by ~64 MiB.)"""
    out = run(f"""
        import os
        import numpy as np
        import zarrc

        def hwm():
            for line in open("/proc/self/status"):
                if line.startswith("VmHWM"):
                    return int(line.split()[1]) << 10

        path = {str(tmp_path / "big.zarr")!r}
        a = zarrc.create_array(path, shape=(4096, 4096), dtype="uint32", chunks=(256, 256),
                               shards=(4096, 4096), compressors=zarrc.codecs.ZstdCodec(level=1))
        data = np.random.default_rng(0).integers(0, 2**32, (4096, 4096), dtype=np.uint32)
        a[...] = data
        size = os.path.getsize(os.path.join(path, "c", "0", "0"))
        a = zarrc.open_array(path, mode="r+")
        a[0, 0]
        with open("/proc/self/clear_refs", "w") as f:
            f.write("5")
        before = hwm()
        a[256:512, 512:768] = 7
        data[256:512, 512:768] = 7
        growth = hwm() - before
        assert np.array_equal(zarrc.open_array(path, mode="r")[...], data)
        print(size, growth)
    """)
    size, growth = map(int, out.split())
    assert size >= 64 << 20
    assert growth < 16 << 20, f"peak memory grew by {growth >> 20} MiB updating a {size >> 20} MiB shard"


@pytest.mark.parametrize("crc", [True, False], ids=["crc32c", "bytes"])
@pytest.mark.parametrize("location", ["start", "end"])
def test_partial_updates_keep_untouched_inner_chunks_byte_for_byte(tmp_path, location, crc) -> None:
    """Inner chunks written in part, wholly, emptied (all fill value: dropped from the
    index) and untouched: zarr-python and tensorstore read the new shard as numpy
    expects; the untouched inner chunks' bytes are the old ones; the index sits at
    ``index_location`` and its checksum holds."""
    zarr = pytest.importorskip("zarr")
    ts = pytest.importorskip("tensorstore")
    path = str(tmp_path / "a.zarr")
    a = zarrc.create_array(path, shape=(16, 16), dtype="int32", chunks=(16, 16), fill_value=0,
                           serializer=sharding(location, crc), compressors=None)
    expected = np.arange(256, dtype=np.int32).reshape(16, 16) + 1
    a[...] = expected
    shard = os.path.join(path, "c", "0", "0")
    old = Path(shard).read_bytes()
    old_table = shard_index(old, 16, location, crc)
    a[1:3, 5:7] = -1            # inner chunk (0, 1) in part
    a[8:12, 0:4] = -2           # (2, 0) wholly
    a[12:16, 12:16] = 0         # (3, 3) emptied: all fill value
    expected[1:3, 5:7] = -1
    expected[8:12, 0:4] = -2
    expected[12:16, 12:16] = 0
    new = Path(shard).read_bytes()
    table = shard_index(new, 16, location, crc)
    if crc:
        index = new[:16 * 16 + 4] if location == "start" else new[-(16 * 16 + 4):]
        assert int.from_bytes(index[-4:], "little") == zarrc._kernels.crc32c.crc32c(index[:-4])
    assert tuple(table[15]) == (EMPTY, EMPTY)
    for i in set(range(15)) - {1, 8}:                     # untouched: the same bytes
        (o0, n0), (o1, n1) = old_table[i], table[i]
        assert old[int(o0):int(o0 + n0)] == new[int(o1):int(o1 + n1)], i
    data_start = 16 * 16 + (4 if crc else 0) if location == "start" else 0
    assert int(table[table[:, 0] != EMPTY, 0].min()) == data_start
    np.testing.assert_array_equal(zarr.open_array(path, mode="r")[...], expected)
    spec = {"driver": "zarr3", "kvstore": {"driver": "file", "path": path}}
    np.testing.assert_array_equal(ts.open(spec, read=True).result().read().result(), expected)
    np.testing.assert_array_equal(a[...], expected)


def test_first_partial_write_into_a_missing_shard(tmp_path) -> None:
    """A partial write where no shard is stored yet writes one holding only the inner
    chunks written; zarr-python reads it."""
    zarr = pytest.importorskip("zarr")
    path = str(tmp_path / "m.zarr")
    a = zarrc.create_array(path, shape=(16, 16), dtype="int32", chunks=(4, 4), shards=(8, 8), fill_value=3)
    a[9:11, 1:6] = 5
    expected = np.full((16, 16), 3, np.int32)
    expected[9:11, 1:6] = 5
    assert sorted(os.listdir(os.path.join(path, "c"))) == ["1"]
    np.testing.assert_array_equal(zarr.open_array(path, mode="r")[...], expected)
    np.testing.assert_array_equal(a[...], expected)


@pytest.mark.skipif(sys.platform == "win32", reason="RLIMIT_FSIZE is POSIX")
def test_a_write_failing_mid_copy_leaves_the_old_shard(tmp_path) -> None:
    """A partial write whose copy of the untouched inner chunks fails part way (the
    file size limit: EFBIG) raises StoreError, leaves the old shard as it was and no
    temporary file."""
    out = run(f"""
        import os, resource, signal
        import numpy as np
        import zarrc
        from zarrc.errors import StoreError

        path = {str(tmp_path / "f.zarr")!r}
        a = zarrc.create_array(path, shape=(512, 512), dtype="uint32", chunks=(64, 64),
                               shards=(512, 512), compressors=None)
        data = np.random.default_rng(1).integers(0, 2**32, (512, 512), dtype=np.uint32)
        a[...] = data
        shard = os.path.join(path, "c", "0", "0")
        old = open(shard, "rb").read()
        signal.signal(signal.SIGXFSZ, signal.SIG_IGN)
        resource.setrlimit(resource.RLIMIT_FSIZE, (len(old) // 2, resource.RLIM_INFINITY))
        try:
            a[0:10, 0:10] = 9
        except StoreError as exc:
            print("StoreError", exc)
        else:
            raise AssertionError("no error")
        resource.setrlimit(resource.RLIMIT_FSIZE, (resource.RLIM_INFINITY, resource.RLIM_INFINITY))
        assert open(shard, "rb").read() == old
        assert os.listdir(os.path.dirname(shard)) == ["0"], os.listdir(os.path.dirname(shard))
        assert np.array_equal(a[...], data)
    """)
    assert out.startswith("StoreError")
