"""ReferenceStore: a read-only store serving a Zarr hierarchy from kerchunk references.

A reference set maps store keys to inline bytes or to byte ranges of other files
("targets"): JSON of versions 0 and 1 (``reference_spec``) or a Parquet directory
(``reference_parquet``).  Ranges of local targets are read with ``pread`` on
descriptors kept open, ranges of remote ones through fsspec (``reference_targets``).

``open_reference_store("reference://", "r", {"fo": "refs.json", "remote_protocol":
"s3", "remote_options": {...}})`` takes the arguments users give fsspec's
``get_mapper("reference://", ...)``.
"""

from __future__ import annotations

import bisect
import json
import os
import threading
from collections.abc import Iterator, Sequence
from typing import Any

from zarrc.errors import ArgumentError, MetadataError, ReadOnlyError, StoreError, StoreNotFoundError
from zarrc.stores.base import (
    BytesSnapshot,
    FileSnapshot,
    RangeSnapshot,
    Snapshot,
    Store,
    check_range,
    clip_range,
    is_valid_key,
    split_prefix,
    validate_key,
)
from zarrc.stores.reference_parquet import ParquetReferences
from zarrc.stores.reference_spec import Ref, parse_references
from zarrc.stores.reference_targets import Handle, TargetError, Targets, local_path, require

__all__ = ["ReferenceStore", "open_reference_store"]

# the options of fsspec's ReferenceFileSystem this store takes (and those it ignores:
# they tune fsspec's own request merging and caching)
_OPTIONS = ("target_protocol", "target_options", "remote_protocol", "remote_options", "target",
            "template_overrides", "cache_size", "max_open_files")
_IGNORED = ("max_gap", "max_block", "simple_templates", "skip_instance_cache", "use_listings_cache",
            "asynchronous", "ref_storage_args")
_MAGIC = {b"\x1f\x8b": "gzip", b"BZh": "bz2", b"\xfd7zXZ\x00": "lzma", b"\x28\xb5\x2f\xfd": "zstd"}


def _decompress(data: bytes, where: str) -> bytes:
    """``data`` decompressed if it starts with a gzip, bz2, xz or zstd magic number."""
    for magic, kind in _MAGIC.items():
        if data.startswith(magic):
            try:
                if kind == "zstd":
                    from zarrc._kernels.zstd import zstd_decode

                    return zstd_decode(data)
                import importlib

                return importlib.import_module(kind).decompress(data)
            except Exception as e:  # noqa: BLE001  (each library's own error classes)
                raise MetadataError(f"{where}: cannot decompress ({kind}): {e}") from None
    return data


class _KeyIndex:
    """Keys sorted once, for prefix listings by bisection, and each directory's
    (keys, child directories), built on first use."""

    def __init__(self, keys: Sequence[str]) -> None:
        self.keys = sorted(keys)
        self._dirs: dict[str, tuple[list[str], list[str]]] | None = None
        self._lock = threading.Lock()

    def prefix(self, prefix: str) -> list[str]:
        """The keys starting with ``prefix``, sorted."""
        lo = bisect.bisect_left(self.keys, prefix)
        hi = bisect.bisect_left(self.keys, prefix + "\U0010ffff") if prefix else len(self.keys)
        return self.keys[lo:hi]

    def directory(self, directory: str) -> tuple[list[str], list[str]]:
        """(key names, child directory names) directly in ``directory`` ("" or "a/b")."""
        with self._lock:
            if self._dirs is None:
                files: dict[str, set[str]] = {}
                subdirs: dict[str, set[str]] = {}
                for key in self.keys:
                    parent, _, name = key.rpartition("/")
                    files.setdefault(parent, set()).add(name)
                    while parent:
                        up, _, name = parent.rpartition("/")
                        children = subdirs.setdefault(up, set())
                        if name in children:
                            break
                        children.add(name)
                        parent = up
                self._dirs = {d: (sorted(files.get(d, ())), sorted(subdirs.get(d, ())))
                              for d in files.keys() | subdirs.keys()}
        return self._dirs.get(directory, ([], []))


