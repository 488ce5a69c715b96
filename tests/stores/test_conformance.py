"""The store interface, checked identically against LocalStore, MemoryStore and ZipStore."""

from __future__ import annotations

import os
import pickle
import threading
import warnings

import numpy as np
import pytest

from zarrc.errors import StoreError

KEYS = {
    "zarr.json": b'{"zarr_format": 3}',
    "a/zarr.json": b"{}",
    "a/c/0/0": b"chunk-00",
    "a/c/0/1": b"chunk-01",
    "a/c/1/0": b"",
    "ab/.zarray": b"v2",
    "b/x": bytes(range(256)),
}


def fill(store):
    for key, value in KEYS.items():
        store.set(key, value)


def test_get_absent(store):
    assert store.get("nope") is None
    assert store.get("a/b/c") is None
    assert not store.exists("nope")


def test_set_get(store):
    fill(store)
    for key, value in KEYS.items():
        assert store.get(key) == value
        assert type(store.get(key)) is bytes
        assert store.exists(key)
    # a prefix is not a key
    assert store.get("a") is None and not store.exists("a")
    assert store.get("a/c") is None and not store.exists("a/c")


@pytest.mark.parametrize(
    "value, expected",
    [
        (bytearray(b"abc"), b"abc"),
        (memoryview(b"xyz"), b"xyz"),
        (np.arange(4, dtype="<u2"), np.arange(4, dtype="<u2").tobytes()),
        (
            np.arange(12, dtype="u1").reshape(3, 4)[:, ::2],
            np.arange(12, dtype="u1").reshape(3, 4)[:, ::2].tobytes(),
        ),
        (b"", b""),
    ],
    ids=["bytearray", "memoryview", "ndarray", "noncontiguous", "empty"],
)
def test_set_buffer_types(store, value, expected):
    store.set("k", value)
    assert store.get("k") == expected


def test_stored_value_is_a_copy(store):
    buf = bytearray(b"before")
    store.set("k", buf)
    buf[:] = b"after!"
    assert store.get("k") == b"before"


def test_set_rejects_non_buffers(store):
    with pytest.raises(TypeError):
        store.set("k", "a str")
    assert not store.exists("k")


def test_overwrite(store):
    store.set("k", b"one")
    with warnings.catch_warnings():
        warnings.simplefilter("error")  # no store warns
        store.set("k", b"second value")
    assert store.get("k") == b"second value"
    assert list(store.list()) == ["k"]


def test_set_many_get_many(store):
    store.set_many(KEYS)
    keys = list(KEYS) + ["missing", "a/c/9/9"]
    assert store.get_many(keys) == list(KEYS.values()) + [None, None]
    assert store.get_many([]) == []


def test_list(store):
    assert sorted(store.list()) == []
    fill(store)
    assert sorted(store.list()) == sorted(KEYS)


@pytest.mark.parametrize(
    "prefix, expected",
    [
        ("", sorted(KEYS)),
        ("a/", ["a/c/0/0", "a/c/0/1", "a/c/1/0", "a/zarr.json"]),
        ("a/c/0/", ["a/c/0/0", "a/c/0/1"]),
        ("a", ["a/c/0/0", "a/c/0/1", "a/c/1/0", "a/zarr.json", "ab/.zarray"]),
        ("ab/.z", ["ab/.zarray"]),
        ("a/c/0/1", ["a/c/0/1"]),
        ("zz/", []),
        ("b/x/", []),
    ],
)
def test_list_prefix(store, prefix, expected):
    fill(store)
    assert sorted(store.list_prefix(prefix)) == expected


@pytest.mark.parametrize(
    "prefix, expected",
    [
        ("", (["zarr.json"], ["a", "ab", "b"])),
        ("a/", (["zarr.json"], ["c"])),
        ("a", (["zarr.json"], ["c"])),
        ("a/c/", ([], ["0", "1"])),
        ("a/c/0/", (["0", "1"], [])),
        ("ab/", ([".zarray"], [])),
        ("zz/", ([], [])),
        ("b/x/", ([], [])),
    ],
)
def test_list_dir(store, prefix, expected):
    fill(store)
    assert store.list_dir(prefix) == expected


