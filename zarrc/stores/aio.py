"""zarrc's own asyncio event loop, for the remote stores' asynchronous clients.

One loop per process runs in a daemon thread, started when first needed and
started anew in a forked child (the parent's thread does not exist there).
Synchronous code, from any thread, hands it coroutines with :func:`run`; the
caller's thread blocks on a ``concurrent.futures.Future`` and never on the loop
itself, so calling from inside another running loop (zarr-python's, a
notebook's) cannot deadlock.  Only a call from this loop's own thread would,
and that raises instead.
"""

from __future__ import annotations

import asyncio
import atexit
import concurrent.futures
import os
import sys
import threading
import time
from collections.abc import Awaitable, Callable, Coroutine, Sequence
from typing import Any, TypeVar

from zarrc.errors import StoreError
from zarrc.runtime.config import DEFAULT_CONCURRENCY

T = TypeVar("T")


_lock = threading.Lock()
_loop: asyncio.AbstractEventLoop | None = None
_thread: threading.Thread | None = None


def _serve(loop: asyncio.AbstractEventLoop, ready: threading.Event) -> None:
    asyncio.set_event_loop(loop)
    loop.call_soon(ready.set)
    loop.run_forever()


def get_loop() -> asyncio.AbstractEventLoop:
    """The process's zarrc event loop, running in its own daemon thread (started on first use)."""
    global _loop, _thread
    loop = _loop
    if loop is not None and _thread is not None and _thread.is_alive():
        return loop
    with _lock:
        if _loop is None or _thread is None or not _thread.is_alive():
            loop = asyncio.new_event_loop()
            ready = threading.Event()
            thread = threading.Thread(target=_serve, args=(loop, ready), name="zarrc-io", daemon=True)
            thread.start()
            ready.wait()
            _loop, _thread = loop, thread
        return _loop


# seconds an exiting process that used obstore waits for its runtime's threads (see _stop_at_exit)
EXIT_GRACE = 0.05


def _stop_at_exit() -> None:
    """At interpreter exit (``atexit``, before daemon threads are frozen): cancel what
    the loop still runs, stop it and wait for its thread, so no client library's
    callback reaches a finalizing interpreter (a remote client's runtime would abort)."""
    global _loop, _thread
    loop, thread = _loop, _thread
    if loop is None or thread is None or not thread.is_alive():
        return

    def cancel_all() -> None:
        for task in asyncio.all_tasks(loop):
            task.cancel()
        loop.call_soon(loop.stop)

    loop.call_soon_threadsafe(cancel_all)
    thread.join(timeout=5)
    _loop = _thread = None
    if "obstore" in sys.modules:
        # obstore's Rust runtime (pyo3-async-runtimes over tokio) hands each result to
        # Python from a thread of its own and lets go of its Python references just
        # after: an interpreter finalizing at that moment aborts the process (seen here:
        # about 1 exit in 60 right after a request; none in 150 with this pause).
        time.sleep(EXIT_GRACE)


atexit.register(_stop_at_exit)


def _after_fork() -> None:
    """In a forked child: forget the parent's loop (its thread was not copied)."""
    global _loop, _thread, _lock
    _loop, _thread, _lock = None, None, threading.Lock()


if hasattr(os, "register_at_fork"):
    os.register_at_fork(after_in_child=_after_fork)


def in_loop_thread() -> bool:
    """True if the caller runs on zarrc's loop thread (where blocking on it would deadlock)."""
    return _thread is not None and threading.current_thread() is _thread


def run(coro: Coroutine[Any, Any, T]) -> T:
    """Run ``coro`` on zarrc's loop and return its result (or raise its exception),
    blocking the calling thread until it is done.  Callable from any thread, also
    from inside another thread's running event loop.  A KeyboardInterrupt while
    waiting cancels the coroutine.  Raises StoreError if called from zarrc's own
    loop thread (a coroutine there must await instead)."""
    future = submit(coro)
    try:
        return future.result()
    except BaseException:
        future.cancel()
        raise


def submit(coro: Coroutine[Any, Any, T]) -> concurrent.futures.Future[T]:
    """Start ``coro`` on zarrc's loop and return at once: a future whose ``result()``
    waits for it (raising its exception) and whose ``cancel()`` cancels it.
    Raises StoreError if called from zarrc's own loop thread."""
    if in_loop_thread():
        coro.close()
        raise StoreError("a synchronous zarrc store call was made from zarrc's I/O loop thread "
                         "(it would wait for itself)")
    return asyncio.run_coroutine_threadsafe(coro, get_loop())


async def bounded(semaphore: asyncio.Semaphore, make: Callable[[], Awaitable[T]]) -> T:
    """Await ``make()`` while holding ``semaphore``; returns its result."""
    async with semaphore:
        return await make()


async def gather_bounded(makers: Sequence[Callable[[], Awaitable[T]]], semaphore: asyncio.Semaphore) -> list[T]:
    """The results of ``maker()`` for each of ``makers``, in order, at most as many
    running at once as ``semaphore`` allows.  The first exception cancels the rest
    and is raised."""
    if not makers:
        return []
    if len(makers) == 1:
        return [await bounded(semaphore, makers[0])]
    return await gather_all([bounded(semaphore, make) for make in makers])


async def gather_all(coros: Sequence[Awaitable[T]]) -> list[T]:
    """The results of ``coros``, run at once, in order.  The first exception cancels
    the others, waits for them to end and is raised."""
    tasks = [asyncio.ensure_future(coro) for coro in coros]
    try:
        return list(await asyncio.gather(*tasks))
    except BaseException:
        for task in tasks:
            task.cancel()
        await asyncio.gather(*tasks, return_exceptions=True)
        raise


def run_many(makers: Sequence[Callable[[], Awaitable[T]]], concurrency: int = DEFAULT_CONCURRENCY) -> list[T]:
    """Run the coroutines ``maker()`` of ``makers`` on zarrc's loop, at most
    ``concurrency`` at once, from synchronous code; returns their results in order
    (see :func:`run`, :func:`gather_bounded`)."""

    async def main() -> list[T]:
        return await gather_bounded(makers, asyncio.Semaphore(concurrency))

    return run(main())


class LoopSemaphore:
    """An asyncio.Semaphore of ``limit`` for zarrc's loop, made anew when the loop is
    (after a fork): one store's bound on requests in flight, shared by all threads."""

    def __init__(self, limit: int) -> None:
        self.limit = limit
        self._made: tuple[asyncio.AbstractEventLoop, asyncio.Semaphore] | None = None

    def get(self) -> asyncio.Semaphore:
        """The semaphore for the running loop (call on zarrc's loop)."""
        loop = asyncio.get_running_loop()
        made = self._made
        if made is None or made[0] is not loop:
            made = self._made = (loop, asyncio.Semaphore(self.limit))
        return made[1]
