"""zarrc's default thread count inside dask (zarrc.runtime.cores): a thread of dask's threaded
scheduler gets its share of the cores (cores // the pool's threads), a task thread of a
distributed worker the host's cores over the cluster's threads on that host; a value
set explicitly wins; outside dask the process's cores.  Real dask and distributed."""

from __future__ import annotations

import logging
import os
import threading

import pytest

import zarrc
from zarrc.runtime.cores import default_threads, process_cores
from zarrc.runtime.threads import batch_threads

dask = pytest.importorskip("dask")
distributed = pytest.importorskip("distributed")


@pytest.fixture(autouse=True)
def default_setting():
    """Each test starts from the default (no ZARRC_NUM_THREADS, nothing set)."""
    if os.environ.get("ZARRC_NUM_THREADS"):
        pytest.skip("ZARRC_NUM_THREADS is set: the default is not in use")
    with zarrc.config.set({"threading.max_workers": None}):
        yield


def seen_in_task() -> tuple[int, int]:
    """(config.threads, the threads a big native batch would get) in a task."""
    return zarrc.config.threads, batch_threads(1000, 1 << 30)[0]


def on_threaded(n: int) -> list[tuple[int, int]]:
    """seen_in_task in 2 * n tasks of the threaded scheduler with n threads."""
    tasks = [dask.delayed(seen_in_task, pure=False)() for _ in range(2 * n)]
    return list(dask.compute(*tasks, scheduler="threads", num_workers=n))


def test_outside_dask_the_process_cores():
    assert zarrc.config.threads == process_cores() == default_threads()
    if hasattr(os, "sched_getaffinity"):
        assert process_cores() == len(os.sched_getaffinity(0))
    # a plain thread (not dask's) too, with dask imported
    seen = []
    t = threading.Thread(target=lambda: seen.append(zarrc.config.threads))
    t.start()
    t.join()
    assert seen == [process_cores()]


@pytest.mark.parametrize("n", [1, 2, 3, 8])
def test_threaded_scheduler_share(n):
    share = max(1, process_cores() // n)
    for threads, batch in on_threaded(n):
        assert threads == share
        assert batch <= share
    assert zarrc.config.threads == process_cores()        # the caller's own count unchanged


def test_explicit_setting_wins_in_dask_threads():
    with zarrc.config.set(threads=5):
        assert {threads for threads, _ in on_threaded(4)} == {5}
    with zarrc.config.set({"threading.max_workers": 3}):
        assert {threads for threads, _ in on_threaded(2)} == {3}


@pytest.fixture(scope="module")
def cluster_client():
    """A LocalCluster of 2 worker processes of 1 thread each on the loopback address
    (each worker's own count alone would give it all the cores: the host's count
    halves them)."""
    with distributed.LocalCluster(n_workers=2, threads_per_worker=1, processes=True,
                                  host="127.0.0.1", dashboard_address=None,
                                  silence_logs=logging.ERROR) as cluster, \
            distributed.Client(cluster, set_as_default=False) as client:
        client.wait_for_workers(2)
        yield client


def test_distributed_worker_share(cluster_client):
    # 2 dask threads on this host: each task thread's share is cores // 2 (at least 1)
    share = max(1, min(process_cores(), (os.cpu_count() or 1) // 2))
    futures = [cluster_client.submit(seen_in_task, pure=False) for _ in range(8)]
    for threads, batch in cluster_client.gather(futures):
        assert threads == share
        assert batch <= share
    # outside a task (client.run on the worker): the worker process's own cores
    assert set(cluster_client.run(lambda: zarrc.config.threads).values()) == {process_cores()}


def test_distributed_explicit_setting_wins(cluster_client):
    cluster_client.run(zarrc.config.set, threads=6)
    try:
        futures = [cluster_client.submit(seen_in_task, pure=False) for _ in range(4)]
        assert {threads for threads, _ in cluster_client.gather(futures)} == {6}
    finally:
        cluster_client.run(zarrc.config.set, {"threading.max_workers": None})
