"""Run-time settings.

``threads``
    Worker threads zarrc uses for one call (chunk decoding, encoding; a large
    blosc buffer decoded on its own).  Default: the ``ZARRC_NUM_THREADS``
    environment variable, else the cores this process may use (its CPU affinity),
    and inside a dask task that task thread's share of them (``zarrc.runtime.cores``: a
    thread of dask's threaded scheduler of n threads gets cores // n, a
    distributed worker's task thread the host's cores over the cluster's threads
    on that host), so that dask threads x zarrc threads stay within the cores.  A
    value set (``config.set(threads=...)``, the environment variable) always wins.
``split_bytes``
    A lone codec call on a buffer at least this large (default 2 MiB), made from
    the main thread, splits the work over up to ``threads`` threads (blosc: runs
    of blocks on the shared pool); below that one thread is faster.  Calls from
    other threads stay single-threaded so that many Python threads do not
    oversubscribe the cores.
``pool_bytes``
    Memory of read outputs (of 256 KiB and more) that have died which zarrc keeps
    for the next reads, default 1 GiB; 0 keeps none.  A new array's pages cost a
    fault and zeroing by the kernel when first written (for fast codecs, a third of
    a read's time); reused ones do not.  The kept memory is lazily freed (Linux
    ``MADV_FREE``): it counts in the process's resident size, but the kernel takes
    it back without writing it anywhere when it runs short of memory.  Linux only.

``vlen_chunk_bytes``
    The most bytes one chunk of variable-length items (``vlen-utf8``, ``vlen-bytes``,
    zarr-python's ``string`` and ``bytes`` types; other v2 object codecs) may
    decompress to, default 1 GiB: its items have no fixed size, so nothing in the
    metadata bounds what a compressed chunk decodes to, and a small stream could
    claim more memory than the machine has.  1 GiB is far above the chunks zarr
    writers make (zarr-python suggests chunks of 1 MB and more, a few hundred MB at
    most), and a chunk's items as Python objects take several times their bytes, so
    a larger chunk is rarely readable anyway; a read refused by it names this
    setting.  Read when a chunk is decoded.

``write_empty_chunks``
    Default of arrays opened or created without ``write_empty_chunks`` (read when
    the array object is made): False (default) deletes a chunk written with only
    the fill value instead of storing it.

``write_locking``
    How a write of part of a stored chunk or shard (a read-modify-write) excludes
    concurrent writers of the same chunk or shard (zarrc.runtime.locks, in the style of
    tensorstore's ``file_io_locking``): ``"os"`` (default) an OS lock (flock) on a
    lock file ``<chunk file>.__lock`` beside it, ``"lockfile"`` the lock file's
    exclusive creation (file systems without flock: Lustre mounted without
    ``flock``, old NFS), ``"none"`` no lock (concurrent partial writers of one chunk
    or shard can lose updates).  Threads of one process always exclude each other
    unless ``"none"``; stores that are not plain files take only that in-process
    lock.  Whole-chunk (whole-shard) writes and reads never lock.  Default: the
    ``ZARRC_WRITE_LOCKING`` environment variable, else "os" (worker processes of a
    cluster inherit the variable; a ``config.set`` in the client does not reach
    them).  See docs/consistency.md.

``concurrency``
    Requests one remote store (``RemoteStore``: S3, GCS, Azure, HTTP, fsspec, a
    zarr-python store object) has in flight at once, read when the store is
    opened; default 10 (zarr-python's ``async.concurrency``).  A store opened with
    ``concurrency=`` keeps its own.

How these settings become threads per call is ``zarrc.runtime.threads``'s policy.

Change settings with ``zarrc.config.set(threads=4)``, which can also be used as a
context manager that restores the previous values on exit.  ``set`` also takes a
dict, with zarrc's names or zarr-python's keys where they apply:
``"array.write_empty_chunks"`` (write_empty_chunks), ``"threading.max_workers"``
(threads; None is the default), ``"async.concurrency"`` (concurrency),
``"array.order"`` (only "C": zarrc returns C-ordered arrays).  ``config.get``
takes the same names.
"""

from __future__ import annotations

import os
from collections.abc import Mapping
from typing import Any, ClassVar

from zarrc._kernels import slabs
from zarrc.errors import ArgumentError, SettingError
from zarrc.runtime.cores import default_threads


def _env_threads() -> int | None:
    """ZARRC_NUM_THREADS, or None (the default of zarrc.runtime.cores) when it is not set."""
    raw = os.environ.get("ZARRC_NUM_THREADS")
    if raw:
        try:
            value = int(raw)
        except ValueError:
            raise ArgumentError(f"ZARRC_NUM_THREADS must be a positive integer, got {raw!r}") from None
        if value < 1:
            raise ArgumentError(f"ZARRC_NUM_THREADS must be a positive integer, got {raw!r}")
        return value
    return None


