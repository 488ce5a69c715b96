"""MPI ranks writing slabs of one array, run by tests/test_mpi.py under mpiexec:

    mpiexec -n N python tests/mpi_writers.py OUTDIR [CASE ...]

Every case makes its array in OUTDIR/<case> (zarrc.mpi.create_array), has the ranks
write (collectively with zarrc.mpi.write, or each on its own with ``array[sel] =
values``), then rank 0 reads the array back and counts the values that differ
from what was written: the lost values.  Rank 0 writes OUTDIR/results.json
({case: {"lost": ..., "total": ..., "errors": [per-rank error class or None], ...}})
and, for the collective cases, OUTDIR/<case>.npy: the array's expected contents,
which the test reads back with zarr-python too.

Importable without mpi4py (the test imports ``CASES`` and ``values`` from it).
"""

from __future__ import annotations

import json
import sys
import time
import traceback
from pathlib import Path
from typing import Any

import numpy as np

ROUND = 1_000_000      # values of round k are k * ROUND + (1 + linear index)


def values(shape: tuple[int, ...], round_: int = 1) -> np.ndarray:
    """The values every case writes in round ``round_``: distinct, never the fill value 0."""
    return (np.arange(int(np.prod(shape)), dtype=np.int64).reshape(shape) + 1 + round_ * ROUND).astype(np.int32)


