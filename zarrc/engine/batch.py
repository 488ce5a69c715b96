"""The engine's shared batch primitives, used by every strategy.

A selection becomes per-dimension projections (zarrc.core.indexing; ints and slices
are planned natively by zarrc._kernels.plan); ``assemble`` concatenates them
into one plan table, whose cartesian product is one task per touched chunk;
``chunk_sources`` says where each task's chunk is (file paths built natively
for a store of plain files, else the keys' bytes); ``run_batch`` runs a native
batch on the threads the policy of zarrc.runtime.threads gives (the calling thread and
pool threads, each calling ``batch.run()`` until no task is left);
``raise_task_error`` raises a failed task's error, naming its chunk.
"""

from __future__ import annotations

import itertools
import math
import os
import time
from collections.abc import Callable, Generator, Iterator, Sequence
from contextlib import closing
from typing import Any

import numpy as np

from zarrc._kernels import slabs
from zarrc._kernels.batch import lingering
from zarrc._kernels.plan import COL_CHUNK, COL_FULL, COL_IDX, NCOLS, PROJECTION_COLS
from zarrc._kernels.read import set_max_output
from zarrc.core import indexing
from zarrc.engine.state import ChunkedArray
from zarrc.errors import ArgumentError, SelectionTooLargeError, StoreError, from_kernel
from zarrc.runtime.config import config
from zarrc.runtime.threads import batch_threads, run_parallel


def _memory_bytes() -> int | None:
    """This machine's physical memory in bytes (None where the system does not say)."""
    try:
        return os.sysconf("SC_PHYS_PAGES") * os.sysconf("SC_PAGE_SIZE")
    except (AttributeError, ValueError, OSError):
        return None


# a read's output larger than this is refused before it is allocated: it could not be
# held without swapping, and Linux's overcommit would let the allocation succeed and
# the OOM killer end the process as it is filled (set_memory_limit)
MEMORY_BYTES = _memory_bytes()
set_max_output(MEMORY_BYTES or 0)


def set_memory_limit(nbytes: int | None) -> int | None:
    """Refuse reads whose output is more than ``nbytes`` (None: this machine's memory);
    returns the limit it replaces (for tests)."""
    global MEMORY_BYTES
    old, MEMORY_BYTES = MEMORY_BYTES, (_memory_bytes() if nbytes is None else nbytes)
    set_max_output(MEMORY_BYTES or 0)
    return old


def too_large(shape: Sequence[int], dtype: Any, exc: BaseException | None = None) -> SelectionTooLargeError:
    """The error of a read whose output (``shape`` of ``dtype``) is more than this
    machine's memory or could not be allocated (``exc``)."""
    dt = np.dtype(dtype)
    nbytes = math.prod(shape) * dt.itemsize
    why = (f"cannot be allocated ({type(exc).__name__}: {exc})" if exc is not None else
           f"is more than this machine's memory ({MEMORY_BYTES} bytes)")
    return SelectionTooLargeError(f"the output of the read, {tuple(shape)} of {dt.str} "
                                  f"({nbytes} bytes), {why}")


def basic_output_counts(selection: Any, shape: Sequence[int]) -> list[int] | None:
    """Per dimension, the positions ``selection`` (ints, slices, an Ellipsis) takes
    (1 for an int), counted without planning, whose tables grow with the chunks
    selected; None for other selections, or one that does not fit ``shape``."""
    try:
        items = indexing.expand_ellipsis(selection, len(shape))
    except indexing.SelectionError:
        return None
    counts = []
    for item, size in zip(items, shape):
        if isinstance(item, slice):
            try:
                counts.append(len(range(*item.indices(size))))
            except (TypeError, ValueError):
                return None
        elif not isinstance(item, (int, np.integer)) or isinstance(item, bool):
            return None
        else:
            counts.append(1)
    return counts


def refuse_huge_read(selection: Any, shape: Sequence[int], dtype: np.dtype) -> None:
    """SelectionTooLargeError, before anything is planned, for a basic selection whose
    output is more than ``MEMORY_BYTES`` (see new_output)."""
    if MEMORY_BYTES is None or math.prod(shape) * dtype.itemsize <= MEMORY_BYTES:
        return          # (the whole array fits: so does any selection of it, uncounted)
    counts = basic_output_counts(selection, shape)
    n = 0 if counts is None else math.prod(counts)
    nbytes = n * np.dtype(dtype).itemsize
    if nbytes > MEMORY_BYTES:
        raise SelectionTooLargeError(
            f"the output of the read, a selection of {n} elements ({' x '.join(map(str, counts or ()))}) "
            f"of {np.dtype(dtype).str} ({nbytes} bytes) of an array of shape {tuple(shape)}, is more "
            f"than this machine's memory ({MEMORY_BYTES} bytes)")


