"""The crc32c codec (v3 ``crc32c``, numcodecs ``crc32c``): a 4-byte little-endian
CRC-32C of the data, appended on encode and verified (then removed) on decode."""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass
from typing import Any

import numpy as np

from zarrc._kernels import crc32c as k
from zarrc.codecs._base import Codec, NativeStep
from zarrc.codecs.registry import register
from zarrc.errors import ChecksumError, CodecError
from zarrc.metadata.codecs import required_members
from zarrc.metadata.dtypes import DataType


@dataclass(frozen=True)
class Crc32cStep(NativeStep):
    """The kernels' crc32c step (the checksum at the end)."""

    kind = "crc32c"


def byte_view(buf: Any) -> memoryview:
    """A flat unsigned-byte view, in memory order and without a copy, of any contiguous
    buffer (C or Fortran order); CodecError if ``buf`` is not contiguous."""
    view = memoryview(buf)
    if view.c_contiguous:
        return view.cast("B")
    if not view.f_contiguous:
        raise CodecError(f"crc32c: buffer is not contiguous (shape {view.shape}, strides {view.strides})")
    return np.asarray(view).reshape(-1, order="A").view(np.uint8).data


@register
class Crc32c(Codec):
    """Append / verify a CRC-32C checksum (hardware-accelerated where the CPU has it).

    ``decode`` returns a read-only view of the data in the input (no copy), or fills
    ``out``; it raises ChecksumError when the stored and computed checksums differ,
    and CodecError when the input is shorter than the checksum itself.
    """

    name = "crc32c"
    codec_id = "crc32c"
    fixed_size = True

    @classmethod
    def parse_spec(cls, config: Mapping[str, Any], shape: tuple[int, ...],
                   data_type: DataType) -> dict[str, Any]:
        """No members."""
        required_members(config, ())
        return {}

    def encode(self, buf: Any) -> bytes:
        view = byte_view(buf)
        return b"".join((view, k.crc32c(view).to_bytes(4, "little")))

    def decode(self, buf: Any, out: Any = None) -> Any:
        view = byte_view(buf)
        if view.nbytes < 4:
            raise CodecError(f"crc32c: input truncated: needs 4 bytes, holds {view.nbytes}")
        payload = view[:-4]
        stored = int.from_bytes(view[-4:], "little")
        computed = k.crc32c(payload)
        if stored != computed:
            err = ChecksumError(f"crc32c: checksum mismatch: stored 0x{stored:08x}, "
                                f"computed 0x{computed:08x} over {payload.nbytes} bytes")
            err.expected, err.actual = stored, computed
            raise err
        if out is None:
            # like numcodecs: a view of the input, no copy (read-only)
            return payload.toreadonly()
        dest = byte_view(out)
        if dest.nbytes != payload.nbytes:
            raise CodecError(f"crc32c: data holds {payload.nbytes} bytes, {dest.nbytes} expected")
        dest[:] = payload
        return out

    def native_step(self, itemsize: int) -> Crc32cStep:
        return Crc32cStep()

    def configuration(self) -> dict[str, Any]:
        return {}

    def to_dict(self) -> dict[str, Any]:
        return {"name": self.name}
