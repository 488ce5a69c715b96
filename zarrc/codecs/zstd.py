"""The zstd codec (v3 ``zstd``, v2/numcodecs ``zstd``)."""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

from zarrc._kernels import zstd as k
from zarrc.codecs._base import Codec, raise_codec_error
from zarrc.codecs.registry import register
from zarrc.errors import CodecError

MIN_LEVEL, MAX_LEVEL = k.zstd_levels()


@register
class Zstd(Codec):
    """Zstandard, any level from zstd's negative "fast" levels to 22.

    Parameters
    ----------
    level : compression level; 0 means zstd's default (3).
    checksum : store a 32-bit content checksum in each frame (verified on decode).

    ``decode`` checks the frame's recorded content size against ``out`` before
    writing; corrupt, truncated or wrongly sized data raises CodecError.
    """

    name = "zstd"
    codec_id = "zstd"

    def __init__(self, level: int = 0, checksum: bool = False) -> None:
        if not isinstance(level, int) or isinstance(level, bool) or not MIN_LEVEL <= level <= MAX_LEVEL:
            raise CodecError(f"zstd: level must be an integer in {MIN_LEVEL}..{MAX_LEVEL}, got {level!r}")
        if not isinstance(checksum, bool):
            raise CodecError(f"zstd: checksum must be a bool, got {checksum!r}")
        self.level = level
        self.checksum = checksum

    @classmethod
    def from_spec(cls, configuration: Mapping[str, Any]) -> Zstd:
        codec = cls.__new__(cls)
        codec.level, codec.checksum = configuration["level"], configuration.get("checksum", False)
        return codec

    def native_step(self, itemsize: int) -> tuple:
        return ("zstd", self.level, self.checksum)

    def encode(self, buf: Any) -> bytes:
        try:
            return k.zstd_compress(buf, self.level, self.checksum)
        except k.KernelError as exc:
            raise_codec_error(exc)

    def decode(self, buf: Any, out: Any = None) -> Any:
        try:
            if out is None:
                return k.zstd_decode(buf)
            k.zstd_decode_into(buf, out)
            return out
        except k.KernelError as exc:
            raise_codec_error(exc)

    def configuration(self) -> dict[str, Any]:
        return {"level": self.level, "checksum": self.checksum}
