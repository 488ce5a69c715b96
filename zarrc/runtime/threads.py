"""The shared worker pool, and the one thread policy: how many threads a call gets.

Policy: ``batch_threads`` (a native batch of chunk tasks: as many threads as
its work pays for, of those the calls in progress leave, see
``spare_threads``), ``item_threads`` (independent Python work items: chunks
decoded with numcodecs, shard files written), ``codec_threads`` (a single codec
call on one large buffer).  ``zarrc.config`` holds only the settings.

Pool: ``run_parallel(fn, n)`` calls ``fn()`` on the calling thread and on up to n - 1
pool threads at once.  Each ``fn`` is expected to take work from a shared source
until none is left (a native batch's atomic counter, a queue of block ranges), so
a pool thread that starts once the caller is done finds nothing to do (a busy
pool never delays a call that could finish alone), and one whose call has run
out of work helps another call in progress.  A read of one large blosc chunk
shares the chunk's blocks (ReadBatch.can_split); a pool thread that helped one
stays a moment in native code for the next one's blocks (``linger``).
"""

from __future__ import annotations

import functools
import os
import threading
from collections.abc import Callable, Iterable
from typing import TYPE_CHECKING, Any, TypeVar

from zarrc._kernels.batch import count_calls, linger, mark_pool_thread
from zarrc.runtime.config import config

if TYPE_CHECKING:
    from concurrent.futures import Future, ThreadPoolExecutor

T = TypeVar("T")

# Work (bytes decoded or encoded) each thread beyond the caller needs: waking a
# pool worker costs more than it saves on less.
PARALLEL_MIN_BYTES = 512 << 10

# A pool thread that helped decode the blocks of one large chunk (a read of few
# chunks, see ReadBatch.can_split) stays this long (seconds) for the blocks of the
# next one before it waits for work the usual way: back-to-back single-chunk reads
# then find a helper at once.
LINGER_SECONDS = 0.0005

_pool: ThreadPoolExecutor | None = None
_pool_size = 0
_pool_lock = threading.Lock()


def counted_call(fn: Callable) -> Callable:
    """Decorate an array read or write: its calls in progress are counted (in the
    native module, atomically: no lock to contend for)."""
    @functools.wraps(fn)
    def call(*args: object) -> object:
        count_calls(1)
        try:
            return fn(*args)
        finally:
            count_calls(-1)
    return call


def spare_threads(threads: int) -> int:
    """Of ``threads``, how many one call may use: the cores the other calls in
    progress are not already keeping busy (at least 1).  Many Python threads each
    reading a little then each work alone, without handing work to the pool."""
    return max(1, threads - count_calls(0) + 1)


