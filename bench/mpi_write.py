"""MPI ranks writing unaligned slabs of one sharded array: zarrc's collective writer
against independent writes (zarrc, and zarr-python), with the values each loses.

    python bench/mpi_write.py                  # 2 and 4 ranks, 1 GiB, 3 runs each
    python bench/mpi_write.py --ranks 2 --size-mib 256 --repeat 2 --json /tmp/mpi.json

One ``mpiexec -n N`` per rank count runs this file with ``--worker``.  The array:
float32, 1 GiB (16384 x 16384 for the default size), shards of 4096 x 4096 (64 MiB),
inner chunks 512 x 512, zstd level 0 (zarr-python's default), made fresh by rank 0
before every run (outside the time).  Rank r writes rows cut at r * rows / N + rows / 16 + 123:
the cuts fall inside shards, so neighbouring ranks share shards (and inner chunks).

Modes, interleaved in each repetition (collective, zarrc, zarr-python, ...):

- ``collective``: ``zarrc.mpi.write(comm, array, slab, values)``: the ranks exchange
  their slabs' parts so each shard is written once, by one rank;
- ``zarrc independent``: ``array[slab] = values`` on every rank, with the
  ``write_locking`` setting in force (shown in the header; a build without the
  setting takes no lock, and ranks sharing a shard can lose values);
- ``zarr-python independent``: the same with ``zarr.open_array(...)[slab] = values``.

Time: from a barrier to the last rank's return (median of the runs).  Lost values:
after each run every rank reads its slab back (zarrc) and counts what differs;
the table shows the largest count of any run.  Results also go to
``.bench/mpi-write.json`` (``--json PATH`` to change).  As root, mpiexec runs with
Open MPI's OMPI_ALLOW_RUN_AS_ROOT variables set, and ``--oversubscribe`` with more
ranks than cores.
"""

from __future__ import annotations

import argparse
import json
import os
import shutil
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path

if __package__ in (None, ""):  # run as a script: make `bench` importable
    sys.path.insert(0, str(Path(__file__).resolve().parent.parent))

import numpy as np

from bench._common import REPO_ROOT, machine_facts, print_table, write_json

COLS = 16384
SHARDS = (4096, 4096)
CHUNKS = (512, 512)
MODES = ("collective", "zarrc independent", "zarr-python independent")


