"""The shared worker pool: native calls that release the GIL run on it in parallel.

``run_parallel(fn, n)`` calls ``fn()`` on the calling thread and on up to n - 1
pool threads at once.  Each ``fn`` is expected to take work from a shared source
until none is left (a native batch's atomic counter, a queue of block ranges), so
workers that have not started once the caller is done are simply cancelled: a
busy pool never delays a call that could finish alone.
"""

from __future__ import annotations

import functools
import threading
from collections.abc import Callable, Iterable
from concurrent.futures import ThreadPoolExecutor

_pool: ThreadPoolExecutor | None = None
_pool_size = 0
_pool_lock = threading.Lock()
_calls = [0]                    # array reads and writes in progress, over all threads
_calls_lock = threading.Lock()


def counted_call(fn: Callable) -> Callable:
    """Decorate an array read or write: its calls in progress are counted."""
    @functools.wraps(fn)
    def call(*args: object) -> object:
        with _calls_lock:
            _calls[0] += 1
        try:
            return fn(*args)
        finally:
            with _calls_lock:
                _calls[0] -= 1
    return call


def spare_threads(threads: int) -> int:
    """Of ``threads``, how many one call may use: the cores the other calls in
    progress are not already keeping busy (at least 1).  Many Python threads each
    reading a little then each work alone, without handing work to the pool."""
    return max(1, threads - _calls[0] + 1)


def executor(workers: int) -> ThreadPoolExecutor:
    """The shared pool, grown to at least ``workers`` threads."""
    global _pool, _pool_size
    with _pool_lock:
        if _pool is None or _pool_size < workers:
            # The old pool is dropped, not shut down: another thread may be about to
            # submit to it (submit after shutdown raises RuntimeError).  Its idle
            # workers exit once the last caller holding it lets it go.
            _pool = ThreadPoolExecutor(max_workers=workers, thread_name_prefix="zarrc")
            _pool_size = workers
        return _pool


def run_parallel(fn: Callable[[], object], workers: int) -> None:
    """Run ``fn`` on the caller and ``workers - 1`` pool threads; re-raise the first error."""
    if workers <= 1:
        fn()
        return
    futures = [executor(workers - 1).submit(fn) for _ in range(workers - 1)]
    try:
        fn()
    finally:
        for f in futures:
            if not f.cancel():
                f.result()


def run_each(items: Iterable, fn: Callable[[object], object], workers: int) -> None:
    """``fn(item)`` for every item, on the caller and up to ``workers - 1`` pool
    threads, each taking the next item until none are left; re-raise the first error."""
    pending = iter(items)
    lock = threading.Lock()
    done = object()

    def work() -> None:
        while True:
            with lock:
                item = next(pending, done)
            if item is done:
                return
            fn(item)

    run_parallel(work, workers)
