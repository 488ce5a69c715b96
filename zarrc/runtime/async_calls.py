"""Where the asyncio API's coroutines run their synchronous calls: ``run_sync``
awaits ``fn(*args, **kwargs)`` run on ``call_executor()``, a thread pool of its own
(``config.threads`` threads), so the event loop goes on while the kernels work
without the GIL.  One hand-off per call, nothing per chunk."""

from __future__ import annotations

import contextvars
import functools
import threading
from collections.abc import Callable
from typing import TYPE_CHECKING, Any

from zarrc.runtime.config import config

if TYPE_CHECKING:
    from concurrent.futures import ThreadPoolExecutor

_executor: ThreadPoolExecutor | None = None
_executor_size = 0
_executor_lock = threading.Lock()


def call_executor() -> ThreadPoolExecutor:
    """The executor the coroutines run their synchronous calls on: ``config.threads``
    threads (made on first use, made again when the setting grows).  Its own, not
    zarrc's worker pool (a call waiting there for pool threads could hold them all)
    nor the event loop's default executor (left to the application)."""
    global _executor, _executor_size
    workers = max(1, config.threads)
    with _executor_lock:
        if _executor is None or _executor_size < workers:
            # (concurrent.futures is imported here, not by `import zarrc`; a replaced
            # executor is dropped, not shut down: a call may be about to submit to it)
            from concurrent.futures import ThreadPoolExecutor

            _executor = ThreadPoolExecutor(max_workers=workers, thread_name_prefix="zarrc-async")
            _executor_size = workers
        return _executor


async def run_sync(fn: Callable[..., Any], /, *args: Any, **kwargs: Any) -> Any:
    """``fn(*args, **kwargs)`` run on ``call_executor()`` (in a copy of the caller's
    context, as ``asyncio.to_thread``), awaited without blocking the event loop."""
    import asyncio  # (imported already wherever a coroutine runs; not by `import zarrc`)

    call = functools.partial(contextvars.copy_context().run, fn, *args, **kwargs)
    return await asyncio.get_running_loop().run_in_executor(call_executor(), call)