def new_output(shape: Sequence[int], dtype: Any, pooled: bool = False) -> np.ndarray:
    """``np.empty(shape, dtype)`` for a read's output (``pooled``: from the memory of
    outputs freed before where ``slabs`` keeps it, no page faults); SelectionTooLargeError
    (a MemoryError too) if it is more than ``MEMORY_BYTES`` or cannot be allocated."""
    shape = tuple(int(n) for n in shape)
    if MEMORY_BYTES is not None and math.prod(shape) * np.dtype(dtype).itemsize > MEMORY_BYTES:
        raise too_large(shape, dtype)
    try:
        return slabs.empty(shape, dtype) if pooled else np.empty(shape, dtype)
    except MemoryError as exc:
        raise too_large(shape, dtype, exc) from None

# Writes bigger than this (raw bytes of the touched chunks) are split into batches,
# each encoded in memory before it is stored.
WRITE_BATCH_BYTES = 512 << 20

NO_INDEX = np.zeros(0, np.int64)

# Reads from stores that wait on a network fetch this many parts ahead of the one
# decoding (``fetched_ahead``, unless told otherwise): at most AHEAD + 1 parts'
# bytes are held at once.
AHEAD = 2


def run_batch(batch: Any, ntasks: int, work_bytes: int | None = None) -> None:
    """Run a native batch on the threads zarrc.runtime.threads.batch_threads gives it: the
    caller and pool workers, each taking chunk tasks until none are left.
    ``work_bytes``: the bytes the batch decodes or encodes (default: ``ntasks``
    whole chunks).  A batch with fewer tasks than threads whose tasks threads can
    share (a read of a few large blosc chunks: ReadBatch.can_split) shares them."""
    if work_bytes is None:
        work_bytes = ntasks * batch.chain.chunk_nbytes
    if ntasks < config.threads and batch.can_split(config.threads):
        workers, share = batch_threads(ntasks, work_bytes, True)
        if workers > ntasks:        # (threads to spare: see zarrc.runtime.threads.spare_threads)
            batch.split_on()
            if ntasks == 1:         # (pool threads lingering after such a read take its blocks)
                workers = max(1, workers - lingering())
            run_parallel(batch.run, workers, share=share, blocks=True)
            return
    workers, share = batch_threads(ntasks, work_bytes)
    run_parallel(batch.run, workers, share=share)


