"""The default of ``zarrc.config.threads``: the cores this process may use, and
inside a dask task, that task thread's share of them.

A thread of dask's threaded scheduler (one of a pool of n threads) gets
``cores // n``; a task thread of a ``distributed`` worker gets the host's cores
divided by the threads of all the cluster's workers on its host (asked of the
scheduler every few minutes per worker process, and only by a worker with fewer
threads than cores), and never more than its own process's cores divided by its
own threads.  So dask threads x zarrc threads stay
within the cores, and a single dask thread on a big machine still uses them all.

dask is never imported here: a thread is looked up only in the dask modules the
process has already imported (``sys.modules``).  The answer is kept per thread for
a few seconds (dask's pools and a worker's threads do not change under a task).
"""

from __future__ import annotations

import os
import sys
import threading
import time
from typing import Any

# How long a thread's share, and a worker's count of its host's threads, are kept.
THREAD_CACHE_SECONDS = 10.0
HOST_CACHE_SECONDS = 300.0

_local = threading.local()
_hosts: dict[str, tuple[float, int | None]] = {}       # worker address -> (expiry, host threads)
_process_cores: int | None = None
_host_lock = threading.Lock()                   # (one question to the scheduler at a time)


def process_cores() -> int:
    """The cores this process may use: its CPU affinity where the system has one
    (a batch job's or ``taskset``'s cores), else all of the machine's; read once."""
    global _process_cores
    if _process_cores is None:
        try:
            _process_cores = len(os.sched_getaffinity(0)) or 1
        except (AttributeError, OSError):
            _process_cores = os.cpu_count() or 1
    return _process_cores


def default_threads() -> int:
    """Threads a call made on this thread uses when ``threads`` is not set: the
    process's cores, or this dask thread's share of them (at least 1)."""
    if "dask" not in sys.modules and "distributed" not in sys.modules:
        return process_cores()
    now = time.monotonic()
    kept = getattr(_local, "share", None)
    if kept is not None and kept[0] > now:
        return kept[1]
    share = dask_share(threading.current_thread())
    threads = process_cores() if share is None else share
    _local.share = (now + THREAD_CACHE_SECONDS, threads)
    return threads


def dask_share(thread: threading.Thread) -> int | None:
    """The cores ``thread`` may use if it runs dask tasks (a distributed worker's task
    thread, a thread of dask's threaded scheduler), else None."""
    worker = _distributed_worker()
    if worker is not None:
        return _worker_share(worker)
    pool_threads = _threaded_pool_size(thread)
    if pool_threads is not None:
        return max(1, process_cores() // pool_threads)
    return None


def _distributed_worker() -> Any:
    """The distributed Worker running the current task, or None."""
    module = sys.modules.get("distributed.worker")
    if module is None:
        return None
    try:
        return module.get_worker()
    except ValueError:                  # not inside a task
        return None


def _threaded_pool_size(thread: threading.Thread) -> int | None:
    """The size of the dask threaded-scheduler pool ``thread`` belongs to, or None."""
    threaded = sys.modules.get("dask.threaded")
    if threaded is None:
        return None
    try:
        pools = [getattr(threaded, "default_pool", None)]
        for by_size in list(getattr(threaded, "pools", {}).values()):
            pools.extend(list(by_size.values()))
    except RuntimeError:                # (changed while copied: not this thread's pool)
        return None
    for pool in pools:
        if pool is None:
            continue
        # (a new pool thread runs its first task before the pool adds it to _threads:
        # its name, the pool's unique prefix + "_<n>", tells it too)
        prefix = getattr(pool, "_thread_name_prefix", None)
        if thread in getattr(pool, "_threads", ()) or (prefix and thread.name.startswith(prefix + "_")):
            return int(pool._max_workers)
    return None


def _worker_share(worker: Any) -> int:
    """A distributed worker task thread's cores: the host's cores over the cluster's
    threads on this host, at most this process's cores over its own threads."""
    own = max(1, int(worker.state.nthreads))
    share = max(1, process_cores() // own)
    if share == 1:
        return 1                        # (no need to ask how many others share the host)
    host_threads = _host_threads(worker)
    if host_threads is not None:
        share = min(share, max(1, (os.cpu_count() or 1) // max(host_threads, own)))
    return share


def _host_threads(worker: Any) -> int | None:
    """The threads of all the workers on ``worker``'s host, as the scheduler lists
    them (kept HOST_CACHE_SECONDS), or None if it cannot be asked from here."""
    kept = _hosts.get(worker.address)
    if kept is not None and kept[0] > time.monotonic():
        return kept[1]
    import asyncio  # (here: ``import zarrc`` does not import asyncio)
    try:
        asyncio.get_running_loop()
        return None                     # (on an event loop: a blocking call would hang it)
    except RuntimeError:
        pass
    with _host_lock:
        kept = _hosts.get(worker.address)       # (another thread may have asked meanwhile)
        if kept is not None and kept[0] > time.monotonic():
            return kept[1]
        try:
            from distributed.utils import sync
            info = sync(worker.loop, worker.scheduler.identity, callback_timeout=5)
            threads = sum(int(w.get("nthreads", 0)) for w in info["workers"].values()
                          if w.get("host") == worker.ip)
        except Exception:               # noqa: BLE001 - any failure: the worker's own count
            threads = None
        # (a failure is kept too: not asked again by every call)
        _hosts[worker.address] = (time.monotonic() + HOST_CACHE_SECONDS, threads)
        return threads
