"""The store interface, key validation and byte-range arithmetic shared by every store.

A store maps keys ("/"-separated strings such as ``"temp/c/0/1"``) to bytes.  Every
method is synchronous and thread-safe: the engine calls one store from many worker
threads at once.
"""

from __future__ import annotations

import builtins
import os
import re
import threading
from collections.abc import Iterator, Mapping, Sequence
from typing import TYPE_CHECKING, Any

from zarrc.errors import ArgumentError, ArgumentTypeError, ReadOnlyError, StoreError

if TYPE_CHECKING:
    from typing_extensions import Self

# An escape: a "." or ".." segment, or a leading "/".
_ESCAPE = re.compile(r"(?:^|/)\.\.?(?:/|$)|^/")
# Other malformed keys: an empty segment ("a//b", "a/"), a backslash, a NUL.
_MALFORMED = re.compile(r"//|/$|[\\\x00]")
MAX_IO = 1 << 30  # largest single read / write request (the OS returns at most ~2 GiB per call)


def validate_key(key: str, store: object) -> str:
    """Return ``key`` if it is a valid store key, else raise.

    A key is a non-empty string of "/"-separated, non-empty segments, none of which
    is "." or "..", with no leading "/", no backslash and no NUL.  This is what keeps
    every key inside the store root.

    Raises TypeError if ``key`` is not a str, StoreError (naming the key and the
    store) if it is malformed.
    """
    if not isinstance(key, str):
        raise ArgumentTypeError(f"store key must be a str, not {type(key).__name__}: {key!r}")
    if not key:
        raise StoreError(f"key '' of {store!r} is invalid: a key must not be empty")
    if _ESCAPE.search(key):
        raise StoreError(f"key {key!r} of {store!r} escapes the store root")
    if _MALFORMED.search(key):
        raise StoreError(
            f"key {key!r} of {store!r} is invalid: keys are '/'-separated non-empty "
            "segments without backslash or NUL"
        )
    return key


def is_valid_key(key: str) -> bool:
    """True if :func:`validate_key` accepts ``key`` (for filtering names found in archives)."""
    return bool(key) and not _ESCAPE.search(key) and not _MALFORMED.search(key)


def split_prefix(prefix: str, store: object) -> tuple[str, str]:
    """Split a listing prefix into (directory key, name stem) and validate it.

    ``"a/b/"`` -> ``("a/b", "")``; ``"a/b"`` -> ``("a", "b")``; ``""`` -> ``("", "")``.
    The directory part must be a valid key (or empty); the stem only filters names,
    so it may be any partial name (``".z"``) but must not hold a backslash or NUL.
    Raises TypeError / StoreError like :func:`validate_key`.
    """
    if not isinstance(prefix, str):
        raise ArgumentTypeError(f"store prefix must be a str, not {type(prefix).__name__}: {prefix!r}")
    directory, _, stem = prefix.rpartition("/")
    if directory or prefix.startswith("/"):
        try:
            validate_key(directory, store)
        except StoreError:
            raise StoreError(f"prefix {prefix!r} of {store!r} escapes the store root or is invalid") from None
    if "\\" in stem or "\x00" in stem:
        raise StoreError(f"prefix {prefix!r} of {store!r} is invalid: backslash or NUL")
    return directory, stem


def check_range(start: int, length: int | None, key: str, store: object) -> None:
    """Raise ArgumentError (a ValueError) unless (start, length) is a valid range request."""
    if length is not None:
        if start < 0:
            raise ArgumentError(
                f"range of key {key!r} of {store!r}: a suffix (start={start}) takes no length, got {length}"
            )
        if length < 0:
            raise ArgumentError(f"range of key {key!r} of {store!r}: negative length {length}")


def clip_range(size: int, start: int, length: int | None) -> tuple[int, int]:
    """Byte offsets [begin, end) of a (start, length) request on a value of ``size`` bytes.

    ``length`` None reads to the end; ``start < 0`` is a suffix of ``-start`` bytes;
    a range past the end is clipped, so ``begin <= end <= size`` always holds.
    """
    if start < 0:
        return max(0, size + start), size
    begin = min(start, size)
    end = size if length is None else min(size, start + length)
    return begin, end


