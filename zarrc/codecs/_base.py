"""The codec base class, the native step record, the checks' error wording, and the
translation of kernel errors into zarrc errors."""

from __future__ import annotations

from collections.abc import Callable, Mapping
from dataclasses import dataclass, fields
from typing import Any, ClassVar, NoReturn

from zarrc._kernels.errors import KernelError
from zarrc.errors import CodecError, from_kernel
from zarrc.metadata.codecs import BYTES_TO_BYTES
from zarrc.metadata.dtypes import DataType

# a check's failure: (member, value, what it must be) -> raises.  A codec's checks are
# written once and worded by their caller: ``zarrc.metadata.common.fail`` (MetadataError,
# a spec being parsed) or :func:`codec_fail` (CodecError, a constructor's arguments)
Fail = Callable[[str, Any, str], NoReturn]


def codec_fail(codec: str) -> Fail:
    """The :data:`Fail` of codec ``codec``'s constructor: CodecError("<codec>: <member>
    <what it must be>, got <value>")."""
    def fail(key: str, value: Any, problem: str) -> NoReturn:
        raise CodecError(f"{codec}: {key} {problem}, got {value!r}")
    return fail


@dataclass(frozen=True)
class NativeStep:
    """One bytes -> bytes step of the kernels' prepared Chain (a subclass per kind,
    beside its codec: ``BloscStep``, ``ZstdStep``, ``GzipStep``, ``ZlibStep``, ``Crc32cStep``).
    ``kind`` is the kernel's name of the step; :meth:`kernel_args` is the one place the
    record becomes the kernel's argument (``zarrc._kernels.chain.Chain``)."""

    kind: ClassVar[str]

    def kernel_args(self) -> tuple[Any, ...]:
        """(kind, the fields in order): what ``Chain`` takes for the step (plain
        values: no field is itself a record)."""
        names = _FIELD_NAMES.get(type(self))
        if names is None:
            names = _FIELD_NAMES[type(self)] = tuple(f.name for f in fields(self))
        return (self.kind, *(getattr(self, name) for name in names))


_FIELD_NAMES: dict[type, tuple[str, ...]] = {}


def raise_codec_error(exc: KernelError, context: str = "") -> NoReturn:
    """Re-raise a kernel's error as CodecError (ChecksumError for checksum mismatches),
    prefixed with ``context`` (e.g. "chunk c/0/1 of /temperature: ")."""
    raise from_kernel(exc, context) from None


def buffer_nbytes(buf: Any) -> int:
    """Size in bytes of a buffer-protocol object."""
    return memoryview(buf).nbytes


class Codec:
    """A bytes -> bytes codec usable on its own (numcodecs style) or in a chain.

    Subclasses set ``name`` (the v3 spec name), ``codec_id`` (the numcodecs id
    used in v2 metadata) and ``category`` (array->array, array->bytes or
    bytes->bytes, as ``zarrc.metadata.codecs`` names them), implement ``encode``,
    ``decode``, ``configuration`` and ``parse_spec`` (the spec side: the
    registry hands the class to ``zarrc.metadata.codecs.register_kind``), register
    with ``zarrc.codecs.registry.register``, and give ``native_step`` if the
    kernels run them.  The constructor checks its arguments (CodecError) with the
    same checks as ``parse_spec``; ``from_spec`` builds from a configuration
    already validated by the spec parser.
    """

    name: ClassVar[str]
    codec_id: ClassVar[str]
    category: ClassVar[str] = BYTES_TO_BYTES
    # a v3 codec name the spec parser knows (False: a numcodecs / v2 compressor only, zlib)
    in_v3: ClassVar[bool] = True
    fixed_size: ClassVar[bool] = False        # output size independent of the data
    written_empty: ClassVar[bool] = False     # written with "configuration": {} when empty
    # the members (besides "id") of numcodecs' configuration of ``codec_id`` this class
    # takes, where zarrc runs that numcodecs compressor itself (v2 arrays, numcodecs.<id>
    # codecs); None: numcodecs runs it
    numcodecs_keys: ClassVar[frozenset[str] | None] = None

    @classmethod
    def from_numcodecs(cls, config: Mapping[str, Any]) -> Codec:
        """The codec for numcodecs' configuration ``config`` (without "id"; members
        within ``numcodecs_keys``), with numcodecs' defaults; CodecError or TypeError
        for what the constructor refuses."""
        return cls(**config)

    @classmethod
    def parse_spec(cls, config: Mapping[str, Any], shape: tuple[int, ...],
                   data_type: DataType) -> dict[str, Any]:
        """A v3 spec's configuration checked (MetadataError) and normalised for chunks of
        ``shape`` and ``data_type`` as the codec receives them (members left out get
        zarr-python's values); ``zarrc.metadata.codecs.parse_codecs`` calls it."""
        raise NotImplementedError(f"codec {cls.name!r} has no spec parser")

    @classmethod
    def spec_shape(cls, config: Mapping[str, Any], shape: tuple[int, ...]) -> tuple[int, ...]:
        """The shape the codec hands on for chunks of ``shape`` (a normalised
        configuration); array -> array codecs that reorder override it."""
        return shape

    @classmethod
    def spec_data_type(cls, config: Mapping[str, Any], data_type: DataType) -> DataType:
        """The data type the codec hands on for chunks of ``data_type`` (a normalised
        configuration); array -> array codecs that cast override it."""
        return data_type

    @classmethod
    def from_spec(cls, configuration: Mapping[str, Any]) -> Codec:
        """The codec for a configuration that ``zarrc.metadata.codecs.parse_codecs``
        has validated and normalised (a CodecSpec's); codecs whose constructor
        checks what the parser checked skip those checks here."""
        return cls(**configuration)

    def native_step(self, itemsize: int) -> NativeStep | None:
        """This codec as a step of the kernels' prepared Chain
        (``zarrc._kernels.chain.Chain``) for items of ``itemsize`` bytes, or None
        if the kernels cannot run it (bytes->bytes codecs only)."""
        return None

    def encode(self, buf: Any) -> bytes:
        raise NotImplementedError

    def decode(self, buf: Any, out: Any = None) -> Any:
        raise NotImplementedError

    def configuration(self) -> dict[str, Any]:
        """The v3 ``configuration`` object of this codec."""
        raise NotImplementedError

    def to_dict(self) -> dict[str, Any]:
        """The v3 spec form: ``{"name": ..., "configuration": {...}}``."""
        return {"name": self.name, "configuration": self.configuration()}

    def get_config(self) -> dict[str, Any]:
        """The numcodecs (Zarr v2) form: ``{"id": ..., **configuration}``."""
        return {"id": self.codec_id, **self.configuration()}

    @classmethod
    def from_config(cls, configuration: dict[str, Any]) -> Codec:
        return cls(**configuration)

    def __eq__(self, other: object) -> bool:
        return type(self) is type(other) and self.configuration() == other.configuration()

    def __hash__(self) -> int:
        return hash((self.name, tuple(sorted(self.configuration().items()))))

    def __repr__(self) -> str:
        args = ", ".join(f"{k}={v!r}" for k, v in self.configuration().items())
        return f"{type(self).__name__}({args})"
