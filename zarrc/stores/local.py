"""LocalStore: a directory on a local (or network) file system, one file per key."""

from __future__ import annotations

import errno
import os
import stat
from collections.abc import Iterator, Sequence
from typing import Any

from zarrc._kernels.chunk_files import TEMP_END, TEMP_MARK, temp_path
from zarrc.errors import ArgumentError, StoreError, StoreNotFoundError
from zarrc.stores.base import (
    MAX_IO,
    FileSnapshot,
    Store,
    byte_view,
    check_range,
    clip_range,
    read_exactly,
    split_prefix,
    validate_key,
)

MODES = ("r", "r+", "a", "w", "w-")

_ATTEMPTS = 3  # a write retried when a concurrent delete_prefix removed its directory
_OPEN_FLAGS = getattr(os, "O_CLOEXEC", 0) | getattr(os, "O_BINARY", 0)
_READ_FLAGS = os.O_RDONLY | _OPEN_FLAGS
_WRITE_FLAGS = os.O_WRONLY | os.O_CREAT | os.O_EXCL | _OPEN_FLAGS


def is_temp_name(name: str) -> bool:
    """True if ``name`` is an in-flight temporary file of an atomic write (the rule:
    zarrc._kernels.chunk_files.temp_path, shared with the native writer)."""
    return name[:1] == "." and name.endswith(TEMP_END) and TEMP_MARK in name


def _writer_alive(name: str) -> bool:
    """True if the process a temporary file's name names (its tag starts with the
    writer's pid, chunk_files.temp_tag) still runs, or the name names none."""
    tag = name[name.rfind(TEMP_MARK) + len(TEMP_MARK):-len(TEMP_END)]
    pid = tag.partition("-")[0]
    if not pid.isdigit():
        return True
    if int(pid) == os.getpid() or os.name == "nt":   # (Windows' os.kill terminates: no probe)
        return True
    try:
        os.kill(int(pid), 0)
    except ProcessLookupError:
        return False
    except OSError:                          # (another user's process: EPERM)
        return True
    return True


def _entries(path: str, stem: str = "") -> list[os.DirEntry[str]]:
    """The entries of directory ``path`` whose names start with ``stem``; none where
    ``path`` is missing or not a directory (removed meanwhile)."""
    try:
        with os.scandir(path) as it:
            return [e for e in it if e.name.startswith(stem)] if stem else list(it)
    except (FileNotFoundError, NotADirectoryError):
        return []


def _remove_tree(path: str) -> None:
    """Remove a directory tree without following symlinks; tolerate concurrent removal."""
    for entry in _entries(path):
        if entry.is_dir(follow_symlinks=False):
            _remove_tree(entry.path)
        else:
            try:
                os.unlink(entry.path)
            except FileNotFoundError:
                pass
    try:
        os.rmdir(path)
    except OSError as e:  # a concurrent writer may have added a file: leave the directory
        if e.errno not in (errno.ENOENT, errno.ENOTEMPTY, errno.EEXIST):
            raise


def _is_directory_refusal(e: OSError, path: str) -> bool:
    """True if opening ``path`` failed because it is a directory: Windows refuses to
    open one with "access denied" (PermissionError), where POSIX opens it (and fstat
    tells) or raises IsADirectoryError."""
    return isinstance(e, PermissionError) and os.path.isdir(path)


def _unlink_quiet(path: str) -> None:
    try:
        os.unlink(path)
    except OSError:
        pass


