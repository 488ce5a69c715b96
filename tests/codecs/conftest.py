"""Shared fixtures for the codec tests: sample arrays, numcodecs settings.  Plain
helpers (zstd frame surgery) live in tests/zstd_frames.py, imported as a module."""

from __future__ import annotations

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
