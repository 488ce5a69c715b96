"""The store conformance suite (test_conformance.py) run against RemoteStore: on moto's
S3 server through obstore, on fsspec's memory://, on zarr-python's ObjectStore and
FsspecStore objects; and its read checks on the tests' HTTP server (read-only)."""

from __future__ import annotations

import pickle
import time
import uuid

import pytest
from stores import test_conformance as conformance
from stores.servers import http_server, s3_server  # noqa: F401  (fixtures)

import zarrc
from zarrc.errors import ReadOnlyError, StoreError
from zarrc.stores import make_store
from zarrc.stores.remote import ETagSnapshot, RemoteStore
from zarrc.stores.url import backend_from_url, store_from_url

KINDS = ["s3", "fsspec-memory", "zarr-objectstore", "zarr-fsspecstore"]


class RemoteFactory:
    """Opens RemoteStores of one kind at one new location (as conftest.StoreFactory)."""

    def __init__(self, kind: str, s3) -> None:
        self.kind = kind
        self.opened: list = []
        self.s3 = s3
        if kind in ("s3", "zarr-objectstore"):
            self.bucket = s3.bucket()
            self.url = f"s3://{self.bucket}/store"
        else:
            self.url = f"memory://zarrc-test-{uuid.uuid4().hex}"
        # (what the store's repr names: the URL, where zarrc opened the URL itself)
        self.location = self.url if kind in ("s3", "fsspec-memory") else None

    def _open(self, read_only: bool) -> RemoteStore:
        mode = "r" if read_only else "a"
        if self.kind == "s3":
            store = store_from_url(self.url, mode, self.s3.options())
        elif self.kind == "fsspec-memory":
            store = store_from_url(self.url, mode)
        elif self.kind == "zarr-objectstore":
            zarr_storage = pytest.importorskip("zarr.storage")
            obstore_store = pytest.importorskip("obstore.store")
            inner = obstore_store.S3Store(self.bucket, prefix="store", endpoint=self.s3.endpoint,
                                          access_key_id="testing", secret_access_key="testing",
                                          region="us-east-1", client_options={"allow_http": True})
            store = make_store(zarr_storage.ObjectStore(inner, read_only=read_only))
        else:
            zarr_storage = pytest.importorskip("zarr.storage")
            store = make_store(zarr_storage.FsspecStore.from_url(self.url, read_only=read_only))
        assert isinstance(store, RemoteStore)
        self.opened.append(store)
        return store

    def writable(self) -> RemoteStore:
        return self._open(False)

    def read_only(self, writer) -> RemoteStore:
        return self._open(True)

    def close_all(self) -> None:
        for store in self.opened:
            store.close()


@pytest.fixture(params=KINDS)
def factory(request, s3_server):  # noqa: F811
    f = RemoteFactory(request.param, s3_server)
    yield f
    f.close_all()


@pytest.fixture
def store(factory):
    return factory.writable()


# every check of the conformance suite, with the fixtures above
for _name in dir(conformance):
    if _name.startswith("test_"):
        globals()[_name] = getattr(conformance, _name)


def test_remote_repr_names_the_url(store, factory):
    if factory.kind in ("s3", "fsspec-memory"):
        assert factory.location in repr(store)


def test_snapshot_pins_one_version(store, factory):
    """A snapshot's reads see the version it was taken of; once the value is
    replaced they fail (S3: If-Match) rather than mix versions."""
    store.set("shard", bytes(range(200)))
    snap = store.snapshot("shard")
    assert snap.size == 200
    assert snap.read(10, 5) == bytes(range(10, 15))
    assert snap.read(-4, None) == bytes(range(196, 200))
    sources = snap.sources([0, 100, 5], [4, 3, 2])
    assert [bytes(s[1][s[2]:s[2] + s[3]]) for s in sources] == [bytes([0, 1, 2, 3]), bytes([100, 101, 102]),
                                                                bytes([5, 6])]
    with pytest.raises(StoreError, match="outside"):
        snap.read(199, 5) if isinstance(snap, ETagSnapshot) else snap._check([199], [5])
    store.set("shard", b"x" * 200)
    if factory.kind == "s3":
        assert isinstance(snap, ETagSnapshot) and snap.token[3]
        with pytest.raises(StoreError, match="changed while being read"):
            snap.read(0, 4)
        assert store.snapshot("shard").token != snap.token
    else:
        assert snap.token is None         # (no versions: nothing read from it is cached)
    assert store.snapshot("missing") is None or store.snapshot("missing").size is None


