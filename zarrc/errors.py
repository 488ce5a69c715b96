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
    """Base class of every zarrc error.

    ``destination_partly_written``: True when a read into a caller's ``out=`` array
    failed after some of its chunks were already written there (the rest of ``out``
    keeps what it held); False for every other error (``docs/guarantees.md``)."""

    destination_partly_written = False


def mark_partly_written(err: ZarrcError) -> None:
    """Record on ``err`` that the caller's ``out=`` array was partly written before it
    was raised: the attribute, and a note in its traceback."""
    err.destination_partly_written = True
    note = ("out= may be partly written: the chunks read before this error are in it, "
            "the rest of it is unchanged")
    if hasattr(err, "add_note"):                 # (Python 3.11+; 3.10 prints no notes)
        err.add_note(note)


class BaseZarrError(ZarrcError, ValueError):
    """zarr-python's base error class (a ValueError), under its name: the base of
    the node errors below and of UnknownCodecError / MetadataValidationError."""


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


class MetadataValidationError(MetadataError, BaseZarrError):
    """zarr-python's name: a metadata document's value is invalid (a MetadataError)."""


class NodeTypeValidationError(MetadataValidationError):
    """zarr-python's name: a metadata document's ``node_type`` is not the expected one."""


class SpecError(MetadataError):
    """A ZEP 6 node description (``zarrc.model``'s ArraySpec / GroupSpec) is invalid.
    ``path``: the node's path in the described hierarchy ("/" for its root);
    ``field``: the field at fault ("shape", "members", ...), or None."""

    def __init__(self, message: str = "", path: str = "/", field: str | None = None) -> None:
        super().__init__(message)
        self.path = path
        self.field = field

    def __reduce__(self) -> tuple:
        return type(self), (str(self), self.path, self.field)


class DataTypeValidationError(MetadataError):
    """zarr-python's name (a ValueError): a data type that is invalid."""


class UnknownDataTypeError(MetadataError, TypeError):
    """A ``dtype`` argument names no data type zarrc knows (``"notadtype"``), or one
    with no Zarr form (a MetadataError, and a TypeError as zarr-python raises)."""


class MissingDimensionsError(MetadataError, KeyError):
    """An array has no dimension names for xarray (a v2 array without
    ``_ARRAY_DIMENSIONS``, a v3 one without ``dimension_names``): a MetadataError,
    and a KeyError as xarray's zarr backend raises, which tools catch to skip it."""

    def __str__(self) -> str:  # KeyError quotes its message; keep it readable
        return str(self.args[0]) if self.args else ""


class ChunkNotFoundError(BaseZarrError):
    """zarr-python's name: a chunk is missing where one is required (zarrc reads
    missing chunks as the fill value, and raises it nowhere)."""


class PickleCodecDisabledError(BaseZarrError):
    """zarr-python's name: the pickle codec is disabled (zarrc has none)."""


class UnknownCodecError(MetadataError, BaseZarrError):
    """No codec is registered under a name (a MetadataError, as zarr-python's
    UnknownCodecError is a ValueError)."""


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


class BoundsCheckError(SelectionError):
    """An index or block is out of bounds (zarr-python's BoundsCheckError, an IndexError)."""


class NegativeStepError(SelectionError):
    """A slice has a negative step (zarr-python's NegativeStepError, an IndexError)."""


class VindexInvalidSelectionError(SelectionError):
    """A vectorized (coordinate or mask) selection of a form it cannot take (as
    zarr-python's VindexInvalidSelectionError, an IndexError)."""


class ArrayIndexError(SelectionError):
    """zarr-python's ArrayIndexError (an IndexError): a selection of a form the array
    does not support."""


class SelectionTooLargeError(SelectionError, MemoryError, ValueError):
    """A selection too large to plan or to hold (its chunks' table or its result would
    not fit in memory or in 64-bit sizes); the message names the array and the
    selection's size.  An IndexError (as SelectionError), and the MemoryError or
    ValueError that numpy or zarr-python raise for such selections."""


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


class NodeNotFoundError(BaseZarrError, KeyError, FileNotFoundError):
    """No array or group exists at the requested path (also a FileNotFoundError and
    a ValueError, as zarr-python's NodeNotFoundError; and a KeyError)."""

    def __str__(self) -> str:  # KeyError quotes its message; keep it readable
        return str(self.args[0]) if self.args else ""


class ArrayNotFoundError(NodeNotFoundError):
    """No array at the path (an array was asked for)."""


class GroupNotFoundError(NodeNotFoundError):
    """No group at the path (a group was asked for)."""


class ContainsNodeError(BaseZarrError, FileExistsError):
    """An array or group already exists where a new one was to be created (also a
    ValueError, as zarr-python's ContainsArrayError / ContainsGroupError)."""


class ContainsArrayError(ContainsNodeError):
    """An array is where a node was to be created."""


class ContainsGroupError(ContainsNodeError):
    """A group is where a node was to be created."""


class ContainsArrayAndGroupError(ContainsNodeError, MetadataError):
    """Both array and group metadata documents (.zarray and .zgroup) are at a path
    (also a MetadataError)."""


class MissingDependencyError(ZarrcError, ImportError):
    """An optional package that what was asked needs is not installed (a remote
    store's client, pyarrow for Parquet references): the message names the package
    and the extra that installs it (``zarrc[remote]``)."""


class CopyError(ZarrcError, RuntimeError):
    """``zarrc.copy`` / ``copy_all`` / ``copy_store`` would overwrite something in the
    destination (with ``if_exists="raise"``; as zarr-python 2's CopyError, a
    RuntimeError); nothing was copied."""


class CollectiveError(ZarrcError, RuntimeError):
    """A collective call of ``zarrc.mpi`` failed on another rank: raised on every rank
    but the failing one (which raises its own error), naming that rank and its error."""


class ExpectedArrayError(NodeTypeError, NodeTypeValidationError):
    """A group is where an array was asked for (``open_array``): a NodeTypeError and,
    as zarr-python raises there, a NodeTypeValidationError."""


class ExpectedGroupError(NodeTypeError, ContainsArrayError):
    """An array is where a group was asked for (``open_group``): a NodeTypeError and,
    as zarr-python raises there, a ContainsArrayError."""


class ZarrUserWarning(UserWarning):
    """zarr-python's name: the base of ZarrcUserWarning."""


class ZarrRuntimeWarning(RuntimeWarning):
    """zarr-python's name: the base of ZarrcRuntimeWarning."""


class ZarrDeprecationWarning(DeprecationWarning):
    """zarr-python's name: something zarr-python deprecates."""


class ZarrFutureWarning(FutureWarning):
    """zarr-python's name: something that will change."""


class UnstableSpecificationWarning(ZarrFutureWarning):
    """zarr-python's name: a feature whose specification may change."""


class ZarrcUserWarning(ZarrUserWarning):
    """Something in the input was ignored: an unknown key in a v2 document, an
    orphan entry in consolidated metadata, a member a group cannot open."""


class ZarrcRuntimeWarning(ZarrRuntimeWarning):
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
