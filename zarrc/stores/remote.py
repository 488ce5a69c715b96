"""RemoteStore: zarrc's synchronous, thread-safe store interface over an asynchronous backend.

A backend (:class:`Backend`: ``obstore_backend``, ``fsspec_backend``,
``zarr_store_backend``) speaks to one remote location with a handful of
coroutines.  :class:`RemoteStore` runs them on zarrc's own event loop
(:mod:`zarrc.stores.aio`), many at once where the engine asks for many keys or
ranges (at most ``concurrency`` requests of one store in flight), each bounded
by the backend's ``deadline``.  Whatever a backend raises becomes a
:class:`~zarrc.errors.StoreError` naming the URL, the key and the cause; an absent
key reads as None (a missing chunk is the fill value).

One read of a shard sees one version of it: a snapshot (:class:`ETagSnapshot`)
takes the value's size and ETag from one HEAD and sends every range read of it
with ``If-Match``, so a replaced value fails the read rather than mixing
versions.  Backends that cannot name versions give ``base.RangeSnapshot``.
"""

from __future__ import annotations

import asyncio
import builtins
import functools
import os
import threading
from collections import deque
from collections.abc import Awaitable, Callable, Iterator, Mapping, Sequence
from concurrent.futures import Future
from typing import Any

from zarrc.errors import ArgumentError, ReadOnlyError, StoreError
from zarrc.runtime.config import config
from zarrc.runtime.threads import request_pool
from zarrc.stores import aio
from zarrc.stores.base import (
    RangeSnapshot,
    Snapshot,
    Store,
    byte_view,
    check_range,
    split_prefix,
    validate_key,
)

DEFAULT_TIMEOUT = 30.0       # seconds: one request's connect / read timeout
DEFAULT_MAX_RETRIES = 3      # retries of a failed request (5xx, connection errors) by clients that retry
COALESCE = 1 << 18           # snapshot ranges closer than this are fetched as one request
DELETE_BATCH = 1000          # keys per bulk delete (S3's DeleteObjects limit)
INSTALL_HINT = "install zarrc[remote] (pip install obstore fsspec)"


class PreconditionFailed(Exception):
    """A backend's conditional request found another version (HTTP 412), or a
    create-only write found the key present."""


def pop_timeouts(options: dict) -> tuple[float, float, int]:
    """Remove zarrc's own keys from ``options`` (a storage_options dict, changed in
    place): ``timeout`` (seconds, one request; default 30), ``connect_timeout``
    (default: ``timeout``), ``max_retries`` (default 3).  Returns (timeout,
    connect_timeout, max_retries); raises ArgumentError for a non-positive timeout
    or negative retries."""
    try:
        timeout = float(options.pop("timeout", DEFAULT_TIMEOUT))
        connect = float(options.pop("connect_timeout", timeout))
        retries = int(options.pop("max_retries", DEFAULT_MAX_RETRIES))
    except (TypeError, ValueError) as e:
        raise ArgumentError(f"storage_options: timeout, connect_timeout and max_retries must be numbers: {e}") from None
    if timeout <= 0 or connect <= 0 or retries < 0:
        raise ArgumentError(f"storage_options: timeouts must be positive and max_retries >= 0, got "
                            f"timeout={timeout}, connect_timeout={connect}, max_retries={retries}")
    return timeout, connect, retries


def deadline_of(timeout: float, connect: float, retries: int) -> float:
    """The longest one operation may take: every try timing out, plus backoff."""
    return (timeout + connect) * (retries + 1) + 2.0 * retries + 1.0