def slab_rows(rank: int, n: int, rows: int) -> tuple[int, int]:
    """Rank ``rank``'s rows: the even cuts moved by rows / 16 + 123 (off shard and chunk edges)."""
    shift = rows // 16 + 123
    cuts = [0] + [min(rows, r * rows // n + shift) for r in range(1, n)] + [rows]
    return cuts[rank], cuts[rank + 1]


def slab_values(a: int, b: int) -> np.ndarray:
    """Rows a..b of a smooth field with noise in the low bits (compresses like
    simulation output), made block by block in float32."""
    out = np.empty((b - a, COLS), np.float32)
    x = np.cos(np.arange(COLS, dtype=np.float32) / np.float32(300))
    rng = np.random.default_rng(a)
    for r0 in range(a, b, 1024):
        r1 = min(b, r0 + 1024)
        y = np.sin(np.arange(r0, r1, dtype=np.float32) / np.float32(500))[:, None]
        out[r0 - a:r1 - a] = np.float32(280) + np.float32(10) * y * x
        out[r0 - a:r1 - a] += rng.standard_normal((r1 - r0, COLS), dtype=np.float32) * np.float32(1e-3)
    return out


def worker(args: argparse.Namespace) -> int:
    from mpi4py import MPI

    import zarrc
    import zarrc.mpi

    comm = MPI.COMM_WORLD
    rank, n = comm.Get_rank(), comm.Get_size()
    rows = args.size_mib * (1 << 20) // (COLS * 4)
    path = str(Path(args.dir) / "mpi-write.zarr")
    a, b = slab_rows(rank, n, rows)
    mine = (slice(a, b), slice(None))
    values = slab_values(a, b)
    try:
        import zarr
    except ImportError:
        zarr = None
    times: dict[str, list[float]] = {m: [] for m in MODES}
    lost: dict[str, list[int]] = {m: [] for m in MODES}
    for _ in range(args.repeat):
        for mode in MODES:
            if mode.startswith("zarr-python") and zarr is None:
                continue
            arr = zarrc.mpi.create_array(comm, path, shape=(rows, COLS), dtype="float32", chunks=CHUNKS,
                                         shards=SHARDS, fill_value=0, overwrite=True)
            target = zarr.open_array(path, mode="r+") if mode.startswith("zarr-python") else arr
            comm.Barrier()
            t0 = time.perf_counter()
            if mode == "collective":
                zarrc.mpi.write(comm, arr, mine, values)
            else:
                target[mine] = values
            t1 = time.perf_counter()
            start, end = comm.allreduce(t0, op=MPI.MIN), comm.allreduce(t1, op=MPI.MAX)
            times[mode].append(end - start)
            back = zarrc.open_array(path, mode="r")[mine]
            lost[mode].append(comm.allreduce(int((back != values).sum()), op=MPI.SUM))
            del back
    if rank == 0:
        Path(args.out).write_text(json.dumps({"times": times, "lost": lost, "rows": rows}))
    return 0


def run_ranks(n: int, args: argparse.Namespace, workdir: str) -> dict:
    mpiexec = shutil.which("mpiexec")
    if mpiexec is None:
        raise SystemExit("mpi_write: no mpiexec on PATH (scripts/_common.sh's ensure_mpi installs Open MPI)")
    version = subprocess.run([mpiexec, "--version"], check=False, capture_output=True, text=True).stdout
    oversubscribe = ["--oversubscribe"] if ("Open MPI" in version or "OpenRTE" in version) else []
    out = Path(workdir) / f"result-{n}.json"
    env = dict(os.environ, OMPI_ALLOW_RUN_AS_ROOT="1", OMPI_ALLOW_RUN_AS_ROOT_CONFIRM="1")
    cmd = [mpiexec, "-n", str(n), *oversubscribe, sys.executable, str(Path(__file__).resolve()), "--worker",
           "--size-mib", str(args.size_mib), "--repeat", str(args.repeat), "--dir", workdir, "--out", str(out)]
    subprocess.run(cmd, check=True, env=env)
    return json.loads(out.read_text())


def locking() -> str:
    import zarrc

    try:
        return f"write_locking={zarrc.config.write_locking!r}"
    except AttributeError:
        return "no write_locking setting in this build: independent writers take no lock"


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--ranks", default="2,4", help="rank counts, comma-separated (default 2,4)")
    parser.add_argument("--size-mib", type=int, default=1024, help="array size (default 1024 MiB)")
    parser.add_argument("--repeat", type=int, default=3)
    parser.add_argument("--dir", default=None, help="where the array is written (default: a temporary directory)")
    parser.add_argument("--json", default=str(REPO_ROOT / ".bench" / "mpi-write.json"))
    parser.add_argument("--worker", action="store_true", help=argparse.SUPPRESS)
    parser.add_argument("--out", help=argparse.SUPPRESS)
    args = parser.parse_args(argv)
    if args.worker:
        return worker(args)
    facts = machine_facts()
    print(f"MPI write: {args.size_mib} MiB float32 array, shards {SHARDS}, chunks {CHUNKS}, zstd 0; "
          f"{args.repeat} runs; {locking()}")
    print(f"machine: {facts['cores']} cores, load {facts['load_avg_1m']}")
    workdir = tempfile.mkdtemp(prefix="bench-mpi-", dir=args.dir)
    results = {}
    rows_out = []
    try:
        for n in (int(v) for v in args.ranks.split(",")):
            res = run_ranks(n, args, workdir)
            results[n] = res
            med = {m: statistics.median(t) for m, t in res["times"].items() if t}
            gb = args.size_mib * (1 << 20) / 1e9
            coll = med["collective"]
            zpy = med.get("zarr-python independent")
            rows_out.append([n, coll, gb / coll, med["zarrc independent"], zpy,
                             med["zarrc independent"] / coll, None if zpy is None else zpy / coll,
                             max(res["lost"]["collective"]), max(res["lost"]["zarrc independent"]),
                             max(res["lost"]["zarr-python independent"] or [0]) if zpy else None])
    finally:
        shutil.rmtree(workdir, ignore_errors=True)
    print()
    print_table(rows_out, ["ranks", "collective s", "GB/s", "zarrc indep. s", "zarr-python indep. s",
                           "zarrc indep./coll.", "zarr-python/coll.", "lost coll.", "lost zarrc indep.",
                           "lost zarr-python"])
    print("(seconds: medians; ratios > 1: the collective writer is faster; lost: most of any run, "
          f"of {args.size_mib * (1 << 20) // 4} values)")
    print(f"load at end: {os.getloadavg()[0]:.2f}")
    path = write_json(args.json, {"machine": facts, "args": vars(args), "locking": locking(),
                                  "results": results})
    print(f"results: {path}")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
