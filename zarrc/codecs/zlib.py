"""The zlib codec (v2/numcodecs ``zlib``; RFC 1950 streams)."""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass
from typing import Any

from zarrc._kernels import deflate as k
from zarrc.codecs._base import Codec, NativeStep, codec_fail, raise_codec_error
from zarrc.codecs.gzip import check_level
from zarrc.codecs.registry import register


@dataclass(frozen=True)
class ZlibStep(NativeStep):
    """The kernels' zlib step."""

    kind = "zlib"
    level: int


@register
class Zlib(Codec):
    """zlib streams (deflate with a 2-byte header and an Adler-32 trailer, verified
    on decode), compressed with libdeflate: ``zlib.decompress`` reads them, though
    the bytes differ from ``zlib.compress(data, level)``'s."""

    name = "zlib"
    codec_id = "zlib"
    numcodecs_keys = frozenset({"level"})
    in_v3 = False           # (a v2 compressor; v3 arrays name it numcodecs.zlib)

    def __init__(self, level: int = 1) -> None:
        self.level = check_level(level, codec_fail("zlib"))

    @classmethod
    def from_spec(cls, configuration: Mapping[str, Any]) -> Zlib:
        codec = cls.__new__(cls)
        codec.level = configuration["level"]
        return codec

    def native_step(self, itemsize: int) -> ZlibStep:
        return ZlibStep(self.level)

    def encode(self, buf: Any) -> bytes:
        try:
            return k.deflate_compress(buf, self.level, k.ZLIB)
        except k.KernelError as exc:
            raise_codec_error(exc)

    def decode(self, buf: Any, out: Any = None) -> Any:
        try:
            if out is None:
                return k.inflate(buf, k.ZLIB)
            k.inflate_into(buf, out, k.ZLIB)
            return out
        except k.KernelError as exc:
            raise_codec_error(exc)

    def configuration(self) -> dict[str, Any]:
        return {"level": self.level}
