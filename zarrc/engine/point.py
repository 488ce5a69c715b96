"""The point strategy: single-element reads (``a[i, j, k]`` with integer indices)
without decoding the element's whole chunk, for arrays the native BasicReader
does not take (stores other than plain chunk files; it reads single elements of
those itself).  Everything else goes to the native strategy behind it.

An uncompressed chunk gives exactly the element's bytes (one ``pread`` for a local
store; other stores hand over the chunk's value, which is sliced).  A blosc chunk decodes only the block that holds
the element: a local file is memory-mapped, so only the frame header, the block
offsets and that block are touched.  Everything is resolved when the array is
opened (strides of the stored layout, the key format), so a call costs a few
microseconds of Python plus the I/O.  Other chains (zstd, gzip, checksums,
sharding, Python codecs) take the general path.
"""

from __future__ import annotations

import math
import mmap
import os
import stat
from typing import Any

import numpy as np

from zarrc._kernels import blosc as k
from zarrc.engine.strategy import Strategy
from zarrc.errors import BoundsCheckError, CodecError, StoreError, from_kernel
from zarrc.stores.base import pread

_READ_FLAGS = os.O_RDONLY | getattr(os, "O_CLOEXEC", 0) | getattr(os, "O_BINARY", 0)
_MISSING = (FileNotFoundError, NotADirectoryError, IsADirectoryError)


class PointStrategy(Strategy):
    """Reads single elements of a chunked array; every other call (and an element
    it cannot read) goes to ``fallback``, the array's native strategy.

    kind : "raw" (no bytes->bytes codec) or "blosc" (one blosc codec).
    perm : the stored chunk's axis order (stored = chunk.transpose(perm)).
    key_of : maps a tuple of chunk coordinates to the chunk's store key.
    """

    def __init__(self, fallback: Strategy, kind: str, perm: tuple[int, ...], key_of: Any) -> None:
        super().__init__(fallback.arr)
        arr = self.arr
        self.fallback = fallback
        self.fallback_read = fallback.read
        # the fallback's bound methods in place of this class's (a call goes straight
        # to them, no frame of this class in between): instance attributes over
        # methods, which mypy flags as method-assign
        self.read_general = fallback.read_general  # type: ignore[method-assign]  # delegation, see above
        self.read_into = fallback.read_into  # type: ignore[method-assign]  # delegation, see above
        self.write_from = fallback.write_from  # type: ignore[method-assign]  # delegation, see above
        self.locks_late = fallback.locks_late
        self.kind = kind
        assert arr.chain is not None       # (in front of a native strategy)
        self.itemsize = arr.chain.itemsize
        self.nbytes = arr.chain.chunk_nbytes
        stored = [arr.chunks[p] for p in perm]
        stored_strides = [math.prod(stored[i + 1:]) for i in range(len(stored))]
        strides = [0] * len(perm)
        for i, p in enumerate(perm):
            strides[p] = stored_strides[i] * self.itemsize
        self.dims = tuple(zip(arr.shape, arr.chunks, strides))
        self.ndim = len(self.dims)
        self.stored_dtype = arr.dtype.newbyteorder("S") if arr.chain.swap_unit else arr.dtype
        self.key_of = key_of
        self.files = arr.files is not None       # a store of plain files

    def read(self, selection: Any) -> Any:
        """``arr[selection]``: an int per dimension reads the element (a 0-d array)
        here.  Raises SelectionError for an index out of bounds, CodecError for a
        chunk that does not decode."""
        if type(selection) is int and self.ndim == 1:
            selection = (selection,)
        if not (type(selection) is tuple and len(selection) == self.ndim
                and type(selection[0]) is int and all(type(i) is int for i in selection)):
            return self.fallback_read(selection)
        coords = []
        offset = 0
        for dim, (i, (n, c, stride)) in enumerate(zip(selection, self.dims)):
            if i < 0:
                i += n
            if not 0 <= i < n:
                raise BoundsCheckError(f"index {selection[dim]} is out of bounds for dimension {dim} "
                                       f"with size {n}")
            q = i // c
            coords.append(q)
            offset += (i - q * c) * stride
        key = self.key_of(coords)
        try:
            data = self._fetch(key, offset)
        except CodecError as exc:
            raise CodecError(f"chunk {key} of {self.arr.name}: {exc}") from None
        if data is NotImplemented:           # (the item is not made of whole blosc items)
            return self.fallback_read(selection)
        if data is None:
            item = np.frombuffer(self.arr.fill, self.arr.dtype)
        else:
            item = np.frombuffer(data, self.stored_dtype)
        return item.astype(self.arr.dtype).reshape(())

    def _fetch(self, key: str, offset: int) -> Any:
        if not self.files:
            return self._fetch_store(key, offset)
        try:
            fd = os.open(self.arr.key_file(key), _READ_FLAGS)
        except _MISSING:
            return None
        try:
            st = os.fstat(fd)
            if stat.S_ISDIR(st.st_mode):
                raise StoreError(f"chunk {key} of {self.arr.name}: read failed: Is a directory")
            size = st.st_size
            if self.kind == "raw":
                if size != self.nbytes:
                    raise CodecError(f"uncompressed chunk holds {size} bytes, expected {self.nbytes}")
                return pread(fd, self.itemsize, offset)
            if size == 0:
                raise CodecError("blosc: the chunk is empty (truncated frame)")
            frame = mmap.mmap(fd, 0, access=mmap.ACCESS_READ)
        finally:
            os.close(fd)
        try:
            return self._blosc_item(frame, offset)
        finally:
            frame.close()

    def _fetch_store(self, key: str, offset: int) -> Any:
        frame = self.arr.store.get(key)
        if frame is None:
            return None
        if self.kind == "raw":
            if len(frame) != self.nbytes:
                raise CodecError(f"uncompressed chunk holds {len(frame)} bytes, expected {self.nbytes}")
            return frame[offset:offset + self.itemsize]
        return self._blosc_item(frame, offset)

    def _blosc_item(self, frame: Any, offset: int) -> Any:
        out = bytearray(self.itemsize)
        try:
            nbytes, _, _, typesize, _ = k.blosc_header(frame)
            if nbytes != self.nbytes:
                raise CodecError(f"blosc header claims {nbytes} bytes, chunk holds {self.nbytes}")
            if self.itemsize % typesize:
                return NotImplemented        # the item is not made of whole blosc items
            k.blosc_decode_range(frame, offset, out)
        except k.KernelError as exc:
            raise from_kernel(exc) from None
        return out