class LocalStore(Store):
    """A store in a directory: key ``"a/b/c"`` is the file ``root/a/b/c``.

    Parameters
    ----------
    root : str or os.PathLike
        The directory; created on the first write in modes "a", "w" and "w-".
    mode : {"a", "r", "r+", "w", "w-"}
        "r" read only (the root must exist); "r+" read/write (the root must exist);
        "a" read/write, created if needed; "w" remove existing contents on open;
        "w-" fail if the root exists and is not empty.
    read_only : zarr-python's keyword (``LocalStore(root, read_only=True)``): True is
        mode "r", False mode "a" (when ``mode`` is not given); ArgumentError if it
        contradicts ``mode``.

    Reads are one open and one read (``pread`` for ranges).  Writes go to a uniquely
    named temporary file in the key's directory and are renamed over the key with
    ``os.replace``, so readers see the old or the new value, never a torn one, and a
    crash leaves no partial file under a key (at worst a hidden temporary file,
    which :meth:`remove_temp_files` removes).
    Chunks written by the native engine on Linux start as a file with no name
    (``O_TMPFILE``) that gets the key's name once written (or a temporary name that
    is renamed over an existing key): no directory lock is held while the kernel
    allocates the file, and a crash leaves nothing behind.

    Keys are checked lexically (:func:`validate_key`), so no key names a path outside
    the root.  Symlinks placed inside the root by its owner are followed by
    ``get``/``set``/``list_dir``; the recursive operations (``list``, ``list_prefix``,
    ``delete_prefix``) never descend into a symlinked directory and remove links, not
    their targets; ``set`` replaces a symlink at the key rather than writing through it.
    """

    def __init__(self, root: str | os.PathLike, mode: str | None = None, *, read_only: bool | None = None) -> None:
        if read_only is not None:
            if mode is not None and (mode == "r") != bool(read_only):
                raise ArgumentError(f"LocalStore: mode {mode!r} contradicts read_only={read_only!r}")
            mode = "r" if read_only else mode
        mode = "a" if mode is None else mode
        if mode not in MODES:
            raise ArgumentError(f"LocalStore mode must be one of {MODES}, got {mode!r}")
        self.root = os.path.abspath(os.fsdecode(os.fspath(root)))
        self.mode = mode
        self.read_only = mode == "r"
        self._base = os.path.join(self.root, "")  # root with one trailing separator
        if os.path.exists(self.root) and not os.path.isdir(self.root):
            raise StoreError(f"{self!r}: the root exists and is not a directory")
        if mode in ("r", "r+") and not os.path.isdir(self.root):
            raise StoreNotFoundError(f"{self!r}: the root directory does not exist (mode {mode!r})")
        if mode == "w-" and os.path.isdir(self.root):
            with os.scandir(self.root) as it:
                if any(True for _ in it):
                    raise StoreError(f"{self!r}: the root exists and is not empty (mode 'w-')")
        if mode == "w" and os.path.isdir(self.root):
            real = os.path.realpath(self.root)
            if real in (os.path.realpath(os.sep), os.path.realpath(os.path.expanduser("~"))):
                raise StoreError(f"{self!r}: refusing to clear {real!r} (mode 'w')")
            self.delete_prefix("")

    # -- paths ---------------------------------------------------------------

    def _path(self, key: str) -> str:
        return self._base + (key if os.sep == "/" else key.replace("/", os.sep))

    def _dir_path(self, directory: str) -> str:
        return self._path(directory) if directory else self.root

    def local_path(self, key: str) -> str:
        """The path of the file that holds (or would hold) ``key``; it may not exist."""
        return self._path(validate_key(key, self))

    def file_prefix(self, prefix: str) -> bytes | None:
        """The file of key ``prefix + rest`` is ``root/prefix + rest`` (see
        Store.file_prefix); None where "/" is not the path separator."""
        split_prefix(prefix, self)
        if os.sep != "/":
            return None
        return os.fsencode(self._base + prefix)

    # -- reading -------------------------------------------------------------

    def _open(self, key: str) -> tuple[int, os.stat_result] | None:
        """(descriptor, fstat) of the file of ``key``, or None if there is no such
        regular file.  Raises StoreError if it cannot be opened."""
        path = self._path(validate_key(key, self))
        try:
            fd = os.open(path, _READ_FLAGS)
        except (FileNotFoundError, NotADirectoryError, IsADirectoryError):
            return None
        except OSError as e:
            if _is_directory_refusal(e, path):
                return None
            raise StoreError(f"cannot read key {key!r} of {self!r}: {e.strerror}") from e
        try:
            st = os.fstat(fd)
        except OSError as e:
            os.close(fd)
            raise StoreError(f"cannot read key {key!r} of {self!r}: {e.strerror}") from e
        if not stat.S_ISREG(st.st_mode):
            os.close(fd)
            return None
        return fd, st

    def get(self, key: str) -> bytes | None:
        """The contents of the file of ``key``, or None if there is no such file."""
        opened = self._open(key)
        if opened is None:
            return None
        fd, st = opened
        try:
            return read_exactly(fd, st.st_size, None)
        except OSError as e:
            raise StoreError(f"cannot read key {key!r} of {self!r}: {e.strerror}") from e
        finally:
            os.close(fd)

    def snapshot(self, key: str) -> FileSnapshot | None:
        """The file of ``key`` held open (see Snapshot; its token: device, inode,
        size, mtime), or None if there is no such file."""
        opened = self._open(key)
        if opened is None:
            return None
        fd, st = opened
        return FileSnapshot(fd, st.st_size, (st.st_dev, st.st_ino, st.st_size, st.st_mtime_ns),
                            f"key {key!r} of {self!r}")

    def get_range(self, key: str, start: int, length: int | None = None) -> bytes | None:
        """Bytes [start, start+length) of ``key`` via ``pread`` (see ``Store.get_range``)."""
        out = self.get_ranges(key, ((start, length),))
        return None if out is None else out[0]

    def get_ranges(self, key: str, ranges: Sequence[tuple[int, int | None]]) -> list[bytes] | None:
        """Several (start, length) ranges of ``key`` with one open; None if absent."""
        path = self._path(validate_key(key, self))
        for start, length in ranges:
            check_range(start, length, key, self)
        try:
            fd = os.open(path, _READ_FLAGS)
        except (FileNotFoundError, NotADirectoryError, IsADirectoryError):
            return None
        except OSError as e:
            if _is_directory_refusal(e, path):
                return None
            raise StoreError(f"cannot read key {key!r} of {self!r}: {e.strerror}") from e
        try:
            size = None
            if any(length is None or start < 0 for start, length in ranges):
                st = os.fstat(fd)
                if not stat.S_ISREG(st.st_mode):
                    return None
                size = st.st_size
            out = []
            for start, length in ranges:
                if size is None:  # a plain (start, length): let pread clip at the end
                    out.append(read_exactly(fd, length, start) if length else b"")
                else:
                    begin, end = clip_range(size, start, length)
                    out.append(read_exactly(fd, end - begin, begin) if end > begin else b"")
            return out
        except IsADirectoryError:
            return None
        except OSError as e:
            raise StoreError(f"cannot read key {key!r} of {self!r}: {e.strerror}") from e
        finally:
            os.close(fd)

    def size(self, key: str) -> int | None:
        """Size of the file of ``key``, or None."""
        try:
            return os.stat(self._path(validate_key(key, self))).st_size
        except (FileNotFoundError, NotADirectoryError):
            return None

    def exists(self, key: str) -> bool:
        """True if the file of ``key`` exists."""
        return os.path.isfile(self._path(validate_key(key, self)))

    # -- writing -------------------------------------------------------------

    def set(self, key: str, value: Any) -> None:
        """Write ``value`` (any buffer) to the file of ``key`` atomically (temp file + rename)."""
        validate_key(key, self)
        self.check_writable("set", key)
        view = byte_view(value)
        path = self._path(key)
        directory = path.rpartition(os.sep)[0]
        for attempt in range(_ATTEMPTS):
            tmp = temp_path(path)
            try:
                self._write_file(tmp, directory, view)
                os.replace(tmp, path)
                return
            except BaseException as e:
                _unlink_quiet(tmp)
                if isinstance(e, FileNotFoundError) and attempt + 1 < _ATTEMPTS:
                    continue  # a concurrent delete_prefix removed the directory: write again
                if isinstance(e, OSError):
                    raise StoreError(f"cannot write key {key!r} of {self!r} ({e.filename or path!r}): "
                                     f"{e.strerror or e}") from e
                raise

    @staticmethod
    def _write_file(tmp: str, directory: str, view: memoryview) -> None:
        try:
            fd = os.open(tmp, _WRITE_FLAGS, 0o666)
        except FileNotFoundError:
            os.makedirs(directory, exist_ok=True)
            fd = os.open(tmp, _WRITE_FLAGS, 0o666)
        try:
            done, total = 0, view.nbytes
            while done < total:
                done += os.write(fd, view[done : done + MAX_IO])
        finally:
            os.close(fd)

    def delete(self, key: str) -> None:
        """Remove the file of ``key`` (not its directory); no error if absent."""
        validate_key(key, self)
        self.check_writable("delete", key)
        path = self._path(key)
        try:
            os.unlink(path)
        except (FileNotFoundError, NotADirectoryError, IsADirectoryError):
            pass
        except OSError as e:
            if not os.path.isdir(path):  # macOS reports EPERM for unlink of a directory
                raise StoreError(f"cannot delete key {key!r} of {self!r}: {e.strerror}") from e

    def delete_prefix(self, prefix: str) -> None:
        """Remove every key starting with ``prefix`` ("a/b/" removes the tree a/b and its
        directory; "" everything).

        Never follows a symlink below the prefix's directory: links are removed, not
        their targets.  Stale temporary files in removed trees are removed too.
        """
        directory, stem = split_prefix(prefix, self)
        self.check_writable("delete_prefix", prefix)
        try:
            self._delete_prefix(directory, stem)
        except OSError as e:      # (EROFS, EACCES, EPERM, EIO ...: the file named)
            raise StoreError(f"cannot delete {e.filename or self._dir_path(directory)!r} "
                             f"(keys {prefix!r}* of {self!r}): {e.strerror or e}") from e

    def _delete_prefix(self, directory: str, stem: str) -> None:
        for entry in _entries(self._dir_path(directory), stem):
            if stem and is_temp_name(entry.name):
                continue  # another key's in-flight write
            if entry.is_dir(follow_symlinks=False):
                _remove_tree(entry.path)
            else:
                try:
                    os.unlink(entry.path)
                except FileNotFoundError:
                    pass
        if directory and not stem:
            # the prefix's own directory goes too (as zarr-python's delete_dir), unless
            # another writer put something there meanwhile
            try:
                os.rmdir(self._dir_path(directory))
            except OSError:
                pass

    def remove_temp_files(self, prefix: str = "") -> list[str]:
        """Remove the temporary files that writers killed mid-write left under ``prefix``
        (a directory prefix, "" the whole store) and return their paths relative to
        the root.  A writer that dies between creating its temporary file and renaming
        it leaves one (hidden, never listed or read as a key; on Linux the native
        writer's files have no name until written, so it leaves none).  Only files
        whose writing process (named in the file's name) no longer runs on this host
        are removed: in-flight writes of live processes are left alone.  Do not call
        it while processes on other hosts write to the same directory.  Never follows
        symlinked directories.  On Windows it removes none (no process probe).  Raises StoreError if a file cannot be removed."""
        directory, _ = split_prefix(prefix if not prefix or prefix.endswith("/") else prefix + "/", self)
        self.check_writable("remove_temp_files", prefix)
        removed: list[str] = []
        stack = [self._dir_path(directory)]
        while stack:
            for entry in _entries(stack.pop()):
                if entry.is_dir(follow_symlinks=False):
                    stack.append(entry.path)
                elif is_temp_name(entry.name) and not _writer_alive(entry.name):
                    try:
                        os.unlink(entry.path)
                    except FileNotFoundError:
                        continue
                    except OSError as e:
                        raise StoreError(f"cannot remove the temporary file {entry.path!r} of "
                                         f"{self!r}: {e.strerror or e}") from e
                    removed.append(os.path.relpath(entry.path, self.root).replace(os.sep, "/"))
        return sorted(removed)

    # -- listing -------------------------------------------------------------

    def list_prefix(self, prefix: str) -> Iterator[str]:
        """Every key starting with ``prefix``, found by walking the directory tree."""
        directory, stem = split_prefix(prefix, self)
        key_prefix = directory + "/" if directory else ""
        return self._walk(self._dir_path(directory), key_prefix, stem)

    def _walk(self, path: str, key_prefix: str, stem: str) -> Iterator[str]:
        for entry in _entries(path, stem):
            name = entry.name
            if is_temp_name(name):
                continue
            if entry.is_dir(follow_symlinks=False):
                yield from self._walk(entry.path, key_prefix + name + "/", "")
            elif entry.is_file():
                yield key_prefix + name

    def list_dir(self, prefix: str) -> tuple[list[str], list[str]]:
        """(file names, directory names) directly in the directory ``prefix``, sorted."""
        if prefix and not prefix.endswith("/"):
            prefix += "/"
        directory, _ = split_prefix(prefix, self)
        keys, dirs = [], []
        try:
            with os.scandir(self._dir_path(directory)) as it:
                for entry in it:
                    if is_temp_name(entry.name):
                        continue
                    if entry.is_dir():
                        dirs.append(entry.name)
                    elif entry.is_file():
                        keys.append(entry.name)
        except (FileNotFoundError, NotADirectoryError):
            pass
        return sorted(keys), sorted(dirs)

    # -- identity ------------------------------------------------------------

    def __eq__(self, other: object) -> bool:
        return type(other) is type(self) and other.root == self.root

    def __hash__(self) -> int:
        return hash((type(self), self.root))

    def __repr__(self) -> str:
        return f"LocalStore({self.root!r})"

    def __getstate__(self) -> dict[str, Any]:
        # Reopening must not clear again ("w") or fail because it now has content ("w-").
        return {"root": self.root, "mode": "a" if self.mode in ("w", "w-") else self.mode}

    def __setstate__(self, state: dict[str, Any]) -> None:
        type(self).__init__(self, state["root"], state["mode"])