RANGE_CASES = [
    (0, None, b"0123456789"),
    (0, 4, b"0123"),
    (3, 4, b"3456"),
    (7, None, b"789"),
    (7, 100, b"789"),  # clipped at the end
    (10, 5, b""),  # starts at the end
    (50, None, b""),  # starts past the end
    (50, 3, b""),
    (4, 0, b""),
    (-3, None, b"789"),  # suffix
    (-10, None, b"0123456789"),
    (-100, None, b"0123456789"),  # suffix longer than the value
]


@pytest.mark.parametrize("start, length, expected", RANGE_CASES)
def test_get_range(store, start, length, expected):
    store.set("r/k", b"0123456789")
    assert store.get_range("r/k", start, length) == expected
    assert store.get_range("r/missing", start, length) is None


def test_get_range_of_large_value(store):
    value = np.random.default_rng(0).integers(0, 256, 3_000_000, dtype="u1").tobytes()
    store.set("big", value)
    assert store.get_range("big", 1_000_001, 77) == value[1_000_001:1_000_078]
    assert store.get_range("big", -5) == value[-5:]
    assert store.get("big") == value


def test_get_ranges(store):
    store.set("r/k", b"0123456789")
    ranges = [(s, n) for s, n, _ in RANGE_CASES]
    assert store.get_ranges("r/k", ranges) == [e for _, _, e in RANGE_CASES]
    assert store.get_ranges("r/k", []) == []
    assert store.get_ranges("r/missing", [(0, 1)]) is None


@pytest.mark.parametrize("start, length", [(-3, 2), (0, -1), (5, -2)])
def test_get_range_invalid(store, start, length):
    store.set("k", b"0123456789")
    with pytest.raises(ValueError, match="'k'"):
        store.get_range("k", start, length)
    with pytest.raises(ValueError, match="'k'"):
        store.get_ranges("k", [(0, 1), (start, length)])


def test_delete(store, factory):
    fill(store)
    store.delete("missing")  # absent: no error
    store.delete("a/c/9/9")
    store.delete("a/c/0/0")
    assert store.get("a/c/0/0") is None and not store.exists("a/c/0/0")
    assert sorted(store.list()) == sorted(set(KEYS) - {"a/c/0/0"})
    store.delete("a/c/0/0")


@pytest.mark.parametrize(
    "prefix, remaining",
    [
        ("a/c/", ["a/zarr.json", "ab/.zarray", "b/x", "zarr.json"]),
        ("a/", ["ab/.zarray", "b/x", "zarr.json"]),
        ("a", ["b/x", "zarr.json"]),
        ("a/c/0/", ["a/c/1/0", "a/zarr.json", "ab/.zarray", "b/x", "zarr.json"]),
        ("", []),
        ("nothing/", sorted(KEYS)),
    ],
)
def test_delete_prefix(store, factory, prefix, remaining):
    fill(store)
    store.delete_prefix(prefix)
    assert sorted(store.list()) == remaining
    for key in remaining:
        assert store.get(key) == KEYS[key]
    store.set("a/c/0/0", b"again")  # writing into a deleted tree works
    assert store.get("a/c/0/0") == b"again"


def test_read_only_refuses_writes(store, factory):
    fill(store)
    ro = factory.read_only(store)
    assert ro.read_only
    for call in (
        lambda: ro.set("new", b"x"),
        lambda: ro.set("a/zarr.json", b"x"),
        lambda: ro.set_many({"new": b"x"}),
        lambda: ro.delete("a/zarr.json"),
        lambda: ro.delete("missing"),
        lambda: ro.delete_prefix("a/"),
        lambda: ro.delete_prefix(""),
    ):
        with pytest.raises(StoreError, match="read-only"):
            call()
    assert sorted(ro.list()) == sorted(KEYS)
    assert ro.get_many(list(KEYS)) == list(KEYS.values())


