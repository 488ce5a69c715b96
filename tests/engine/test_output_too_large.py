"""A read whose output is more than this machine's memory is refused before it is
allocated, with a SelectionTooLargeError (a ZarrcError, and a MemoryError as numpy's
would be) naming the array, the output's shape and bytes: by every path that
allocates an output (the BasicReader's kernel, the native and sharded strategies,
orthogonal, coordinate, mask and block selections, the Python strategy), never a
bare MemoryError or the OOM killer."""

from __future__ import annotations

import numpy as np
import pytest

import zarrc
from zarrc.engine import batch
from zarrc.errors import SelectionTooLargeError, ZarrcError
from zarrc.stores import LocalStore, MemoryStore


@pytest.fixture
def limit_1mib():
    old = batch.set_memory_limit(1 << 20)
    try:
        yield 1 << 20
    finally:
        batch.set_memory_limit(old)


def arrays(tmp_path):
    local = LocalStore(str(tmp_path / "l"))
    yield "local", zarrc.create_array(local, name="a", shape=(1024, 1024), dtype="f8", chunks=(256, 256))
    yield "memory", zarrc.create_array(MemoryStore(), name="a", shape=(1024, 1024), dtype="f8", chunks=(256, 256))
    yield "sharded", zarrc.create_array(local, name="s", shape=(1024, 1024), dtype="f8", chunks=(64, 64),
                                        shards=(256, 256))
    yield "python", zarrc.create_array(MemoryStore(), name="p", shape=(1024, 1024), dtype="f8",
                                       chunks=(256, 256), filters=[{"name": "numcodecs.delta",
                                                                   "configuration": {"dtype": "<f8"}}])


READS = {
    "basic": lambda a: a[:, :],
    "basic int": lambda a: a[0:1000, 3],
    "orthogonal": lambda a: a.oindex[np.arange(1000), :],
    "coordinate": lambda a: a.vindex[np.arange(1024)[:, None], np.arange(200)[None, :]],
    "mask": lambda a: a.vindex[np.ones((1024, 1024), bool)],
    "blocks": lambda a: a.blocks[:, :],
    "get_basic_selection": lambda a: a.get_basic_selection((slice(None), slice(None))),
}


@pytest.mark.parametrize("read", list(READS))
def test_an_output_larger_than_memory_is_refused_naming_the_array(tmp_path, limit_1mib, read) -> None:
    for kind, a in arrays(tmp_path):
        a[:8, :8] = 1.0
        if read == "basic int":
            np.testing.assert_array_equal(READS[read](a)[:8], [1.0] * 8)     # (8000 bytes: read)
            continue
        with pytest.raises(SelectionTooLargeError) as info:
            READS[read](a)
        assert isinstance(info.value, ZarrcError) and isinstance(info.value, MemoryError), kind
        message = str(info.value)
        assert message.startswith(f"array {a.path}:"), (kind, message)
        assert "bytes" in message and ("more than this machine's memory (1048576 bytes)" in message
                                       or "cannot be allocated" in message), (kind, message)
        np.testing.assert_array_equal(a[:8, :8], np.ones((8, 8)))           # (smaller reads still work)


def test_a_full_read_of_a_huge_array_is_refused_at_this_machines_memory() -> None:
    a = zarrc.create_array(MemoryStore(), name="a", shape=(2**40,), dtype="u1", chunks=(2**20,))
    with pytest.raises(SelectionTooLargeError, match=r"array a: the output of the read, \(1099511627776,\) "
                                                     r"of \|u1 \(1099511627776 bytes\), is more than"):
        a[...]


def test_the_limit_is_this_machines_memory() -> None:
    import os
    assert batch.MEMORY_BYTES == os.sysconf("SC_PHYS_PAGES") * os.sysconf("SC_PAGE_SIZE")
