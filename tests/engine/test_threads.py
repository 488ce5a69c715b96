"""Many Python threads on one array: concurrent reads and writes are correct, and
the native workers release the GIL (proved with a FIFO, not with timings)."""

from __future__ import annotations

import os
import subprocess
import sys
import textwrap
import threading
import time

import numpy as np
import pytest

import zarrc
import zarrc.runtime.threads
from zarrc.runtime.threads import count_calls

from helpers import make_array, random_data, run_threads


@pytest.mark.parametrize("threads", [None, 8])
def test_concurrent_random_reads(rw_store_maker, threads, monkeypatch):
    # a fresh pool, so that it grows while calls are in flight (calls of different sizes)
    monkeypatch.setattr(zarrc.runtime.threads, "_pool", None)
    monkeypatch.setattr(zarrc.runtime.threads, "_pool_size", 0)
    rng = np.random.default_rng(11)
    data = random_data(rng, (60, 50, 4), "float64")
    arr = make_array(rw_store_maker.new(), data.shape, (7, 6, 4), "float64", "zstd+crc32c")
    arr[...] = data

    def reader(i):
        r = np.random.default_rng(100 + i)
        for _ in range(60):
            lo = r.integers(0, 60), r.integers(0, 50)
            hi = r.integers(lo[0], 61), r.integers(lo[1], 51)
            step = int(r.integers(1, 4))
            sel = (slice(lo[0], hi[0], step), slice(lo[1], hi[1]), int(r.integers(-4, 4)))
            np.testing.assert_array_equal(arr[sel], data[sel])

    with zarrc.config.set(threads=threads) if threads else zarrc.config.set():
        run_threads(8, reader)


@pytest.mark.parametrize("threads", [None, 8])
def test_concurrent_disjoint_writes(rw_store_maker, threads):
    rng = np.random.default_rng(12)
    data = random_data(rng, (64, 40), "int32")
    arr = make_array(rw_store_maker.new(), data.shape, (4, 5), "int32", "blosc")

    def writer(i):                              # rows 16*i .. 16*i+15, chunk-aligned, in pieces
        for r in range(16 * i, 16 * i + 16, 4):
            arr[r:r + 4, :] = data[r:r + 4, :]
            arr[r:r + 4, 5:35] = data[r:r + 4, 5:35]   # chunk-aligned rewrites of the same rows

    with zarrc.config.set(threads=threads) if threads else zarrc.config.set():
        run_threads(4, writer)
    np.testing.assert_array_equal(arr[...], data)
    assert arr.nchunks_initialized == arr.nchunks


def test_readers_never_see_a_torn_chunk(rw_store_maker):
    """While one thread rewrites every chunk again and again, readers of single
    chunks see the old or the new chunk, never a mix (temporary file + rename)."""
    arr = make_array(rw_store_maker.new(), (8, 2048), (1, 2048), "int64", "bytes")
    arr[...] = 1
    done = threading.Event()

    def body(i):
        if i == 0:
            for k in range(2, 40):
                arr[...] = k
            done.set()
            return
        r = np.random.default_rng(i)
        while not done.is_set():
            row = arr[int(r.integers(0, 8))]
            assert (row == row[0]).all(), np.unique(row)

    run_threads(4, body)
    np.testing.assert_array_equal(arr[...], 39)


# ------------------------------------------------------------------ the GIL

GIL_SCRIPT = textwrap.dedent("""
    import errno, os, sys, threading
    import numpy as np
    import zarrc

    zarrc.config.set(threads=1)                   # one native call does every chunk in turn
    root, op = sys.argv[1], sys.argv[2]
    arr = zarrc.create_array(root, shape=(32, 256, 256), chunks=(1, 256, 256), dtype="float64",
                             compressors=None)
    arr[:31] = 1.0                                # 31 real chunks of 512 KiB before the FIFO
    fifo = arr.store.local_path("c/31/0/0")
    os.makedirs(os.path.dirname(fifo), exist_ok=True)
    os.mkfifo(fifo)
    result = {}

    def work():
        try:
            if op == "read":
                arr[...]
            else:
                arr[:, :, 5] = 2.0                # partial chunks: reads every old chunk
        except Exception as exc:
            result["error"] = exc

    worker = threading.Thread(target=work)
    worker.start()
    # The worker blocks in the native open() of the FIFO until a writer opens it.
    # This thread can only open it for writing (non-blocking: ENXIO until a reader
    # has it open) if it runs Python code while the worker is inside the native
    # call: if that call held the GIL, this loop would never run again.
    counter = 0
    while True:
        counter += 1
        try:
            fd = os.open(fifo, os.O_WRONLY | os.O_NONBLOCK)
            break
        except OSError as exc:
            assert exc.errno == errno.ENXIO, exc
    os.close(fd)                                  # the worker reads 0 bytes: a CodecError
    worker.join()
    print("counter", counter, "error", type(result.get("error")).__name__, result.get("error"))
""")