def test_pickle_round_trip(store, factory):
    fill(store)
    if factory.kind != "zip":  # a zip open for writing refuses (tested in test_zip)
        clone = pickle.loads(pickle.dumps(store))
        assert sorted(clone.list()) == sorted(KEYS)
        assert clone.get_many(list(KEYS)) == list(KEYS.values())
        assert not clone.read_only
        factory.opened.append(clone)
    ro = factory.read_only(store)
    clone = pickle.loads(pickle.dumps(ro))
    factory.opened.append(clone)
    assert clone.read_only
    assert sorted(clone.list()) == sorted(KEYS)
    assert clone.get_many(list(KEYS)) == list(KEYS.values())
    if factory.kind != "memory":
        assert clone == ro and hash(clone) == hash(ro)


def test_equality_and_repr(store, factory):
    assert store == store  # noqa: PLR0124
    assert store != object()
    assert type(store).__name__ in repr(store)
    if factory.location:
        assert factory.location in repr(store)
    other = factory.writable() if factory.kind == "memory" else None
    if other is not None:
        assert other == store  # same backing dict
        assert type(store)() != store


def test_context_manager(store):
    with store as s:
        assert s is store
        s.set("k", b"v")


def test_local_path(store, factory):
    store.set("a/b", b"v")
    path = store.local_path("a/b")
    if factory.kind == "local":
        with open(path, "rb") as f:
            assert f.read() == b"v"
    else:
        assert path is None


@pytest.mark.parametrize("prefix", ["", "a/", "a/b/c.", "arr/c/"])
def test_file_prefix_declares_the_layout_local_path_follows(store, factory, prefix):
    """A store of plain files declares its layout: the file of key ``prefix + rest``
    is ``file_prefix(prefix) + rest``, the very file ``local_path`` names and
    ``set`` writes; other stores declare none."""
    head = store.file_prefix(prefix)
    if factory.kind != "local":
        assert head is None
        return
    for rest in ("0", "1/2", "3.4.5"):
        key = prefix + rest
        store.set(key, rest.encode())
        path = head + rest.encode()
        assert path == os.fsencode(store.local_path(key))
        with open(path, "rb") as f:
            assert f.read() == rest.encode()


def test_file_prefix_refuses_an_escaping_prefix(store, factory):
    if factory.kind != "local":
        assert store.file_prefix("../x/") is None       # (no files: nothing to escape to)
        return
    with pytest.raises(StoreError):
        store.file_prefix("../x/")


def test_threads_write_different_keys(store):
    def work(t):
        for i in range(40):
            key = f"t{t}/c/{i % 7}"
            store.set(key, f"{t}-{i}".encode() * (i + 1))
            assert store.get(key) == f"{t}-{i}".encode() * (i + 1)

    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        threads = [threading.Thread(target=work, args=(t,)) for t in range(8)]
        for th in threads:
            th.start()
        for th in threads:
            th.join()
    assert sorted(store.list()) == sorted(f"t{t}/c/{j}" for t in range(8) for j in range(7))
    for t in range(8):
        for j in range(7):
            i = max(i for i in range(40) if i % 7 == j)
            assert store.get(f"t{t}/c/{j}") == f"{t}-{i}".encode() * (i + 1)


def test_threads_write_same_key_never_torn(store):
    values = [bytes([t]) * (200_000 + t * 1000) for t in range(8)]
    torn = []
    stop = threading.Event()

    def write(t):
        for _ in range(10):
            store.set("same/key", values[t])

    def read():
        while not stop.is_set():
            got = store.get("same/key")
            if got is not None and got not in values:
                torn.append(len(got))
            part = store.get_range("same/key", 100, 50)
            if part is not None and part not in {v[100:150] for v in values}:
                torn.append(("range", part[:4]))

    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        readers = [threading.Thread(target=read) for _ in range(4)]
        writers = [threading.Thread(target=write, args=(t,)) for t in range(8)]
        for th in readers + writers:
            th.start()
        for th in writers:
            th.join()
        stop.set()
        for th in readers:
            th.join()
    assert torn == []
    assert store.get("same/key") in values
    assert list(store.list()) == ["same/key"]
