"""RemoteStore failures on real servers: each raises StoreError naming the URL, the key
and the cause, within a bounded time; a 404 reads as None; a 500 is retried."""

from __future__ import annotations

import time

import pytest
from stores.servers import closed_port, http_server  # noqa: F401  (fixture)

from zarrc.errors import StoreError
from zarrc.stores import remote
from zarrc.stores.remote import RemoteStore
from zarrc.stores.url import backend_from_url, store_from_url

pytest.importorskip("obstore", reason="obstore is not installed")

FAST = {"timeout": 1.0, "connect_timeout": 1.0, "max_retries": 1}


def fails(call, *needles, within: float):
    """Run ``call``; assert it raises StoreError whose message holds every needle,
    in less than ``within`` seconds.  Returns the message."""
    start = time.monotonic()
    with pytest.raises(StoreError) as info:
        call()
    elapsed = time.monotonic() - start
    message = str(info.value)
    for needle in needles:
        assert needle in message, message
    assert elapsed < within, (elapsed, message)
    return message


def test_connection_refused():
    url = f"http://127.0.0.1:{closed_port()}/data"
    store = store_from_url(url, "r", FAST)
    fails(lambda: store.get("a/zarr.json"), url, "a/zarr.json", f"{url}/a/zarr.json", within=10)
    fails(lambda: store.get_many(["c/0", "c/1"]), url, "c/", within=10)


def test_forbidden(http_server):  # noqa: F811
    http_server.write("k", b"value")
    http_server.switches.forbid = True
    store = store_from_url(http_server.url, "r", FAST)
    fails(lambda: store.get("k"), http_server.url, "'k'", "403", within=5)
    fails(lambda: store.exists("k"), "403", within=5)


def test_missing_key_reads_as_none(http_server):  # noqa: F811
    store = store_from_url(http_server.url, "r", FAST)
    assert store.get("nope") is None
    assert store.get_range("nope", 3, 2) is None
    assert store.get_many(["nope", "nope/2"]) == [None, None]
    assert not store.exists("nope") and store.size("nope") is None and store.snapshot("nope") is None


def test_one_500_is_retried(http_server):  # noqa: F811
    http_server.write("k", b"value")
    http_server.switches.fail = 1
    store = store_from_url(http_server.url, "r", FAST)
    assert store.get("k") == b"value"
    statuses = [method for method, _, _ in http_server.switches.requests]
    assert statuses == ["GET", "GET"]          # the first answered 500, the retry 200


def test_500s_past_the_retries(http_server):  # noqa: F811
    http_server.write("k", b"value")
    http_server.switches.fail = 100
    store = store_from_url(http_server.url, "r", FAST)
    fails(lambda: store.get("k"), "'k'", "500", within=8)
    assert len(http_server.switches.requests) == 2      # one try and max_retries=1 retry


def test_truncated_body(http_server):  # noqa: F811
    http_server.write("k", bytes(range(200)) * 50)
    http_server.switches.truncate = True
    store = store_from_url(http_server.url, "r", {**FAST, "max_retries": 0})
    fails(lambda: store.get("k"), http_server.url, "'k'", within=8)
    fails(lambda: store.get_range("k", 100, 5000), "'k'", within=8)


def test_slow_server_times_out(http_server):  # noqa: F811
    """A server that does not answer: StoreError once the configured timeout has
    passed on every try (0.5 s, no retries: well within 5 s), not a hang."""
    http_server.write("k", b"value")
    http_server.switches.hang = 30
    store = store_from_url(http_server.url, "r", {"timeout": 0.5, "connect_timeout": 0.5, "max_retries": 0})
    start = time.monotonic()
    message = fails(lambda: store.get("k"), http_server.url, "'k'", within=5)
    assert time.monotonic() - start >= 0.4
    assert "time" in message.lower(), message


def test_latency_does_not_fail(http_server):  # noqa: F811
    """Slow but answering within the timeout: the reads succeed."""
    http_server.write("k", b"value")
    http_server.switches.latency = 0.3
    store = store_from_url(http_server.url, "r", FAST)
    assert store.get_many(["k", "k", "missing"]) == [b"value", b"value", None]


