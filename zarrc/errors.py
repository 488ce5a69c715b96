"""Exceptions raised by zarrc.

Every error zarrc raises on bad input is a :class:`ZarrcError`, and each also
derives from the built-in exception a Python user would expect (``ValueError``
for bad data, ``IndexError`` for bad selections, ``KeyError`` for missing nodes),
so existing ``except`` clauses keep working.  Messages name the offending value:
the chunk key, the codec, the sizes involved.  Errors of the native kernels
(``KernelError`` of a codec call, ``TaskError`` of a batch's chunk task) become
these classes in one place, :func:`from_kernel`.
"""

from __future__ import annotations

from typing import Protocol

from zarrc._kernels.errors import CHECKSUM, IO


class ZarrcError(Exception):
    """Base class of every zarrc error."""


class ArgumentError(ZarrcError, ValueError):
    """An argument is invalid: an unknown mode or setting, a value whose shape does
    not fit the selection it is assigned to, a byte range of negative length."""


class ArgumentTypeError(ZarrcError, TypeError):
    """An argument is of the wrong type: a path that is not a str, a shape or chunk
    shape that is not integers, attributes that are not a mapping, an object that is
    not a codec where a codec is expected."""


class SettingError(ZarrcError, AttributeError):
    """``zarrc.config`` has no setting of that name (read as an attribute)."""


class NodeTypeError(ZarrcError, TypeError, ValueError):
    """The node at a path is of the other kind: an array where a group is required,
    or the other way round (also a ValueError, as zarr-python raises)."""


class MetadataError(ZarrcError, ValueError):
    """Array or group metadata is malformed, unsupported or inconsistent."""


class CodecError(ZarrcError, ValueError):
    """A codec could not encode or decode its input (corrupt, truncated, wrong size).

    Translated from a kernel's error (:func:`from_kernel`), it carries the kernel's
    ``code``, ``expected`` and ``actual``; a ChecksumError carries at least
    ``expected`` and ``actual`` (stored and computed checksums)."""

    code: int          # (not set on errors raised in Python; see the docstring)
    expected: int
    actual: int


class ChecksumError(CodecError):
    """Stored and computed checksums differ."""


class SelectionError(ZarrcError, IndexError):
    """A selection is out of bounds or of a form the array does not support."""


class StoreError(ZarrcError, OSError):
    """A store operation failed, or a key is invalid (e.g. would escape the store).

    Translated from a kernel's failed I/O call (:func:`from_kernel`), it carries the
    kernel's ``code``, ``expected`` and ``actual`` (``actual``: the errno)."""

    code: int          # (set only by from_kernel; see the docstring)
    expected: int
    actual: int


class ReadOnlyError(StoreError, ValueError):
    """A write to a read-only array, group or store (also a ValueError, as
    zarr-python raises)."""


class StoreNotFoundError(StoreError, FileNotFoundError):
    """A store opened for reading does not exist (its directory or zip file; also a
    FileNotFoundError, as zarr-python raises)."""


class NodeNotFoundError(ZarrcError, KeyError, FileNotFoundError):
    """No array or group exists at the requested path (also a FileNotFoundError,
    as zarr-python raises when opening one)."""

    def __str__(self) -> str:  # KeyError quotes its message; keep it readable
        return str(self.args[0]) if self.args else ""


class ContainsNodeError(ZarrcError, FileExistsError, ValueError):
    """An array or group already exists where a new one was to be created (also a
    ValueError, as zarr-python's ContainsArrayError / ContainsGroupError)."""


class ZarrcUserWarning(UserWarning):
    """Something in the input was ignored: an unknown key in a v2 document, an
    orphan entry in consolidated metadata, a member a group cannot open."""


class ZarrcRuntimeWarning(RuntimeWarning):
    """An argument has no effect here (as zarr-python's ZarrRuntimeWarning): ``order``
    for a Zarr v3 array."""


class KernelFailure(Protocol):
    """What :func:`from_kernel` reads of a kernel's error (``KernelError`` of
    zarrc._kernels.errors, ``TaskError`` of zarrc._kernels.batch)."""

    code: int
    expected: int
    actual: int


def from_kernel(exc: KernelFailure | MemoryError, context: str = "") -> Exception:
    """The zarrc error for a kernel's error ``exc`` (a ``KernelError`` or
    ``TaskError``, whose ``code`` is a ZC_* code of ``_kernels/src/zc_error.h``):
    ChecksumError for a checksum mismatch, StoreError for a failed I/O call,
    CodecError for the rest, its message ``context`` + the kernel's, carrying the
    kernel's ``code``, ``expected`` and ``actual``.  A MemoryError is returned as
    it is.  The caller raises it (``raise from_kernel(exc, ...) from None``)."""
    if isinstance(exc, MemoryError):
        return exc
    code = exc.code
    cls = ChecksumError if code == CHECKSUM else StoreError if code == IO else CodecError
    err: CodecError | StoreError = cls(f"{context}{exc}")
    err.code = code
    err.expected = exc.expected
    err.actual = exc.actual
    return err