def spread_order(n: int, parts: int) -> np.ndarray:
    """A permutation of range(n) that takes its items from ``parts`` equal runs in turn
    (0, m, 2m, .., 1, m + 1, ..): chunk files that the workers create at the same time
    then lie in different directories, whose locks the kernel holds while it creates
    a file (on ext4 for as long as it searches for a free inode, long after many files
    were deleted)."""
    m = -(-n // parts)
    order = np.arange(parts * m).reshape(parts, m).T.ravel()
    return order[order < n]


# ---------------------------------------------------------------- plans

def assemble(dims: list[indexing.DimProjection]) -> tuple[np.ndarray, ...]:
    """Concatenate the dimensions' projections for the native batch.

    Returns (table (rows, NCOLS) with the COL_FULL column, local, out, tasks (n, ndim)),
    where ``tasks`` holds, per chunk task, its row in ``table`` for each dimension."""
    if all(isinstance(d.table, list) for d in dims):      # small selections: one array build
        rows = [r + (f,) for d in dims for r, f in zip(d.table, d.full)]
        table = np.array(rows, np.int64).reshape(-1, NCOLS)
        if all(len(d.table) == 1 for d in dims):
            return table, NO_INDEX, NO_INDEX, np.arange(len(dims), dtype=np.int64).reshape(1, -1)
        sizes = [len(d.table) for d in dims]
        return table, NO_INDEX, NO_INDEX, _product(sizes)
    tables: list[np.ndarray] = []
    locals_: list[np.ndarray] = []
    outs: list = []              # (d.out is an array where d.local is)
    idx0 = 0
    for d in dims:
        t = np.empty((len(d.table), NCOLS), np.int64)
        t[:, :PROJECTION_COLS] = d.table
        t[:, COL_FULL] = d.full
        if d.local is not None:
            t[:, COL_IDX] += idx0
            locals_.append(d.local)
            outs.append(d.out)
            idx0 += len(d.local)
        tables.append(t)
    table = np.concatenate(tables) if tables else np.zeros((0, NCOLS), np.int64)
    local = np.concatenate(locals_) if locals_ else NO_INDEX
    out = np.concatenate(outs) if outs else NO_INDEX
    return table, local, out, _product([len(t) for t in tables])


def planned(dims: indexing.Plan) -> tuple[np.ndarray, ...]:
    """(table, local, out, tasks, coords) of a plan: :func:`assemble` and
    :func:`task_coords` of projections, or a planned coordinate / mask selection's
    own arrays."""
    if isinstance(dims, indexing.Points):
        return dims.table, dims.local, dims.out, dims.tasks, dims.coords
    table, local, out, tasks = assemble(dims)
    return table, local, out, tasks, task_coords(table, tasks)


def task_coords(table: np.ndarray, tasks: np.ndarray) -> np.ndarray:
    """(ntasks, ndim) chunk grid coordinates of the tasks of :func:`assemble` (one
    empty row for a 0-d array)."""
    return table[tasks, COL_CHUNK] if tasks.shape[1] else np.zeros((1, 0), np.int64)


def tasks_full(table: np.ndarray, tasks: np.ndarray) -> np.ndarray:
    """Per task, whether its chunk is wholly selected (True for a 0-d array's one task)."""
    return table[tasks, COL_FULL].all(axis=1) if tasks.shape[1] else np.ones(len(tasks), bool)


def _product(sizes: list[int]) -> np.ndarray:
    """(n, ndim) rows into the concatenated table: the cartesian product of each
    dimension's rows (dimension d's rows start after those of dimensions < d)."""
    if not sizes:
        return np.zeros((1, 0), np.int64)
    offsets = np.cumsum([0] + sizes[:-1]).tolist()
    if math.prod(sizes) <= 256:        # small: plain Python beats numpy's per-call costs
        rows = itertools.product(*[range(o, o + n) for n, o in zip(sizes, offsets)])
        return np.array(list(rows), np.int64).reshape(-1, len(sizes))
    grids = np.meshgrid(*[np.arange(n, dtype=np.int64) + o for n, o in zip(sizes, offsets)],
                        indexing="ij")
    return np.ascontiguousarray(np.stack([g.ravel() for g in grids], axis=1))


def array_strides(dims: indexing.Plan,
                  strides: tuple[int, ...]) -> tuple[int, ...]:
    """Byte strides per array dimension: the user array's, 0 where the selection drops
    it.  Points: the 1-d user array's stride on the last dimension (the one whose
    rows list the points), 0 on the others."""
    if isinstance(dims, indexing.Points):
        return (0,) * (dims.ndim - 1) + (strides[0],)
    return dropped_strides(tuple(d.dropped for d in dims), strides)


def dropped_strides(dropped: tuple[bool, ...], strides: tuple[int, ...]) -> tuple[int, ...]:
    """array_strides given, per array dimension, whether the selection drops it."""
    it = iter(strides)
    return tuple(0 if d else next(it) for d in dropped)


# ---------------------------------------------------------------- chunks

def key_paths(arr: ChunkedArray, keys: list[str]) -> list | None:
    """Native batch sources naming the files of ``keys`` (a store of plain files),
    else None."""
    files = arr.files
    if files is None:
        return None
    n = len(arr.prefix)
    return [("path", files + os.fsencode(k[n:])) for k in keys]


def chunk_sources(arr: ChunkedArray, coords: np.ndarray) -> tuple[Any, Any]:
    """(sources for a native batch, the chunk keys or a function returning them):
    file paths built natively from ``coords`` for a store of plain files (no key
    strings unless an error needs one), else the keys' paths or stored bytes."""
    if arr.path_head is not None:
        return ("paths", arr.path_head, arr.path_separator, coords), lambda: arr.chunk_keys(coords)
    keys = arr.chunk_keys(coords)
    sources = key_paths(arr, keys)
    return (arr.store.get_many(keys) if sources is None else sources), keys


def raise_task_error(batch: Any, arr: ChunkedArray, keys: Any) -> None:
    """Raise the error of the batch's first failed task, naming its chunk key
    (``keys``: the keys, or a function returning them)."""
    def label(t: int) -> str:
        names = keys() if callable(keys) else keys
        return f"chunk {names[t]} of {arr.name}"
    raise_batch_error(batch, label)


def raise_batch_error(batch: Any, label: Any) -> None:
    """Raise the error of the batch's first failed task (a MemoryError as it is, else
    through ``errors.from_kernel``), prefixed with ``label(task)``."""
    failed = batch.first_error()
    if failed is None:
        return
    t, exc = failed
    if isinstance(exc, MemoryError):
        raise exc
    raise from_kernel(exc, f"{label(t)}: ") from None


# ---------------------------------------------------------------- operands

def check_operand(arr: ChunkedArray, dims: indexing.Plan, a: np.ndarray,
                  what: str) -> None:
    """ArgumentError unless ``a`` has the selection's shape and the array's dtype (the
    native workers index it by the plan without further checks)."""
    shape = indexing.dims_shape(dims)
    ndim = dims.ndim if isinstance(dims, indexing.Points) else len(dims)
    if ndim != len(arr.shape) or a.shape != shape or a.dtype != arr.dtype:
        raise ArgumentError(f"{what} of shape {a.shape} and dtype {a.dtype} does not match the "
                            f"selection: shape {shape}, dtype {arr.dtype}")


def broadcast_value(arr: ChunkedArray, value: Any, shape: tuple[int, ...]) -> np.ndarray:
    """``value`` as ``arr.dtype`` broadcast to ``shape``, as numpy assignment does."""
    value = np.asarray(value, dtype=arr.dtype)
    extra = value.ndim - len(shape)
    if extra > 0 and all(n == 1 for n in value.shape[:extra]):
        value = value.reshape(value.shape[extra:])     # as numpy: leading 1s of the value go
    try:
        return np.broadcast_to(value, shape)
    except ValueError:
        raise ArgumentError(f"could not broadcast value of shape {value.shape} to selection "
                            f"shape {shape}") from None


def points_value(arr: ChunkedArray, points: indexing.Points, value: Any) -> np.ndarray:
    """``value`` for the points of a coordinate or mask selection, 1-d: one item
    broadcast; as many items as points, in C order (zarr-python flattens the value of
    a coordinate selection); else broadcast to the selection's shape first."""
    value = np.asarray(value, dtype=arr.dtype)
    if value.size == 1 or value.ndim == 0:
        return broadcast_value(arr, value.reshape(()), (points.nsel,))
    if value.size == points.nsel:
        return value.reshape(-1)
    return broadcast_value(arr, value, points.shape).reshape(-1)


# ---------------------------------------------------------------- conflicts

# How often a partial write whose chunks or shards other writers changed while it
# read-modified-wrote them (a store with conditional writes) is made again
CONFLICT_RETRIES = 16


def conflict_attempts(arr: ChunkedArray, what: str, lost: set[str]) -> Iterator[int]:
    """Attempt numbers 0 .. CONFLICT_RETRIES of a conditional write of ``what``
    ("chunks", "shards"), pausing before each retry (2 ms, doubled, at most 200 ms);
    once they are spent, StoreError naming the keys in ``lost`` (the set the caller
    keeps the last attempt's losers in)."""
    for attempt in range(CONFLICT_RETRIES + 1):
        if attempt:
            time.sleep(min(0.2, 0.002 * 2 ** (attempt - 1)))
        yield attempt
    raise StoreError(f"{arr.name}: {what} {sorted(lost)[:5]} were changed by other writers on each of "
                     f"{CONFLICT_RETRIES + 1} conditional writes")


def fetched_windows(arr: ChunkedArray, coords: np.ndarray, window: int
                    ) -> Generator[tuple[int, int, Any, Any], None, None]:
    """(lo, hi, the batch sources of chunks ``coords[lo:hi]``, their keys) of each
    window of ``window`` chunks, for a store whose reads wait on a network: the
    windows after the one the caller decodes already being fetched
    (``Store.fetch_many`` through ``fetched_ahead``), so that at most three windows'
    bytes are held.  Close it when done (``contextlib.closing``): the fetches left
    are cancelled."""
    keys = arr.chunk_keys(coords)
    spans = [(lo, min(lo + window, len(coords))) for lo in range(0, len(coords), window)]
    with closing(fetched_ahead(spans, lambda span: arr.store.fetch_many(keys[span[0]:span[1]]),
                               lambda fetch: fetch.cancel())) as parts:
        for (lo, hi), sources in parts:
            yield lo, hi, sources, keys[lo:hi]


def fetched_ahead(parts: Sequence[Any], fetch: Callable[[Any], Any], drop: Callable[[Any], object],
                  ahead: int = AHEAD, as_done: bool = False) -> Generator[tuple[Any, Any], None, None]:
    """(part, ``fetch(part).result()``) for each part, the fetches of the next
    ``ahead`` parts under way while the caller uses one: I/O overlaps decoding.
    ``fetch`` starts one and returns a future; ``drop`` releases a future not
    used (the caller stopped or failed).  The parts come in order, or, with
    ``as_done`` (``fetch`` then returns ``concurrent.futures.Future`` objects), the
    first of those under way to be fetched first, so that a slow response holds
    up no decoding.  Close the generator when done (``contextlib.closing``) so
    that the futures left are dropped at once."""
    pending = [(part, fetch(part)) for part in parts[:ahead]]
    later = iter(parts[ahead:])
    try:
        while pending:
            first = 0
            if as_done and not pending[0][1].done():
                # (here: `import zarrc` does not import concurrent.futures, tests/test_import.py)
                from concurrent.futures import FIRST_COMPLETED, wait

                wait([future for _, future in pending], return_when=FIRST_COMPLETED)
                first = next((i for i, (_, future) in enumerate(pending) if future.done()), 0)
            part, future = pending.pop(first)
            got = future.result()
            for upcoming in itertools.islice(later, 1):
                pending.append((upcoming, fetch(upcoming)))
            yield part, got
    finally:
        for _, future in pending:
            drop(future)
