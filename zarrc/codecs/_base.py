"""The codec base class and the translation of kernel errors into zarrc errors."""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any, ClassVar, NoReturn

from zarrc._kernels.errors import KernelError
from zarrc.errors import from_kernel
from zarrc.metadata.codecs import BYTES_TO_BYTES


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
    ``decode`` and ``configuration``, register with
    ``zarrc.codecs.registry.register``, and give ``native_step`` if the kernels
    run them.  The constructor checks its arguments (CodecError); ``from_spec``
    builds from a configuration already validated by the spec parser.
    """

    name: ClassVar[str]
    codec_id: ClassVar[str]
    category: ClassVar[str] = BYTES_TO_BYTES

    @classmethod
    def from_spec(cls, configuration: Mapping[str, Any]) -> Codec:
        """The codec for a configuration that ``zarrc.metadata.codecs.parse_codecs``
        has validated and normalised (a CodecSpec's); codecs whose constructor
        checks what the parser checked skip those checks here."""
        return cls(**configuration)

    def native_step(self, itemsize: int) -> tuple | None:
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
