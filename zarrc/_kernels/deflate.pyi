"""The gzip, zlib and raw deflate codecs (see deflate.pyx).  All release the GIL."""

from typing import Any, TypeAlias

from zarrc._kernels.errors import KernelError as KernelError

Buffer: TypeAlias = Any  # any object supporting the buffer protocol, contiguous

ZLIB: int
GZIP: int
RAW: int

def deflate_compress(data: Buffer, level: int, fmt: int = 0) -> bytes: ...
def inflate_into(data: Buffer, out: Buffer, fmt: int = 0) -> int: ...
def inflate(data: Buffer, fmt: int = 0) -> bytes: ...
def library_version() -> str: ...
