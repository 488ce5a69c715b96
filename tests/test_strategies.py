"""Each array gets one engine strategy, chosen when it is opened: the native
BasicReader for plain chunk (or one level of shard) files, the point reader in
front of the native strategy for single elements of raw or blosc chunks on other
stores, the sharded strategy for sharded arrays, the Python strategy for codecs
only Python runs.  Each strategy reads and writes what numpy would."""

from __future__ import annotations

import ast
import os
from pathlib import Path

import numpy as np
import pytest

import zarrc
from zarrc.engine.basic import BasicStrategy
from zarrc.engine.native import NativeStrategy
from zarrc.engine.point import PointStrategy
from zarrc.engine.python import PythonStrategy
from zarrc.engine.sharding.strategy import ShardedStrategy
from zarrc.stores import LocalStore, MemoryStore, ZipStore

BLOSC = [{"name": "blosc", "configuration": {"cname": "lz4", "clevel": 5, "shuffle": "shuffle",
                                             "typesize": 4, "blocksize": 0}}]
ZSTD = [{"name": "zstd", "configuration": {"level": 1, "checksum": False}}]


def _store(kind, tmp_path):
    if kind == "local":
        return LocalStore(str(tmp_path / "a.zarr"), mode="w")
    if kind == "zip":
        return ZipStore(str(tmp_path / "a.zip"), mode="w")
    return MemoryStore()


# (store, create_array keywords) -> (strategy, the strategy behind it or None)
CASES = [
    ("local", {"compressors": ZSTD}, BasicStrategy, NativeStrategy),
    ("local", {"compressors": ZSTD, "shards": (8, 8)}, BasicStrategy, ShardedStrategy),
    ("memory", {"compressors": None}, PointStrategy, NativeStrategy),
    ("zip", {"compressors": BLOSC}, PointStrategy, NativeStrategy),
    ("memory", {"compressors": ZSTD}, NativeStrategy, None),
    ("memory", {"compressors": BLOSC, "shards": (8, 8)}, ShardedStrategy, None),
    ("zip", {"compressors": None, "shards": (8, 8)}, ShardedStrategy, None),
    ("local", {"dtype": "str"}, PythonStrategy, None),
    ("memory", {"zarr_format": 2, "compressor": {"id": "lzma"}}, PythonStrategy, None),
    ("local", {"zarr_format": 2, "compressor": None, "dimension_separator": "/"},
     BasicStrategy, NativeStrategy),
]


@pytest.mark.parametrize(("kind", "kwargs", "strategy", "behind"), CASES)
def test_each_array_gets_its_strategy(tmp_path, kind, kwargs, strategy, behind):
    if kwargs.get("compressor", {}) and kwargs["compressor"].get("id") == "lzma":
        pytest.importorskip("numcodecs")
    kwargs = {"dtype": "int32", **kwargs}
    a = zarrc.create_array(_store(kind, tmp_path), shape=(20, 12), chunks=(4, 4), **kwargs)
    assert type(a._engine) is strategy
    assert a._engine.arr is a._chunked
    if behind is None:
        assert not hasattr(a._engine, "fallback")
    else:
        assert type(a._engine.fallback) is behind
    if a.dtype.kind == "O":
        data = np.array([[f"s{i}-{j}" for j in range(12)] for i in range(20)], dtype=object)
        fill = ""
    else:
        data = np.arange(240, dtype=a.dtype).reshape(20, 12)
        fill = 0
    a[2:19, 1:11] = data[2:19, 1:11]
    expected = np.full((20, 12), fill, dtype=data.dtype)
    expected[2:19, 1:11] = data[2:19, 1:11]
    np.testing.assert_array_equal(a[...], expected)
    np.testing.assert_array_equal(a[3, 5], expected[3, 5])
    np.testing.assert_array_equal(a[5:17:3, 7], expected[5:17:3, 7])
    a.store.close()


def test_the_strategy_is_chosen_once():
    """The strategy belongs to the opened array and stays through reads and writes;
    reopened, the array gets a new one of the same kind."""
    store = MemoryStore()
    a = zarrc.create_array(store, shape=(10,), chunks=(5,), dtype="int32", compressors=None)
    chosen = a._engine
    a[...] = np.arange(10)
    assert a[3] == 3 and a[2:4].tolist() == [2, 3]
    assert a._engine is chosen
    b = zarrc.open_array(store, mode="r")
    assert type(b._engine) is PointStrategy and b._engine is not chosen


