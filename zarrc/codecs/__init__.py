"""Codecs, usable on their own (numcodecs style ``encode`` / ``decode``) and in arrays.

Each codec has ``encode(buf) -> bytes``, ``decode(buf, out=None)`` (into ``out``
when given, whose size must equal the decoded size), ``to_dict()`` (the v3 spec
form) and ``get_config()`` (the numcodecs / v2 form).

zarr-python's names are the same classes (``BloscCodec`` is ``Blosc`` with
zarr-python's defaults and keyword-only arguments), ``ZstdCodec`` ``Zstd``, ``GzipCodec`` ``Gzip``, ``BytesCodec`` ``Bytes``,
``TransposeCodec`` ``Transpose``, ``Crc32cCodec`` ``Crc32c``, ``ShardingCodec``
the sharding codec, ``VLenUTF8Codec`` / ``VLenBytesCodec``; they take
zarr-python's keywords and its enums (``BloscShuffle``, ``BloscCname``,
``Endian``, ``ShardingCodecIndexLocation``).  ``zarrc.codecs.numcodecs`` mirrors
``zarr.codecs.numcodecs``.  ``Blosc()`` is lz4, ``BloscCodec()`` zstd, as
zarr-python's.

Importing this package imports every codec module, and so registers each codec
class in ``zarrc.codecs.registry``.
"""

from zarrc.codecs import numcodecs
from zarrc.codecs._base import Codec
from zarrc.codecs.bitround import BitRound
from zarrc.codecs.blosc import Blosc, BloscCodec
from zarrc.codecs.bytes import Bytes
from zarrc.codecs.cast_value import CastValue
from zarrc.codecs.crc32c import Crc32c
from zarrc.codecs.enums import BloscCname, BloscShuffle, Endian, ShardingCodecIndexLocation
from zarrc.codecs.gzip import Gzip
from zarrc.codecs.numcodecs_v3 import NumcodecsCodec, numcodecs_v3
from zarrc.codecs.packbits import PackBits
from zarrc.codecs.scale_offset import ScaleOffset
from zarrc.codecs.sharding import ShardingIndexed
from zarrc.codecs.transpose import Transpose
from zarrc.codecs.vlen import VLenBytes, VLenUTF8
from zarrc.codecs.zfp import Zfp
from zarrc.codecs.zlib import Zlib
from zarrc.codecs.zstd import Zstd

# zarr-python's names (zarr.codecs)
BytesCodec = Bytes
Crc32cCodec = Crc32c
GzipCodec = Gzip
ShardingCodec = ShardingIndexed
TransposeCodec = Transpose
VLenBytesCodec = VLenBytes
VLenUTF8Codec = VLenUTF8
ZstdCodec = Zstd

__all__ = ["BitRound", "Blosc", "BloscCname", "BloscCodec", "BloscShuffle", "Bytes", "BytesCodec", "CastValue", "Codec", "Crc32c",
           "Crc32cCodec", "Endian", "Gzip", "GzipCodec", "NumcodecsCodec", "PackBits", "ScaleOffset", "ShardingCodec",
           "ShardingCodecIndexLocation", "ShardingIndexed", "Transpose", "TransposeCodec", "VLenBytes",
           "VLenBytesCodec", "VLenUTF8", "VLenUTF8Codec", "Zfp", "Zlib", "Zstd", "ZstdCodec", "numcodecs",
           "numcodecs_v3"]
