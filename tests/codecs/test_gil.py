"""The codec kernels release the GIL: a Python thread keeps running while another
thread is inside a long encode, decode or checksum.

How it is measured, without timing ratios: the switch interval is made long, so
the GIL changes hands only when a thread gives it up (blocks, sleeps, or enters
code that releases it).  The main thread counts in a loop and sleeps briefly now
and then, so the worker can take the GIL back.  The worker reads the counter just
before and just after the native call.  If the call held the GIL, the counter
cannot move in between (the difference is 0, exactly); if it released it, the
counter advances by thousands.  test_harness_detects_a_call_that_holds_the_gil
shows the harness does tell the two apart.
"""

import sys
import threading
import time

import numpy as np
import pytest

from zarrc._kernels import crc32c as k
from zarrc.codecs import Blosc, Crc32c, Gzip, Zlib, Zstd

MIN_ADVANCE = 1000
SIZE = 64 << 20


def counter_advance(fn):
    """How far the main thread's counter moved while ``fn`` ran in another thread."""
    counter = [0]
    result = {}
    go = threading.Event()

    def worker():
        go.wait()
        try:
            before = counter[0]
            fn()
            result["advance"] = counter[0] - before
        except BaseException as exc:  # noqa: BLE001 - re-raised in the main thread
            result["error"] = exc

    old = sys.getswitchinterval()
    sys.setswitchinterval(5.0)
    try:
        t = threading.Thread(target=worker)
        t.start()
        go.set()
        while t.is_alive():
            counter[0] += 1
            if counter[0] % 256 == 0:
                time.sleep(1e-4)          # gives the GIL up: lets the worker run
        t.join()
    finally:
        sys.setswitchinterval(old)
    if "error" in result:
        raise result["error"]
    return result["advance"]


def assert_releases_gil(fn, attempts=3):
    advances = []
    for _ in range(attempts):            # a loaded machine may not run the counter at once
        advances.append(counter_advance(fn))
        if advances[-1] >= MIN_ADVANCE:
            return
    pytest.fail(f"counter advanced only {advances} while the native call ran")


@pytest.fixture(scope="module")
def data():
    # a random walk: compressible, but not so easily that the calls are over at once
    steps = np.random.default_rng(0).integers(-8, 9, SIZE // 4, dtype=np.int32)
    return np.cumsum(steps, dtype=np.int32)


def test_harness_detects_a_call_that_holds_the_gil():
    blob = bytes(SIZE)
    assert counter_advance(lambda: blob.count(b"\x01")) == 0      # bytes.count keeps the GIL


def test_harness_sees_a_call_that_releases_it():
    assert_releases_gil(lambda: time.sleep(0.05))


@pytest.mark.parametrize("codec", [Blosc("lz4", 5, "shuffle"), Blosc("blosclz", 5, "bitshuffle")], ids=repr)
def test_blosc(codec, data):
    enc = codec.encode(data)
    assert_releases_gil(lambda: codec.encode(data))
    assert_releases_gil(lambda: codec.decode(enc))
    out = np.empty_like(data)
    assert_releases_gil(lambda: codec.decode(enc, out=out))
    assert_releases_gil(lambda: codec.decode_range(enc, 4 << 20, out.view(np.uint8)[: 48 << 20]))


def test_zstd(data):
    codec = Zstd(1)
    part = data[: SIZE // 16]                  # zstd is slower than lz4: 16 MiB
    enc = codec.encode(part)
    assert_releases_gil(lambda: codec.encode(part))
    assert_releases_gil(lambda: codec.decode(enc))
    out = np.empty_like(part)
    assert_releases_gil(lambda: codec.decode(enc, out=out))


@pytest.mark.parametrize("codec", [Gzip(1), Zlib(1)], ids=repr)
def test_gzip_zlib(codec, data):
    part = data[: SIZE // 64]                  # deflate is slower still: 4 MiB
    enc = codec.encode(part)
    assert_releases_gil(lambda: codec.encode(part))
    assert_releases_gil(lambda: codec.decode(enc))
    out = np.empty_like(part)
    assert_releases_gil(lambda: codec.decode(enc, out=out))


def test_crc32c():
    blob = np.zeros(4 * SIZE, np.uint8)        # zero pages: no memory is touched twice
    assert_releases_gil(lambda: k.crc32c(blob))
    assert_releases_gil(lambda: k.crc32c_software(blob[:SIZE]))
    enc = Crc32c().encode(blob[:SIZE])
    assert_releases_gil(lambda: Crc32c().decode(enc))


def test_packbits_kernel():
    from zarrc._kernels import bits
    src = np.random.default_rng(1).integers(0, 16, SIZE // 2, dtype=np.uint8)
    packed = np.empty(bits.packed_size(src.size, 0, 3), np.uint8)
    assert_releases_gil(lambda: bits.pack(src, 1, 0, 3, 4, packed))
    out = np.empty_like(src)
    assert_releases_gil(lambda: bits.unpack(packed, 1, 0, 3, 4, True, out))


def test_value_kernels(data):
    from zarrc._kernels import values as v
    src = data.view(np.uint8)
    dst = np.empty(data.size, np.float32).view(np.uint8)
    codes = v.TYPE_CODES
    # int32 -> float32 rounded towards zero: the exact long double path, the slowest
    cast = v.Cast(codes["i4"], codes["f4"], v.ROUNDING["towards-zero"], 0, [])
    assert_releases_gil(lambda: cast.run(src, dst, data.size))
    fast = v.Cast(codes["f4"], codes["i4"], 0, 1, [])
    out = np.empty_like(src)
    assert_releases_gil(lambda: fast.run(dst, out, data.size))
    so = v.ScaleOffset(codes["f4"], 270.0, 0.01)
    assert_releases_gil(lambda: so.run(False, dst, dst, data.size))
    assert_releases_gil(lambda: v.bitround(dst, 4, 23, 7))
