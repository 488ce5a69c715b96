"""Writers in several processes updating parts of the same chunks of an array on
S3 (moto's server on 127.0.0.1): each partial chunk update is a conditional write
on the ETag read (retried when another writer got there first), so no writer's
elements are lost, as with local locks."""

from __future__ import annotations

import subprocess
import sys

import numpy as np
import pytest

import zarrc
from stores.servers import s3_server  # noqa: F401  (fixture)

pytest.importorskip("obstore", reason="obstore (zarrc[remote]) is not installed")

WRITER = """
import json, sys
import numpy as np
import zarrc
url, opts, column, rounds = sys.argv[1], json.loads(sys.argv[2]), int(sys.argv[3]), int(sys.argv[4])
arr = zarrc.open_array(url, storage_options=opts, mode="r+")
for r in range(rounds):
    arr[:, column] = np.full(arr.shape[0], column * 1000 + r, dtype=arr.dtype)   # a column of each chunk
print("done")
"""


@pytest.mark.parametrize("sharded", [False, True])
def test_writers_of_parts_of_the_same_chunks_lose_nothing(s3_server, sharded):  # noqa: F811
    import json

    url, opts = f"s3://{s3_server.bucket()}/w", s3_server.options()
    writers, rounds = 4, 12
    zarrc.create_array(url, shape=(8, writers), dtype="i4", chunks=(4, writers), fill_value=-1,
                       shards=(8, writers) if sharded else None, storage_options=opts)
    procs = [subprocess.Popen([sys.executable, "-c", WRITER, url, json.dumps(opts), str(c), str(rounds)],
                              stdout=subprocess.PIPE, stderr=subprocess.PIPE) for c in range(writers)]
    for p in procs:
        out, err = p.communicate(timeout=300)
        assert p.returncode == 0 and out.strip() == b"done", (p.returncode, out, err.decode()[-3000:])
    got = zarrc.open_array(url, storage_options=opts, mode="r")[...]
    expected = np.tile(np.arange(writers) * 1000 + rounds - 1, (8, 1))
    np.testing.assert_array_equal(got, expected)


def test_a_conflicting_write_is_tried_again(s3_server):  # noqa: F811
    """A chunk changed between this writer's read and its write is read and written
    again: the other writer's elements stay."""
    url, opts = f"s3://{s3_server.bucket()}/c", s3_server.options()
    a = zarrc.create_array(url, shape=(4,), dtype="i4", chunks=(4,), fill_value=0, storage_options=opts)
    a[...] = [1, 2, 3, 4]
    store = a.store
    real = store.get_many_versioned
    changed = []

    def read_then_change(keys):
        found = real(keys)
        if not changed:                       # another writer, between our read and our write
            changed.append(True)
            zarrc.open_array(url, storage_options=opts, mode="r+")[0] = 100
        return found

    store.get_many_versioned = read_then_change
    a[3] = 40
    np.testing.assert_array_equal(zarrc.open_array(url, storage_options=opts, mode="r")[...], [100, 2, 3, 40])


@pytest.mark.parametrize("sharded", [False, True])
def test_a_chunk_emptied_by_a_conflicting_write_keeps_the_other_writers_elements(s3_server, sharded):  # noqa: F811
    """A partial write that leaves a chunk (a shard) all fill value would delete it;
    a delete cannot be conditional, so it stores the emptied chunk (an index of
    empty entries) over the version read instead: another writer's change made
    meanwhile is read and kept on the retry, not deleted with it."""
    url, opts = f"s3://{s3_server.bucket()}/e{int(sharded)}", s3_server.options()
    a = zarrc.create_array(url, shape=(4,), dtype="i4", chunks=(4,), fill_value=0,
                           shards=(4,) if sharded else None, storage_options=opts)
    a[3] = 5
    store = a.store
    real = store.get_many_versioned
    changed = []

    def read_then_change(keys):
        found = real(keys)
        if not changed:
            changed.append(True)
            zarrc.open_array(url, storage_options=opts, mode="r+")[0] = 100
        return found

    store.get_many_versioned = read_then_change
    a[3] = 0                                  # (alone, this empties the chunk)
    np.testing.assert_array_equal(zarrc.open_array(url, storage_options=opts, mode="r")[...], [100, 0, 0, 0])
    a[0] = 0                                  # (no other writer: the chunk is all fill, and reads so)
    np.testing.assert_array_equal(zarrc.open_array(url, storage_options=opts, mode="r")[...], [0, 0, 0, 0])
