"""The unit of atomicity of a write (docs/guarantees.md, "Writes"): each chunk and
each shard is stored whole or not at all; a call commits batch by batch
(``engine.batch.WRITE_BATCH_BYTES`` of chunks each), so a call that fails midway
leaves the batches before the failure written and every chunk wholly old or new."""

from __future__ import annotations

import numpy as np
import pytest

import zarrc
from zarrc.engine import batch
from zarrc.errors import StoreError
from zarrc.stores import MemoryStore


class FailingStore(MemoryStore):
    """A MemoryStore whose ``fail_at``-th put (counting from 1) raises."""

    fail_at = 0
    puts = 0

    def set(self, key, value):
        self.puts += 1
        if self.puts == self.fail_at:
            raise StoreError(f"put {self.puts} of {key!r} refused")
        super().set(key, value)


def _versions(a, shape, chunks):
    """{chunk coordinates: version} where every element of the chunk holds one version."""
    data = a[...]
    found = {}
    for i in range(0, shape[0], chunks[0]):
        for j in range(0, shape[1], chunks[1]):
            block = data[i:i + chunks[0], j:j + chunks[1]]
            assert (block == block.flat[0]).all(), f"chunk {(i, j)} is torn: {np.unique(block)}"
            found[(i // chunks[0], j // chunks[1])] = int(block.flat[0])
    return found


@pytest.mark.parametrize("fail_at", [1, 2, 3, 4])
def test_a_write_of_many_batches_commits_batch_by_batch(monkeypatch, fail_at):
    """16 chunks, 4 per batch: the put that fails is in batch (fail_at - 1) // 4;
    the batches before it are new, the chunks of later batches old."""
    store = FailingStore()
    a = zarrc.create_array(store, shape=(16, 4), chunks=(1, 4), dtype="int64", fill_value=0,
                           compressors=None)
    a[...] = 1
    monkeypatch.setattr(batch, "WRITE_BATCH_BYTES", 4 * 4 * 8)          # 4 chunks a batch
    store.puts = 0
    store.fail_at = (fail_at - 1) * 4 + 1            # the first put of batch fail_at - 1
    with pytest.raises(StoreError, match="refused"):
        a[...] = 2
    versions = _versions(a, (16, 4), (1, 4))
    done = (fail_at - 1) * 4
    assert [versions[(c, 0)] for c in range(16)] == [2] * done + [1] * (16 - done)


@pytest.mark.parametrize("shards", [None, (4, 4)])
def test_a_failed_partial_write_leaves_each_chunk_wholly_old_or_new(shards):
    """A write of part of every chunk (shard): each is read, changed and stored whole,
    so after a failure each holds its old values or all of the call's."""
    store = FailingStore()
    a = zarrc.create_array(store, shape=(16, 4), chunks=(2, 4), shards=shards, dtype="int64",
                           fill_value=0)
    a[...] = 1
    store.puts, store.fail_at = 0, 2
    with pytest.raises(StoreError):
        a[1:15, :] = 2
    data = a[...]
    old = np.ones((16, 4), "int64")
    new = old.copy()
    new[1:15, :] = 2
    unit = 4 if shards else 2
    kinds = []
    for lo in range(0, 16, unit):
        block = data[lo:lo + unit]
        if (block == old[lo:lo + unit]).all():
            kinds.append("old")
        else:
            assert (block == new[lo:lo + unit]).all(), f"rows {lo}..{lo + unit} are torn: {block}"
            kinds.append("new")
    assert set(kinds) == {"old", "new"}              # some stored before the failure, some not