class _HeldSnapshot(FileSnapshot):
    """A referenced byte range of a local target, read from a shared descriptor that
    the snapshot holds until it is closed (or collected)."""

    def __init__(self, handle: Handle, base: int, size: int, name: str) -> None:
        super().__init__(handle.fd, size, (handle.ident, base, size), name, base=base, owned=False)
        self.handle: Handle | None = handle
        self.anchor = handle

    def close(self) -> None:
        handle, self.handle = self.handle, None
        self.fd = -1
        if handle is not None:
            handle.release()

    def __del__(self) -> None:
        self.close()


class ReferenceStore(Store):
    """A read-only store over kerchunk references.

    Parameters
    ----------
    fo : str, os.PathLike or dict
        The references: a JSON file (gzip, bz2, xz or zstd compressed or not; a
        path or an fsspec URL), a Parquet reference directory, or a reference set
        already loaded (version 0 or 1).
    mode : "r" only; any other raises ReadOnlyError.
    target_protocol, target_options : how to read ``fo`` when it is a URL (fsspec).
    remote_protocol, remote_options : the protocol of target URLs written without
        one, and the fsspec options of remote targets (``{"anon": True}``).
    target : the target of references whose URL is null.
    template_overrides : templates replacing those of a version 1 reference set.
    cache_size : Parquet record files kept loaded; max_open_files: local target
        descriptors kept open.

    Raises StoreNotFoundError if ``fo`` does not exist, MetadataError (naming the
    file and what is wrong) for a malformed reference set, ImportError (naming the
    ``remote`` extra) if fsspec or pyarrow is needed and missing.
    """

    read_only = True
    supports_deletes = False

    def __init__(self, fo: Any, mode: str = "r", *, target_protocol: str | None = None,
                 target_options: dict | None = None, remote_protocol: str | None = None,
                 remote_options: dict | None = None, target: str | None = None,
                 template_overrides: dict | None = None, cache_size: int = 128,
                 max_open_files: int = 128) -> None:
        if mode != "r":
            raise ReadOnlyError(f"ReferenceStore is read-only: mode {mode!r} (only 'r')")
        if isinstance(fo, os.PathLike):
            fo = os.fsdecode(os.fspath(fo))
        if not isinstance(fo, (str, dict)):
            raise ArgumentError(f"ReferenceStore: fo must be a path, a URL or a dict, not {type(fo).__name__}")
        self.fo = fo
        self.options = {k: v for k, v in (("target_protocol", target_protocol),
                                          ("target_options", target_options),
                                          ("remote_protocol", remote_protocol),
                                          ("remote_options", remote_options), ("target", target),
                                          ("template_overrides", template_overrides)) if v}
        self.target = target
        self._cache_size = cache_size
        self._max_open = max_open_files
        self.targets = Targets(remote_protocol, remote_options, max_open_files)
        self._entries: dict[str, Any] | None = None
        self._parquet: ParquetReferences | None = None
        self._where = "references given as a dict" if isinstance(fo, dict) else str(fo)
        if isinstance(fo, dict):
            self._set_entries(parse_references(fo, self._where, template_overrides))
        else:
            self._load(fo, target_protocol, target_options or {}, template_overrides)
        self._index = self._key_index()
        self._fields_listed: dict[str, list[str]] = {}

    # -- opening -----------------------------------------------------------------

    def _key_index(self) -> _KeyIndex:
        """The index of the keys known without reading Parquet record files."""
        if self._entries is not None:
            return _KeyIndex(list(self._entries))
        assert self._parquet is not None
        meta = self._parquet.metadata
        return _KeyIndex([*meta, *([] if ".zmetadata" in meta else [".zmetadata"])])

    def _set_entries(self, entries: dict[str, Any]) -> None:
        for key in entries:
            if not is_valid_key(key):
                raise MetadataError(f"{self._where}: reference key {key!r} is not a valid store key "
                                    "(it escapes the store root or is malformed)")
        self._entries = entries

    def _load(self, fo: str, protocol: str | None, options: dict, overrides: dict | None) -> None:
        """Read the references at ``fo``: a Parquet directory, else a JSON file."""
        path = local_path(fo, protocol)
        if path is not None:
            if os.path.isdir(path):
                self._parquet = ParquetReferences(lambda rel: _read_local(os.path.join(path, rel)),
                                                  self._where, self._cache_size)
                return
            data = _read_local(path)
        else:
            fsspec = require("fsspec", f"reading the references {fo!r}")
            fs, root = fsspec.core.url_to_fs(fo, **options, **({"protocol": protocol} if protocol else {}))
            if root.endswith(("parq", "parquet", "/")) or fs.isdir(root):
                base = root.rstrip("/")
                self._parquet = ParquetReferences(lambda rel: _read_remote(fs, f"{base}/{rel}"),
                                                  self._where, self._cache_size)
                return
            data = _read_remote(fs, root)
        self._set_entries(parse_references(_json_document(data, fo, self._where), self._where, overrides))

    # -- entries -------------------------------------------------------------------

    def _entry(self, key: str) -> bytes | Ref | None:
        validate_key(key, self)
        if self._entries is not None:
            return self._entries.get(key)
        return self._parquet.get(key)  # type: ignore[union-attr]

    def _url(self, key: str, ref: Ref) -> str:
        url = ref.url or self.target
        if not url:
            raise StoreError(f"reference {key!r} of {self!r} has no URL and the store has no target")
        return url

    def _failed(self, key: str, ref: Ref, e: TargetError) -> StoreError:
        span = "(whole file)" if ref.length is None else f"bytes [{ref.offset}, {ref.offset + ref.length})"  # type: ignore[operator]
        return StoreError(f"reference {key!r} of {self!r} -> {ref.url or self.target} {span}: {e}")

    def _request(self, key: str, ref: Ref, begin: int, end: int | None) -> tuple:
        """(url, start, end, claimed end) of bytes [begin, end) of a reference."""
        url = self._url(key, ref)
        if ref.length is None:
            return url, begin, end, None
        stop = ref.length if end is None else end
        return url, ref.offset + begin, ref.offset + stop, ref.offset + ref.length  # type: ignore[operator]

    def _whole_size(self, key: str, ref: Ref) -> int:
        if ref.length is not None:
            return ref.length
        try:
            return self.targets.size(self._url(key, ref))
        except TargetError as e:
            raise self._failed(key, ref, e) from None

    # -- reading -------------------------------------------------------------------

    def get(self, key: str) -> bytes | None:
        """The bytes of ``key`` (inline, or read from its target), None if the
        references have no such key.  Raises StoreError naming the key, the target
        and the range if the target is missing or shorter than the range."""
        return self.get_many([key])[0]

    def get_many(self, keys: Sequence[str]) -> list[bytes | None]:
        """The bytes of each key (see ``get``); remote targets fetched concurrently."""
        out: list[bytes | None] = [None] * len(keys)
        refs: list[tuple[int, Ref]] = []
        for i, key in enumerate(keys):
            value = self._entry(key)
            if isinstance(value, Ref):
                refs.append((i, value))
            else:
                out[i] = value
        if refs:
            requests = [self._request(keys[i], ref, 0, None) for i, ref in refs]
            for (i, ref), blob in zip(refs, self.targets.read_many(requests)):
                if isinstance(blob, TargetError):
                    raise self._failed(keys[i], ref, blob)
                out[i] = blob
        return out

    def get_range(self, key: str, start: int, length: int | None = None) -> bytes | None:
        """Bytes [start, start+length) of ``key`` (see ``Store.get_range``), reading
        only those bytes of the target."""
        out = self.get_ranges(key, ((start, length),))
        return None if out is None else out[0]

    def get_ranges(self, key: str, ranges: Sequence[tuple[int, int | None]]) -> list[bytes] | None:
        """Several (start, length) ranges of ``key``, or None if absent (see
        ``Store.get_ranges``).  Raises StoreError as ``get`` does."""
        for start, length in ranges:
            check_range(start, length, key, self)
        value = self._entry(key)
        if value is None:
            return None
        if isinstance(value, bytes):
            return [value[slice(*clip_range(len(value), s, n))] for s, n in ranges]
        size = self._whole_size(key, value)
        spans = [clip_range(size, s, n) for s, n in ranges]
        wanted = [i for i, (b, e) in enumerate(spans) if e > b]  # (empty ranges read nothing)
        blobs = self.targets.read_many([self._request(key, value, *spans[i]) for i in wanted])
        out = [b""] * len(ranges)
        for i, blob in zip(wanted, blobs):
            if isinstance(blob, TargetError):
                raise self._failed(key, value, blob)
            out[i] = blob
        return out

    def size(self, key: str) -> int | None:
        """The size of ``key``'s value: an inline value's, a range's length, a whole
        target file's size; None if absent."""
        value = self._entry(key)
        if value is None:
            return None
        return len(value) if isinstance(value, bytes) else self._whole_size(key, value)

    def exists(self, key: str) -> bool:
        """True if the references hold ``key`` (its target is not checked)."""
        return self._entry(key) is not None

    def snapshot(self, key: str) -> Snapshot | None:
        """The value of ``key`` to read parts of: inline bytes, a local target's range
        on a descriptor held open (token: the file's identity and the range), else
        ranges read through the store; None if absent."""
        value = self._entry(key)
        if value is None:
            return None
        name = f"key {key!r} of {self!r}"
        if isinstance(value, bytes):
            return BytesSnapshot(value, name)
        url = self._url(key, value)
        path = self.targets.path(url)
        if path is None:
            return RangeSnapshot(self, key)
        try:
            handle = self.targets.local.handle(path)
        except TargetError as e:
            raise self._failed(key, value, e) from None
        offset = value.offset or 0
        size = handle.size - offset if value.length is None else value.length
        if offset + size > handle.size:
            handle.release()
            raise self._failed(key, value, TargetError(f"it lies past the end of the file ({handle.size} bytes)"))
        return _HeldSnapshot(handle, offset, size, name)

    # -- writing (refused) -------------------------------------------------------------

    def set(self, key: str, value: Any) -> None:
        """Refused: ReadOnlyError."""
        self.check_writable("set", key)

    def set_many(self, items: Any) -> None:
        """Refused: ReadOnlyError."""
        self.check_writable("set", next(iter(items), ""))

    def delete(self, key: str) -> None:
        """Refused: ReadOnlyError."""
        self.check_writable("delete", key)

    # -- listing ---------------------------------------------------------------------

    def _chunk_keys(self, field: str) -> list[str]:
        keys = self._fields_listed.get(field)
        if keys is None:
            keys = self._fields_listed[field] = self._parquet.chunk_keys(field)  # type: ignore[union-attr]
        return keys

    def list_prefix(self, prefix: str) -> Iterator[str]:
        """Every key starting with ``prefix`` (sorted; Parquet chunk keys after the
        metadata keys)."""
        split_prefix(prefix, self)
        yield from self._index.prefix(prefix)
        if self._parquet is not None:
            for field in self._parquet.fields:
                if (field + "/").startswith(prefix) or prefix.startswith(field + "/"):
                    yield from (k for k in self._chunk_keys(field) if k.startswith(prefix))

    def list_dir(self, prefix: str) -> tuple[list[str], list[str]]:
        """(keys, child prefixes) directly under ``prefix`` (see ``Store.list_dir``),
        from the key index built once."""
        if prefix and not prefix.endswith("/"):
            prefix += "/"
        split_prefix(prefix, self)
        keys, dirs = self._index.directory(prefix[:-1])
        if self._parquet is None or not any((f + "/").startswith(prefix) or prefix.startswith(f + "/")
                                            for f in self._parquet.fields):
            return keys, dirs
        return Store.list_dir(self, prefix)

    # -- lifetime and identity -----------------------------------------------------------

    def close(self) -> None:
        """Close the target descriptors kept open (the store stays usable)."""
        self.targets.close()

    def _identity(self) -> tuple:
        """(the references' location or content, the options), computed once."""
        identity = self.__dict__.get("_identity_value")
        if identity is None:
            fo = self.fo if isinstance(self.fo, str) else json.dumps(self.fo, sort_keys=True, default=repr)
            identity = self._identity_value = (fo, json.dumps(self.options, sort_keys=True, default=repr))
        return identity

    def __eq__(self, other: object) -> bool:
        return isinstance(other, ReferenceStore) and type(other) is type(self) and self._identity() == other._identity()

    def __hash__(self) -> int:
        return hash(self._identity())

    def __reduce__(self) -> tuple:
        # a description (where the references are, the options), never target data
        return _reopen, (self.fo, {**self.options, "cache_size": self._cache_size,
                                   "max_open_files": self._max_open})

    def __repr__(self) -> str:
        where = f"<{len(self.fo)} references>" if isinstance(self.fo, dict) else repr(self.fo)
        return f"ReferenceStore({where})"