@pytest.mark.parametrize("compressor", [None, {"id": "blosc", "cname": "lz4", "clevel": 5, "shuffle": 1},
                                        {"id": "zstd", "level": 3}])
def test_a_v2_arrays_native_steps_are_found_once_per_open(monkeypatch, compressor):
    """Opening a v2 array asks the numcodecs translation for its native steps once
    (the chain and the single-element reader both use them)."""
    from zarrc.engine import prepare

    store = MemoryStore()
    zarrc.create_array(store, shape=(10,), chunks=(5,), dtype="int32", zarr_format=2,
                       compressors=compressor)[...] = np.arange(10)
    calls = []
    real = prepare.native_steps
    monkeypatch.setattr(prepare, "native_steps", lambda *a: calls.append(a) or real(*a))
    b = zarrc.open_array(store, mode="r")
    assert len(calls) == 1
    assert b[7] == 7 and b[:].tolist() == list(range(10))


@pytest.mark.parametrize("layout", [
    {"shape": (10, 7), "chunks": (4, 3)},
    {"shape": (10, 7), "chunks": (4, 3), "shards": (8, 6)},
    {"shape": (), "chunks": ()},
])
def test_the_engine_asks_the_store_its_file_layout_once(tmp_path, layout):
    """The engine reads and writes chunk (and shard) files where the store's
    declared layout (``file_prefix``) puts them, asked once when the array is
    opened; it never probes ``local_path``."""
    asked = []

    class Declaring(LocalStore):
        def file_prefix(self, prefix):
            asked.append(prefix)
            return super().file_prefix(prefix)

        def local_path(self, key):
            raise AssertionError(f"the engine probed local_path({key!r})")

    store = Declaring(str(tmp_path / "d.zarr"), mode="w")
    a = zarrc.create_array(store, dtype="int32", compressors=None, **layout)
    data = np.arange(int(np.prod(layout["shape"])), dtype="int32").reshape(layout["shape"]) + 5
    asked.clear()
    b = zarrc.open_array(store, mode="r+")
    assert asked == [""]
    b[...] = data
    np.testing.assert_array_equal(b[...], data)
    np.testing.assert_array_equal(a[...], data)
    if data.ndim:
        b[1:3, 2] = -1
        data[1:3, 2] = -1
        np.testing.assert_array_equal(b[...], data)
        assert b[2, 2] == -1
        assert os.path.exists(tmp_path / "d.zarr" / "c" / "0" / "0")
    else:
        assert os.path.exists(tmp_path / "d.zarr" / "c")
    assert asked == [""]


# the engine's modules, from the bottom up: each imports only modules before it
# ("sharding": the package, all its modules; they may import each other)
ENGINE_LAYERS = ["state", "batch", "locked", "strategy", "native", "python", "point", "sharding", "basic",
                 "rectilinear",
                 "prepare", "api"]


def test_engine_modules_import_only_downwards():
    """Primitives at the bottom, strategies above them, preparation and the public
    calls on top: no engine module imports one above it (no circles)."""
    root = Path(zarrc.__file__).parent / "engine"
    found = [p.stem for p in root.glob("*.py") if p.stem != "__init__"]
    found += [p.name for p in root.iterdir() if (p / "__init__.py").exists()]
    assert sorted(found) == sorted(ENGINE_LAYERS)
    for level, name in enumerate(ENGINE_LAYERS):
        files = sorted((root / name).glob("*.py")) if (root / name).is_dir() else [root / f"{name}.py"]
        tree = ast.Module(body=[n for f in files for n in ast.parse(f.read_text()).body], type_ignores=[])
        used = set()
        for node in ast.walk(tree):
            if isinstance(node, ast.ImportFrom) and node.module:
                if node.module == "zarrc.engine":
                    used.update(alias.name for alias in node.names)
                elif node.module.startswith("zarrc.engine."):
                    used.add(node.module.split(".")[2])
            elif isinstance(node, ast.Import):
                used.update(a.name.split(".")[2] for a in node.names if a.name.startswith("zarrc.engine."))
        above = used - set(ENGINE_LAYERS[:level]) - {name}
        assert not above, f"engine/{name}.py imports {sorted(above)}, not below it"
