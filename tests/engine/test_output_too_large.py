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
    with pytest.raises(SelectionTooLargeError, match=r"array a: the output of the read, a selection of "
                                                     r"1099511627776 elements \(1099511627776\) of \|u1 \(1099511627776 bytes\) "
                                                     r"of an array of shape \(1099511627776,\), is more than"):
        a[...]


def test_the_limit_is_this_machines_memory() -> None:
    import os
    assert batch.MEMORY_BYTES == os.sysconf("SC_PHYS_PAGES") * os.sysconf("SC_PAGE_SIZE")


SHARDED_FULL_READ = r"""
import json, resource
import zarrc
from zarrc.stores import MemoryStore
a = zarrc.create_array(MemoryStore(), name="a", shape=(2**40,), dtype="u1", chunks=(2**10,), shards=(2**20,))
try:
    a[...]
    error = None
except zarrc.errors.ZarrcError as exc:
    error = type(exc).__name__
try:    # (this process' own peak: ru_maxrss keeps the peak of the process it was spawned from)
    with open("/proc/self/status") as status:
        peak_kib = next(int(line.split()[1]) for line in status if line.startswith("VmHWM:"))
except OSError:
    peak_kib = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss
print(json.dumps({"error": error, "maxrss_mib": peak_kib >> 10}))
"""


def test_a_huge_basic_read_is_refused_before_it_is_planned() -> None:
    # 2**30 inner chunks: planning them took 8 GiB of tables (more where the machine let
    # it) before the output was refused; the output's size is now counted first
    import json
    import subprocess
    import sys
    proc = subprocess.run([sys.executable, "-c", SHARDED_FULL_READ], capture_output=True, text=True, check=False,
                          timeout=120)
    got = json.loads(proc.stdout.strip().splitlines()[-1])
    assert got["error"] == "SelectionTooLargeError" and got["maxrss_mib"] < 512, (got, proc.stderr)


def test_basic_output_counts() -> None:
    shape = (10, 20, 30)
    assert batch.basic_output_counts((slice(None), 3), shape) == [10, 1, 30]
    assert batch.basic_output_counts((Ellipsis, slice(0, 5)), shape) == [10, 20, 5]
    assert batch.basic_output_counts((1, Ellipsis, 2), shape) == [1, 20, 1]
    assert batch.basic_output_counts(Ellipsis, shape) == [10, 20, 30]
    assert batch.basic_output_counts((slice(None, None, 3),), shape) == [4, 20, 30]
    for other in ((np.arange(3),), (Ellipsis, Ellipsis), (1, 2, 3, 4), (True,)):
        assert batch.basic_output_counts(other, shape) is None