def test_single_reads_skip_the_event_loop(http_server, monkeypatch):  # noqa: F811
    """One key or range (also ``get_many`` of one key, as a one-chunk read asks)
    reads with obstore's blocking call on the calling thread (no hop to the I/O
    loop or to a request thread), which waits without the GIL: four threads reading at
    once take about one latency, not four."""
    import threading

    from zarrc.stores import aio

    http_server.write("k", b"value")
    http_server.switches.latency = 0.3
    store = store_from_url(http_server.url, "r", FAST)

    def no_loop(coro):
        coro.close()
        raise AssertionError("a single read went through the event loop")

    def no_pool():
        raise AssertionError("a single read went to a request thread")

    monkeypatch.setattr(aio, "run", no_loop)
    monkeypatch.setattr(remote, "request_pool", no_pool)
    found: list = []
    threads = [threading.Thread(target=lambda: found.append((store.get("k"), store.get_range("k", 1, 3),
                                                             store.get_many(["k"]))))
               for _ in range(4)]
    start = time.monotonic()
    for t in threads:
        t.start()
    for t in threads:
        t.join()
    assert found == [(b"value", b"alu", [b"value"])] * 4
    assert time.monotonic() - start < 3 * 0.3 * 1.5       # (three latencies per thread, in parallel)
    assert store.get("missing") is None


def test_requests_in_flight_are_bounded(http_server):  # noqa: F811
    """A store of concurrency 2 reads 6 keys two at a time: three latencies, not one
    and not six."""
    for i in range(6):
        http_server.write(f"k{i}", bytes([i]))
    http_server.switches.latency = 0.25
    store = RemoteStore(backend_from_url(http_server.url, FAST), read_only=True, concurrency=2)
    start = time.monotonic()
    assert store.get_many([f"k{i}" for i in range(6)]) == [bytes([i]) for i in range(6)]
    elapsed = time.monotonic() - start
    assert 3 * 0.25 <= elapsed < 5 * 0.25, elapsed


def test_many_stores_share_the_request_threads(http_server):  # noqa: F811
    """Each store bounds its own requests, but all run on one pool of threads: 40
    stores (as a pipeline makes per array) do not make 40 x concurrency threads."""
    import threading

    from zarrc.runtime.threads import REQUEST_THREADS

    for i in range(12):
        http_server.write(f"k{i}", bytes([i]))
    stores = [RemoteStore(backend_from_url(http_server.url, FAST), read_only=True) for _ in range(40)]
    for store in stores:
        assert store.get_many([f"k{i}" for i in range(12)]) == [bytes([i]) for i in range(12)]
    made = [t for t in threading.enumerate() if t.name.startswith("zarrc-request")]
    assert 0 < len(made) <= REQUEST_THREADS


def test_replaced_while_read(http_server):  # noqa: F811
    """A snapshot's read after the file changed: 412 from If-Match, a StoreError."""
    http_server.write("shard", b"a" * 100)
    store = store_from_url(http_server.url, "r", FAST)
    snap = store.snapshot("shard")
    assert snap.read(0, 10) == b"a" * 10
    time.sleep(0.01)
    http_server.write("shard", b"b" * 100)
    fails(lambda: snap.read(10, 10), "changed while being read", "'shard'", within=5)
    assert any(method == "GET" and rng == "bytes=10-19" for method, _, rng in http_server.switches.requests)


def test_bad_storage_options():
    with pytest.raises(ValueError, match="timeout"):
        store_from_url("s3://bucket/x", "r", {"timeout": -1})
    with pytest.raises(StoreError, match="s3://bucket/x"):
        store_from_url("s3://bucket/x", "r", {"no_such_option": 1})


def test_calls_from_inside_a_running_loop(http_server):  # noqa: F811
    """The synchronous store called from a coroutine of another event loop (as
    zarr-python's loop would) does not deadlock."""
    import asyncio

    http_server.write("k", b"value")
    store = RemoteStore(backend_from_url(http_server.url, FAST), read_only=True)

    async def inside():
        return store.get_many(["k", "k"])

    assert asyncio.run(asyncio.wait_for(inside(), 10)) == [b"value", b"value"]
