"""zarrc.config: each setting's default, changing it (as a context manager that
restores the old value, or for good), the errors of bad settings (zarrc's
ArgumentError, also a ValueError, and nothing changed), the settings handed to the
kernels, and the repr.  How the engine uses ``threads`` is tested with the thread
policy (tests/engine)."""

from __future__ import annotations

import os
import pickle

import pytest

import zarrc
from zarrc._kernels import slabs
from zarrc.runtime.config import Config, config
from zarrc.runtime.cores import process_cores
from zarrc.errors import ArgumentError, ZarrcError

SETTINGS = ["threads", "split_bytes", "pool_bytes"]


def values() -> dict[str, int]:
    return {name: config.get(name) for name in SETTINGS}


def test_the_package_exports_the_config_in_use():
    assert zarrc.config is config


def test_pickles_as_the_config_in_use():
    # a reference, not a copy: a bound method (dask's client.run(zarrc.config.set, ...)
    # in a worker process) acts on the unpickling process's settings
    assert pickle.loads(pickle.dumps(config)) is config
    set_threads = pickle.loads(pickle.dumps(config.set))
    old = config.threads
    with set_threads(threads=old + 1):
        assert config.threads == old + 1
    assert config.threads == old


def test_defaults(monkeypatch):
    monkeypatch.delenv("ZARRC_NUM_THREADS", raising=False)
    fresh = Config()
    assert fresh.threads == process_cores()        # (the cores this process may use)
    if hasattr(os, "sched_getaffinity"):
        assert process_cores() == len(os.sched_getaffinity(0))
    assert fresh.split_bytes == 2 << 20
    assert fresh.pool_bytes == 1 << 30
    assert fresh.vlen_chunk_bytes == 1 << 30


@pytest.mark.parametrize("raw, threads", [("3", 3), ("1", 1), ("", process_cores())])
def test_threads_default_from_the_environment(monkeypatch, raw, threads):
    monkeypatch.setenv("ZARRC_NUM_THREADS", raw)
    assert Config().threads == threads


@pytest.mark.parametrize("raw, mode", [("lockfile", "lockfile"), ("none", "none"), ("os", "os"), ("", "os")])
def test_write_locking_default_from_the_environment(monkeypatch, raw, mode):
    monkeypatch.setenv("ZARRC_WRITE_LOCKING", raw)
    assert Config().write_locking == mode


def test_bad_write_locking_in_the_environment(monkeypatch):
    monkeypatch.setenv("ZARRC_WRITE_LOCKING", "flock")
    with pytest.raises(ArgumentError, match="ZARRC_WRITE_LOCKING.*'flock'"):
        Config()


@pytest.mark.parametrize("raw", ["0", "-2", "four", "2.5"])
def test_bad_threads_in_the_environment(monkeypatch, raw):
    monkeypatch.setenv("ZARRC_NUM_THREADS", raw)
    with pytest.raises(ArgumentError, match="ZARRC_NUM_THREADS must be a positive integer") as info:
        Config()
    assert isinstance(info.value, ValueError) and repr(raw) in str(info.value)


@pytest.mark.parametrize("name, value", [("threads", 3), ("split_bytes", 4096), ("pool_bytes", 0),
                                         ("pool_bytes", 12345)])
def test_set_as_a_context_manager_restores_the_old_value(name, value):
    before = values()
    with config.set(**{name: value}) as c:
        assert c is config
        assert config.get(name) == value == getattr(config, name)
        assert {k: v for k, v in values().items() if k != name} == {k: v for k, v in before.items()
                                                                      if k != name}
    assert values() == before


def test_restored_when_the_block_raises_and_when_nested():
    before = values()
    with pytest.raises(RuntimeError):
        with config.set(threads=2, split_bytes=100):
            with config.set(threads=5):
                assert (config.threads, config.split_bytes) == (5, 100)
            assert (config.threads, config.split_bytes) == (2, 100)
            raise RuntimeError
    assert values() == before


def test_set_without_with_keeps_the_value():
    before = config.split_bytes
    restore = config.set(split_bytes=before + 1)
    try:
        assert config.split_bytes == before + 1
        assert Config().split_bytes == 2 << 20          # a new Config starts from the defaults
    finally:
        with restore:
            pass
    assert config.split_bytes == before


def test_pool_bytes_is_handed_to_the_kernels():
    before = slabs.pool_limit()
    assert before == config.pool_bytes
    with config.set(pool_bytes=3 << 20):
        assert slabs.pool_limit() == 3 << 20
    assert slabs.pool_limit() == before


@pytest.mark.parametrize("settings, message", [
    ({"thread": 2}, "no setting 'thread'"),
    ({"threads": 0}, "threads must be a positive integer, got 0"),
    ({"threads": -1}, "positive integer"),
    ({"threads": 2.0}, "positive integer, got 2.0"),
    ({"threads": "2"}, "positive integer, got '2'"),
    ({"threads": True}, "positive integer, got True"),
    ({"threads": None}, "positive integer, got None"),
    ({"split_bytes": 0}, "split_bytes must be a positive integer"),
    ({"vlen_chunk_bytes": 0}, "vlen_chunk_bytes must be a positive integer, got 0"),
    ({"pool_bytes": -1}, "pool_bytes must be an integer >= 0, got -1"),
    ({"pool_bytes": 1.5}, "integer >= 0"),
    ({"threads": 2, "split_bytes": 0}, "split_bytes"),       # one bad value: none is set
])
def test_bad_settings_raise_argument_error_and_change_nothing(settings, message):
    before = values()
    limit = slabs.pool_limit()
    with pytest.raises(ArgumentError, match=message) as info:
        config.set(**settings)
    assert isinstance(info.value, ZarrcError) and isinstance(info.value, ValueError)
    assert values() == before and slabs.pool_limit() == limit


def test_unknown_attribute():
    with pytest.raises(AttributeError, match="zarrc.config has no setting 'nope'"):
        config.nope  # noqa: B018
    assert not hasattr(config, "nope")


def test_repr_lists_every_setting():
    with config.set(threads=3, split_bytes=1000, pool_bytes=0):
        assert repr(config) == ("zarrc.config(threads=3, split_bytes=1000, pool_bytes=0, "
                                "write_empty_chunks=False, write_locking='os', concurrency=10, "
                                "vlen_chunk_bytes=1073741824)")


@pytest.mark.parametrize("make", ["create_array", "group.create_array", "zeros"])
def test_zarr_python_write_empty_chunks_key_reaches_new_arrays(make):
    # zarr-python's dict key; an explicit write_empty_chunks= or config= still wins
    store: dict = {}

    def new(**kw):
        if make == "create_array":
            return zarrc.create_array(store, name="a", shape=(4,), chunks=(2,), dtype="i4", overwrite=True, **kw)
        if make == "zeros":
            return zarrc.zeros(store=store, path="a", shape=(4,), chunks=(2,), dtype="i4", overwrite=True, **kw)
        return zarrc.open_group(store, mode="a").create_array("a", shape=(4,), chunks=(2,), dtype="i4",
                                                             overwrite=True, **kw)

    with config.set({"array.write_empty_chunks": True}):
        a = new()
        a[...] = 0
        assert "a/c/0" in store and "a/c/1" in store
        b = new(config={"write_empty_chunks": False})
        b[...] = 0
        assert "a/c/0" not in store
    c = new()
    c[...] = 0
    assert "a/c/0" not in store
