"""append stores the new chunks before the metadata that makes them part of the
array, so a reader never sees a shape whose chunks are not written yet (on an
object store a reader may open the array between any two PUTs); a failed append
leaves the old shape."""

from __future__ import annotations

import numpy as np
import pytest

import zarrc
from zarrc.stores import MemoryStore


class Recording(MemoryStore):
    """A MemoryStore that notes the key of every value it stores, in order."""

    def __init__(self) -> None:
        super().__init__()
        self.stored: list[str] = []

    def set(self, key, value) -> None:
        self.stored.append(key)
        super().set(key, value)         # (set_many calls set for each key)


@pytest.mark.parametrize("fmt", [2, 3])
@pytest.mark.parametrize("shards", [None, (8,)])
def test_new_chunks_are_stored_before_the_metadata(fmt, shards) -> None:
    if fmt == 2 and shards:
        pytest.skip("Zarr v2 arrays are not sharded")
    store = Recording()
    a = zarrc.create_array(store, shape=(6,), chunks=(2,), shards=shards, dtype="i4", fill_value=0,
                           zarr_format=fmt)
    a[...] = np.arange(6)
    meta = {"zarr.json"} if fmt == 3 else {".zarray", ".zattrs"}
    store.stored.clear()
    a.append(np.arange(6, 16))
    tail = store.stored[-len(meta):]
    assert set(tail) == meta and not meta & set(store.stored[:-len(meta)]), store.stored
    np.testing.assert_array_equal(zarrc.open_array(store, mode="r")[...], np.arange(16))


def test_a_failed_append_leaves_the_old_shape() -> None:
    store = MemoryStore()
    a = zarrc.create_array(store, shape=(4,), chunks=(2,), dtype="i4", fill_value=0)
    a[...] = [1, 2, 3, 4]
    with pytest.raises(Exception):
        a.append(np.array(["not", "numbers"]))
    assert a.shape == (4,) and zarrc.open_array(store, mode="r").shape == (4,)
    np.testing.assert_array_equal(zarrc.open_array(store, mode="r")[...], [1, 2, 3, 4])
