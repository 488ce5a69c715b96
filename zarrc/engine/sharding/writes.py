"""Writes of sharded arrays (one level of ``sharding_indexed``; nested sharding:
engine.sharding.nested).

The touched inner chunks are encoded in parallel (native), every untouched inner
chunk of a partly written shard is kept byte for byte, and each shard is
assembled natively and stored once; a write covering whole shards never reads
them.  A partly written shard is read from one snapshot: its index and the inner
chunks written in part, nothing else.  For a store of files, the untouched inner
chunks are copied from the old file into the new one's temporary file by the
kernel (copy_file_range, else blocks of a few MiB, without the GIL), so memory
holds the touched inner chunks, never the whole shard.  Shards go a group at a
time; a group's files are staged on a thread of their own while the next group
is encoded on all cores, and its encoded inner chunks' buffers are then reused
by the group after (``WriteBatch.adopt``).
"""

from __future__ import annotations

import math
import sys
import threading
from collections.abc import Callable
from contextlib import AbstractContextManager, ExitStack, nullcontext
from typing import Any

import numpy as np

from zarrc._kernels import chunk_files
from zarrc._kernels.batch import TaskError
from zarrc._kernels.chunk_files import temp_tag
from zarrc._kernels.write import WriteBatch
from zarrc.codecs.shard_index import DAMAGED, damaged_error
from zarrc.core import indexing
from zarrc.engine import batch as b
from zarrc.engine.sharding.index import MAX_OPEN_SHARDS, ShardLevel, ShardReads, cached_index, damaged
from zarrc.engine.sharding.nested import store_shard, write_whole_shards
from zarrc.engine.sharding.reads import LazyLabels
from zarrc.engine.state import ChunkedArray
from zarrc.errors import CodecError, StoreError, from_kernel
from zarrc.runtime.threads import item_threads, run_each, run_io


