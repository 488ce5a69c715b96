"""The gzip codec (v3 ``gzip``, v2/numcodecs ``gzip``)."""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

from zarrc._kernels import deflate as k
from zarrc.codecs._base import Codec, raise_codec_error
from zarrc.codecs.registry import register
from zarrc.errors import CodecError


def check_level(codec: str, level: Any) -> int:
    if not isinstance(level, int) or isinstance(level, bool) or not 0 <= level <= 9:
        raise CodecError(f"{codec}: level must be an integer in 0..9, got {level!r}")
    return level


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

    def __init__(self, level: int = 5) -> None:
        self.level = check_level("gzip", level)

    @classmethod
    def from_spec(cls, configuration: Mapping[str, Any]) -> Gzip:
        codec = cls.__new__(cls)
        codec.level = configuration["level"]
        return codec

    def native_step(self, itemsize: int) -> tuple:
        return ("gzip", self.level)

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
