"""zarr-python's ``zarr.codecs.numcodecs`` names: numcodecs' codecs as v3 codecs
``numcodecs.<id>`` (``zarrc.codecs.numcodecs.Zlib(level=1)``), taking numcodecs'
keywords.  Each name is the class zarrc reads ``numcodecs.<id>`` codecs of array
metadata with (:func:`zarrc.codecs.numcodecs_v3.numcodecs_class`): zlib, gzip,
zstd, blosc and crc32c run on zarrc's kernels, the others through numcodecs
(imported when a codec object is made)."""

from __future__ import annotations

from zarrc.codecs.numcodecs_v3 import NUMCODECS_PREFIX, numcodecs_class

Adler32 = numcodecs_class(NUMCODECS_PREFIX + "adler32")
AsType = numcodecs_class(NUMCODECS_PREFIX + "astype")
BZ2 = numcodecs_class(NUMCODECS_PREFIX + "bz2")
BitRound = numcodecs_class(NUMCODECS_PREFIX + "bitround")
Blosc = numcodecs_class(NUMCODECS_PREFIX + "blosc")
CRC32 = numcodecs_class(NUMCODECS_PREFIX + "crc32")
CRC32C = numcodecs_class(NUMCODECS_PREFIX + "crc32c")
Delta = numcodecs_class(NUMCODECS_PREFIX + "delta")
FixedScaleOffset = numcodecs_class(NUMCODECS_PREFIX + "fixedscaleoffset")
Fletcher32 = numcodecs_class(NUMCODECS_PREFIX + "fletcher32")
GZip = numcodecs_class(NUMCODECS_PREFIX + "gzip")
JenkinsLookup3 = numcodecs_class(NUMCODECS_PREFIX + "jenkins_lookup3")
LZ4 = numcodecs_class(NUMCODECS_PREFIX + "lz4")
LZMA = numcodecs_class(NUMCODECS_PREFIX + "lzma")
PCodec = numcodecs_class(NUMCODECS_PREFIX + "pcodec")
PackBits = numcodecs_class(NUMCODECS_PREFIX + "packbits")
Quantize = numcodecs_class(NUMCODECS_PREFIX + "quantize")
Shuffle = numcodecs_class(NUMCODECS_PREFIX + "shuffle")
ZFPY = numcodecs_class(NUMCODECS_PREFIX + "zfpy")
Zlib = numcodecs_class(NUMCODECS_PREFIX + "zlib")
Zstd = numcodecs_class(NUMCODECS_PREFIX + "zstd")

__all__ = ["BZ2", "CRC32", "CRC32C", "LZ4", "LZMA", "ZFPY", "Adler32", "AsType", "BitRound", "Blosc",
           "Delta", "FixedScaleOffset", "Fletcher32", "GZip", "JenkinsLookup3", "PCodec", "PackBits",
           "Quantize", "Shuffle", "Zlib", "Zstd"]
