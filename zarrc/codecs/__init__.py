"""Codecs, usable on their own (numcodecs style ``encode`` / ``decode``) and in arrays.

Each codec has ``encode(buf) -> bytes``, ``decode(buf, out=None)`` (into ``out``
when given, whose size must equal the decoded size), ``to_dict()`` (the v3 spec
form) and ``get_config()`` (the numcodecs / v2 form).

Importing this package imports every codec module, and so registers each codec
class in ``zarrc.codecs.registry`` (the sharding codec included, though it is not
exported here).
"""

from zarrc.codecs._base import Codec
from zarrc.codecs.blosc import Blosc
from zarrc.codecs.bytes import Bytes
from zarrc.codecs.crc32c import Crc32c
from zarrc.codecs.gzip import Gzip
from zarrc.codecs.numcodecs_v3 import NumcodecsCodec, numcodecs_v3
from zarrc.codecs.sharding import ShardingIndexed as _ShardingIndexed  # noqa: F401 (registers it)
from zarrc.codecs.transpose import Transpose
from zarrc.codecs.vlen import VLenBytes, VLenUTF8
from zarrc.codecs.zlib import Zlib
from zarrc.codecs.zstd import Zstd

__all__ = ["Blosc", "Bytes", "Codec", "Crc32c", "Gzip", "NumcodecsCodec", "Transpose", "VLenBytes",
           "VLenUTF8", "Zlib", "Zstd", "numcodecs_v3"]