# zarr-python's config keys -> zarrc's settings
ZARR_PYTHON_KEYS = {"array.write_empty_chunks": "write_empty_chunks", "threading.max_workers": "threads",
                    "async.concurrency": "concurrency", "array.order": "order"}

# requests a remote store has in flight at once unless set: zarr-python's default
# of ``async.concurrency``
DEFAULT_CONCURRENCY = 10

# what one chunk of variable-length items may decompress to unless set (see above)
VLEN_CHUNK_BYTES = 1 << 30


class _Restore:
    def __init__(self, config: Config, old: dict) -> None:
        self._config = config
        self._old = old

    def __enter__(self) -> Config:
        return self._config

    def __exit__(self, *exc: object) -> None:
        self._config._values.update(self._old)
        self._config._apply()


class Config:
    """zarrc's settings; the module-level ``config`` object is the one in use."""

    _defaults: ClassVar[dict] = {"threads": None, "split_bytes": 2 << 20, "pool_bytes": 1 << 30,
                                 "write_empty_chunks": False, "write_locking": "os",
                                 "concurrency": DEFAULT_CONCURRENCY, "vlen_chunk_bytes": VLEN_CHUNK_BYTES}
    _may_be_zero = frozenset({"pool_bytes"})

    def __init__(self) -> None:
        self._values = dict(self._defaults)
        self._values["threads"] = _env_threads()
        raw = os.environ.get("ZARRC_WRITE_LOCKING")
        if raw:         # (a cluster's worker processes inherit the environment)
            self._values["write_locking"] = self._checked("ZARRC_WRITE_LOCKING", "write_locking", raw)

    def __reduce__(self) -> str:
        # pickled as the module's object, not a copy: ``client.run(zarrc.config.set,
        # threads=1)`` (a bound method, pickled with its object) sets each dask worker's
        return "config"

    def __getattr__(self, name: str):
        try:
            value = self.__dict__["_values"][name]
            if value is None and name == "threads":
                return default_threads()       # (not set: this thread's default)
            return value
        except KeyError:
            raise SettingError(f"zarrc.config has no setting {name!r}") from None

    def get(self, name: str):
        """The current value of setting ``name`` (zarrc's, or a zarr-python key of
        ZARR_PYTHON_KEYS)."""
        name = ZARR_PYTHON_KEYS.get(name, name)
        return "C" if name == "order" else getattr(self, name)

    def set(self, values: Mapping[str, Any] | None = None, **kwargs: Any) -> _Restore:
        """Change settings (a dict of names or zarr-python keys, or keywords); usable
        as a context manager that restores them.  ArgumentError for an unknown
        setting or a bad value."""
        if values is not None and not isinstance(values, Mapping):
            raise ArgumentError(f"zarrc.config.set takes a dict of settings, got {values!r}")
        given = {**(values or {}), **kwargs}
        values = {}
        for key, value in given.items():
            name = ZARR_PYTHON_KEYS.get(key, key)
            if name == "order" and key != name:
                self._checked(key, name, value)         # (checked, not kept: always "C")
                continue
            if name not in self._defaults:
                raise ArgumentError(f"zarrc.config has no setting {key!r}")
            values[name] = self._checked(key, name, value)
        old = {name: self._values[name] for name in values}
        self._values.update(values)
        self._apply()
        return _Restore(self, old)

    def _checked(self, key: str, name: str, value: Any) -> Any:
        """``value`` for setting ``name`` (given as ``key``), else ArgumentError."""
        label = f"zarrc.config.{key}" if key == name else f"zarrc.config {key!r}"
        if name == "write_empty_chunks":
            if not isinstance(value, bool):
                raise ArgumentError(f"{label} must be True or False, got {value!r}")
            return value
        if name == "write_locking":
            if value not in ("os", "lockfile", "none"):
                raise ArgumentError(f"{label} must be 'os', 'lockfile' or 'none', got {value!r}")
            return value
        if name == "order":
            if value != "C":
                raise ArgumentError(f"{label} must be 'C' (zarrc returns C-ordered "
                                    f"arrays; numpy.asfortranarray converts them), got {value!r}")
            return value
        if name == "threads" and value is None and key != "threads":
            return _env_threads()                   # (zarr-python's "default" for these keys)
        if name == "concurrency" and value is None and key != "concurrency":
            return DEFAULT_CONCURRENCY
        least = 0 if name in self._may_be_zero else 1
        if not isinstance(value, int) or isinstance(value, bool) or value < least:
            what = "an integer >= 0" if least == 0 else "a positive integer"
            raise ArgumentError(f"{label} must be {what}, got {value!r}")
        return value

    def _apply(self) -> None:
        """Hand the settings the kernels keep to them."""
        slabs.set_pool_limit(self._values["pool_bytes"])

    def __repr__(self) -> str:
        return f"zarrc.config({', '.join(f'{k}={getattr(self, k)!r}' for k in self._values)})"


config = Config()
