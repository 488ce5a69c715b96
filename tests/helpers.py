"""Helpers of the engine / array / group tests: stores of each kind, codec chains,
random data of any dtype.  A plain module: tests import it (``from helpers import
make_array``; pyproject.toml puts tests/ on sys.path for pytest)."""

from __future__ import annotations

import hashlib
import os
import sys
import threading
import uuid
import warnings

import numpy as np

import zarrc
from zarrc.stores import LocalStore, MemoryStore, ZipStore

STORE_KINDS = ["memory", "local", "zip"]


def netcdf_nczarr(path):
    """A netCDF4 Dataset writing NCZarr at ``path`` (netCDF-C's own writer), or the
    test skipped where netCDF4 or its NCZarr support is missing."""
    import pytest

    netCDF4 = pytest.importorskip("netCDF4")
    try:
        return netCDF4.Dataset(f"file://{path}#mode=nczarr,file", "w")
    except OSError as e:
        pytest.skip(f"this netCDF-C ({netCDF4.__netcdf4libversion__}) has no NCZarr: {e}")


def crc32c(data: bytes) -> int:
    """CRC-32C (Castagnoli), bit by bit: independent of zarrc's kernel."""
    crc = 0xFFFFFFFF
    for b in data:
        crc ^= b
        for _ in range(8):
            crc = (crc >> 1) ^ (0x82F63B78 & -(crc & 1))
    return crc ^ 0xFFFFFFFF

# why the tests that need zarr-python (the interop peer) skip where it is missing: the
# test extra installs it only on Python 3.11+, which zarr>=3.1 requires
NO_ZARR_PYTHON = (f"zarr-python is not installed (zarr>=3.1 needs Python 3.11+, this is "
                  f"{sys.version_info.major}.{sys.version_info.minor})")

# codec chains: name -> function(ndim) -> create_array keywords
CHAINS = {
    "bytes": lambda nd: dict(compressors=None),
    "blosc": lambda nd: dict(compressors=[{"name": "blosc", "configuration": {
        "cname": "lz4", "clevel": 5, "shuffle": "shuffle", "typesize": 4, "blocksize": 0}}]),
    "zstd+crc32c": lambda nd: dict(compressors=[
        {"name": "zstd", "configuration": {"level": 1, "checksum": False}}, {"name": "crc32c"}]),
    "transpose": lambda nd: dict(
        filters=[{"name": "transpose", "configuration": {"order": list(range(nd))[::-1]}}],
        compressors=[{"name": "zstd", "configuration": {"level": 0, "checksum": False}}]),
    "big-endian": lambda nd: dict(
        serializer={"name": "bytes", "configuration": {"endian": "big"}},
        compressors=[{"name": "gzip", "configuration": {"level": 1}}]),
}
DTYPES = ["int32", "float64", "complex128", "complex64", "uint8", "int16", "bool"]


def random_data(rng: np.random.Generator, shape, dtype) -> np.ndarray:
    """Random values of any dtype (complex: random real and imaginary parts), always
    an ndarray (0-d for shape ())."""
    return np.asarray(_random_values(rng, shape, np.dtype(dtype)), dtype=dtype)


def _random_values(rng: np.random.Generator, shape, dtype: np.dtype):
    if dtype.kind == "b":
        return rng.integers(0, 2, shape).astype(bool)
    if dtype.kind == "c":
        return (rng.standard_normal(shape) + 1j * rng.standard_normal(shape)).astype(dtype)
    if dtype.kind == "f":
        return rng.standard_normal(shape).astype(dtype)
    info = np.iinfo(dtype)
    return rng.integers(info.min, info.max, shape, dtype=dtype, endpoint=True)


class StoreMaker:
    """Opens stores of one kind, each at a fresh location under ``root``."""

    def __init__(self, kind: str, root: str) -> None:
        self.kind = kind
        self.root = root
        self.opened: list = []

    def new(self):
        """A new, empty, writable store."""
        where = os.path.join(self.root, uuid.uuid4().hex)
        if self.kind == "local":
            store = LocalStore(where + ".zarr", mode="w")
        elif self.kind == "zip":
            store = ZipStore(where + ".zip", mode="w")
        else:
            store = MemoryStore()
        self.opened.append(store)
        return store

    def reopen_read_only(self, store):
        """The same data through a read-only store (a zip file is closed first)."""
        if self.kind == "zip":
            store.close()
            store = ZipStore(store.path, mode="r")
            self.opened.append(store)
            return store
        if self.kind == "local":
            return LocalStore(store.root, mode="r")
        return MemoryStore(store.data, read_only=True)

    def close(self) -> None:
        for s in self.opened:
            with warnings.catch_warnings():
                warnings.simplefilter("ignore")
                s.close()