# -- positioned reads ----------------------------------------------------------
#
# ``os.pread`` reads at an offset without moving the descriptor's file position, so
# any number of threads can read one descriptor at once.  Windows has no such call
# in ``os``: there ``pread`` seeks and reads under a lock of its own for the
# descriptor (one lock per descriptor number, made on first use), so concurrent
# positioned reads of one descriptor take turns, and reads of different descriptors
# still run at once.  A lock rather than a second handle per read: a descriptor is
# opened once per read (LocalStore) or once per store (ZipStore), and a duplicate per
# read would cost an open and a close per chunk, where the lock costs nothing unless
# another thread reads the same file.  The fallback moves the file position: a
# descriptor read with ``pread`` must never also be read from its current position
# by another thread (``read_exactly(fd, n, None)`` is only used on a descriptor its
# caller opened for itself).

# True where the OS reads at an offset without seeking (POSIX); tests set it to
# False to exercise the fallback on Linux.
HAVE_PREAD = hasattr(os, "pread")
_pread_locks: dict[int, threading.Lock] = {}
_pread_locks_guard = threading.Lock()


def pread(fd: int, size: int, offset: int) -> bytes:
    """At most ``size`` bytes of ``fd`` from byte ``offset`` (fewer at end of file),
    like ``os.pread``, on every platform; safe to call from many threads on one
    descriptor."""
    if HAVE_PREAD:
        return os.pread(fd, size, offset)
    lock = _pread_locks.get(fd)
    if lock is None:
        with _pread_locks_guard:
            lock = _pread_locks.setdefault(fd, threading.Lock())
    with lock:
        os.lseek(fd, offset, os.SEEK_SET)
        return os.read(fd, size)


def read_exactly(fd: int, size: int, offset: int | None) -> bytes:
    """Read ``size`` bytes (fewer at end of file) from ``offset`` (None: current position).

    Loops because one read returns at most about 2 GiB; a short read means end of file.
    """
    parts = []
    while size > 0:
        ask = min(size, MAX_IO)
        part = os.read(fd, ask) if offset is None else pread(fd, ask, offset)
        parts.append(part)
        if len(part) < ask:
            break
        size -= ask
        if offset is not None:
            offset += ask
    return parts[0] if len(parts) == 1 else b"".join(parts)


def byte_view(value: Any) -> memoryview:
    """A flat unsigned-byte view of a buffer-protocol object, copying only if non-contiguous."""
    view = memoryview(value)
    if not view.c_contiguous:
        return memoryview(view.tobytes())
    if view.ndim != 1 or view.format != "B":
        view = view.cast("B")
    return view


class Snapshot:
    """One version of a stored value, for reading parts of it consistently: every
    read of a snapshot returns bytes of the same version, whatever writers do
    meanwhile (a sharded reader takes a shard's index and its inner chunks from
    one snapshot).

    ``size``: the value's length (None: unknown).  ``token``: equal for two
    snapshots of the same version, as long as ``anchor`` (an object a cache must
    keep alive with the token; None if it need not) lives; None if the store
    cannot name versions (nothing read from the value may then be cached).
    ``read(start, length)``: those bytes (where ``size`` is None, also ``start <
    0``, ``length`` None: the last ``-start`` bytes); ``sources(offsets, lengths)``: those ranges as sources
    of the native batch (``zarrc._kernels.batch``).  ``close()`` releases what
    the snapshot holds (an open file); it is a context manager.
    """

    size: int | None
    token: Any = None
    anchor: Any = None
    name: str = "a stored value"

    def read(self, start: int, length: int | None) -> bytes | None:
        raise NotImplementedError

    def sources(self, offsets: Sequence[int], lengths: Sequence[int]) -> list:
        raise NotImplementedError

    def holder(self) -> tuple[Any, int] | None:
        """(an open file descriptor or a ``bytes`` object, where the value starts in
        it), for the native batch to read ranges of straight (engine.sharding), or None:
        ranges are handed over by ``sources``."""
        return None

    def _check(self, offsets: Sequence[int], lengths: Sequence[int]) -> None:
        """StoreError unless every range [offset, offset + length) lies within the value."""
        for start, length in zip(offsets, lengths):
            # (only snapshots of a known size check ranges)
            if start < 0 or length < 0 or start + length > self.size:  # type: ignore[operator]
                raise StoreError(f"{self.name}: bytes [{start}, {start + length}) lie outside its "
                                 f"{self.size} bytes")

    def check_ranges(self, offsets: Any, lengths: Any) -> None:
        """_check for numpy int64 arrays of ranges, all at once (a snapshot of unknown
        size checks nothing): StoreError naming the first range outside the value."""
        if self.size is None:
            return
        outside = (offsets < 0) | (lengths < 0) | (offsets + lengths > self.size)
        if outside.any():
            bad = int(outside.argmax())
            self._check([int(offsets[bad])], [int(lengths[bad])])

    def close(self) -> None:
        """Release the snapshot (the default holds nothing)."""

    def __enter__(self) -> Self:
        return self

    def __exit__(self, *exc: object) -> None:
        self.close()


