"""The native strategy for unsharded arrays whose chain the kernels run.

Read: ints and slices are planned natively (zarrc._kernels.plan) straight to
the batch's arrays, anything else by zarrc.core.indexing; the chunk keys are
resolved in one go (file paths built natively for a store of plain files,
bytes fetched with ``get_many`` for others); then a ``ReadBatch`` decodes and
scatters the chunks without the GIL on the threads the policy gives (a small
part of a large chunk decodes only what it needs).  Write: the same in reverse,
in two phases (encode all, then store) so that an error stores nothing, or in
one when every chunk is wholly overwritten.  Python work is per call and per
chunk key, never per element.
"""

from __future__ import annotations

from contextlib import closing
from typing import Any

import numpy as np

from zarrc._kernels.chain import Chain
from zarrc._kernels.chunk_files import temp_tag
from zarrc._kernels.plan import plan_basic
from zarrc._kernels.read import ReadBatch
from zarrc._kernels.write import DELETED, STORED, WriteBatch
from zarrc.core import indexing
from zarrc.engine import batch as b
from zarrc.engine.state import ChunkedArray
from zarrc.engine.strategy import Strategy
from zarrc.runtime.config import config
from zarrc.runtime.threads import count_calls, counted_call


class NativeStrategy(Strategy):
    """Reads and writes an unsharded array with the kernels' prepared chain
    (``arr.chain``, also ``chain``).  Subclasses change how planned chunks are read
    (``read_planned``) and written (``write_from``)."""

    def __init__(self, arr: ChunkedArray) -> None:
        super().__init__(arr)
        assert arr.chain is not None      # (prepare chooses this strategy for a native chain)
        self.chain: Chain = arr.chain

    def read(self, selection: Any) -> np.ndarray:
        """``arr[selection]`` as a new numpy array (0-d if every dimension is indexed
        by an integer, as zarr-python returns).  Raises SelectionError, CodecError,
        ChecksumError, StoreError."""
        arr = self.arr
        # ints and slices: planned natively, straight to the batch's arrays (the
        # BasicReader plans the same way: what it declines, this would too); an output
        # more than this machine's memory refused before the plan's tables are made
        b.refuse_huge_read(selection, arr.shape, arr.dtype)
        planned = plan_basic(selection, arr.shape, arr.chunks)
        if planned is None:
            return self.read_general(selection)
        table, tasks, coords, out_shape, dropped = planned
        out = b.new_output(out_shape, arr.dtype, pooled=True)     # (no page faults)
        if out.size:
            count_calls(1)
            try:
                self.read_planned(table, b.NO_INDEX, b.NO_INDEX, tasks, coords, out,
                                  b.dropped_strides(dropped, out.strides))
            finally:
                count_calls(-1)
        return out

    @counted_call
    def read_into(self, dims: indexing.Plan, out: np.ndarray) -> None:
        table, local, outidx, tasks, coords = b.planned(dims)
        self.read_planned(table, local, outidx, tasks, coords, out, b.array_strides(dims, out.strides))

    def read_planned(self, table: np.ndarray, local: np.ndarray, outidx: np.ndarray,
                     tasks: np.ndarray, coords: np.ndarray, out: np.ndarray,
                     strides: tuple[int, ...]) -> None:
        """Read a planned selection (see batch.assemble) with the native chain."""
        arr = self.arr
        window = arr.store.fetch_window if arr.path_head is None and arr.files is None else None
        if window and len(tasks) > window:
            self._read_streamed(table, local, outidx, tasks, coords, out, strides, window)
            return
        sources, keys = b.chunk_sources(arr, coords)
        batch = ReadBatch(self.chain, table, local, outidx, tasks, out, strides, arr.fill, sources)
        # uncompressed chunks: only the selected bytes are read and copied
        b.run_batch(batch, len(tasks), None if self.chain.ncodecs else out.nbytes)
        b.raise_task_error(batch, arr, keys)

    def _read_streamed(self, table: np.ndarray, local: np.ndarray, outidx: np.ndarray,
                       tasks: np.ndarray, coords: np.ndarray, out: np.ndarray,
                       strides: tuple[int, ...], window: int) -> None:
        """``read_planned`` for a store whose reads wait on a network: the chunks in
        windows of ``window`` keys, the two windows after the one decoding on the
        worker threads already being fetched (``Store.fetch_many``, concurrently in
        the store, which keeps its requests in flight without a pause between
        windows); at most three windows' bytes are held."""
        arr = self.arr
        with closing(b.fetched_windows(arr, coords, window)) as windows:
            for lo, hi, sources, keys in windows:
                batch = ReadBatch(self.chain, table, local, outidx, tasks[lo:hi], out, strides, arr.fill,
                                  sources)
                b.run_batch(batch, hi - lo)
                b.raise_task_error(batch, arr, keys)

    @counted_call
    def write_from(self, dims: indexing.Plan, value: np.ndarray) -> None:
        arr = self.arr
        table, local, outidx, tasks, coords = b.planned(dims)
        per_batch = max(1, b.WRITE_BATCH_BYTES // max(1, self.chain.chunk_nbytes))
        strides = b.array_strides(dims, value.strides)
        for lo in range(0, len(tasks), per_batch):
            write_batch(arr, table, local, outidx, tasks[lo:lo + per_batch],
                         coords[lo:lo + per_batch], value, strides)


def write_batch(arr, table, local, outidx, tasks, coords, value, strides, shapes_of=None) -> None:
    """Encode and store one batch of chunk tasks.  On a store with conditional
    writes, the partial chunks another writer changed meanwhile are written again
    (read, modified, written anew) until none is left.  ``shapes_of(coords)``: chunks
    of several shapes (a rectilinear grid: ShapeChains.of), each encoded with its
    shape's chain in the one batch."""
    lost: set[str] = set()
    for _ in b.conflict_attempts(arr, "chunks", lost):
        if lost:
            again = np.array([k in lost for k in arr.chunk_keys(coords)], dtype=bool)
            tasks, coords = tasks[again], coords[again]
            lost.clear()
        lost.update(_write_once(arr, table, local, outidx, tasks, coords, value, strides, shapes_of))
        if not lost:
            return


def _write_once(arr, table, local, outidx, tasks, coords, value, strides, shapes_of=None) -> set[str]:
    """One attempt of ``write_batch``: the keys not stored because another writer
    changed them since they were read (only on a store with conditional writes)."""
    if arr.path_head is not None:
        if len(tasks) > 2 and config.threads > 1 and b.tasks_full(table, tasks).all():
            order = b.spread_order(len(tasks), config.threads)     # (files written at once)
            tasks, coords = tasks[order], coords[order]
        sources, keys = b.chunk_sources(arr, coords)
    else:
        keys = arr.chunk_keys(coords)
        sources = b.key_paths(arr, keys)
    versions: dict[str, Any] = {}
    if sources is None:
        full = b.tasks_full(table, tasks)
        partial = [k for k, f in zip(keys, full) if not f]
        if partial and arr.store.conditional_writes:
            found = arr.store.get_many_versioned(partial)
            old = {k: v for k, (v, _) in zip(partial, found)}
            versions = {k: version for k, (_, version) in zip(partial, found)}
        else:
            old = dict(zip(partial, arr.store.get_many(partial))) if partial else {}
        sources = [old.get(k) for k in keys]
    # a store that cannot delete keeps chunks that became all fill value, and so does
    # a batch with conditional writes (a delete cannot be made conditional: the
    # chunks another writer changed since they were read would be lost)
    write_empty = arr.write_empty_chunks or not arr.store.supports_deletes or bool(versions)
    paths = isinstance(sources, tuple) or isinstance(sources[0], tuple)
    # chunks wholly overwritten need no old data, so nothing can fail half way:
    # each file is written as soon as its chunk is encoded
    commit_now = paths and bool(b.tasks_full(table, tasks).all())
    shapes, chains = shapes_of(coords) if shapes_of is not None else (None, [arr.chain])
    batch = WriteBatch(chains[0], table, local, outidx, np.ascontiguousarray(tasks), value, strides,
                       arr.fill, sources, temp_tag(), write_empty, commit_now, shapes)
    b.run_batch(batch, len(tasks), batch.chunk_bytes())
    if paths and not commit_now and batch.first_error() is not None:
        batch.discard()           # (the chunks encoded before the error wait in temporary files)
    b.raise_task_error(batch, arr, keys)
    if commit_now:
        return set()
    if paths:
        batch.start_commit()
        b.run_batch(batch, len(tasks))
        if batch.first_error() is not None:
            batch.discard()
        b.raise_task_error(batch, arr, keys)
        return set()
    # (one set_many: a remote store PUTs the chunks concurrently; the partial chunks
    # of a store with conditional writes only where they are still the version read)
    stored, conditional = {}, {}
    for t, key in enumerate(keys):
        outcome = batch.outcome(t)
        if outcome == STORED:
            if key in versions:
                conditional[key] = (batch.encoded(t), versions[key])
            else:
                stored[key] = batch.encoded(t)
        elif outcome == DELETED:
            arr.store.delete(key)
    if stored:
        arr.store.set_many(stored)
    return set(arr.store.set_many_if(conditional)) if conditional else set()
