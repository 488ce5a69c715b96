"""MPI ranks writing one array: zarrc.mpi's collective writer and creation, and
independent writers (``array[sel] = values`` on every rank), each case asserting
that no written value is lost.  The ranks run tests/mpi_writers.py under
``mpiexec -n 2`` and ``-n 4`` (oversubscribed), one launch per rank count for all
cases; data written collectively is read back with zarr-python too.  Also the
owner plan of the collective writer (zarrc.mpi.plan_owners) in-process, and the
docs' example under mpiexec."""

from __future__ import annotations

import importlib.util
import json
import os
import shutil
import subprocess
import sys
from pathlib import Path

import numpy as np
import pytest

import zarrc
import zarrc.mpi
from zarrc.errors import ArgumentError

HERE = Path(__file__).resolve().parent
SCRIPT = HERE / "mpi_writers.py"
EXAMPLE = HERE.parent / "docs" / "examples" / "mpi_write.py"
TIMEOUT = 180

sys.path.insert(0, str(HERE))
import mpi_writers

MPIEXEC = shutil.which("mpiexec")
WHY_NOT = ("no mpiexec on PATH (scripts/_common.sh's ensure_mpi installs Open MPI)" if MPIEXEC is None
           else "mpi4py is not installed (the test extra has it)" if importlib.util.find_spec("mpi4py") is None
           else None)
if WHY_NOT is not None and os.environ.get("CI") == "true":
    # (CI's scripts install Open MPI and mpi4py: there, a missing one is a failure, not a skip)
    raise RuntimeError(f"CI runs the MPI tests, but {WHY_NOT}")
needs_mpi = pytest.mark.skipif(WHY_NOT is not None, reason=WHY_NOT or "")


def mpiexec(n: int, *args: str) -> subprocess.CompletedProcess:
    """Run ``python args`` on ``n`` ranks (as root too; more ranks than cores)."""
    assert MPIEXEC is not None
    version = subprocess.run([MPIEXEC, "--version"], check=False, capture_output=True, text=True).stdout
    open_mpi = "Open MPI" in version or "OpenRTE" in version
    env = dict(os.environ, OMPI_ALLOW_RUN_AS_ROOT="1", OMPI_ALLOW_RUN_AS_ROOT_CONFIRM="1",
               OMPI_MCA_btl_vader_single_copy_mechanism="none")   # (no ptrace in containers)
    cmd = [MPIEXEC, "-n", str(n)] + (["--oversubscribe"] if open_mpi else []) + [sys.executable, *args]
    proc = subprocess.run(cmd, check=False, capture_output=True, text=True, timeout=TIMEOUT, env=env)
    assert proc.returncode == 0, f"{' '.join(cmd)} exited {proc.returncode}:\n{proc.stdout}\n{proc.stderr}"
    return proc


@pytest.fixture(scope="module", params=[2, 4], ids=["n2", "n4"])
def run(request, tmp_path_factory) -> tuple[Path, dict]:
    """All of mpi_writers' cases on n ranks: (their directory, their results)."""
    if WHY_NOT is not None:
        pytest.skip(WHY_NOT)
    root = tmp_path_factory.mktemp(f"mpi{request.param}")
    mpiexec(request.param, str(SCRIPT), str(root))
    return root, json.loads((root / "results.json").read_text())


def result(run: tuple[Path, dict], case: str) -> dict:
    res = run[1][case]
    assert not res["failed_ranks"], f"{case} raised on ranks {res['failed_ranks']}: {res.get('failed')}"
    return res


@needs_mpi
@pytest.mark.parametrize("case", list(mpi_writers.COLLECTIVE) + ["consolidated"])
def test_collective_write_loses_nothing(run, case) -> None:
    res = result(run, case)
    assert res["lost"] == 0, f"{case}: {res['lost']} of {res['total']} values lost"
    if case == "consolidated":
        assert "g/temperature" in res["consolidated"]