def _json_document(data: bytes | None, fo: str, where: str) -> Any:
    """The parsed JSON of a references file's bytes (None: no such file)."""
    if data is None:
        raise StoreNotFoundError(f"ReferenceStore: no reference file {fo!r}")
    try:
        return json.loads(_decompress(data, where))
    except ValueError as e:
        raise MetadataError(f"{where}: the references are not valid JSON: {e}") from None


def read_json_references(fo: str, target_protocol: str | None = None,
                         target_options: dict | None = None) -> Any:
    """The parsed JSON document of the references file ``fo`` (a path or an fsspec
    URL; gzip, bz2, xz or zstd compressed or not).  Raises StoreNotFoundError if
    it does not exist, MetadataError if it is not JSON, StoreError if it cannot be
    read."""
    path = local_path(fo, target_protocol)
    if path is not None:
        if os.path.isdir(path):
            raise MetadataError(f"{fo} is a directory, not a kerchunk JSON references file")
        return _json_document(_read_local(path), fo, fo)
    fsspec = require("fsspec", f"reading the references {fo!r}")
    fs, root = fsspec.core.url_to_fs(fo, **(target_options or {}),
                                     **({"protocol": target_protocol} if target_protocol else {}))
    return _json_document(_read_remote(fs, root), fo, fo)