@pytest.mark.skipif(not hasattr(os, "mkfifo"), reason="needs FIFOs")
@pytest.mark.parametrize("op", ["read", "write"])
def test_native_reads_and_writes_release_the_gil(tmp_path, op):
    """A Python thread keeps running while another is inside a native read/write:
    the worker blocks in the kernel's open() of a FIFO chunk, and only a thread
    that runs Python code meanwhile can unblock it.  Run in a subprocess so that a
    regression (the GIL held) fails by timeout instead of hanging the test run."""
    script = tmp_path / "gil.py"
    script.write_text(GIL_SCRIPT)
    proc = subprocess.run([sys.executable, str(script), str(tmp_path / "g.zarr"), op],
                          capture_output=True, text=True, timeout=120)
    assert proc.returncode == 0, proc.stderr
    words = proc.stdout.split()
    assert words[0] == "counter" and int(words[1]) >= 1
    # the FIFO yields no bytes: the engine reports the chunk, and stores nothing
    assert words[3] == "CodecError" and "chunk c/31/0/0" in proc.stdout, proc.stdout
    if op == "write":
        arr = zarrc.open_array(tmp_path / "g.zarr", mode="r")
        np.testing.assert_array_equal(arr[:31, :, 5], 1.0)


def test_thread_pool_grows_safely_under_concurrent_calls(monkeypatch):
    """Calls of different sizes from many threads make the shared pool grow while
    other calls are submitting to it; none of them may fail."""
    arr = make_array({}, (64, 8), (4, 4), "int32", "bytes")
    data = np.arange(512, dtype="int32").reshape(64, 8)
    arr[...] = data

    def reader(i):
        r = np.random.default_rng(i)
        for _ in range(40):
            n = int(r.integers(1, 65))
            np.testing.assert_array_equal(arr[:n, :4], data[:n, :4])

    with zarrc.config.set(threads=16):
        for _ in range(8):
            monkeypatch.setattr(zarrc.runtime.threads, "_pool", None)
            monkeypatch.setattr(zarrc.runtime.threads, "_pool_size", 0)
            run_threads(8, reader)


def test_threads_per_call_follow_the_work_and_the_other_calls(monkeypatch):
    """A batch hands work to pool threads only when there is PARALLEL_MIN_BYTES of
    it per extra thread, and only as many as the calls already in progress leave;
    a call squeezed by others is open to pool threads they free (shared)."""
    from zarrc.engine import batch

    used = []
    shared = []
    real = zarrc.runtime.threads.run_parallel

    def spy(fn, n, share=False):
        used.append(n)
        shared.append(share)
        real(fn, n, share)

    monkeypatch.setattr(batch, "run_parallel", spy)
    data = np.arange(512 * 512, dtype="float64").reshape(512, 512)
    raw = make_array({}, (512, 512), (64, 64), "float64", "bytes")       # 32 KiB chunks
    packed = make_array({}, (512, 512), (64, 64), "float64", "blosc")
    with zarrc.config.set(threads=4):
        raw[...] = data                      # 64 chunks x 32 KiB = 2 MiB: 4 threads
        packed[...] = data
        assert used == [4, 4]
        used.clear()
        np.testing.assert_array_equal(raw[:100, :3], data[:100, :3])     # 2 chunks, 2.4 KiB
        np.testing.assert_array_equal(packed[:100, :3], data[:100, :3])  # 2 chunks, 64 KiB
        np.testing.assert_array_equal(packed[:, :64], data[:, :64])      # 8 chunks, 256 KiB
        np.testing.assert_array_equal(packed[:, :128], data[:, :128])    # 16 chunks, 512 KiB
        np.testing.assert_array_equal(raw[...], data)
        assert used == [1, 1, 1, 1, 4]
        used.clear()
        count_calls(2)                                                   # two other calls
        try:
            np.testing.assert_array_equal(raw[...], data)
            count_calls(3)                                               # five
            try:
                np.testing.assert_array_equal(packed[...], data)
            finally:
                count_calls(-3)
        finally:
            count_calls(-2)
        assert used == [2, 1]
        assert shared == [True] * 2 + [False] * 4 + [True] * 3
    monkeypatch.undo()
    assert count_calls(0) == 0