class BytesSnapshot(Snapshot):
    """A snapshot of a value held in memory as ``bytes`` (immutable: one version)."""

    def __init__(self, data: bytes, name: str = "a stored value") -> None:
        self.data = data
        self.size = len(data)
        self.token = ("bytes", id(data), len(data))     # (unique while ``anchor`` lives)
        self.anchor = data
        self.name = name

    def read(self, start: int, length: int) -> bytes:  # type: ignore[override]  # (no suffix reads)
        self._check((start,), (length,))
        return self.data[start:start + length]

    def sources(self, offsets: Sequence[int], lengths: Sequence[int]) -> list:
        self._check(offsets, lengths)
        return [("bytes", self.data, o, n) for o, n in zip(offsets, lengths)]

    def holder(self) -> tuple[Any, int] | None:
        return (self.data, 0) if type(self.data) is bytes else None


class FileSnapshot(Snapshot):
    """A snapshot of a file, or of ``size`` bytes of one from ``base`` (a zip
    member), read from a descriptor held open: a file replaced by rename meanwhile
    does not change what the descriptor reads.  ``owned``: close the descriptor
    with the snapshot."""

    def __init__(self, fd: int, size: int, token: Any, name: str, base: int = 0,
                 owned: bool = True) -> None:
        self.fd, self.size, self.token, self.name = fd, size, token, name
        self.base, self.owned = base, owned

    def read(self, start: int, length: int) -> bytes:  # type: ignore[override]  # (no suffix reads)
        self._check((start,), (length,))
        try:
            data = read_exactly(self.fd, length, self.base + start)
        except OSError as e:
            raise StoreError(f"cannot read {self.name}: {e.strerror}") from e
        if len(data) != length:
            raise StoreError(f"{self.name}: {len(data)} of {length} bytes at {start} (truncated)")
        return data

    def sources(self, offsets: Sequence[int], lengths: Sequence[int]) -> list:
        self._check(offsets, lengths)
        fd, base = self.fd, self.base
        return [("fd", fd, base + o, n) for o, n in zip(offsets, lengths)]

    def holder(self) -> tuple[Any, int] | None:
        return self.fd, self.base

    def close(self) -> None:
        if self.owned and self.fd >= 0:
            os.close(self.fd)
        self.fd = -1


class RangeSnapshot(Snapshot):
    """The default for stores that cannot name the versions of their values: the
    value read by ranges (``get_range``, ``get_ranges``, adjacent ranges merged),
    with no tie between two reads (token None).  ``read`` returns None if the key
    is absent."""

    def __init__(self, store: Store, key: str) -> None:
        self.store, self.key = store, key
        self.size = store.size(key)
        self.name = f"key {key!r} of {store!r}"

    def read(self, start: int, length: int | None) -> bytes | None:
        data = self.store.get_range(self.key, start, length)
        if data is not None and length is not None and len(data) != length:
            raise StoreError(f"{self.name}: {len(data)} of {length} bytes at {start} (truncated)")
        return data

    def sources(self, offsets: Sequence[int], lengths: Sequence[int]) -> list:
        order = sorted(range(len(offsets)), key=offsets.__getitem__)
        ranges: list = []
        groups: list = []
        for i in order:
            start, end = offsets[i], offsets[i] + lengths[i]
            if ranges and start <= ranges[-1][1]:
                ranges[-1][1] = max(ranges[-1][1], end)
                groups[-1].append(i)
            else:
                ranges.append([start, end])
                groups.append([i])
        out: list = [None] * len(offsets)
        blobs = self.store.get_ranges(self.key, [(s, e - s) for s, e in ranges])
        if blobs is None:
            return out
        for (start, end), group, blob in zip(ranges, groups, blobs):
            blob = bytes(blob)
            for i in group:
                if offsets[i] - start + lengths[i] > len(blob):
                    raise StoreError(f"{self.name}: bytes [{offsets[i]}, {offsets[i] + lengths[i]}) "
                                     "lie past the end of the value")
                out[i] = ("bytes", blob, offsets[i] - start, lengths[i])
        return out


