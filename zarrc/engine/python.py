"""The Python strategy, for arrays the native pipeline cannot decode:
variable-length strings and bytes (object items), and Zarr v2 filters and
compressors that only numcodecs implements.

The plan is the native path's (zarrc.core.indexing, batch.assemble); the chunk bytes
of a call come from the store in one ``get_many``; workers on the shared pool
each take chunks until none are left, decode one (numcodecs' C codecs and
zarrc's release the GIL) and copy its selected part with one numpy assignment.
Writes encode every touched chunk before anything is stored, so an error stores
nothing.  ``arr.codec`` does the per-chunk work: ``decode(raw) -> ndarray`` of
the chunk shape and ``encode(chunk) -> bytes``; on a rectilinear grid
(``arr.chunks`` holding ``Edges``) it is a ``GridCodecs``, the codec of each chunk
shape (made once per shape), and the plan is made on the grid's boundaries.
"""

from __future__ import annotations

import math
import threading
from collections.abc import Callable
from typing import Any

import numpy as np

from zarrc._kernels.plan import COL_COUNT, COL_IDX, COL_OUT, COL_START, COL_STEP
from zarrc.codecs.shard_index import DamagedShardError
from zarrc.codecs.vlen import find_bad_item
from zarrc.core import indexing
from zarrc.core.chunk_grid import Edges
from zarrc.engine.batch import WRITE_BATCH_BYTES, planned, tasks_full
from zarrc.engine.state import ChunkedArray
from zarrc.engine.strategy import Strategy
from zarrc.errors import CodecError, ZarrcError
from zarrc.runtime.threads import counted_call, item_threads, run_each

_DELETE = object()


class GridCodecs:
    """The codecs of a rectilinear grid's chunks (``dims``: per dimension a chunk
    length or the ``Edges``), one per chunk shape, made by ``make(shape)`` when a
    chunk of that shape is first met."""

    def __init__(self, dims: tuple[Any, ...], make: Callable[[tuple[int, ...]], Any]) -> None:
        self.dims = dims
        self._make = make
        self._codecs: dict[tuple[int, ...], Any] = {}
        self._lock = threading.Lock()

    def at(self, coords: Any) -> tuple[Any, tuple[int, ...]]:
        """(codec, shape) of the chunk at grid ``coords``."""
        shape = tuple(int(d.edges[c]) if isinstance(d, Edges) else d for d, c in zip(self.dims, coords))
        codec = self._codecs.get(shape)
        if codec is None:
            with self._lock:
                codec = self._codecs.get(shape)
                if codec is None:
                    codec = self._codecs[shape] = self._make(shape)
        return codec, shape


def _codec(arr: ChunkedArray, coords: Any) -> tuple[Any, tuple[int, ...]]:
    """(codec, shape) of the chunk at grid ``coords``."""
    if isinstance(arr.codec, GridCodecs):
        return arr.codec.at(coords)
    return arr.codec, arr.chunks


class PythonStrategy(Strategy):
    """Reads and writes whole chunks with ``arr.codec`` in Python (general plan)."""

    @counted_call
    def read_into(self, dims: indexing.Plan, out: np.ndarray) -> None:
        read_into(self.arr, dims, out)

    @counted_call
    def write_from(self, dims: indexing.Plan, value: np.ndarray) -> None:
        write_from(self.arr, dims, value)


def _each(n: int, work: Callable[[int], None]) -> None:
    """``work(t)`` for t in 0..n-1 on the threads zarrc.runtime.threads.item_threads gives."""
    run_each(range(n), work, item_threads(n))


def _selections(dims, table, local, outidx, rows) -> tuple[Any, Any]:
    """(chunk index, operand index) of one task: what it selects in the chunk and
    where that lands in the output / comes from in the value (points: flat indices
    into the chunk, positions in the operand)."""
    if isinstance(dims, indexing.Points):
        return _point_selections(table, local, outidx, rows)
    src: list[Any] = []          # ints, slices, index arrays
    dst: list[Any] = []
    arrays = False
    for d, r in zip(dims, rows):
        row = table[r].tolist()
        start, step, count, out0, idx = (row[COL_START], row[COL_STEP], row[COL_COUNT], row[COL_OUT],
                                         row[COL_IDX])
        if idx < 0:
            s = slice(start, start + (count - 1) * step + 1, step)
            o = slice(out0, out0 + count)
        else:
            s, o = local[idx:idx + count], outidx[idx:idx + count]
            arrays = True
        src.append(start if d.dropped else s)
        if not d.dropped:
            dst.append(o)
    if arrays:     # orthogonal (outer) indexing, as the plan means it
        src = list(np.ix_(*[np.arange(s.start, s.stop, s.step) if isinstance(s, slice)
                            else np.atleast_1d(s) for s in src]))
        src = [s.reshape(-1)[0] if d.dropped else s for s, d in zip(src, dims)]
        dst = list(np.ix_(*[np.arange(o.start, o.stop) if isinstance(o, slice) else o for o in dst]))
    return tuple(src), tuple(dst)


def _tasks(arr: ChunkedArray, dims: indexing.Plan) -> tuple:
    table, local, outidx, tasks, coords = planned(dims)
    return table, local, outidx, tasks, arr.chunk_keys(coords), coords


def _point_selections(table, local, outidx, rows) -> tuple[np.ndarray, np.ndarray]:
    """(flat index in the chunk, position in the operand) of one task's points (its
    last dimension's row is the point row: see indexing.Points)."""
    row = table[rows[-1]].tolist()
    idx, count = row[COL_IDX], row[COL_COUNT]
    return local[idx:idx + count], outidx[idx:idx + count]