def test_set_if(s3_server):  # noqa: F811
    store = store_from_url(f"s3://{s3_server.bucket()}/c", "a", s3_server.options())
    assert store.set_if("k", b"first", None)          # absent: created
    assert not store.set_if("k", b"again", None)      # present: refused
    tag = store.etag("k")
    assert not store.set_if("k", b"stale", '"0000"')
    assert store.get("k") == b"first"
    assert store.set_if("k", b"second", tag)
    assert store.get("k") == b"second" and store.etag("k") != tag
    memory = store_from_url(f"memory://zarrc-test-{uuid.uuid4().hex}", "a")
    with pytest.raises(StoreError, match="no ETags"):
        memory.set_if("k", b"v", None)


def test_modes(s3_server):  # noqa: F811
    url, options = f"s3://{s3_server.bucket()}/m", s3_server.options()
    store_from_url(url, "a", options).set("a/b", b"1")
    with pytest.raises(StoreError, match="not empty"):
        store_from_url(url, "w-", options)
    ro = store_from_url(url, "r", options)
    assert ro.read_only and ro.get("a/b") == b"1"
    with pytest.raises(ReadOnlyError):
        ro.set("x", b"1")
    assert list(store_from_url(url, "w", options).list()) == []
    store_from_url(url, "w-", options)


def test_concurrency_is_bounded(http_server):  # noqa: F811
    """get_many keeps at most ``concurrency`` requests in flight: 12 keys at 0.2 s each
    take about 0.6 s with 4 at a time (all at once would take 0.2 s, one by one 2.4 s)."""
    pytest.importorskip("obstore")
    for i in range(12):
        http_server.write(f"k/{i}", bytes([i]) * 10)
    store = RemoteStore(backend_from_url(http_server.url), read_only=True, concurrency=4)
    http_server.switches.latency = 0.2
    start = time.monotonic()
    assert store.get_many([f"k/{i}" for i in range(12)]) == [bytes([i]) * 10 for i in range(12)]
    elapsed = time.monotonic() - start
    assert 0.55 < elapsed < 1.8, elapsed


def test_http_read_only(http_server):  # noqa: F811
    """The conformance suite's reads on the HTTP server (obstore's HTTPStore): values,
    ranges, suffixes, absent keys, snapshots with ETags; every write refused."""
    pytest.importorskip("obstore")
    for key, value in conformance.KEYS.items():
        http_server.write(key, value)
    http_server.write("r/k", b"0123456789")
    store = make_store(http_server.url + "/", mode="a")
    assert isinstance(store, RemoteStore) and store.read_only
    assert store.get_many(list(conformance.KEYS)) == list(conformance.KEYS.values())
    assert store.get("missing") is None and not store.exists("a") and store.exists("b/x")
    for start, length, expected in conformance.RANGE_CASES:
        assert store.get_range("r/k", start, length) == expected, (start, length)
    assert store.get_ranges("r/k", [(s, n) for s, n, _ in conformance.RANGE_CASES]) == \
        [e for _, _, e in conformance.RANGE_CASES]
    assert store.get_range("r/missing", 2, 3) is None and store.size("b/x") == 256
    snap = store.snapshot("b/x")
    assert isinstance(snap, ETagSnapshot) and snap.read(250, 6) == bytes(range(250, 256))
    for call in (lambda: store.set("new", b"x"), lambda: store.delete("b/x"),
                 lambda: store.set_many({"n": b"1"}), lambda: store.delete_prefix("")):
        with pytest.raises(ReadOnlyError, match="read-only"):
            call()
    with pytest.raises(ReadOnlyError):
        make_store(http_server.url, mode="w")
    clone = pickle.loads(pickle.dumps(store))
    assert clone.read_only and clone.get("b/x") == bytes(range(256))


def test_concurrency_follows_the_setting(s3_server):  # noqa: F811
    """A store opened without ``concurrency=`` takes zarrc.config's (zarr-python's key
    ``async.concurrency``) when it is opened; an explicit one wins."""
    url = f"s3://{s3_server.bucket()}/c"
    with zarrc.config.set({"async.concurrency": 3}):
        assert store_from_url(url, "a", s3_server.options()).concurrency == 3
        assert store_from_url(url, "a", s3_server.options(), concurrency=7).concurrency == 7
    assert store_from_url(url, "a", s3_server.options()).concurrency == 10
