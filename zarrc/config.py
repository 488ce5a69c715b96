"""Run-time settings.

``threads``
    Worker threads zarrc uses for one call (chunk decoding, encoding; a large
    blosc buffer decoded on its own).  Default: the ``ZARRC_NUM_THREADS``
    environment variable, else the number of cores.
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

How these settings become threads per call is ``zarrc.threads``'s policy.

Change settings with ``zarrc.config.set(threads=4)``, which can also be used as a
context manager that restores the previous values on exit.
"""

from __future__ import annotations

import os
from typing import ClassVar

from zarrc._kernels import slabs
from zarrc.errors import ArgumentError, SettingError


def _env_threads() -> int:
    raw = os.environ.get("ZARRC_NUM_THREADS")
    if raw:
        try:
            value = int(raw)
        except ValueError:
            raise ArgumentError(f"ZARRC_NUM_THREADS must be a positive integer, got {raw!r}") from None
        if value < 1:
            raise ArgumentError(f"ZARRC_NUM_THREADS must be a positive integer, got {raw!r}")
        return value
    return os.cpu_count() or 1


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

    _defaults: ClassVar[dict] = {"threads": None, "split_bytes": 2 << 20, "pool_bytes": 1 << 30}
    _may_be_zero = frozenset({"pool_bytes"})

    def __init__(self) -> None:
        self._values = dict(self._defaults)
        self._values["threads"] = _env_threads()

    def __getattr__(self, name: str):
        try:
            return self.__dict__["_values"][name]
        except KeyError:
            raise SettingError(f"zarrc.config has no setting {name!r}") from None

    def get(self, name: str):
        """The current value of setting ``name``."""
        return getattr(self, name)

    def set(self, **values) -> _Restore:
        """Change settings; usable as a context manager that restores them."""
        for name, value in values.items():
            if name not in self._defaults:
                raise ArgumentError(f"zarrc.config has no setting {name!r}")
            least = 0 if name in self._may_be_zero else 1
            if not isinstance(value, int) or isinstance(value, bool) or value < least:
                what = "an integer >= 0" if least == 0 else "a positive integer"
                raise ArgumentError(f"zarrc.config.{name} must be {what}, got {value!r}")
        old = {name: self._values[name] for name in values}
        self._values.update(values)
        self._apply()
        return _Restore(self, old)

    def _apply(self) -> None:
        """Hand the settings the kernels keep to them."""
        slabs.set_pool_limit(self._values["pool_bytes"])

    def __repr__(self) -> str:
        return f"zarrc.config({', '.join(f'{k}={v!r}' for k, v in self._values.items())})"


config = Config()