def batch_threads(ntasks: int, work_bytes: int, split: bool = False) -> tuple[int, bool]:
    """(threads, share) for a native batch of ``ntasks`` chunk tasks doing
    ``work_bytes`` of work: up to ``config.threads``, one per task at most (or,
    ``split``: tasks shared by threads, see ReadBatch.can_split, any number), each
    beyond the caller needing PARALLEL_MIN_BYTES of the work, and no more than the
    calls in progress leave (spare_threads).  ``share``: the batch could use more
    than one thread, so pool threads freed by other calls may join it."""
    threads = config.threads
    useful = min(threads, threads if split else ntasks, max(1, work_bytes // PARALLEL_MIN_BYTES))
    return min(spare_threads(threads), useful), useful > 1


def item_threads(n: int) -> int:
    """Threads for ``n`` independent work items run with ``run_each``: up to
    ``config.threads``, one per item at most."""
    return min(config.threads, n)


def codec_threads(nbytes: int) -> int:
    """Threads a single codec call on ``nbytes`` bytes may use inside the codec: all
    of ``config.threads`` for a buffer of at least ``config.split_bytes`` from the
    main thread, else 1 (calls from other threads stay single-threaded so that many
    Python threads do not oversubscribe the cores)."""
    if nbytes >= config.split_bytes and threading.current_thread() is threading.main_thread():
        return config.threads
    return 1


def executor(workers: int) -> ThreadPoolExecutor:
    """The shared pool, grown to at least ``workers`` threads."""
    global _pool, _pool_size
    with _pool_lock:
        if _pool is None or _pool_size < workers:
            # The old pool is dropped, not shut down: another thread may be about to
            # submit to it (submit after shutdown raises RuntimeError).  Its idle
            # workers exit once the last caller holding it lets it go.
            # (concurrent.futures is imported here, not by `import zarrc`)
            from concurrent.futures import ThreadPoolExecutor

            _pool = ThreadPoolExecutor(max_workers=workers, thread_name_prefix="zarrc",
                                       initializer=mark_pool_thread)
            _pool_size = workers
        return _pool


class _Work:
    """One call's shareable work: ``fn`` takes items until none are left."""

    def __init__(self, fn: Callable[[], object], blocks: bool) -> None:
        self.fn = fn
        self.blocks = blocks          # a batch sharing the blocks of its chunks
        self.running = 1              # threads inside fn (the caller first)
        self.drained = False          # fn has returned somewhere: no items left to take
        self.error: BaseException | None = None
        self.idle = threading.Condition(_active_lock)


_active: list[_Work] = []           # calls whose items pool threads may take
_active_lock = threading.Lock()


def _leave(work: _Work, exc: BaseException | None) -> None:
    """A thread is out of ``work.fn`` (under _active_lock)."""
    work.running -= 1
    work.drained = True
    if exc is not None and work.error is None:
        work.error = exc
    if work.running == 0:
        work.idle.notify_all()


def _help() -> None:
    """A pool thread: take items of the calls in progress until none has any left.
    Once the call it came for runs out, it helps another: two calls started at
    once, one with a pool thread and one without, finish together."""
    while True:
        with _active_lock:
            work = next((w for w in _active if not w.drained), None)
            if work is None:
                return
            work.running += 1
        exc = None
        try:
            work.fn()
        except BaseException as e:          # noqa: BLE001 - re-raised by the caller
            exc = e
        with _active_lock:
            _leave(work, exc)
        if work.blocks:
            linger(LINGER_SECONDS)


def run_parallel(fn: Callable[[], object], workers: int, share: bool = False,
                 blocks: bool = False) -> None:
    """Run ``fn`` on the caller and up to ``workers - 1`` pool threads (which go on
    to other calls' items when this one has none left); re-raise the first error.
    ``share``: pool threads freed by other calls may join even if ``workers`` is 1
    (for calls with work enough to pay for one).  ``blocks``: ``fn`` shares the
    blocks of large chunks (ReadBatch.split_on): its pool threads linger for the next
    such chunk (LINGER_SECONDS)."""
    if workers <= 1 and not share:
        fn()
        return
    work = _Work(fn, blocks)
    with _active_lock:
        _active.append(work)
    if workers > 1:
        pool = executor(workers - 1)
        for _ in range(workers - 1):
            pool.submit(_help)
    exc = None
    try:
        fn()
    except BaseException as e:              # noqa: BLE001 - re-raised below
        exc = e
    with _active_lock:
        _leave(work, exc)
        _active.remove(work)
        while work.running:                 # pool threads finishing their last items
            work.idle.wait()
    if work.error is not None:
        raise work.error


def run_each(items: Iterable[T], fn: Callable[[T], object], workers: int) -> None:
    """``fn(item)`` for every item, on the caller and up to ``workers - 1`` pool
    threads, each taking the next item until none are left; re-raise the first error."""
    pending = iter(items)
    lock = threading.Lock()
    done: Any = object()      # (the end of the items; Any: next() gives T or it)

    def work() -> None:
        while True:
            with lock:
                item = next(pending, done)
            if item is done:
                return
            fn(item)

    run_parallel(work, workers)


# -- calls that wait on a network ---------------------------------------------------

# Threads of the pool for calls that mostly wait (a remote store's requests, which its
# own I/O loop bounds): not the kernels' pool, whose threads are the cores'.
IO_THREADS = 32
IO_PREFIX = "zarrc-io"
_io_pool: ThreadPoolExecutor | None = None
_io_lock = threading.Lock()


def run_io(items: Iterable[T], fn: Callable[[T], Any]) -> list:
    """``[fn(item) for item in items]``, the calls made at once on the I/O pool
    (``IO_THREADS`` threads, made on first use): for calls that wait on a remote
    store.  The first error (in the items' order) is raised, once all have ended.
    Called on one of the pool's threads, the calls are made one after another (a
    pool waiting on itself could run out of threads)."""
    items = list(items)
    if len(items) <= 1 or threading.current_thread().name.startswith(IO_PREFIX):
        return [fn(item) for item in items]
    global _io_pool
    with _io_lock:
        if _io_pool is None:
            from concurrent.futures import ThreadPoolExecutor

            _io_pool = ThreadPoolExecutor(max_workers=IO_THREADS, thread_name_prefix=IO_PREFIX)
        pool = _io_pool
    futures = [pool.submit(fn, item) for item in items]
    for future in futures:
        future.exception()          # (wait for every call: none outlives this one)
    return [future.result() for future in futures]


# Threads that prepare the next part of a streamed read (whose own requests go to
# the I/O pool through run_io: a pool of their own, so they never wait on themselves)
FETCH_THREADS = 8
_fetch_pool: ThreadPoolExecutor | None = None


def submit_fetch(fn: Callable[[], T]) -> Future[T]:
    """Start ``fn()`` on the fetch pool (``FETCH_THREADS`` threads, made on first use)
    and return its future: for a streamed read's next part, made ready while the
    caller decodes the part before."""
    global _fetch_pool
    with _io_lock:
        if _fetch_pool is None:
            from concurrent.futures import ThreadPoolExecutor

            _fetch_pool = ThreadPoolExecutor(max_workers=FETCH_THREADS, thread_name_prefix="zarrc-fetch")
        pool = _fetch_pool
    return pool.submit(fn)


# Threads making remote stores' blocking requests (stores.remote.Requests, which
# bounds each store's share): shared by every store, calls that only wait
REQUEST_THREADS = 64
_request_pool: ThreadPoolExecutor | None = None


def request_pool() -> ThreadPoolExecutor:
    """The request threads' pool (made on first use)."""
    global _request_pool
    with _io_lock:
        if _request_pool is None:
            from concurrent.futures import ThreadPoolExecutor

            _request_pool = ThreadPoolExecutor(max_workers=REQUEST_THREADS, thread_name_prefix="zarrc-request")
        return _request_pool


def _forget_io_pool() -> None:
    global _io_pool, _fetch_pool, _request_pool
    _io_pool = _fetch_pool = _request_pool = None     # (a forked child has none of their threads)


if hasattr(os, "register_at_fork"):
    os.register_at_fork(after_in_child=_forget_io_pool)