@needs_mpi
@pytest.mark.parametrize("case", list(mpi_writers.INDEPENDENT))
def test_independent_writes_lose_nothing(run, case) -> None:
    res = result(run, case)
    assert res["lost"] == 0, f"{case}: {res['lost']} of {res['total']} values lost"


@needs_mpi
@pytest.mark.parametrize("case", ["error-selection", "error-overlap", "error-create"])
def test_errors_raise_on_every_rank(run, case) -> None:
    """An error on one rank (or on all) raises on every rank; nothing is written."""
    res = result(run, case)
    errors = res["errors"]
    assert all(errors), f"{case}: ranks without an error: {errors}"
    if case == "error-selection":
        assert errors[-1].startswith("BoundsCheckError"), errors
        assert all(e.startswith("CollectiveError") and f"rank {len(errors) - 1}" in e for e in errors[:-1])
    elif case == "error-overlap":
        assert all(e.startswith("ArgumentError") and "overlap" in e for e in errors), errors
    else:
        assert errors[0].startswith(("MetadataError", "UnknownDataTypeError", "DataTypeValidationError", "ArgumentError")), errors
        assert all(e.startswith("CollectiveError") and "rank 0" in e for e in errors[1:]), errors
    if case != "error-create":
        assert res["written"] == 0


@needs_mpi
@pytest.mark.filterwarnings("ignore:Combining a `sharding_indexed` codec")   # (zarr-python, nested)
@pytest.mark.parametrize("case", list(mpi_writers.COLLECTIVE))
def test_collective_data_reads_in_zarr_python(run, case) -> None:
    zarr = pytest.importorskip("zarr")
    result(run, case)
    root = run[0]
    got = zarr.open_array(str(root / case), mode="r")[...]
    np.testing.assert_array_equal(got, np.load(root / f"{case}.npy"))


@needs_mpi
def test_docs_example(tmp_path) -> None:
    """docs/examples/mpi_write.py, as the parallel-writing page shows it, on 2 ranks."""
    if not EXAMPLE.exists():
        pytest.skip("docs/ is not beside tests/ here (an installed wheel's test run)")
    out = tmp_path / "example.zarr"
    proc = mpiexec(2, str(EXAMPLE), str(out))
    assert "lost 0 values" in proc.stdout, proc.stdout
    arr = zarrc.open_array(str(out), path="temperature", mode="r")
    assert arr.shards is not None and (arr[...] != 0).all()


# ---------------------------------------------------------------- the owner plan, in process

def boxes_cover(owners, shape, grid):
    """The owners' boxes: disjoint, made of whole chunks (clipped to the shape)."""
    live = [b for b in owners if b is not None]
    seen = np.zeros(shape, np.int8)
    for lo, hi in live:
        assert all(a % g == 0 for a, g in zip(lo, grid))
        assert all(b % g == 0 or b == n for b, g, n in zip(hi, grid, shape))
        seen[tuple(slice(a, b) for a, b in zip(lo, hi))] += 1
    assert seen.max() <= 1
    return seen


@pytest.mark.parametrize("nranks", [1, 2, 3, 4, 7])
def test_plan_owners_covers_the_slabs_once(nranks) -> None:
    shape, grid = (60, 100), (20, 24)
    slabs = []
    for a, b in mpi_writers.bounds(nranks, 60, 3):
        slabs.append(((a, 0), (b, 100)) if b > a else None)
    owners = zarrc.mpi.plan_owners(slabs, shape, grid, 4, nranks)
    seen = boxes_cover(owners, shape, grid)
    assert seen.all()                        # every touched chunk has one owner
    assert all(b is not None for b in owners)   # (15 shards: work for every rank)