def _reopen(fo: Any, options: dict) -> ReferenceStore:
    return ReferenceStore(fo, **options)


def _read_local(path: str) -> bytes | None:
    try:
        with open(path, "rb") as f:
            return f.read()
    except (FileNotFoundError, NotADirectoryError):
        return None
    except OSError as e:
        raise StoreError(f"cannot read the references {path!r}: {e.strerror}") from None


def _read_remote(fs: Any, path: str) -> bytes | None:
    try:
        return fs.cat_file(path)
    except FileNotFoundError:
        return None
    except Exception as e:  # noqa: BLE001
        raise StoreError(f"cannot read the references {path!r}: {type(e).__name__}: {e}") from None


def open_reference_store(url: Any, mode: str = "r", storage_options: dict | None = None) -> ReferenceStore:
    """A ReferenceStore from fsspec-style arguments: ``url`` "reference://" with the
    references in ``storage_options["fo"]``, or ``url`` the references themselves
    (a path or URL of a JSON file or Parquet directory, or a dict); the other
    ``storage_options`` are ReferenceStore's keywords (fsspec's tuning options
    ``max_gap``, ``max_block``, ``simple_templates``... are accepted and ignored).

    Raises ReadOnlyError for a mode other than "r", ArgumentError for unknown
    options or a "reference://" URL without "fo", and what ReferenceStore raises.
    """
    if mode != "r":
        raise ReadOnlyError(f"reference stores are read-only: mode {mode!r} (only 'r')")
    options = dict(storage_options or {})
    if isinstance(url, str) and url.startswith("reference://"):
        if url.rstrip("/") != "reference:":
            raise ArgumentError(f"open_reference_store: {url!r}: give the references as "
                                "storage_options['fo'] and the URL as 'reference://'")
        if "fo" not in options:
            raise ArgumentError("open_reference_store: 'reference://' needs storage_options['fo']")
        url = options.pop("fo")
    if "ref_storage_args" in options and "target_options" not in options:
        options["target_options"] = options["ref_storage_args"]
    unknown = set(options) - set(_OPTIONS) - set(_IGNORED)
    if unknown:
        raise ArgumentError(f"open_reference_store: unknown storage options {sorted(unknown)}")
    return ReferenceStore(url, **{k: v for k, v in options.items() if k in _OPTIONS})
