"""Shard assembly (see shard.pyx); the copying runs without the GIL."""

from typing import Any

ENTRY_BYTES: int
CRC_BYTES: int
EMPTY: int

def index_nbytes(n: int, crc: bool) -> int: ...

def assemble_shard(parts: list[Any], index_at_start: bool, index_big_endian: bool,
                   index_crc: bool) -> bytes | None: ...

INDEX_OK: int
INDEX_HALF_EMPTY: int
INDEX_OUTSIDE: int
INDEX_OVERLAP: int
INDEX_UNSORTED: int

def check_index(table: Any, data_start: int, data_end: int, bounded: bool) -> tuple[int, int, int]: ...