def bounds(n: int, length: int, shift: int) -> list[tuple[int, int]]:
    """``length`` cut into ``n`` runs; the inner cuts moved by ``shift`` (off chunk edges)."""
    cuts = [0] + [min(length, r * length // n + shift) for r in range(1, n)] + [length]
    return [(cuts[r], cuts[r + 1]) for r in range(n)]


def interleaved(rank: int, n: int, length: int, width: int) -> list[tuple[int, int]]:
    """The column blocks of ``width`` that rank ``rank`` of ``n`` owns: block j if j % n == rank."""
    return [(a, min(a + width, length)) for j, a in enumerate(range(0, length, width)) if j % n == rank]


def sharding(chunk_shape: list[int], codecs: list[dict]) -> dict:
    return {"name": "sharding_indexed", "configuration": {
        "chunk_shape": chunk_shape, "codecs": codecs,
        "index_codecs": [{"name": "bytes", "configuration": {"endian": "little"}}, {"name": "crc32c"}],
        "index_location": "end"}}


LE = {"name": "bytes", "configuration": {"endian": "little"}}
ZSTD = {"name": "zstd", "configuration": {"level": 0, "checksum": False}}

# collective cases: name -> (create_array keywords, how the ranks cut the array)
COLLECTIVE: dict[str, tuple[dict, str]] = {
    # unaligned row slabs sharing shards (the case, by rows)
    "collective-v3-sharded-rows": ({"shape": (60, 100), "chunks": (5, 8), "shards": (20, 24)}, "rows"),
    # unaligned column slabs, the last rank writing nothing
    "collective-v3-sharded-columns": ({"shape": (40, 130), "chunks": (4, 6), "shards": (8, 24)}, "columns-empty"),
    # chunk-aligned row slabs, no shards: every chunk whole
    "collective-v3-chunks-aligned": ({"shape": (80, 50), "chunks": (10, 10)}, "rows-aligned"),
    # zarr v2, unaligned
    "collective-v2-rows": ({"shape": (45, 70), "chunks": (7, 9), "zarr_format": 2}, "rows"),
    # nested sharding (outer shard 8 x 12, inner shards 4 x 6, chunks 2 x 3)
    "collective-v3-nested": ({"shape": (37, 53), "chunks": (8, 12), "serializer": sharding(
        [4, 6], [sharding([2, 3], [LE, ZSTD])])}, "columns"),
    # slabs leaving holes inside shards: what was there stays
    "collective-holes": ({"shape": (64, 90), "chunks": (4, 5), "shards": (16, 15)}, "holes"),
    # one plane per rank by an int index, in a 3-d array whose shards hold two planes
    "collective-planes": ({"shape": (4, 30, 40), "chunks": (1, 8, 8), "shards": (2, 16, 24)}, "planes"),
}

# independent cases: name -> (create_array keywords, column block width, rows per write)
INDEPENDENT: dict[str, tuple[dict, int, int]] = {
    # each rank its own shards: whole-shard regions, partial writes of one rank only
    "independent-own-shards": ({"shape": (24, 96), "chunks": (4, 4), "shards": (16, 16)}, 16, 4),
    # chunk-aligned blocks of different ranks in one shard
    "independent-chunks-share-shards": ({"shape": (24, 96), "chunks": (4, 4), "shards": (16, 32)}, 8, 4),
    # unaligned blocks of different ranks in one chunk (no sharding)
    "independent-unaligned-chunks": ({"shape": (24, 96), "chunks": (8, 8)}, 5, 3),
    # unaligned blocks of different ranks in one shard
    "independent-unaligned-shards": ({"shape": (24, 96), "chunks": (4, 4), "shards": (16, 16)}, 5, 3),
}
ROUNDS = 2

CASES = list(COLLECTIVE) + list(INDEPENDENT) + ["error-selection", "error-overlap", "error-create",
                                                 "consolidated"]


def slab_of(how: str, rank: int, n: int, shape: tuple[int, ...]) -> Any:
    """Rank ``rank``'s selection in a collective case (None: nothing to write)."""
    rows, cols = shape[-2], shape[-1]
    if how == "rows":
        a, b = bounds(n, rows, 3)[rank]
        return (slice(a, b), slice(None))
    if how == "rows-aligned":
        a, b = bounds(n, rows // 10, 0)[rank]
        return (slice(10 * a, 10 * b), ...)
    if how in ("columns", "columns-empty"):
        writers = n - 1 if how == "columns-empty" and n > 1 else n
        if rank >= writers:
            return None
        a, b = bounds(writers, cols, 5)[rank]
        return (slice(None), slice(a, b))
    if how == "holes":            # rows 2..61, columns 3..86, minus a gap of 2 rows after each rank's band
        a, b = bounds(n, 60, 1)[rank]
        return (slice(2 + a, 2 + max(a, b - 2)), slice(3, 87))
    if how == "planes":
        return rank % shape[0] if rank < shape[0] else None
    raise ValueError(how)


def run_collective(comm: Any, root: Path, name: str) -> dict:
    import zarrc
    import zarrc.mpi

    kwargs, how = COLLECTIVE[name]
    shape = kwargs["shape"]
    store = str(root / name)
    arr = zarrc.mpi.create_array(comm, store, dtype="int32", fill_value=0, **kwargs)
    before = values(shape, 0)
    if how == "holes":            # the whole array written first (by rank 0 alone)
        if comm.Get_rank() == 0:
            arr[...] = before
        comm.Barrier()
    new = values(shape, 1)
    sel = slab_of(how, comm.Get_rank(), comm.Get_size(), shape)
    zarrc.mpi.write(comm, arr, sel, None if sel is None else new[sel])
    expected = before if how == "holes" else np.zeros(shape, np.int32)
    for r in range(comm.Get_size()):
        s = slab_of(how, r, comm.Get_size(), shape)
        if s is not None:
            expected[s] = new[s]
    result: dict = {}
    if comm.Get_rank() == 0:
        got = zarrc.open_array(store, mode="r")[...]
        result = {"lost": int((got != expected).sum()), "total": int(expected.size)}
        np.save(root / f"{name}.npy", expected)
    return result


def run_independent(comm: Any, root: Path, name: str) -> dict:
    import zarrc
    import zarrc.mpi

    kwargs, width, band = INDEPENDENT[name]
    shape = kwargs["shape"]
    store = str(root / name)
    arr = zarrc.mpi.create_array(comm, store, dtype="int32", fill_value=0, **kwargs)
    rank, n = comm.Get_rank(), comm.Get_size()
    blocks = interleaved(rank, n, shape[1], width)
    lost = 0
    for k in range(1, ROUNDS + 1):
        new = values(shape, k)
        comm.Barrier()
        for r0 in range(0, shape[0], band):
            for a, b in blocks:
                sel = (slice(r0, r0 + band), slice(a, b))
                arr[sel] = new[sel]
        comm.Barrier()
        if rank == 0:
            lost += int((zarrc.open_array(store, mode="r")[...] != new).sum())
    return {"lost": lost, "total": ROUNDS * int(np.prod(shape))} if rank == 0 else {}


def run_error(comm: Any, root: Path, name: str) -> dict:
    """The rank that errs and every other rank must raise, and none may hang."""
    import zarrc
    import zarrc.mpi

    rank, n = comm.Get_rank(), comm.Get_size()
    store = str(root / name)
    error = None
    try:
        if name == "error-create":
            zarrc.mpi.create_array(comm, store, shape=(10, 10), dtype="no-such-type" if rank == 0 else "i4")
        else:
            arr = zarrc.mpi.create_array(comm, store, shape=(20, 20), chunks=(5, 5), dtype="i4")
            if name == "error-selection":
                sel = (slice(0, 5), 99) if rank == n - 1 else (slice(5 * rank, 5 * rank + 5), slice(None))
                zarrc.mpi.write(comm, arr, sel, 1)
            else:                 # every rank writes rows 0..9: the slabs overlap
                zarrc.mpi.write(comm, arr, (slice(0, 10), slice(None)) if n > 1 else (slice(0, 10),), 1)
                if n == 1:
                    raise RuntimeError("(one rank: nothing overlaps)")
    except Exception as exc:  # noqa: BLE001 - every rank's error is the result
        error = type(exc).__name__ + ": " + str(exc)[:200]
    errors = comm.gather(error, root=0)
    nothing = None
    if rank == 0 and name != "error-create":
        nothing = int((zarrc.open_array(store, mode="r")[...] != 0).sum())
    return {"errors": errors, "written": nothing} if rank == 0 else {}


def run_consolidated(comm: Any, root: Path, name: str) -> dict:
    import zarrc
    import zarrc.mpi

    store = str(root / name)
    rank, n = comm.Get_rank(), comm.Get_size()
    if rank == 0:
        zarrc.create_group(store)
    comm.Barrier()
    arr = zarrc.mpi.create_array(comm, store, name="g/temperature", shape=(24, 36), chunks=(6, 6),
                                 shards=(12, 12), dtype="int32", consolidate=True)
    new = values((24, 36), 1)
    a, b = bounds(n, 24, 1)[rank]
    zarrc.mpi.write(comm, arr, (slice(a, b),), new[a:b])
    if rank != 0:
        return {}
    group = zarrc.open_consolidated(store)
    got = group["g/temperature"][...]
    return {"lost": int((got != new).sum()), "total": int(new.size),
            "consolidated": sorted(group.metadata.consolidated_metadata["metadata"])}


def main(argv: list[str]) -> int:
    from mpi4py import MPI

    comm = MPI.COMM_WORLD
    root = Path(argv[1])
    names = argv[2:] or CASES
    results: dict[str, dict] = {}
    for name in names:
        t0 = time.perf_counter()
        try:
            if name in COLLECTIVE:
                result = run_collective(comm, root, name)
            elif name in INDEPENDENT:
                result = run_independent(comm, root, name)
            elif name.startswith("error-"):
                result = run_error(comm, root, name)
            else:
                result = run_consolidated(comm, root, name)
        except Exception:  # noqa: BLE001 - reported to the test, and the next case runs
            result = {"failed": traceback.format_exc()}
            print(f"rank {comm.Get_rank()}: {name} failed:\n{result['failed']}", file=sys.stderr)
        failures = comm.gather(result.get("failed"), root=0)
        if comm.Get_rank() == 0:
            result["failed_ranks"] = [r for r, f in enumerate(failures or []) if f]
            result["seconds"] = round(time.perf_counter() - t0, 3)
            results[name] = result
    if comm.Get_rank() == 0:
        (root / "results.json").write_text(json.dumps(results, indent=1))
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv))
