"""MemoryStore: keys and values held in a Python dict."""

from __future__ import annotations

import threading
from collections.abc import Callable, Iterator, MutableMapping
from typing import Any

from zarrc.errors import ArgumentError, ArgumentTypeError
from zarrc.stores.base import BytesSnapshot, Store, split_prefix, validate_key


def as_bytes(value: Any, key: str, store: object) -> bytes:
    """``value`` as immutable bytes: a ``bytes`` object itself, else a copy of its buffer.

    Also accepts objects with a ``to_bytes()`` method (zarr-python buffers), so a
    dict filled by zarr-python can be read.  Raises TypeError for anything else.
    """
    if type(value) is bytes:
        return value
    try:
        return memoryview(value).tobytes()
    except TypeError:
        to_bytes = getattr(value, "to_bytes", None)
        if to_bytes is not None and not isinstance(value, int):
            return to_bytes()
        raise ArgumentTypeError(
            f"value of key {key!r} of {store!r} must be bytes-like, not {type(value).__name__}"
        ) from None


class MemoryStore(Store):
    """A store in memory: a mapping from keys to ``bytes``.

    Parameters
    ----------
    data : dict, optional
        The backing mapping.  A dict passed in is used as is, not copied, so writes
        land in the caller's dict (as zarr-python does with dict stores).
    read_only : bool
        Refuse ``set`` / ``delete`` with StoreError.
    store_dict : zarr-python's name for ``data`` (keyword only; give one of the two).
    wrap : a function applied to each value before it goes into the mapping (None:
        the ``bytes`` themselves); a store sharing the dict of a zarr-python
        MemoryStore stores zarr-python's buffers, which it reads.

    Values are stored as immutable ``bytes`` (a ``bytes`` value is kept as is, other
    buffers are copied once).  Pickling copies the contents.
    """

    def __init__(self, data: MutableMapping[str, Any] | None = None, read_only: bool = False, *,
                 store_dict: MutableMapping[str, Any] | None = None,
                 wrap: Callable[[bytes], Any] | None = None) -> None:
        if store_dict is not None:
            if data is not None:
                raise ArgumentError("MemoryStore: give data or store_dict, not both")
            data = store_dict
        self._data: MutableMapping[str, Any] = {} if data is None else data
        self.read_only = bool(read_only)
        self._wrap = wrap
        self._lock = threading.Lock()

    @property
    def data(self) -> MutableMapping[str, Any]:
        """The backing mapping."""
        return self._data

    def get(self, key: str) -> bytes | None:
        """The value of ``key``, or None if absent."""
        validate_key(key, self)
        value = self._data.get(key)
        return None if value is None else as_bytes(value, key, self)

    def snapshot(self, key: str) -> BytesSnapshot | None:
        """The value of ``key`` as it is now (its bytes are immutable: one version)."""
        value = self.get(key)
        return None if value is None else BytesSnapshot(value, f"key {key!r} of {self!r}")

    def size(self, key: str) -> int | None:
        """Size in bytes of the value of ``key``, or None."""
        value = self.get(key)
        return None if value is None else len(value)

    def exists(self, key: str) -> bool:
        """True if ``key`` holds a value."""
        validate_key(key, self)
        return key in self._data

    def set(self, key: str, value: Any) -> None:
        """Store a copy of ``value`` (the object itself if it is ``bytes``) under ``key``."""
        validate_key(key, self)
        self.check_writable("set", key)
        value = as_bytes(value, key, self)
        if self._wrap is not None:
            value = self._wrap(value)
        with self._lock:
            self._data[key] = value

    def delete(self, key: str) -> None:
        """Remove ``key``; no error if absent."""
        validate_key(key, self)
        self.check_writable("delete", key)
        with self._lock:
            self._data.pop(key, None)

    def delete_prefix(self, prefix: str) -> None:
        """Remove every key starting with ``prefix`` ("" removes everything)."""
        split_prefix(prefix, self)
        self.check_writable("delete_prefix", prefix)
        with self._lock:
            if not prefix:
                self._data.clear()
                return
            for key in [k for k in self._data if isinstance(k, str) and k.startswith(prefix)]:
                del self._data[key]

    def list_prefix(self, prefix: str) -> Iterator[str]:
        """Every key starting with ``prefix`` (a snapshot taken when called)."""
        split_prefix(prefix, self)
        with self._lock:
            keys = list(self._data)
        return iter([k for k in keys if isinstance(k, str) and k.startswith(prefix)])

    def __eq__(self, other: object) -> bool:
        return type(other) is type(self) and other._data is self._data

    def __hash__(self) -> int:
        return hash((type(self), id(self._data)))

    def __repr__(self) -> str:
        return f"MemoryStore(<{len(self._data)} keys at {id(self._data):#x}>)"

    def __getstate__(self) -> dict[str, Any]:
        with self._lock:
            data = dict(self._data)
        return {"data": data, "read_only": self.read_only}

    def __setstate__(self, state: dict[str, Any]) -> None:
        type(self).__init__(self, state["data"], state["read_only"])