# -- paths and file:// URIs given to make_store ------------------------------------

# make_store's modes -> ZipStore's (zipfile's) modes
ZIP_MODES = {"r": "r", "r+": "a", "a": "a", "w": "w", "w-": "x"}
DRIVE_LETTERS = os.name == "nt"  # paths start with a drive: "C:/data" (a test switches it on)


def local_path_of(path: str) -> str:
    """A plain path from ``path``, which may be a ``file://`` URI; other schemes raise."""
    if "://" not in path:
        return path
    from urllib.parse import unquote, urlsplit  # (only for URIs: not imported by `import zarrc`)

    parts = urlsplit(path)
    if parts.scheme == "file":
        if parts.netloc not in ("", "localhost"):
            raise StoreError(f"file URI {path!r} names host {parts.netloc!r}; only local files are supported")
        local = unquote(parts.path)
        if DRIVE_LETTERS and local[:1] == "/" and local[2:3] == ":":
            local = local[1:]  # file:///C:/data -> C:/data
        return local
    if len(parts.scheme) > 1:
        raise StoreError(
            f"no store for URL scheme {parts.scheme!r} in {path!r} (only local paths and file://)"
        )
    return path


def open_local(obj: str | os.PathLike, mode: str) -> Store:
    """The LocalStore (ZipStore for ".zip") on a path or ``file://`` URI; a ".zip"
    path that is an existing directory is a directory store (zarr-python, which never
    guesses a zip file from a name, writes one there)."""
    path = local_path_of(os.fsdecode(os.fspath(obj)))
    if path.lower().endswith(".zip") and not os.path.isdir(path):
        from zarrc.stores.zip import ZipStore

        return ZipStore(path, mode=ZIP_MODES[mode])
    return LocalStore(path, mode=mode)
