"""MemoryStore specifics: the caller's dict is the backing store; values are immutable bytes."""

from __future__ import annotations

import pickle

import numpy as np
import pytest

from zarrc.errors import StoreError
from zarrc.stores import MemoryStore


def test_writes_land_in_the_callers_dict():
    data = {}
    store = MemoryStore(data)
    store.set("a/b", bytearray(b"12"))
    assert data == {"a/b": b"12"} and type(data["a/b"]) is bytes
    store.delete("a/b")
    assert data == {}
    assert store.data is data


def test_bytes_are_stored_without_a_copy():
    value = b"x" * 1000
    store = MemoryStore()
    store.set("k", value)
    assert store.get("k") is value


def test_reads_values_the_user_put_in():
    class ZarrBufferLike:  # zarr-python buffers expose to_bytes()
        def to_bytes(self):
            return b"buf"

    store = MemoryStore({"a": bytearray(b"ba"), "b": np.arange(2, dtype="u1"), "c": ZarrBufferLike(), "d": 5})
    assert store.get("a") == b"ba"
    assert store.get("b") == b"\x00\x01"
    assert store.get("c") == b"buf"
    with pytest.raises(TypeError, match="'d'"):
        store.get("d")


def test_read_only():
    data = {"k": b"1"}
    store = MemoryStore(data, read_only=True)
    with pytest.raises(StoreError, match=r"cannot set key 'x': MemoryStore\(.*\) is read-only"):
        store.set("x", b"2")
    assert data == {"k": b"1"}


def test_pickle_copies_contents():
    data = {"k": b"1"}
    store = MemoryStore(data)
    clone = pickle.loads(pickle.dumps(store))
    assert clone.get("k") == b"1"
    clone.set("j", b"2")
    assert "j" not in data
    assert clone != store  # a different dict is a different location


def test_repr():
    assert repr(MemoryStore({"a": b""})).startswith("MemoryStore(<1 keys at 0x")
