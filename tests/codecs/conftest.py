"""Shared fixtures for the codec tests: sample arrays and zstd frame surgery.

Test files do not import each other (pytest runs with --import-mode=importlib),
so helpers that several files need are fixtures here.
"""

from __future__ import annotations

import struct

import numpy as np
import pytest

DTYPES = ["uint8", "int16", "uint16", "int32", "float32", "float64", "complex128", "bool"]
SHAPES = [(0,), (1,), (7,), (1001,), (3, 5, 7), (64, 33)]


def sample_array(dtype: str, shape: tuple[int, ...], seed: int = 0) -> np.ndarray:
    """A deterministic array that compresses somewhat (a random walk plus noise)."""
    rng = np.random.default_rng(seed)
    n = int(np.prod(shape))
    if dtype == "bool":
        flat = rng.random(n) < 0.3
    elif dtype == "complex128":
        t = np.arange(n)
        flat = (np.cumsum(rng.integers(-3, 4, n)) + 1j * (t % 17)).astype(dtype)
    elif np.dtype(dtype).kind == "f":
        flat = (np.cumsum(rng.normal(size=n)) * 8).round(2).astype(dtype)
    else:
        info = np.iinfo(dtype)
        walk = np.cumsum(rng.integers(-3, 4, n)) + rng.integers(0, 3, n)
        flat = (walk % (int(info.max) + 1 - int(info.min)) + int(info.min)).astype(dtype)
    return flat.reshape(shape)


@pytest.fixture(scope="session")
def arrays() -> dict[tuple[str, tuple[int, ...]], np.ndarray]:
    """{(dtype, shape): array} for every dtype in DTYPES and shape in SHAPES."""
    return {(d, s): sample_array(d, s, seed=i)
            for i, (d, s) in enumerate((d, s) for d in DTYPES for s in SHAPES)}


@pytest.fixture
def numcodecs_single_threaded():
    """numcodecs' blosc, single-threaded: its threaded compressor orders blocks by
    completion, so only single-threaded output is reproducible byte for byte."""
    import numcodecs.blosc

    old = numcodecs.blosc.use_threads
    numcodecs.blosc.use_threads = False
    yield
    numcodecs.blosc.use_threads = old


def numcodecs_has_crc32c() -> bool:
    """numcodecs.CRC32C needs google-crc32c or crc32c installed."""
    try:
        from numcodecs import checksum32
    except ImportError:
        return False
    return getattr(checksum32, "crc32c_checksum", None) is not None


@pytest.fixture
def numcodecs_crc32c():
    """numcodecs.CRC32C(), or skip if numcodecs has no crc32c backend installed."""
    if not numcodecs_has_crc32c():
        pytest.skip("numcodecs has no crc32c backend (install google-crc32c or crc32c)")
    import numcodecs

    return numcodecs.CRC32C()


def _zstd_split(frame: bytes) -> tuple[int, bytes]:
    """(frame header descriptor, blocks + checksum) of a single zstd frame."""
    assert frame[:4] == b"\x28\xb5\x2f\xfd"
    fhd = frame[4]
    single, fcs_flag, did = (fhd >> 5) & 1, fhd >> 6, fhd & 3
    pos = 5 + (0 if single else 1) + (0, 1, 2, 4)[did]
    pos += (1 if single else 0, 2, 4, 8)[fcs_flag]
    return fhd, frame[pos:]


def zstd_with_content_size(frame: bytes, size: int | None) -> bytes:
    """``frame`` with its frame content size replaced by ``size`` (8-byte field, single
    segment), or removed when ``size`` is None (then with a 1 MiB window)."""
    fhd, body = _zstd_split(frame)
    checksum = fhd & 0x04
    if size is None:
        return frame[:4] + bytes([checksum, 0x50]) + body
    return frame[:4] + bytes([checksum | 0xE0]) + struct.pack("<Q", size) + body


@pytest.fixture(scope="session")
def zstd_content_size():
    """The ``zstd_with_content_size(frame, size)`` helper."""
    return zstd_with_content_size