class Backend:
    """The asynchronous client of one remote location, as RemoteStore drives it.

    Keys are relative to the location (``url``).  ``get`` returns the bytes (any
    buffer) of a key, a range of it (``start``/``length``: ``length`` None reads to
    the end) or its last ``suffix`` bytes, or None if the key is absent; with
    ``if_match`` it raises PreconditionFailed unless the value's ETag is that.
    ``head``: (size, ETag or None) or None if absent.  ``put`` stores ``data``
    (with ``if_match``: only over that version; with ``create``: only if absent;
    else raises PreconditionFailed).  ``delete`` of an absent key is no error.
    ``list(prefix)``: every key under the directory ``prefix`` ("" or "a/b/");
    ``list_dir(prefix)``: (key names, child directory names) directly under it.
    Any other failure raises what the client raises; RemoteStore names it.

    ``writable``: False for read-only protocols (HTTP).  ``etags``: True if
    ``head`` gives ETags and ``get`` honours ``if_match`` (snapshots then pin a
    version).  ``blocking_calls``: True if ``get_now``, ``get_now_versioned`` and
    ``put_now`` are blocking forms of ``get`` and ``put`` that release the GIL
    (RemoteStore then makes its reads and plain writes on threads, with no event loop).  ``deadline``: seconds one call may take before RemoteStore gives up.
    A backend pickles to its description (URL and options, or its client object),
    never to data.
    """

    url: str = ""
    writable: bool = True
    etags: bool = False
    blocking_calls: bool = False
    deadline: float = deadline_of(DEFAULT_TIMEOUT, DEFAULT_TIMEOUT, DEFAULT_MAX_RETRIES)

    async def get(self, key: str, start: int | None = None, length: int | None = None,
                  suffix: int | None = None, if_match: str | None = None) -> Any:
        raise NotImplementedError

    def get_now(self, key: str, start: int, length: int | None) -> Any:
        """``get`` (without suffix or if_match) as a blocking call that releases the
        GIL, for backends with ``blocking_calls``."""
        raise NotImplementedError

    def get_now_versioned(self, key: str, start: int, length: int | None) -> tuple[Any, int, str | None] | None:
        """``get_now`` of a range (start < 0, length None: a suffix) that also gives
        the whole value's size and ETag from the same response: (bytes, size, ETag),
        or None if absent.  For backends with ``blocking_calls``."""
        raise NotImplementedError

    def put_now(self, key: str, data: Any) -> None:
        """``put`` (unconditional) as a blocking call that releases the GIL, for
        backends with ``blocking_calls``."""
        raise NotImplementedError

    async def head(self, key: str) -> tuple[int, str | None] | None:
        raise NotImplementedError

    async def put(self, key: str, data: Any, if_match: str | None = None, create: bool = False) -> None:
        raise NotImplementedError

    async def delete(self, key: str) -> None:
        raise NotImplementedError

    async def delete_many(self, keys: Sequence[str]) -> None:
        """Delete every key of ``keys`` (the default: one by one)."""
        for key in keys:
            await self.delete(key)

    async def list(self, prefix: str) -> builtins.list[str]:
        raise NotImplementedError

    async def list_dir(self, prefix: str) -> tuple[builtins.list[str], builtins.list[str]]:
        """(keys, child directories) directly under ``prefix`` (the default filters ``list``)."""
        keys: set[str] = set()
        dirs: set[str] = set()
        for key in await self.list(prefix):
            if not key.startswith(prefix) or len(key) == len(prefix):
                continue
            name, sep, _ = key[len(prefix):].partition("/")
            (dirs if sep else keys).add(name)
        return sorted(keys), sorted(dirs)

    def close(self) -> None:
        """Release the client (the default holds nothing to release)."""


def describe_error(error: BaseException) -> str:
    """A short account of ``error`` for a message: its class and first lines."""
    text = " ".join(line.strip() for line in str(error).splitlines() if line.strip())
    if len(text) > 500:
        text = text[:500] + "..."
    return f"{type(error).__name__}: {text}" if text else type(error).__name__


def _join(url: str, key: str) -> str:
    return f"{url.rstrip('/')}/{key}" if url else key


class Requests:
    """One store's blocking calls (``Backend.blocking_calls``) on the process's
    request threads (``runtime.threads.request_pool``), at most ``limit`` of them
    running at once (the rest wait in order in this queue, not on a thread): many
    stores share the threads, each within its own bound."""

    def __init__(self, limit: int) -> None:
        self.limit = limit
        self._queue: deque[tuple[Future, Callable[[], Any]]] = deque()
        self._running = 0
        self._lock = threading.Lock()
        self._pid = os.getpid()

    def submit(self, fn: Callable[..., Any], *args: Any) -> Future:
        """A future of ``fn(*args)``, run once fewer than ``limit`` run."""
        future: Future = Future()
        if self._pid != os.getpid():     # (a forked child: the parent's calls are not running here)
            self._queue, self._running, self._lock, self._pid = deque(), 0, threading.Lock(), os.getpid()
        with self._lock:
            self._queue.append((future, functools.partial(fn, *args)))
            start = self._running < self.limit
            if start:
                self._running += 1
        if start:
            request_pool().submit(self._work)
        return future

    def _work(self) -> None:
        """Run queued calls until the queue is empty (then give the slot back)."""
        while True:
            with self._lock:
                if not self._queue:
                    self._running -= 1
                    return
                future, call = self._queue.popleft()
            if not future.set_running_or_notify_cancel():
                continue                  # (cancelled while it waited)
            try:
                future.set_result(call())
            except BaseException as exc:  # noqa: BLE001 - handed to the future's waiter
                future.set_exception(exc)


