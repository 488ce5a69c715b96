"""zarrc's thread count inside dask: its default (a dask thread's share of the
cores) against a fixed 1 and a fixed all-cores count, in the same run.

```
python bench/dask_threads.py               # 256 MiB, a few minutes on 2 cores
python bench/dask_threads.py --small       # 32 MiB, a smoke test
python bench/dask_threads.py --cluster     # also on a LocalCluster of 2 worker processes
```

The store: a 3-D float32 field (``--mib`` MiB, smooth data with noise), zstd
level 3 in chunks of 64 x 64 x 64 (1 MiB), in a local directory.  The work:
``da.from_array(array, chunks=(64, 256, 256)).mean()`` (16 chunks per dask task),
computed under

- dask's threaded scheduler with as many threads as cores (dask's default): the
  default gives each dask thread cores // threads = 1 zarrc thread, "all cores"
  gives each of them every core (cores x cores threads at once);
- dask's threaded scheduler with one thread: the default gives that thread every
  core, "1" leaves the others idle;
- (``--cluster``) a LocalCluster of 2 worker processes of cores / 2 threads each:
  the default counts the threads of both workers on the host (the settings are
  set in the workers with ``client.run``).

Each figure is the median of ``--repeat`` runs, the settings interleaved (default,
1, all cores, default, ...) so that a shared machine's drift hits them alike; the
ratios are the default's time over each fixed count's (target: at most about 1
against both: the default is never the worse choice).
"""

from __future__ import annotations

import argparse
import logging
import statistics
import sys
import tempfile
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))

import dask
import dask.array as da

import zarrc
from bench._common import MiB, machine_facts, print_table, smooth_field, write_json
from zarrc.runtime.cores import process_cores

CHUNK = (64, 64, 64)
DASK_CHUNKS = (64, 256, 256)
ZSTD = [{"name": "zstd", "configuration": {"level": 3, "checksum": False}}]


def threads_setting(value: int | None) -> dict:
    """config.set's argument for a fixed count, or back to the default (zarr-python's
    key takes None for the default; zarrc's ``threads`` takes only counts)."""
    return {"threads": value} if value is not None else {"threading.max_workers": None}


def make_store(root: Path, mib: int) -> zarrc.Array:
    side = 512 if mib >= 128 else 256
    shape = (max(64, mib * MiB // (side * side * 4) // 64 * 64), side, side)
    arr = zarrc.create_array(str(root / "field.zarr"), shape=shape, dtype="f4", chunks=CHUNK,
                             compressors=ZSTD)
    block = 64
    for z in range(0, shape[0], block):
        arr[z:z + block] = smooth_field((min(block, shape[0] - z), *shape[1:]), "f4", seed=z)
    return arr


def timed_mean(arr: zarrc.Array, **compute) -> float:
    x = da.from_array(arr, chunks=DASK_CHUNKS)
    t0 = time.perf_counter()
    dask.compute(x.mean(), **compute)
    return time.perf_counter() - t0


def default_in_dask_thread(dask_threads: int) -> int:
    """zarrc's default thread count as a task of the threaded scheduler sees it."""
    return dask.compute(dask.delayed(lambda: zarrc.config.threads)(), scheduler="threads",
                        num_workers=dask_threads)[0]


def local_case(arr: zarrc.Array, dask_threads: int, settings: dict, repeat: int) -> dict:
    times: dict[str, list[float]] = {name: [] for name in settings}
    for _ in range(repeat):
        for name, value in settings.items():
            with zarrc.config.set(threads_setting(value)):
                times[name].append(timed_mean(arr, scheduler="threads", num_workers=dask_threads))
    return times


def cluster_case(arr: zarrc.Array, settings: dict, repeat: int) -> tuple[str, dict]:
    import distributed
    cores = process_cores()
    per_worker = max(1, cores // 2)
    times: dict[str, list[float]] = {name: [] for name in settings}
    with distributed.LocalCluster(n_workers=2, threads_per_worker=per_worker, processes=True,
                                  host="127.0.0.1", dashboard_address=None,
                                  silence_logs=logging.ERROR) as cluster, \
            distributed.Client(cluster, set_as_default=False) as client:
        for _ in range(repeat):
            for name, value in settings.items():
                client.run(zarrc.config.set, threads_setting(value))
                times[name].append(timed_mean(arr, scheduler=client))
        client.run(zarrc.config.set, threads_setting(None))
        shares = client.submit(lambda: zarrc.config.threads, pure=False).result()
    return f"LocalCluster 2 x {per_worker} threads (default = {shares})", times


def main(argv=None) -> int:
    p = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    p.add_argument("--mib", type=int, default=256, help="size of the store's data")
    p.add_argument("--repeat", type=int, default=5)
    p.add_argument("--small", action="store_true", help="32 MiB, 3 runs: a smoke test")
    p.add_argument("--cluster", action="store_true", help="also on a LocalCluster")
    p.add_argument("--json", default=".bench/dask_threads.json")
    args = p.parse_args(argv)
    if args.small:
        args.mib, args.repeat = 32, 3
    facts = machine_facts()
    cores = process_cores()
    print(f"# {facts['cpu_model']}, {cores} cores usable, load {facts['load_avg_1m']}")
    settings = {"default": None, "1": 1, "all cores": cores}
    rows, payload = [], []
    with tempfile.TemporaryDirectory(prefix="zarrc-bench-") as tmp:
        arr = make_store(Path(tmp), args.mib)
        mib = arr.nbytes / MiB
        print(f"# store {arr.shape} float32 ({mib:.0f} MiB), chunks {CHUNK}, zstd 3; "
              f"dask chunks {DASK_CHUNKS}; x.mean()")
        cases = [(f"threaded, {n} dask thread{'s' * (n > 1)} (default = {default_in_dask_thread(n)})",
                  local_case(arr, n, settings, args.repeat)) for n in sorted({cores, 1}, reverse=True)]
        if args.cluster:
            cases.append(cluster_case(arr, settings, args.repeat))
        for case, times in cases:
            medians = {name: statistics.median(t) for name, t in times.items()}
            for name, t in medians.items():
                rows.append([case, name, round(t * 1e3, 1), round(mib / t, 1),
                             round(medians["default"] / t, 2)])
                payload.append({"case": case, "threads": name, "median_s": t, "mib_per_s": mib / t,
                                "default_over_this": medians["default"] / t, "times_s": times[name]})
    print_table(rows, ["case", "zarrc threads", "median ms", "MiB/s", "default / this"])
    print("\ntarget: 'default / this' at most about 1 against both fixed counts")
    write_json(args.json, {"machine": facts, "repeat": args.repeat, "mib": args.mib, "results": payload})
    return 0


if __name__ == "__main__":
    sys.exit(main())
