"""The gzip codec (v3 ``gzip``, v2/numcodecs ``gzip``)."""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass
from typing import Any

from zarrc._kernels import deflate as k
from zarrc.codecs._base import Codec, Fail, NativeStep, codec_fail, raise_codec_error
from zarrc.codecs.registry import register
from zarrc.metadata.codecs import required_members
from zarrc.metadata.common import fail as spec_fail
from zarrc.metadata.common import is_int
from zarrc.metadata.dtypes import DataType


def check_level(level: Any, fail: Fail) -> int:
    """A deflate level (gzip, zlib) checked, for the spec parser and the constructors
    (``fail`` words the error)."""
    if not is_int(level) or not 0 <= level <= 9:
        fail("level", level, "must be an integer from 0 to 9")
    return level


@dataclass(frozen=True)
class GzipStep(NativeStep):
    """The kernels' gzip step."""

    kind = "gzip"
    level: int


@register
class Gzip(Codec):
    """gzip (RFC 1952), one member per encode (header without file name,
    modification time 0; the deflate stream from libdeflate, so the bytes differ
    from zlib's but any gzip reader decodes them).  ``decode`` reads any number
    of members, verifies each member's CRC-32 and length, and accepts trailing
    zero padding.
    """

    name = "gzip"
    codec_id = "gzip"
    numcodecs_keys = frozenset({"level"})

    def __init__(self, level: int = 5) -> None:
        self.level = check_level(level, codec_fail("gzip"))

    @classmethod
    def parse_spec(cls, config: Mapping[str, Any], shape: tuple[int, ...],
                   data_type: DataType) -> dict[str, Any]:
        """level (zarr-python's default 5)."""
        required_members(config, (), ("level",))
        return {"level": check_level(config.get("level", 5), spec_fail)}

    @classmethod
    def from_spec(cls, configuration: Mapping[str, Any]) -> Gzip:
        codec = cls.__new__(cls)
        codec.level = configuration["level"]
        return codec

    def native_step(self, itemsize: int) -> GzipStep:
        return GzipStep(self.level)

    def encode(self, buf: Any) -> bytes:
        try:
            return k.deflate_compress(buf, self.level, k.GZIP)
        except k.KernelError as exc:
            raise_codec_error(exc)

    def decode(self, buf: Any, out: Any = None) -> Any:
        try:
            if out is None:
                return k.inflate(buf, k.GZIP)
            k.inflate_into(buf, out, k.GZIP)
            return out
        except k.KernelError as exc:
            raise_codec_error(exc)

    def configuration(self) -> dict[str, Any]:
        return {"level": self.level}