class Pending:
    """Reads under way on request threads (``RemoteStore.fetch_many``): ``result()``
    waits and returns their values in order, raising the first error (in order) and
    dropping the reads not yet started; ``cancel()`` drops those."""

    def __init__(self, futures: builtins.list[Future]) -> None:
        self.futures = futures

    def result(self) -> builtins.list:
        try:
            return [future.result() for future in self.futures]
        except BaseException:
            self.cancel()
            raise

    def cancel(self) -> bool:
        for future in self.futures:
            future.cancel()
        return True


class RemoteStore(Store):
    """A store over an asynchronous :class:`Backend` (S3, GCS, Azure, HTTP, fsspec,
    zarr-python stores).

    ``read_only``: refuse writes with ReadOnlyError (always so over a read-only
    backend, e.g. HTTP).  ``concurrency``: requests in flight at once for this
    store's batch calls (``get_many``, ``get_ranges``, ``set_many``...), across all
    threads.  Use :meth:`from_url` (or ``zarrc.stores.url.store_from_url``) to open
    one on a URL.  Pickles to (backend description, read_only, concurrency).
    """

    supports_deletes = True

    def __init__(self, backend: Backend, read_only: bool = False, concurrency: int | None = None) -> None:
        if concurrency is None:
            concurrency = config.concurrency        # (zarrc.config's, when the store is opened)
        if not isinstance(concurrency, int) or isinstance(concurrency, bool) or concurrency < 1:
            raise ArgumentError(f"RemoteStore: concurrency must be a positive int, got {concurrency!r}")
        self.backend = backend
        self.read_only = bool(read_only) or not backend.writable
        self.concurrency = concurrency
        self._semaphore = aio.LoopSemaphore(concurrency)
        self._slots = threading.BoundedSemaphore(concurrency)     # (blocking reads: _read_now)
        self._requests = Requests(concurrency)

    @property
    def url(self) -> str:
        """The location this store reads and writes."""
        return self.backend.url

    def __repr__(self) -> str:
        return f"RemoteStore({self.backend.url!r}{', read_only=True' if self.read_only else ''})"

    def __eq__(self, other: object) -> bool:
        return (isinstance(other, RemoteStore) and type(other) is type(self)
                and other.backend.url == self.backend.url and type(other.backend) is type(self.backend))

    def __hash__(self) -> int:
        return hash((type(self), type(self.backend), self.backend.url))

    def __reduce__(self) -> tuple:
        return (rebuild, (type(self), self.backend, self.read_only, self.concurrency))

    # -- running backend calls -----------------------------------------------

    def _where(self, key: str) -> str:
        return f"key {key!r} of {self.backend.url} ({_join(self.backend.url, key)})"

    async def _guard(self, what: str, key: str, make: Callable[[], Awaitable[Any]]) -> Any:
        """``await make()`` holding one of the store's request slots, within the
        backend's deadline; its failures (other than PreconditionFailed) become
        StoreError naming ``what`` was done, the URL and ``key``."""
        deadline = self.backend.deadline
        async with self._semaphore.get():
            try:
                return await asyncio.wait_for(make(), deadline)
            except (PreconditionFailed, StoreError, ArgumentError):
                raise
            except (asyncio.TimeoutError, TimeoutError) as e:
                raise StoreError(f"cannot {what} {self._where(key)}: no answer within {deadline:g} s "
                                 f"(timed out{': ' + describe_error(e) if str(e) else ''})") from e
            except asyncio.CancelledError:
                raise
            except Exception as e:
                raise self._failed(what, key, e) from e

    def _failed(self, what: str, key: str, error: BaseException) -> StoreError:
        return StoreError(f"cannot {what} {self._where(key)}: {describe_error(error)}")

    def _run(self, what: str, key: str, make: Callable[[], Awaitable[Any]]) -> Any:
        return aio.run(self._guard(what, key, make))

    async def _many(self, what: str, calls: Sequence[tuple[str, Callable[[], Awaitable[Any]]]]) -> list:
        """Await (key, coroutine maker) pairs concurrently (each guarded); results in
        order.  The first failure cancels the others and is raised."""
        return await aio.gather_all([self._guard(what, key, make) for key, make in calls])

    def _run_many(self, what: str, calls: Sequence[tuple[str, Callable[[], Awaitable[Any]]]]) -> list:
        """Run (key, coroutine maker) pairs concurrently (each guarded); results in order."""
        return aio.run(self._many(what, calls)) if calls else []

    async def _read(self, key: str, start: int, length: int | None, if_match: str | None = None) -> bytes | None:
        """Bytes [start, start+length) of ``key`` clipped to its size (start < 0: a
        suffix), or None if absent.  A range the server refuses (416: it starts at or
        past the end) reads as b"" once a HEAD shows the key exists."""
        backend = self.backend
        try:
            if length == 0 and start >= 0:
                data: Any = b"" if await backend.head(key) is not None else None
            elif start < 0:
                data = await backend.get(key, suffix=-start, if_match=if_match)
            elif start == 0 and length is None:
                data = await backend.get(key, if_match=if_match)
            else:
                data = await backend.get(key, start=start, length=length, if_match=if_match)
        except PreconditionFailed:
            raise
        except Exception:
            if start == 0 and length is None:
                raise
            meta = await backend.head(key)
            if meta is None:
                return None
            if (meta[0] == 0 and start < 0) or 0 <= meta[0] <= start:
                return b""
            raise
        return self._checked(key, start, length, data)

    def _checked(self, key: str, start: int, length: int | None, data: Any) -> bytes | None:
        if data is None:
            return None
        data = data if type(data) is bytes else bytes(data)
        if length is not None and start >= 0 and len(data) > length:
            raise StoreError(f"{self._where(key)}: asked for {length} bytes at {start}, got {len(data)} "
                             "(the server ignored the range)")
        return data

    def _read_now(self, key: str, start: int, length: int | None) -> bytes | None:
        """``_read`` of one key or range as one blocking call of a backend with
        ``blocking_calls`` (obstore's, which releases the GIL), on the calling
        thread: a single read skips the event loop's two thread hops.  Holds one of
        the store's request slots.  A failed range read is tried again the
        asynchronous way (which tells a range past the end from a failure)."""
        try:
            with self._slots:
                data = self.backend.get_now(key, start, length)
        except PreconditionFailed:
            raise
        except Exception as e:
            if start == 0 and length is None:
                raise self._failed("read", key, e) from e
            return self._run("read", key, lambda: self._read(key, start, length))
        return self._checked(key, start, length, data)

    # -- reading ---------------------------------------------------------------

    def get(self, key: str) -> bytes | None:
        """The value of ``key`` (bytes), or None if absent.  Raises StoreError."""
        validate_key(key, self)
        if self.backend.blocking_calls:
            return self._read_now(key, 0, None)
        return self._run("read", key, lambda: self._read(key, 0, None))

    def get_range(self, key: str, start: int, length: int | None = None) -> bytes | None:
        """Bytes [start, start+length) of ``key`` (see Store.get_range), or None if absent."""
        validate_key(key, self)
        check_range(start, length, key, self)
        if self.backend.blocking_calls and start >= 0 and length != 0:
            return self._read_now(key, start, length)
        return self._run("read", key, lambda: self._read(key, start, length))

    def get_many(self, keys: Sequence[str]) -> list[bytes | None]:
        """The values of ``keys`` in order (None: absent), fetched concurrently."""
        if self.backend.blocking_calls:
            if len(keys) == 1:       # (one key: read on this thread, no hand-off to a request thread)
                validate_key(keys[0], self)
                return [self._read_now(keys[0], 0, None)]
            return self.fetch_many(keys).result()
        for key in keys:
            validate_key(key, self)
        return self._run_many("read", [(key, self._reader(key, 0, None)) for key in keys])

    @property
    def fetch_window(self) -> int:       # type: ignore[override]
        """Chunk keys a read asks for at once while it decodes the previous ones
        (``Store.fetch_window``): four times the requests in flight."""
        return 4 * self.concurrency

    def fetch_many(self, keys: Sequence[str]) -> Any:
        """Start fetching ``keys`` concurrently; a future whose ``result()`` is
        ``get_many(keys)``'s list (see Store.fetch_many)."""
        for key in keys:
            validate_key(key, self)
        if self.backend.blocking_calls:
            # (blocking reads on the store's request threads, in the keys' order: for
            # obstore, less work per request than a round of the event loop)
            return Pending([self._requests.submit(self._read_now, key, 0, None) for key in keys])
        return aio.submit(self._many("read", [(key, self._reader(key, 0, None)) for key in keys]))

    def _reader(self, key: str, start: int, length: int | None,
                if_match: str | None = None) -> Callable[[], Awaitable[bytes | None]]:
        return lambda: self._read(key, start, length, if_match)

    def get_ranges(self, key: str, ranges: Sequence[tuple[int, int | None]]) -> list[bytes] | None:
        """Several (start, length) ranges of ``key``, fetched concurrently, or None if absent."""
        validate_key(key, self)
        for start, length in ranges:
            check_range(start, length, key, self)
        found = self._run_many("read", [(key, self._reader(key, s, n)) for s, n in ranges])
        return None if any(part is None for part in found) else found

    def exists(self, key: str) -> bool:
        """True if ``key`` holds a value (one HEAD)."""
        validate_key(key, self)
        return self._run("check", key, lambda: self.backend.head(key)) is not None

    def size(self, key: str) -> int | None:
        """The size of the value of ``key`` from a HEAD, or None if absent."""
        validate_key(key, self)
        meta = self._run("check", key, lambda: self.backend.head(key))
        return None if meta is None else meta[0]

    def snapshot(self, key: str) -> Snapshot | None:
        """One version of ``key``: an :class:`ETagSnapshot` (size and ETag from one
        HEAD) where the backend has ETags, else a ``RangeSnapshot``; None if absent."""
        validate_key(key, self)
        if not self.backend.etags:
            return RangeSnapshot(self, key)
        meta = self._run("check", key, lambda: self.backend.head(key))
        if meta is None:
            return None
        size, etag = meta
        if etag is None:
            return RangeSnapshot(self, key)
        return ETagSnapshot(self, key, size, etag)

    def snapshot_for(self, key: str, start: int, length: int | None) -> Snapshot | None:
        """``snapshot(key)`` for a caller that reads bytes [start, start+length) of it
        first (start < 0 and length None: the last -start bytes; a shard's index).
        Over a backend with ``blocking_calls`` one GET of that range gives the
        version and size too (an ETagSnapshot holding the bytes), instead of a HEAD
        and then a GET.  A failed ranged GET (a range the value cannot satisfy) is
        left to ``snapshot``, whose HEAD tells what is there."""
        validate_key(key, self)
        if not (self.backend.blocking_calls and self.backend.etags):
            return self.snapshot(key)
        try:
            with self._slots:
                found = self.backend.get_now_versioned(key, start, length)
        except Exception:       # noqa: BLE001 - the HEAD way tells what went wrong
            return self.snapshot(key)
        if found is None:
            return None
        data, size, etag = found
        if etag is None:
            return RangeSnapshot(self, key)
        begin = max(0, size + start) if start < 0 else start
        return ETagSnapshot(self, key, size, etag, held=(begin, data if type(data) is bytes else bytes(data)))

    def read_version(self, key: str, etag: str, ranges: Sequence[tuple[int, int]]) -> list[bytes]:
        """The (start, length) ranges (all within the value) of the version ``etag``
        of ``key``, fetched concurrently with If-Match.  Raises StoreError if the
        key now holds another version (or none), or a range comes back short."""
        try:
            found = self._run_many("read", [(key, self._reader(key, s, n, etag)) for s, n in ranges])
        except PreconditionFailed:
            raise StoreError(f"{self._where(key)} changed while being read: it is no longer the "
                             f"version {etag} this read started on") from None
        for (start, length), part in zip(ranges, found):
            if part is None:
                raise StoreError(f"{self._where(key)} was deleted while being read (version {etag})")
            if len(part) != length:
                raise StoreError(f"{self._where(key)}: {len(part)} of {length} bytes at {start} (truncated)")
        return found

    # -- writing ---------------------------------------------------------------

    def set(self, key: str, value: Any) -> None:
        """Store ``value`` (any buffer) under ``key`` with one PUT (atomic: readers see
        the old or the new value).  Raises ReadOnlyError, TypeError, StoreError."""
        self.check_writable("set", key)
        validate_key(key, self)
        data = byte_view(value)
        if self.backend.blocking_calls:
            self._write_now(key, data)
        else:
            self._run("write", key, lambda: self.backend.put(key, data))

    def set_many(self, items: Mapping[str, Any]) -> None:
        """Store every (key, value) of ``items`` concurrently; all are checked first."""
        self.check_writable("set", next(iter(items), ""))
        views = {validate_key(key, self): byte_view(value) for key, value in items.items()}
        if self.backend.blocking_calls:      # (on the store's request threads, as fetch_many)
            Pending([self._requests.submit(self._write_now, key, data) for key, data in views.items()]).result()
            return
        self._run_many("write", [(key, self._writer(key, data)) for key, data in views.items()])

    def _write_now(self, key: str, data: memoryview) -> None:
        """One PUT as a blocking call of the backend's (``blocking_calls``), holding
        one of the store's request slots; a failure is a StoreError naming the key."""
        try:
            with self._slots:
                self.backend.put_now(key, data)
        except Exception as e:
            raise self._failed("write", key, e) from e

    def _writer(self, key: str, data: memoryview) -> Callable[[], Awaitable[None]]:
        return lambda: self.backend.put(key, data)

    def set_if(self, key: str, value: Any, etag: str | None) -> bool:
        """Store ``value`` under ``key`` only if its current ETag is ``etag`` (None:
        only if the key is absent).  Returns False if another version is there (412,
        or the key exists), True once written.  Raises StoreError where the backend
        has no conditional writes, ReadOnlyError on a read-only store."""
        return not self.set_many_if({key: (value, etag)})

    @property
    def conditional_writes(self) -> bool:      # type: ignore[override]
        """True where the backend has ETags: partial chunk updates are conditional
        writes (``Store.conditional_writes``)."""
        return bool(self.backend.etags) and not self.read_only

    async def _read_versioned(self, key: str) -> tuple[bytes | None, str | None]:
        """(value, ETag) of one version of ``key`` ((None, None): absent): a HEAD,
        then the body read with If-Match on its ETag (again if it changed between)."""
        for _ in range(8):
            meta = await self.backend.head(key)
            if meta is None:
                return None, None
            try:
                return await self._read(key, 0, None, if_match=meta[1]), meta[1]
            except PreconditionFailed:
                continue
        raise StoreError(f"cannot read {self._where(key)}: it changed on every one of 8 reads")

    def get_many_versioned(self, keys: Sequence[str]) -> list[tuple[bytes | None, Any]]:
        """(value, ETag) of each key, fetched concurrently (see Store.get_many_versioned)."""
        for key in keys:
            validate_key(key, self)

        def reader(key: str) -> Callable[[], Awaitable[tuple[bytes | None, str | None]]]:
            return lambda: self._read_versioned(key)

        return self._run_many("read", [(key, reader(key)) for key in keys])

    def set_many_if(self, items: Mapping[str, tuple[Any, Any]]) -> list[str]:
        """Conditional PUTs of every (value, ETag) of ``items``, concurrently; the keys
        another writer changed meanwhile (see Store.set_many_if).  Raises StoreError
        where the backend has no conditional writes, ReadOnlyError on a read-only store."""
        for key in items:
            self.check_writable("set", key)
            validate_key(key, self)
            if not self.backend.etags:
                raise StoreError(f"cannot write {self._where(key)} conditionally: its backend "
                                 f"({type(self.backend).__name__}) has no ETags")

        def put(key: str, value: Any, etag: str | None) -> Callable[[], Awaitable[bool]]:
            async def attempt() -> bool:
                try:
                    await self.backend.put(key, byte_view(value), if_match=etag, create=etag is None)
                except PreconditionFailed:
                    return False
                return True
            return attempt

        done = self._run_many("write", [(key, put(key, value, etag)) for key, (value, etag) in items.items()])
        return [key for key, ok in zip(items, done) if not ok]

    def etag(self, key: str) -> str | None:
        """The current ETag of ``key`` (None if absent or the backend has none)."""
        validate_key(key, self)
        meta = self._run("check", key, lambda: self.backend.head(key))
        return None if meta is None else meta[1]

    def delete(self, key: str) -> None:
        """Remove ``key`` (absent: no error).  Raises ReadOnlyError, StoreError."""
        self.check_writable("delete", key)
        validate_key(key, self)
        self._run("delete", key, lambda: self.backend.delete(key))

    def delete_prefix(self, prefix: str) -> None:
        """Remove every key starting with ``prefix`` (bulk deletes where the backend has them)."""
        self.check_writable("delete_prefix", prefix)
        keys = sorted(self.list_prefix(prefix))
        batches = [keys[i:i + DELETE_BATCH] for i in range(0, len(keys), DELETE_BATCH)]
        self._run_many("delete", [(batch[0], self._deleter(batch)) for batch in batches])

    def _deleter(self, keys: builtins.list[str]) -> Callable[[], Awaitable[None]]:
        return lambda: self.backend.delete_many(keys)

    def check_writable(self, operation: str, key: str) -> None:
        """Raise ReadOnlyError (naming the URL) if this store is read-only."""
        if self.read_only:
            raise ReadOnlyError(f"cannot {operation} key {key!r}: {self!r} is read-only")

    # -- listing -----------------------------------------------------------------

    def list_prefix(self, prefix: str) -> Iterator[str]:
        """Every key starting with ``prefix`` (one listing of its directory, filtered)."""
        directory, _ = split_prefix(prefix, self)
        where = directory + "/" if directory else ""
        keys = self._run("list", where or "/", lambda: self.backend.list(where))
        return iter([key for key in keys if key.startswith(prefix)])

    def list_dir(self, prefix: str) -> tuple[builtins.list[str], builtins.list[str]]:
        """(keys, child prefixes) directly under ``prefix``, from the backend's
        delimiter listing (see Store.list_dir)."""
        if prefix and not prefix.endswith("/"):
            prefix += "/"
        split_prefix(prefix, self)
        keys, dirs = self._run("list", prefix or "/", lambda: self.backend.list_dir(prefix))
        return sorted(keys), sorted(dirs)

    def close(self) -> None:
        """Release the backend's client."""
        self.backend.close()


