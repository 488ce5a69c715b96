"""Runs selections: plan -> batch of chunk tasks -> native workers on a thread pool.

Read: an int/slice selection of an array of plain chunk (or shard) files goes
to the native BasicReader (see basic_reader), which does all of what follows in
one call and holds the GIL for a few microseconds.  Otherwise the selection
becomes per-dimension projections (zarrc.indexing; ints and slices are planned
natively by zarrc._kernels.plan); their cartesian product is one task per
touched chunk; the chunk keys are resolved in one go (file paths built natively
for a store of plain files, bytes fetched with ``get_many`` for others); then up to
``config.threads`` workers (the calling thread and pool threads, see run_batch)
each call ``ReadBatch.run()``, which decodes and scatters chunks without the GIL
until none are left (a small part of a large chunk decodes only what it needs).
Write: the same in reverse, in two phases (encode all, then store) so that an
error stores nothing, or in one when every chunk is wholly overwritten.  Python
work is per call and per chunk key, never per element.
"""

from __future__ import annotations

import itertools
import math
import os
from collections.abc import Callable
from dataclasses import dataclass
from typing import Any

import numpy as np

from zarrc import indexing
from zarrc._kernels.batch import CHECKSUM, IO
from zarrc._kernels.chain import Chain
from zarrc._kernels.chunk_files import temp_tag
from zarrc._kernels.plan import plan_basic
from zarrc._kernels.read import BasicReader, ReadBatch
from zarrc._kernels.write import DELETED, STORED, WriteBatch
from zarrc.config import config
from zarrc.errors import ArgumentError, ChecksumError, CodecError, StoreError
from zarrc.threads import counted_call, run_parallel, spare_threads

# Writes bigger than this (raw bytes of the touched chunks) are split into batches,
# each encoded in memory before it is stored.
WRITE_BATCH_BYTES = 512 << 20
PARALLEL_MIN_BYTES = 512 << 10    # per thread beyond the caller (see run_batch)


@dataclass
class ChunkedArray:
    """What the engine needs to know about an array.

    shape, chunks : array and chunk shape.
    dtype : the in-memory (native byte order) numpy dtype.
    fill : the fill value as ``dtype.itemsize`` bytes, native order.
    chain : the codec chain prepared for (chunks, dtype), or None with ``codec``.
    chunk_keys : maps an (n, ndim) int64 array of chunk coordinates to store keys.
    store : the store; ``name`` names the array in error messages.
    """

    shape: tuple[int, ...]
    chunks: tuple[int, ...]
    dtype: np.dtype
    fill: bytes
    chain: Chain
    chunk_keys: Callable[[np.ndarray], list[str]]
    store: Any
    name: str = "/"
    write_empty_chunks: bool = False
    levels: tuple = ()          # sharding levels (zarrc.sharded.ShardLevel); chunks = innermost
    shard_cache: Any = None     # decoded shard indexes (zarrc.sharded.ShardIndexCache)
    codec: Any = None           # whole-chunk decode/encode in Python (zarrc.engine_python)
    fill_object: Any = None     # the fill value of object (variable-length) items
    # a store of plain files: chunk (i, j, ...) is the file path_head + b"i" + sep + b"j" ...
    path_head: bytes | None = None
    path_separator: bytes = b"/"
    basic: Any = None           # a pipeline.BasicReader (see basic_reader)


# ---------------------------------------------------------------- batches