def _decoded_for_write(codec: Any, raw: Any, src: Any, points: bool) -> np.ndarray:
    """The old chunk (decoded by ``codec``) a write of ``src`` modifies; for a shard with damaged inner
    chunks (DamagedShardError), its other contents if the write wholly overwrites
    the damaged ones (which it then repairs), else the error."""
    try:
        return codec.decode(raw)
    except DamagedShardError as exc:
        if exc.codec is not codec:
            raise
        written = np.zeros(exc.damaged.shape, bool)
        if points:
            written.reshape(-1)[src] = True
        else:
            written[src] = True
        if (exc.damaged & ~written).any():
            raise
        return exc.partial


def _context(arr: ChunkedArray, key: str, exc: ZarrcError) -> ZarrcError:
    return type(exc)(f"chunk {key} of {arr.name}: {exc}")


def read_into(arr: ChunkedArray, dims: indexing.Plan, out: np.ndarray) -> None:
    """Read the selected elements into ``out`` (see zarrc.engine.api.read_into)."""
    table, local, outidx, tasks, keys, coords = _tasks(arr, dims)
    raws = arr.store.get_many(keys)
    fill = arr.fill_scalar()

    points = isinstance(dims, indexing.Points)

    def work(t: int) -> None:
        src, dst = _selections(dims, table, local, outidx, tasks[t])
        if raws[t] is None:
            out[dst] = fill
            return
        codec, _ = _codec(arr, coords[t])
        try:
            chunk = codec.decode(raws[t])
        except DamagedShardError as exc:     # (a shard: its other inner chunks may do)
            if exc.codec is not codec or (exc.damaged.reshape(-1)[src] if points else exc.damaged[src]).any():
                raise _context(arr, keys[t], exc) from None
            chunk = exc.partial
        except ZarrcError as exc:
            raise _context(arr, keys[t], exc) from None
        out[dst] = chunk.reshape(-1)[src] if points else chunk[src]

    _each(len(keys), work)


def is_fill(chunk: np.ndarray, fill: Any, fill_bytes: bytes) -> bool:
    """Whether every item of ``chunk`` is the fill value: ``fill`` (an object, of its
    type) for object items, else ``fill_bytes`` (one item's bytes)."""
    if chunk.dtype.kind == "O":
        return all(v == fill and type(v) is type(fill) for v in chunk.flat)
    return np.ascontiguousarray(chunk).tobytes() == fill_bytes * chunk.size


def write_from(arr: ChunkedArray, dims: indexing.Plan, value: np.ndarray) -> None:
    """Write ``value`` to the selected elements (see zarrc.engine.api.write_from).  Chunks left
    equal to the fill value are deleted, unless ``arr.write_empty_chunks``."""
    table, local, outidx, tasks, keys, coords = _tasks(arr, dims)
    full = tasks_full(table, tasks)
    itemsize = arr.dtype.itemsize if arr.dtype.kind != "O" else 64
    largest = math.prod(int(c.edges.max()) if isinstance(c, Edges) else c for c in arr.chunks)
    per_batch = max(1, WRITE_BATCH_BYTES // max(1, largest * itemsize))
    for lo in range(0, len(keys), per_batch):
        _write_batch(arr, dims, table, local, outidx, tasks[lo:lo + per_batch],
                     keys[lo:lo + per_batch], full[lo:lo + per_batch], value, coords[lo:lo + per_batch])


def _item_error(arr: ChunkedArray, chunk: np.ndarray | None, coords: Any) -> ZarrcError | None:
    """For a variable-length chunk that failed to encode: an error naming the first item
    that cannot be stored by its array index ("item (3, 7) of /names: ..."), or None
    (also for a chunk not made yet: its old bytes failed to decode)."""
    item_type = type(arr.fill_object)
    if chunk is None or chunk.dtype.kind != "O" or item_type not in (str, bytes):
        return None
    bad = find_bad_item(chunk, item_type)
    if bad is None:
        return None
    index, problem = bad
    where = tuple(int(n.offsets[c] if isinstance(n, Edges) else c * n) + i
                  for c, n, i in zip(coords, arr.chunks, index))
    return CodecError(f"item {where} of {arr.name}: {problem}")


def _write_batch(arr, dims, table, local, outidx, tasks, keys, full, value, coords) -> None:
    partial = [k for k, f in zip(keys, full) if not f]
    old = dict(zip(partial, arr.store.get_many(partial))) if partial else {}
    fill = arr.fill_scalar()
    write_empty = arr.write_empty_chunks or not arr.store.supports_deletes
    encoded: list[Any] = [None] * len(keys)
    points = isinstance(dims, indexing.Points)

    def work(t: int) -> None:
        key = keys[t]
        src, dst = _selections(dims, table, local, outidx, tasks[t])
        raw = old.get(key)
        chunk = None
        codec, shape = _codec(arr, coords[t])
        try:
            if raw is None:
                chunk = np.full(shape, fill, dtype=arr.dtype)
            else:
                chunk = np.array(_decoded_for_write(codec, raw, src, points), copy=True, order="C")
            if points:      # (points in the order given: where one repeats, the last wins)
                chunk.reshape(-1)[src] = value[dst]
            else:
                chunk[src] = value[dst]
            if not write_empty and is_fill(chunk, fill, arr.fill):
                encoded[t] = _DELETE
            else:
                encoded[t] = codec.encode(chunk)
        except ZarrcError as exc:
            raise (_item_error(arr, chunk, coords[t]) or _context(arr, key, exc)) from None

    _each(len(keys), work)
    for key, data in zip(keys, encoded):
        if data is _DELETE:
            arr.store.delete(key)
        else:
            arr.store.set(key, data)
