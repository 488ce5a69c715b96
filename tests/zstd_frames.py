"""zstd frame surgery for the codec tests: a frame's content size field replaced or
removed."""

from __future__ import annotations

import struct


def _zstd_split(frame: bytes) -> tuple[int, bytes]:
    """(frame header descriptor, blocks + checksum) of a single zstd frame."""
    assert frame[:4] == b"\x28\xb5\x2f\xfd"
    fhd = frame[4]
    single, fcs_flag, did = (fhd >> 5) & 1, fhd >> 6, fhd & 3
    pos = 5 + (0 if single else 1) + (0, 1, 2, 4)[did]
    pos += (1 if single else 0, 2, 4, 8)[fcs_flag]
    return fhd, frame[pos:]


def zstd_with_content_size(frame: bytes, size: int | None) -> bytes:
    """``frame`` with its frame content size replaced by ``size`` (8-byte field, single
    segment), or removed when ``size`` is None (then with a 1 MiB window)."""
    fhd, body = _zstd_split(frame)
    checksum = fhd & 0x04
    if size is None:
        return frame[:4] + bytes([checksum, 0x50]) + body
    return frame[:4] + bytes([checksum | 0xE0]) + struct.pack("<Q", size) + body