def run_batch(batch: Any, ntasks: int, work_bytes: int | None = None) -> None:
    """Run a native batch on up to ``config.threads`` threads: the caller and pool
    workers, each taking chunk tasks until none are left.  ``work_bytes``: the bytes
    the batch decodes or encodes (default: ``ntasks`` whole chunks); each thread
    beyond the caller needs PARALLEL_MIN_BYTES of it, as waking a pool worker costs
    more than it saves on less; and calls made at once from several Python threads
    share the cores (threads.spare_threads), a pool thread going on to another call
    when its own has no chunks left."""
    if work_bytes is None:
        work_bytes = ntasks * batch.chain.chunk_nbytes
    useful = min(config.threads, ntasks, max(1, work_bytes // PARALLEL_MIN_BYTES))
    # a call that could use more threads than the other calls leave it takes those
    # freed when they end
    run_parallel(batch.run, min(spare_threads(config.threads), useful), share=useful > 1)


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

    Returns (table (rows, 7) with the FULL column, local, out, tasks (n, ndim)),
    where ``tasks`` holds, per chunk task, its row in ``table`` for each dimension."""
    if all(isinstance(d.table, list) for d in dims):      # small selections: one array build
        rows = [r + (f,) for d in dims for r, f in zip(d.table, d.full)]
        table = np.array(rows, np.int64).reshape(-1, 7)
        if all(len(d.table) == 1 for d in dims):
            return table, _NO_INDEX, _NO_INDEX, np.arange(len(dims), dtype=np.int64).reshape(1, -1)
        sizes = [len(d.table) for d in dims]
        return table, _NO_INDEX, _NO_INDEX, _product(sizes)
    tables, locals_, outs = [], [], []
    idx0 = 0
    for d in dims:
        t = np.empty((len(d.table), 7), np.int64)
        t[:, :6] = d.table
        t[:, 6] = d.full
        if d.local is not None:
            t[:, indexing.IDX] += idx0
            locals_.append(d.local)
            outs.append(d.out)
            idx0 += len(d.local)
        tables.append(t)
    table = np.concatenate(tables) if tables else np.zeros((0, 7), np.int64)
    local = np.concatenate(locals_) if locals_ else _NO_INDEX
    out = np.concatenate(outs) if outs else _NO_INDEX
    return table, local, out, _product([len(t) for t in tables])


_NO_INDEX = np.zeros(0, np.int64)


def task_coords(table: np.ndarray, tasks: np.ndarray) -> np.ndarray:
    """(ntasks, ndim) chunk grid coordinates of the tasks of :func:`assemble` (one
    empty row for a 0-d array)."""
    return table[tasks, indexing.CHUNK] if tasks.shape[1] else np.zeros((1, 0), np.int64)


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


def array_strides(dims: list[indexing.DimProjection], strides: tuple[int, ...]) -> tuple[int, ...]:
    """Byte strides per array dimension: the user array's, 0 where the selection drops it."""
    return dropped_strides(tuple(d.dropped for d in dims), strides)


def dropped_strides(dropped: tuple[bool, ...], strides: tuple[int, ...]) -> tuple[int, ...]:
    """array_strides given, per array dimension, whether the selection drops it."""
    it = iter(strides)
    return tuple(0 if d else next(it) for d in dropped)


def _paths(store: Any, keys: list[str]) -> list | None:
    local_path = getattr(store, "local_path", None)
    if local_path is None:
        return None
    try:
        return [("path", os.fsencode(local_path(k))) for k in keys]
    except (TypeError, NotImplementedError):
        return None


def chunk_sources(arr: ChunkedArray, coords: np.ndarray) -> tuple[Any, Any]:
    """(sources for a native batch, the chunk keys or a function returning them):
    file paths built natively from ``coords`` for a store of plain files (no key
    strings unless an error needs one), else the keys' paths or stored bytes."""
    if arr.path_head is not None:
        return ("paths", arr.path_head, arr.path_separator, coords), lambda: arr.chunk_keys(coords)
    keys = arr.chunk_keys(coords)
    sources = _paths(arr.store, keys)
    return (arr.store.get_many(keys) if sources is None else sources), keys


def raise_task_error(batch: Any, arr: ChunkedArray, keys: Any) -> None:
    """Raise the error of the batch's first failed task, naming its chunk key
    (``keys``: the keys, or a function returning them)."""
    failed = batch.first_error()
    if failed is None:
        return
    if callable(keys):
        keys = keys()
    t, exc = failed
    if isinstance(exc, MemoryError):
        raise exc
    context = f"chunk {keys[t]} of {arr.name}: {exc}"
    cls = ChecksumError if exc.code == CHECKSUM else StoreError if exc.code == IO else CodecError
    raise cls(context) from None


# ---------------------------------------------------------------- read / write

def basic_reader(arr: ChunkedArray) -> BasicReader | None:
    """The native reader of int/slice selections for an array of plain chunk (or
    shard, one level of sharding) files with a native chain, else None."""
    if arr.path_head is None or arr.chain is None or arr.codec is not None or len(arr.levels) > 1:
        return None
    labels, shards = arr.chunk_keys, ()      # names for errors; a sharded reader's extras
    if arr.levels:
        from zarrc import sharded

        def shard_labels(coords: np.ndarray) -> list[str]:
            return sharded.chunk_labels(arr, coords)
        labels = shard_labels
        shards = (arr.levels[0].shard_shape, arr.shard_cache.native,
                  lambda shard, fd, size: sharded.native_index(arr, shard, fd, size),
                  sharded.MAX_OPEN_SHARDS)

    def raise_error(batch: ReadBatch, coords: np.ndarray) -> None:
        raise_task_error(batch, arr, lambda: labels(coords))

    return BasicReader(arr.chain, arr.shape, arr.chunks, arr.dtype, arr.fill, arr.path_head,
                       arr.path_separator, PARALLEL_MIN_BYTES, run_batch, raise_error, *shards)


def read(arr: ChunkedArray, selection: Any) -> Any:
    """``arr[selection]`` as a new numpy array (0-d if every dimension is indexed by
    an integer, as zarr-python returns).  Raises SelectionError, CodecError,
    ChecksumError."""
    if arr.basic is not None:
        try:
            out = arr.basic.read(selection)
        except OSError as exc:       # a shard file that cannot be opened (not: is missing)
            if isinstance(exc, StoreError):
                raise
            raise StoreError(f"cannot read {exc.filename} of {arr.name}: {exc.strerror}") from None
        if out is not None:
            return out
    elif arr.codec is None:
        # ints and slices: planned natively, straight to the batch's arrays (the
        # BasicReader plans the same way: what it declines, this would too)
        planned = plan_basic(selection, arr.shape, arr.chunks)
        if planned is not None:
            table, tasks, coords, out_shape, dropped = planned
            out = np.empty(out_shape, arr.dtype)
            if out.size:
                _read_planned(arr, table, _NO_INDEX, _NO_INDEX, tasks, coords, out,
                              dropped_strides(dropped, out.strides))
            return out
    dims, out_shape = indexing.plan(selection, arr.shape, arr.chunks)
    out = np.empty(out_shape, arr.dtype)
    if out.size:
        read_into(arr, dims, out)
    return out


def _check_operand(arr: ChunkedArray, dims: list[indexing.DimProjection], a: np.ndarray,
                   what: str) -> None:
    """ValueError unless ``a`` has the selection's shape and the array's dtype (the
    native workers index it by the plan without further checks)."""
    shape = tuple(d.nsel for d in dims if not d.dropped)
    if len(dims) != len(arr.shape) or a.shape != shape or a.dtype != arr.dtype:
        raise ArgumentError(f"{what} of shape {a.shape} and dtype {a.dtype} does not match the "
                         f"selection: shape {shape}, dtype {arr.dtype}")


def read_into(arr: ChunkedArray, dims: list[indexing.DimProjection], out: np.ndarray) -> None:
    """Read the elements the projections select into ``out`` (writable, shape: ``nsel``
    of each dimension not dropped, dtype ``arr.dtype``, any strides).  Raises
    ValueError for a mismatched ``out``, CodecError / ChecksumError / StoreError for
    chunks that cannot be read."""
    _check_operand(arr, dims, out, "out")
    _read_into(arr, dims, out)


@counted_call
def _read_into(arr: ChunkedArray, dims: list[indexing.DimProjection], out: np.ndarray) -> None:
    if arr.codec is not None:
        from zarrc import engine_python
        engine_python.read_into(arr, dims, out)
        return
    table, local, outidx, tasks = assemble(dims)
    _read_native(arr, table, local, outidx, tasks, task_coords(table, tasks), out,
                 array_strides(dims, out.strides))


def _read_native(arr: ChunkedArray, table: np.ndarray, local: np.ndarray, outidx: np.ndarray,
                 tasks: np.ndarray, coords: np.ndarray, out: np.ndarray,
                 strides: tuple[int, ...]) -> None:
    """Read a planned selection (see assemble) with the native chain."""
    if arr.levels:
        from zarrc import sharded
        sharded.read_planned(arr, table, local, outidx, tasks, coords, out, strides)
        return
    sources, keys = chunk_sources(arr, coords)
    batch = ReadBatch(arr.chain, table, local, outidx, tasks, out, strides, arr.fill, sources)
    # uncompressed chunks: only the selected bytes are read and copied
    run_batch(batch, len(tasks), None if arr.chain.ncodecs else out.nbytes)
    raise_task_error(batch, arr, keys)


_read_planned = counted_call(_read_native)


def tmp_suffix() -> bytes:
    """The tag of a write's temporary file names (the rule: chunk_files.temp_path)."""
    return temp_tag()


def write(arr: ChunkedArray, selection: Any, value: Any) -> None:
    """``arr[selection] = value`` (numpy broadcasting).  Chunks left equal to the
    fill value everywhere are deleted instead of stored (unless
    ``write_empty_chunks``).  An error raised here has stored nothing."""
    dims, out_shape = indexing.plan(selection, arr.shape, arr.chunks)
    write_from(arr, dims, broadcast_value(arr, value, out_shape))


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


def write_from(arr: ChunkedArray, dims: list[indexing.DimProjection], value: np.ndarray) -> None:
    """Write ``value`` (native-order ``arr.dtype``, shape: ``nsel`` of each dimension
    not dropped, any strides, 0 for broadcast) to the elements the projections select:
    the write counterpart of :func:`read_into`."""
    _check_operand(arr, dims, value, "value")
    if value.size == 0:
        return
    _write_from(arr, dims, value)


@counted_call
def _write_from(arr: ChunkedArray, dims: list[indexing.DimProjection], value: np.ndarray) -> None:
    if arr.codec is not None:
        from zarrc import engine_python
        engine_python.write_from(arr, dims, value)
        return
    if arr.levels:
        from zarrc import sharded
        sharded.write_from(arr, dims, value)
        return
    table, local, outidx, tasks = assemble(dims)
    coords = task_coords(table, tasks)
    per_batch = max(1, WRITE_BATCH_BYTES // max(1, arr.chain.chunk_nbytes))
    strides = array_strides(dims, value.strides)
    for lo in range(0, len(tasks), per_batch):
        _write_batch(arr, table, local, outidx, tasks[lo:lo + per_batch],
                     coords[lo:lo + per_batch], value, strides)


def _write_batch(arr, table, local, outidx, tasks, coords, value, strides) -> None:
    if arr.path_head is not None:
        if len(tasks) > 2 and config.threads > 1 and table[tasks, 6].all():
            order = spread_order(len(tasks), config.threads)     # (files written at once)
            tasks, coords = tasks[order], coords[order]
        sources, keys = chunk_sources(arr, coords)
    else:
        keys = arr.chunk_keys(coords)
        sources = _paths(arr.store, keys)
    if sources is None:
        full = table[tasks, 6].all(axis=1) if tasks.shape[1] else np.ones(len(keys), bool)
        partial = [k for k, f in zip(keys, full) if not f]
        old = dict(zip(partial, arr.store.get_many(partial))) if partial else {}
        sources = [old.get(k) for k in keys]
    # a store that cannot delete keeps chunks that became all fill value
    write_empty = arr.write_empty_chunks or not getattr(arr.store, "supports_deletes", True)
    paths = isinstance(sources, tuple) or isinstance(sources[0], tuple)
    # chunks wholly overwritten need no old data, so nothing can fail half way:
    # each file is written as soon as its chunk is encoded
    commit_now = paths and bool(table[tasks, 6].all())
    batch = WriteBatch(arr.chain, table, local, outidx, np.ascontiguousarray(tasks), value, strides,
                       arr.fill, sources, tmp_suffix(), write_empty, commit_now)
    run_batch(batch, len(tasks))
    raise_task_error(batch, arr, keys)
    if commit_now:
        return
    if paths:
        batch.start_commit()
        run_batch(batch, len(tasks))
        raise_task_error(batch, arr, keys)
        return
    for t, key in enumerate(keys):
        outcome = batch.outcome(t)
        if outcome == STORED:
            arr.store.set(key, batch.encoded(t))
        elif outcome == DELETED:
            arr.store.delete(key)