def rebuild(cls: type[RemoteStore], backend: Backend, read_only: bool, concurrency: int | None) -> RemoteStore:
    """A RemoteStore of class ``cls`` (a subclass: zarrc.storage's) over ``backend``
    (how RemoteStores unpickle)."""
    store = cls.__new__(cls)
    RemoteStore.__init__(store, backend, read_only=read_only, concurrency=concurrency)
    return store


class ETagSnapshot(Snapshot):
    """One version of a remote value: its size and ETag from one HEAD; every read
    sends If-Match with the ETag, so it returns bytes of that version or raises
    StoreError (the value was replaced).  ``token`` names the version."""

    def __init__(self, store: RemoteStore, key: str, size: int, etag: str,
                 held: tuple[int, bytes] | None = None) -> None:
        self.store, self.key, self.size, self.etag = store, key, size, etag
        self.held = held      # (where they start, bytes) of this version, read with it
        self.token = ("etag", store.url, key, etag, size)
        self.name = f"key {key!r} of {store.url}"

    def read(self, start: int, length: int | None) -> bytes:
        """Bytes [start, start+length) (start < 0, length None: the last -start bytes).
        Raises StoreError outside the value or if it changed."""
        size = self.size
        assert size is not None
        if length is None:
            start = max(0, size + start) if start < 0 else start
            length = max(0, size - start)
        self._check((start,), (length,))
        if length == 0:
            return b""
        if self.held is not None:
            at, data = self.held
            if at <= start and start + length <= at + len(data):
                return data[start - at:start - at + length]
        return self.store.read_version(self.key, self.etag, [(start, length)])[0]

    def sources(self, offsets: Sequence[int], lengths: Sequence[int]) -> list:
        """The ranges as ("bytes", blob, offset, length) sources: nearby ranges are
        fetched as one request, all requests concurrently, all with If-Match."""
        self._check(offsets, lengths)
        order = sorted(range(len(offsets)), key=offsets.__getitem__)
        spans: list = []      # [start, end, members]
        for i in order:
            start, end = offsets[i], offsets[i] + lengths[i]
            if spans and start <= spans[-1][1] + COALESCE:
                spans[-1][1] = max(spans[-1][1], end)
                spans[-1][2].append(i)
            else:
                spans.append([start, end, [i]])
        fetch = [(s, e - s) for s, e, _ in spans if e > s]
        blobs = iter(self.store.read_version(self.key, self.etag, fetch)) if fetch else iter(())
        out: list = [None] * len(offsets)
        for start, end, members in spans:
            blob = next(blobs) if end > start else b""
            for i in members:
                out[i] = ("bytes", blob, offsets[i] - start, lengths[i])
        return out