def write_each_kind(a, data: np.ndarray, rng: np.random.Generator, low: int, high: int) -> None:
    """One random write of each kind to ``a`` and alike to its numpy copy ``data``: a
    box, an orthogonal selection, points, a mask (values from ``low`` to ``high``)."""
    shape = data.shape
    lo = [int(rng.integers(0, n)) for n in shape]
    box = tuple(slice(x, int(rng.integers(x, n)) + 1) for x, n in zip(lo, shape))
    v = rng.integers(low, high, data[box].shape).astype(data.dtype)
    a[box] = v
    data[box] = v
    sel = tuple(np.sort(rng.choice(n, int(rng.integers(1, n + 1)), replace=False)) for n in shape)
    v = rng.integers(low, high, data[np.ix_(*sel)].shape).astype(data.dtype)
    a.oindex[sel] = v
    data[np.ix_(*sel)] = v
    pts = tuple(rng.integers(0, n, 25) for n in shape)
    a.vindex[pts] = 5
    data[pts] = 5
    mask = rng.random(shape) < 0.03
    a.vindex[mask] = 6
    data[mask] = 6


def partly_written(a, sel, points: bool = False) -> set:
    """The stored chunks (outermost shards) of ``a`` that a write of ``sel`` covers
    only in part (``engine.locked.stored_coords``), as a set of coordinate tuples."""
    from zarrc.core import indexing
    from zarrc.engine.locked import stored_coords
    arr = a._chunked
    plan = (indexing.plan_coordinate(sel, arr.shape, arr.chunks) if points else
            indexing.plan_orthogonal(sel, arr.shape, arr.chunks)[0])
    got = stored_coords(arr, plan, partial_only=True)
    return set() if got is None else {tuple(r) for r in got.tolist()}


def make_array(store, shape, chunks, dtype="int32", chain="bytes", **kwargs) -> zarrc.Array:
    return zarrc.create_array(store, shape=shape, chunks=chunks, dtype=dtype,
                              **CHAINS[chain](len(shape)), **kwargs)


def chunk_keys(store, prefix: str = "") -> list[str]:
    """The chunk keys in ``store`` (metadata documents left out), sorted."""
    return sorted(k for k in store.list_prefix(prefix) if not k.endswith("zarr.json"))


def snapshot(store) -> dict[str, bytes]:
    """Every key and its bytes."""
    return {k: bytes(store.get(k)) for k in store.list()}


def files(root) -> dict[str, bytes]:
    """Every file under ``root`` (hidden temporary files included) and its bytes."""
    out = {}
    for d, _, names in os.walk(root):
        for n in names:
            p = os.path.join(d, n)
            with open(p, "rb") as f:
                out[os.path.relpath(p, root).replace(os.sep, "/")] = f.read()
    return out


def tree_snapshot(path) -> dict[str, str]:
    """Every file under ``path`` (relative path -> sha256 or link target), to check nothing changed."""
    out = {}
    for dirpath, dirnames, filenames in os.walk(path):
        for name in dirnames + filenames:
            full = os.path.join(dirpath, name)
            rel = os.path.relpath(full, path)
            if os.path.islink(full):
                out[rel] = "link:" + os.readlink(full)
            elif os.path.isfile(full):
                with open(full, "rb") as f:
                    out[rel] = hashlib.sha256(f.read()).hexdigest()
            else:
                out[rel] = "dir"
    return out


def run_threads(n, target):
    """Run ``target(i)`` for i in range(n) on n threads released together by a
    barrier; raise if any of them raised."""
    barrier = threading.Barrier(n)
    errors = []

    def body(i):
        try:
            barrier.wait()
            target(i)
        except BaseException as exc:            # noqa: BLE001 - reported below
            errors.append(exc)

    threads = [threading.Thread(target=body, args=(i,)) for i in range(n)]
    for t in threads:
        t.start()
    for t in threads:
        t.join()
    assert not errors, errors