def test_calls_in_progress_are_counted_and_released_on_errors():
    arr = make_array({}, (8,), (4,), "int32", "bytes")
    seen = []
    with pytest.raises(ValueError):
        arr[:] = np.zeros(3)                  # fails before the engine starts
    assert count_calls(0) == 0
    arr.store.set("c/0", b"short")           # a chunk of the wrong size
    with pytest.raises(zarrc.errors.CodecError):
        arr[:]
    assert count_calls(0) == 0

    def look(i):
        seen.append(count_calls(0))
    zarrc.runtime.threads.counted_call(run_threads)(1, look)
    assert seen == [1] and count_calls(0) == 0


def test_pool_thread_freed_by_one_call_helps_another(monkeypatch):
    # call B started alone (1 worker, shareable; before any pool exists); call A's
    # pool thread, once A has nothing left, takes B's items: B is worked on by two
    monkeypatch.setattr(zarrc.runtime.threads, "_pool", None)
    monkeypatch.setattr(zarrc.runtime.threads, "_pool_size", 0)
    items = list(range(20))
    lock = threading.Lock()
    seen = set()
    b_started = threading.Event()

    def work_b():
        while True:
            with lock:
                if not items:
                    return
                items.pop()
            seen.add(threading.get_ident())
            b_started.set()
            time.sleep(0.01)

    b = threading.Thread(target=zarrc.runtime.threads.run_parallel, args=(work_b, 1, True))
    b.start()
    assert b_started.wait(timeout=30), "call B did not start"
    zarrc.runtime.threads.run_parallel(lambda: None, 2)
    b.join()
    assert len(seen) == 2
    assert not zarrc.runtime.threads._active


def test_batch_threads_follow_the_work(monkeypatch):
    """The thread policy: a batch gets one thread per PARALLEL_MIN_BYTES of work
    beyond the caller, at most one per task and config.threads in all; shareable
    once it could use more than one."""
    monkeypatch.setattr(zarrc.runtime.threads, "count_calls", lambda delta: 1)     # this call alone
    mib = zarrc.runtime.threads.PARALLEL_MIN_BYTES
    with zarrc.config.set(threads=4):
        assert zarrc.runtime.threads.batch_threads(10, mib - 1) == (1, False)        # small: the caller
        assert zarrc.runtime.threads.batch_threads(10, 2 * mib) == (2, True)
        assert zarrc.runtime.threads.batch_threads(10, 100 * mib) == (4, True)       # config.threads
        assert zarrc.runtime.threads.batch_threads(3, 100 * mib) == (3, True)        # one per task
        assert zarrc.runtime.threads.batch_threads(1, 100 * mib) == (1, False)
    with zarrc.config.set(threads=1):
        assert zarrc.runtime.threads.batch_threads(10, 100 * mib) == (1, False)


def test_batch_threads_leave_cores_to_calls_in_progress(monkeypatch):
    """With other calls in progress a batch takes only the threads they leave (at
    least the caller), and stays shareable so that threads they free can join."""
    mib = zarrc.runtime.threads.PARALLEL_MIN_BYTES
    with zarrc.config.set(threads=4):
        for in_progress, spare in [(1, 4), (2, 3), (4, 1), (9, 1)]:
            monkeypatch.setattr(zarrc.runtime.threads, "count_calls", lambda delta, n=in_progress: n)
            assert zarrc.runtime.threads.spare_threads(4) == spare
            assert zarrc.runtime.threads.batch_threads(10, 100 * mib) == (spare, True)


def test_item_and_codec_threads():
    with zarrc.config.set(threads=3, split_bytes=1000):
        assert [zarrc.runtime.threads.item_threads(n) for n in (0, 1, 2, 3, 50)] == [0, 1, 2, 3, 3]
        assert zarrc.runtime.threads.codec_threads(999) == 1
        assert zarrc.runtime.threads.codec_threads(1000) == 3            # main thread, large buffer
        seen = []
        worker = threading.Thread(target=lambda: seen.append(zarrc.runtime.threads.codec_threads(10**9)))
        worker.start()
        worker.join()
        assert seen == [1]                                        # other threads: one
    assert not hasattr(zarrc.config, "codec_threads")