class Fetched:
    """Values already fetched, as ``Store.fetch_many`` gives them for a store whose
    reads are local: ``result()`` returns them."""

    def __init__(self, values: list) -> None:
        self.values = values

    def result(self) -> list:
        return self.values

    def cancel(self) -> bool:
        return False


class Store:
    """Abstract store: a thread-safe mapping from keys to bytes.

    Subclasses implement ``get``, ``set``, ``delete``, ``exists`` and ``list_prefix``
    and usually override the range and batch methods with faster versions.  The
    defaults here are correct but read whole values.
    """

    read_only: bool = False
    #: False for stores that cannot remove a key once written.
    supports_deletes: bool = True
    #: True for a store zarrc opened itself from what was given to the API (a path, a
    #: URL, a dict: ``make_store``): closing a node opened on it closes it.
    opened_by_zarrc: bool = False

    # -- reading -------------------------------------------------------------

    def get(self, key: str) -> bytes | None:
        """The value of ``key``, or None if the key is absent."""
        raise NotImplementedError

    def get_range(self, key: str, start: int, length: int | None = None) -> bytes | None:
        """Bytes [start, start+length) of the value of ``key``, or None if absent.

        ``length`` None reads to the end; ``start < 0`` reads the last ``-start``
        bytes (``length`` must then be None); a range past the end is clipped, as a
        file read is.  Raises ArgumentError (a ValueError) for a negative length or a suffix with a length.
        """
        check_range(start, length, key, self)
        value = self.get(key)
        if value is None:
            return None
        begin, end = clip_range(len(value), start, length)
        return value[begin:end]

    def get_many(self, keys: Sequence[str]) -> list[bytes | None]:
        """The values of ``keys``, in order, None for absent keys."""
        return [self.get(key) for key in keys]

    #: For a store whose reads wait on a network: how many chunk keys the engine asks
    #: for at once (``fetch_many``) while it decodes the keys it asked for before, so
    #: fetching and decoding overlap and a selection's bytes are never all held.  None
    #: (local stores): a read asks for all its keys at once.
    fetch_window: int | None = None

    def fetch_many(self, keys: Sequence[str]) -> Any:
        """Start fetching the values of ``keys``; an object whose ``result()`` waits
        for them and returns ``get_many(keys)``'s list (raising what it raises), and
        whose ``cancel()`` gives up on them.  The default fetches them now."""
        return Fetched(self.get_many(keys))

    def get_ranges(self, key: str, ranges: Sequence[tuple[int, int | None]]) -> list[bytes] | None:
        """Several (start, length) ranges of one key (see ``get_range``), or None if absent."""
        for start, length in ranges:
            check_range(start, length, key, self)
        value = self.get(key)
        if value is None:
            return None
        out = []
        for start, length in ranges:
            begin, end = clip_range(len(value), start, length)
            out.append(value[begin:end])
        return out

    def exists(self, key: str) -> bool:
        """True if ``key`` holds a value."""
        return self.get(key) is not None

    def snapshot(self, key: str) -> Snapshot | None:
        """One version of the value of ``key`` to read parts of (see Snapshot), or
        None if absent.  The default reads ranges with no version tying them (a
        RangeSnapshot, which may find the key absent only when read): stores that
        can name versions override it."""
        return RangeSnapshot(self, key)

    def snapshot_for(self, key: str, start: int, length: int | None) -> Snapshot | None:
        """``snapshot(key)`` for a caller that reads bytes [start, start+length) of it
        first (start < 0, length None: the last -start bytes): a store whose version
        check is a request may fetch those bytes with it (RemoteStore).  The default
        is ``snapshot``."""
        return self.snapshot(key)

    # -- conditional writes (stores that can name versions remotely) ----------

    #: True for a store whose partial chunk updates are made by compare-and-swap on
    #: each value's version (``get_many_versioned``, then ``set_many_if``, retried for
    #: the keys another writer changed meanwhile) rather than by locks alone: an
    #: object store with ETags, shared by writers that no lock reaches.
    conditional_writes: bool = False

    def get_many_versioned(self, keys: Sequence[str]) -> list[tuple[bytes | None, Any]]:
        """(value, version) of each of ``keys`` (None, None: absent), for
        ``set_many_if``.  Only stores with ``conditional_writes``."""
        raise NotImplementedError

    def set_many_if(self, items: Mapping[str, tuple[Any, Any]]) -> list[str]:
        """Store each value of ``items`` ({key: (value, version)}) only where the key
        still holds that version (None: is still absent); the keys not written
        because another version is there.  Only stores with ``conditional_writes``."""
        raise NotImplementedError

    # -- writing -------------------------------------------------------------

    def set(self, key: str, value: Any) -> None:
        """Store ``value`` (any bytes-like / buffer-protocol object) under ``key``."""
        raise NotImplementedError

    def set_many(self, items: Mapping[str, Any]) -> None:
        """Store every (key, value) of ``items``; keys and values are all checked before any write."""
        for key, value in items.items():
            validate_key(key, self)
            memoryview(value).release()  # TypeError now rather than after some writes
        for key, value in items.items():
            self.set(key, value)

    def delete(self, key: str) -> None:
        """Remove ``key``; no error if it is absent."""
        raise NotImplementedError

    def delete_prefix(self, prefix: str) -> None:
        """Remove every key starting with ``prefix`` ("a/b/" removes "a/b/..."; "" removes all)."""
        self.check_writable("delete_prefix", prefix)
        for key in list(self.list_prefix(prefix)):
            self.delete(key)

    def check_writable(self, operation: str, key: str) -> None:
        """Raise StoreError if this store is read-only."""
        if self.read_only:
            raise ReadOnlyError(f"cannot {operation} key {key!r}: {self!r} is read-only")

    # -- listing -------------------------------------------------------------

    def list(self) -> Iterator[str]:
        """Every key in the store (in no particular order)."""
        return self.list_prefix("")

    def list_prefix(self, prefix: str) -> Iterator[str]:
        """Every key that starts with ``prefix`` (full keys, in no particular order)."""
        raise NotImplementedError

    def list_dir(self, prefix: str) -> tuple[builtins.list[str], builtins.list[str]]:
        """(keys, child prefixes) directly under the directory ``prefix``.

        ``prefix`` is "" (the root) or a directory such as "a/b/" ("a/b" means the
        same).  Names are relative to the prefix, without a trailing "/", sorted:
        with keys "a/b", "a/d/e", ``list_dir("a/")`` is ``(["b"], ["d"])``.
        """
        if prefix and not prefix.endswith("/"):
            prefix += "/"
        split_prefix(prefix, self)
        keys: set[str] = set()
        dirs: set[str] = set()
        n = len(prefix)
        for key in self.list_prefix(prefix):
            name, sep, _ = key[n:].partition("/")
            (dirs if sep else keys).add(name)
        return sorted(keys), sorted(dirs)

    def local_path(self, key: str) -> str | None:
        """The file holding ``key``, for stores backed by plain files; None otherwise."""
        return None

    def file_prefix(self, prefix: str) -> bytes | None:
        """The store's file layout, declared for the engine: for a store whose keys
        are plain files, the bytes ``head`` such that the key ``prefix + rest`` is
        the file ``head + os.fsencode(rest)`` for every ``rest`` ("/" in it staying
        the path separator); the engine then builds chunk file paths itself (and
        natively) and reads and writes those files directly.  None (the default)
        for stores whose keys are not plain files, or not named that way.  A
        subclass that changes ``local_path`` changes this with it.  Raises
        StoreError for an invalid prefix."""
        return None

    def size(self, key: str) -> int | None:
        """The size in bytes of the value of ``key`` if the store can tell without
        reading the value (None: absent, or unknown — the default)."""
        return None

    # -- lifetime ------------------------------------------------------------

    def close(self) -> None:
        """Release resources (file handles); the default does nothing."""

    def __enter__(self) -> Self:
        return self

    def __exit__(self, *exc: object) -> None:
        self.close()
