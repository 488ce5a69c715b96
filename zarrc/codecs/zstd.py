"""The zstd codec (v3 ``zstd``, v2/numcodecs ``zstd``)."""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass
from typing import Any

from zarrc._kernels import zstd as k
from zarrc.codecs._base import Codec, Fail, NativeStep, codec_fail, raise_codec_error
from zarrc.codecs.registry import register
from zarrc.metadata.codecs import required_members
from zarrc.metadata.common import fail as spec_fail
from zarrc.metadata.common import is_int
from zarrc.metadata.dtypes import DataType

MIN_LEVEL, MAX_LEVEL = k.zstd_levels()      # libzstd's ZSTD_minCLevel() .. ZSTD_maxCLevel()


def check_options(level: Any, checksum: Any, fail: Fail) -> None:
    """zstd's options checked, the one check of the spec parser and the constructor
    (``fail`` words the error)."""
    if not is_int(level) or not MIN_LEVEL <= level <= MAX_LEVEL:
        fail("level", level, f"must be an integer from {MIN_LEVEL} to {MAX_LEVEL}")
    if not isinstance(checksum, bool):
        fail("checksum", checksum, "must be a boolean")


@dataclass(frozen=True)
class ZstdStep(NativeStep):
    """The kernels' zstd step."""

    kind = "zstd"
    level: int
    checksum: bool


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
    numcodecs_keys = frozenset({"level", "checksum"})

    def __init__(self, level: int = 0, checksum: bool = False) -> None:
        check_options(level, checksum, codec_fail("zstd"))
        self.level = level
        self.checksum = checksum

    @classmethod
    def parse_spec(cls, config: Mapping[str, Any], shape: tuple[int, ...],
                   data_type: DataType) -> dict[str, Any]:
        """level (zarr-python's default 0) and checksum (False)."""
        required_members(config, (), ("level", "checksum"))
        level, checksum = config.get("level", 0), config.get("checksum", False)
        check_options(level, checksum, spec_fail)
        return {"level": level, "checksum": checksum}

    @classmethod
    def from_spec(cls, configuration: Mapping[str, Any]) -> Zstd:
        codec = cls.__new__(cls)
        codec.level, codec.checksum = configuration["level"], configuration.get("checksum", False)
        return codec

    def native_step(self, itemsize: int) -> ZstdStep:
        return ZstdStep(self.level, self.checksum)

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