def write_from(arr: ChunkedArray, dims: indexing.Plan, value: np.ndarray,
               hold: Callable[[], AbstractContextManager[Any]] | None = None) -> None:
    """engine write_from for a sharded array (see the module docstring).  ``hold``:
    the locks of the shards written in part (engine.api.write, from
    engine.locked.partial_hold), taken here as late as
    a consistent read-modify-write allows: when the first group of shards needs no
    old inner chunk (every inner chunk it writes is wholly written), its inner
    chunks are encoded first and the locks taken only to read the old indexes,
    copy the untouched inner chunks and name the new files; else before anything
    is read.  They are held until every shard is stored."""
    top = arr.levels[0]
    table, local, outidx, tasks, coords = b.planned(dims)
    pos = coords * np.asarray(arr.chunks, np.int64)
    shards, which = np.unique(top.shards_at(pos), axis=0, return_inverse=True)
    which = which.reshape(-1)
    keys = arr.chunk_keys(shards)
    if len(arr.levels) > 1:
        with hold() if hold is not None else nullcontext():
            write_whole_shards(arr, dims, value, shards, keys)
        return
    full = b.tasks_full(table, tasks)
    flat = top.entries_at(pos, shards[which] if top.offsets is not None else None)
    order = np.argsort(which, kind="stable")
    bounds = np.searchsorted(which[order], np.arange(len(keys) + 1))
    assert arr.chain is not None          # (a sharded array's inner chain is native)
    work = _ShardWrite(arr, table, local, outidx, tasks, value, b.array_strides(dims, value.strides),
                       keys, shards, which, coords, full, flat, order, bounds)
    per_group = max(1, GROUP_BYTES // max(1, top.nchunks * arr.chain.chunk_nbytes))
    lost: set[str] = set()
    for attempt in b.conflict_attempts(arr, "shards", lost):
        # (after a conflict: the shards another writer changed since this write read
        # them, and the shards written before, all read, modified and written again)
        lost.clear()
        lost.update(_write_groups(work if not attempt else work.again(), keys, per_group, hold))
        if not lost:
            return


def _write_groups(work: _ShardWrite, keys: list, per_group: int,
                  hold: Callable[[], AbstractContextManager[Any]] | None) -> list[str]:
    """Run ``work`` a group of shards at a time and commit it; the shards not stored
    because another writer changed them since they were read (a store with
    conditional writes), else []."""
    with ExitStack() as held:
        if hold is not None:
            work.take_locks = lambda: held.enter_context(hold())
        try:
            for k0 in range(0, len(keys), per_group):
                # group k's files are staged on a thread of their own while group
                # k + 1 is encoded: at most two groups in memory
                staging = work.group(k0, min(len(keys), k0 + per_group))
                work.wait()
                work.start(staging)
            work.wait()
        except BaseException:
            work.wait(quiet=True)
            work.discard()
            raise
        return work.commit()


# A sharded write reads, rebuilds and writes the shards it touches a group at a
# time, each group's inner chunks holding about this many bytes decoded: its
# memory is bounded by this, not by the number of shards (files are staged and
# named once every group succeeded).
GROUP_BYTES = 4 << 20



class _ShardWrite:
    """One sharded write (one level of sharding), a group of shards at a time: the
    old shards read, their inner chunks encoded in one batch, each shard assembled
    and, for a store of files, written to its temporary file (``staged``), else
    kept (``built``); ``commit`` names the files (deletes emptied shards) or stores
    the shards, ``discard`` deletes the temporary files."""

    def __init__(self, arr, table, local, outidx, tasks, value, strides, keys, shards, which, coords,
                 full, flat, order, bounds) -> None:
        self.arr, self.table, self.local, self.outidx, self.tasks = arr, table, local, outidx, tasks
        self.value, self.strides, self.keys, self.shards = value, strides, keys, shards
        self.which, self.coords, self.full, self.flat = which, coords, full, flat
        self.order, self.bounds = order, bounds
        self.layout = arr.levels[0].index_format.kernel_args()     # (the kernels' assembly arguments)
        self.tag = temp_tag()
        self.staged: list[tuple[str, bytes]] = []      # (key, file) with a temporary file
        self.emptied: list[str] = []                   # shards left with no data
        self.built: list[tuple[str, bytes | None]] = []
        self.held: list[ShardReads] = []               # old shards' snapshots kept open
        self.held_files = 0
        self.take_locks: Callable[[], Any] | None = None     # (see write_from's hold)
        self.lock = threading.Lock()          # (staged, emptied, held: also the stager's)
        self.stager: threading.Thread | None = None
        self.error: BaseException | None = None
        self.spent: WriteBatch | None = None      # a staged group's batch: its buffers reused
        # a store with conditional writes: each partly written shard's version as read
        # (None: absent), its new value stored only over that version
        self.conditional = arr.store.conditional_writes and arr.files is None
        self.versions: dict[str, Any] = {}
        self.args = (arr, table, local, outidx, tasks, value, strides, keys, shards, which, coords, full, flat,
                     order, bounds)

    def again(self) -> _ShardWrite:
        """A new write of the same selection (after a conflict: everything read anew)."""
        return _ShardWrite(*self.args)

    def _locked(self) -> None:
        """Take the locks (once) if write_from was given some."""
        if self.take_locks is not None:
            take, self.take_locks = self.take_locks, None
            take()

    def group(self, k0: int, k1: int) -> Callable[[], None] | None:
        """Rewrite shards k0..k1-1 (their tasks: ``order[bounds[k0]:bounds[k1]]``),
        each old shard read from one snapshot (``ShardReads``) held open until the new
        one is staged.  Returns, for a store of files, the staging of the group's
        shards still to run (``start``), else None (the shards are ``built``)."""
        reads = ShardReads(self.arr)
        try:
            stage = self._group(reads, k0, k1)
        except BaseException:
            self._keep(reads)
            raise
        if stage is None:
            self._keep(reads)
            return None

        def staging() -> None:
            try:
                stage()
            finally:
                self._keep(reads)
        return staging

    def _keep(self, reads: ShardReads) -> None:
        """A group's old shards are read (and their replacements staged)."""
        # the old shard files are held open until their replacements are named
        # (at most MAX_OPEN_SHARDS): the old versions are then freed by the last
        # close, not by the rename (which on ext4 frees a file nothing holds);
        # not on Windows, where a file held open may refuse to be replaced
        with self.lock:
            if (self.arr.files is not None and sys.platform != "win32"
                    and self.held_files + len(reads.opened) <= MAX_OPEN_SHARDS):
                self.held.append(reads)
                self.held_files += len(reads.opened)
                return
        reads.close()

    def start(self, staging: Callable[[], None] | None) -> None:
        """Run a group's ``staging`` on a thread of its own (``wait`` joins it), so
        that the next group's inner chunks are encoded meanwhile."""
        if staging is None:
            return
        def run() -> None:
            try:
                staging()
            except BaseException as exc:      # noqa: BLE001 - re-raised by wait()
                self.error = exc
        self.stager = threading.Thread(target=run, name="zarrc-stage", daemon=True)
        self.stager.start()

    def wait(self, quiet: bool = False) -> None:
        """Wait for the group being staged; re-raise its error (unless ``quiet``)."""
        if self.stager is not None:
            self.stager.join()
            self.stager = None
        error, self.error = self.error, None
        if error is not None and not quiet:
            raise error

    def _old_shard(self, reads: ShardReads, k: int) -> tuple[Any, int, np.ndarray] | None:
        """The old shard ``k``: (its holder: a bytes object or, for a store of files, an
        open file descriptor; where the shard starts in it; its index), or None.
        Raises CodecError if an entry of its index is damaged (shard_index.check_index)
        and the write does not wholly overwrite its inner chunk: that inner chunk
        could be neither kept nor rebuilt (wholly overwritten ones are repaired)."""
        found = self._old_index(reads, k)
        if found is not None:
            table, problems = found[2], found[3]
            bad = np.flatnonzero(table[:, 0] == DAMAGED)
            if len(bad):
                lo, hi = self.bounds[k], self.bounds[k + 1]
                mine = self.order[lo:hi]
                repaired = self.flat[mine[self.full[mine]]]
                left = np.setdiff1d(bad, repaired)
                if len(left):
                    self._raise_damaged(reads, k, int(left[0]), problems)
        return None if found is None else found[:3]

    def _raise_damaged(self, reads: ShardReads, k: int, entry: int, problems: dict | None) -> None:
        arr, key = self.arr, self.keys[k]
        top = arr.levels[0]
        cps = top.cps_of(self.shards[k])
        corner = np.unravel_index(entry, cps) if cps else ()
        first = top.origins(self.shards[k:k + 1])[0] // np.asarray(top.inner_shape, np.int64)
        chunk = tuple(int(f) + int(i) for f, i in zip(first, corner))
        exc = (damaged(arr, reads, 0, key, 0, None, entry, chunk, cps) if problems is None else
               damaged_error(f"shard {key} of {arr.name}", entry, cps, problems.get(entry, "damaged"), chunk))
        raise CodecError(f"{exc}; a write must wholly overwrite that inner chunk to repair it "
                         f"(nothing was written)")

    def _old_index(self, reads: ShardReads, k: int) -> tuple[Any, int, np.ndarray, dict | None] | None:
        """_old_shard's (holder, start, index) and, where the index was parsed here, its
        damaged entries (else None: they are in the index cache)."""
        arr, key = self.arr, self.keys[k]
        if self.conditional:          # (the whole value and its version, for set_many_if)
            (blob, self.versions[key]), = arr.store.get_many_versioned([key])
        else:
            snap = reads.snapshot(key)
            held = None if snap is None else snap.holder()
            if held is not None and (arr.files is not None or type(held[0]) is bytes):
                index_table = cached_index(arr, reads, 0, key, 0, None, arr.levels[0].nchunks_of(self.shards[k]))
                return None if index_table is None else (held[0], held[1], index_table, None)
            # (a store with no holder to read ranges of, or a file the shard must be
            # built in memory from: the whole value, once)
            blob = arr.store.get(key) if held is None else snap.read(0, snap.size)  # type: ignore[union-attr]
        if blob is None:
            return None
        blob = bytes(blob)
        top = arr.levels[0]
        return (blob, 0, *top.index_format.parse(blob, top.nchunks_of(self.shards[k]), f"shard {key} of {arr.name}"))

    def _group(self, reads: ShardReads, k0: int, k1: int) -> Callable[[], None] | None:
        arr, top, bounds = self.arr, self.arr.levels[0], self.bounds
        members = self.order[bounds[k0]:bounds[k1]]
        n = len(members)
        # no old inner chunk needed: encode before the locks are taken (they then
        # cover reading the old indexes, the copies and the renames only)
        batch = self._encode(members, None) if self.take_locks is not None and self.full[members].all() else None
        self._locked()
        old: dict[int, tuple[Any, int, np.ndarray]] = {}
        # each partly written inner chunk's old bytes: a range of its old shard (one
        # native "ranges" source: no Python object per inner chunk); wholly written
        # ones are not read, untouched ones are copied as they are
        owner = np.full(n, -1, np.int64)
        start = np.zeros(n, np.int64)
        length = np.zeros(n, np.int64)
        holders: list[Any] = []
        # (the whole shards rewritten need no read)
        wanted = [k for k in range(k0, k1) if self.full[members[bounds[k] - bounds[k0]:bounds[k + 1] - bounds[k0]]]
                  .sum() != _inner_chunks_in_bounds(arr, top, self.shards[k])]
        if arr.store.fetch_window is not None:        # (a remote store: the old shards at once)
            olds = run_io(wanted, lambda k: self._old_shard(reads, k))
        else:
            olds = [self._old_shard(reads, k) for k in wanted]
        for k, found in zip(wanted, olds):
            lo, hi = bounds[k] - bounds[k0], bounds[k + 1] - bounds[k0]
            mine = members[lo:hi]
            if found is None:
                continue
            old[k] = found
            holder, base, index_table = found
            entries = index_table[self.flat[mine]]
            kept = np.flatnonzero(~self.full[mine] & (entries[:, 0] < DAMAGED))     # (not empty)
            owner[lo + kept] = len(holders)
            start[lo + kept] = entries[kept, 0].astype(np.int64) + base
            length[lo + kept] = entries[kept, 1].astype(np.int64)
            holders.append(holder)
        if batch is None:
            batch = self._encode(members, ("ranges", owner, start, length, holders))

        def plan_shard(k: int) -> tuple[np.ndarray, Any]:
            """Each inner chunk's task in the batch (-1: none) and the old parts kept:
            (old shard bytes, offsets, lengths), or for a shard file (descriptor,
            offsets in the file, lengths, the file's size), copied file to file."""
            task_of_chunk = np.full(top.nchunks_of(self.shards[k]), -1, np.int64)
            lo, hi = bounds[k] - bounds[k0], bounds[k + 1] - bounds[k0]
            task_of_chunk[self.flat[members[lo:hi]]] = np.arange(lo, hi)
            if k not in old:
                return task_of_chunk, None
            holder, base, index_table = old[k]
            empty = index_table[:, 0] >= DAMAGED      # (empty, or damaged and wholly overwritten)
            offsets = np.where(empty, -1, index_table[:, 0].astype(np.int64) + base)
            if type(holder) is bytes:
                return task_of_chunk, (holder, offsets, index_table[:, 1].astype(np.int64))
            snap = reads.snapshot(self.keys[k])
            assert snap is not None and snap.size is not None      # (its index was read)
            return task_of_chunk, (holder, offsets, index_table[:, 1].astype(np.int64), base + snap.size)

        if arr.files is None:
            for k in range(k0, k1):
                self.built.append((self.keys[k], batch.shard(*plan_shard(k), *self.layout)))
            self.spent = batch
            return None

        def stage(k: int) -> None:
            key = self.keys[k]
            path = arr.key_file(key)
            try:
                task_of_chunk, old_parts = plan_shard(k)
                at_start, big_endian, crc = self.layout
                written = batch.write_shard(path, self.tag, task_of_chunk, old_parts, at_start, big_endian, crc,
                                            stage=True)
            except TaskError as exc:     # (a failed I/O call: a StoreError)
                raise from_kernel(exc, f"shard {key} of {arr.name}: ") from None
            with self.lock:
                if written:
                    self.staged.append((key, path))
                else:
                    self.emptied.append(key)

        def staging() -> None:
            run_each(range(k0, k1), stage, item_threads(k1 - k0))
            with self.lock:
                self.spent = batch
        return staging

    def _encode(self, members: np.ndarray, old: tuple | None) -> WriteBatch:
        """The batch of ``members``' inner chunks, run: each gathered from the value
        (and, written in part, its old bytes from ``old``, a "ranges" source), encoded."""
        arr, n = self.arr, len(members)
        if old is None:
            none = np.full(n, -1, np.int64)
            old = ("ranges", none, np.zeros(n, np.int64), np.zeros(n, np.int64), [])
        batch = WriteBatch(arr.chain, self.table, self.local, self.outidx,
                           np.ascontiguousarray(self.tasks[members]), self.value, self.strides, arr.fill,
                           old, b".tmp", arr.write_empty_chunks)
        with self.lock:
            spent, self.spent = self.spent, None
        if spent is not None:
            batch.adopt(spent)          # (the encoded chunks of a group already staged)
        b.run_batch(batch, n)
        b.raise_task_error(batch, arr, LazyLabels(self.keys, self.which[members], self.coords[members]))
        return batch

    def commit(self) -> list[str]:
        """Name the staged files, delete the emptied shards, store the built ones;
        the shards not stored because another writer changed them (see write_from)."""
        arr = self.arr
        try:
            for key, path in self.staged:
                try:
                    chunk_files.finish(path, self.tag, True)
                except OSError as exc:
                    raise StoreError(f"cannot write shard {key} of {arr.name}: {exc.strerror}") from None
                arr.shard_cache.forget(key)
        finally:
            self.release()
        top = arr.levels[0]
        shard_of = dict(zip(self.keys, self.shards))
        for key in self.emptied:
            store_shard(arr, key, None, arr.store.exists(key), top.nchunks_of(shard_of[key]))
        # (a shard read with its version is stored only over that version; one left
        # with no inner chunk is stored as an index of empty entries, for a delete
        # cannot be made conditional)
        conditional = {key: (top.index_format.empty(top.nchunks_of(shard_of[key])) if data is None else data,
                             self.versions[key])
                       for key, data in self.built if key in self.versions}
        for key, data in self.built:
            if key not in conditional:
                store_shard(arr, key, data, True, top.nchunks_of(shard_of[key]))
        lost = arr.store.set_many_if(conditional) if conditional else []
        for key in conditional:
            arr.shard_cache.forget(key)
        return lost

    def discard(self) -> None:
        for _, path in self.staged:
            try:
                chunk_files.finish(path, self.tag, False)
            except OSError:
                pass
        self.staged = []
        self.release()

    def release(self) -> None:
        """Close the old shards' snapshots still held."""
        for reads in self.held:
            reads.close()
        self.held, self.held_files = [], 0


def _inner_chunks_in_bounds(arr: ChunkedArray, level: ShardLevel, shard: np.ndarray) -> int:
    origin = level.origins(np.asarray(shard, np.int64).reshape(1, -1))[0]
    return math.prod(min(c, -(-(s - int(o)) // i))
                     for c, s, o, i in zip(level.cps_of(shard), arr.shape, origin, level.inner_shape))