def test_plan_owners_follows_the_slabs() -> None:
    """Column slabs are cut by columns (little sent), row slabs by rows; a rank owns
    the chunks its own slab mostly covers."""
    shape, grid = (64, 64), (8, 8)
    cols = [((0, 16 * r), (64, 16 * r + 16)) for r in range(4)]
    assert zarrc.mpi.plan_owners(cols, shape, grid, 4, 4) == cols
    rows = [((16 * r, 0), (16 * r + 16, 64)) for r in range(4)]
    assert zarrc.mpi.plan_owners(rows, shape, grid, 4, 4) == rows
    swapped = rows[::-1]                     # rank order is not the slabs' order
    assert zarrc.mpi.plan_owners(swapped, shape, grid, 4, 4) == swapped


def test_plan_owners_edge_cases() -> None:
    assert zarrc.mpi.plan_owners([None, None], (10,), (5,), 1, 2) == [None, None]
    # one chunk touched: the rank with most of it owns it
    assert zarrc.mpi.plan_owners([((0,), (1,)), ((1,), (4,))], (10,), (5,), 1, 2) == [None, ((0,), (5,))]
    # a 0-d array
    assert zarrc.mpi.plan_owners([None, ((), ())], (), (), 8, 2) == [None, ((), ())]
    # many ranks, few chunks: each chunk one owner, the others none
    owners = zarrc.mpi.plan_owners([((r,), (r + 1,)) for r in range(8)], (8,), (4,), 1, 8)
    assert sorted(b for b in owners if b is not None) == [((0,), (4,)), ((4,), (8,))]


class OneRank:
    """A communicator of one rank, for the calls' checks without mpiexec: the
    collectives of one rank are the identity (no mpi4py needed)."""

    def Get_rank(self) -> int:
        return 0

    def Get_size(self) -> int:
        return 1

    def allgather(self, obj):
        return [obj]

    def bcast(self, obj, root=0):
        return obj


def test_one_rank_write_and_its_errors(tmp_path) -> None:
    """On one rank (no messages) write is one ordinary write; bad input raises the
    classes the docstring names, and writes nothing."""
    comm = OneRank()
    arr = zarrc.mpi.create_array(comm, str(tmp_path / "a"), shape=(10, 12), chunks=(4, 4), shards=(8, 8),
                                 dtype="f8")
    zarrc.mpi.write(comm, arr, (slice(1, 9), slice(2, 11)), np.arange(72.0).reshape(8, 9))
    expected = np.zeros((10, 12))
    expected[1:9, 2:11] = np.arange(72.0).reshape(8, 9)
    np.testing.assert_array_equal(arr[...], expected)
    zarrc.mpi.write(comm, arr, 3, 7.0)                      # an int: one row, broadcast
    expected[3] = 7.0
    zarrc.mpi.write(comm, arr, None, None)                  # nothing
    np.testing.assert_array_equal(arr[...], expected)
    with pytest.raises(zarrc.errors.SelectionError, match="step 1"):
        zarrc.mpi.write(comm, arr, (slice(0, 10, 2),), 1.0)
    with pytest.raises(ArgumentError, match="does not fit"):
        zarrc.mpi.write(comm, arr, (slice(0, 2),), np.ones((3, 12)))
    with pytest.raises(zarrc.errors.ReadOnlyError):
        zarrc.mpi.write(comm, zarrc.open_array(str(tmp_path / "a"), mode="r"), (0,), 1.0)
    with pytest.raises(zarrc.errors.ArgumentTypeError):
        zarrc.mpi.write(comm, np.zeros(3), (0,), 1.0)
    np.testing.assert_array_equal(arr[...], expected)
    # a MemoryStore is refused only with several ranks; one rank may use it
    mem = zarrc.mpi.create_array(comm, {}, shape=(4,), dtype="i2")
    zarrc.mpi.write(comm, mem, ..., [1, 2, 3, 4])
    assert mem[...].tolist() == [1, 2, 3, 4]


def test_import_zarrc_does_not_import_mpi4py() -> None:
    code = "import sys, zarrc, zarrc.mpi; assert 'mpi4py' not in sys.modules, 'mpi4py imported'"
    subprocess.run([sys.executable, "-c", code], check=True, timeout=60)
