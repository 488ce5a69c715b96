"""The suite's datasets (what array) and layouts (how it is stored), and the
selections its workloads read.  Nothing here imports a Zarr library."""

from __future__ import annotations

import math
from dataclasses import dataclass

import numpy as np

from bench._common import smooth_field


@dataclass(frozen=True)
class Dataset:
    name: str
    shape: tuple[int, ...]
    dtype: str
    chunks: tuple[int, ...]  # unsharded layouts
    shards: tuple[int, ...]  # sharded layout: shard shape ...
    inner: tuple[int, ...]   # ... of these inner chunks
    box: tuple[int, ...]     # random-read box

    def make(self) -> np.ndarray:
        return smooth_field(self.shape, self.dtype, seed=0)

    @property
    def nbytes(self) -> int:
        return math.prod(self.shape) * np.dtype(self.dtype).itemsize


@dataclass(frozen=True)
class Layout:
    name: str
    zarr_format: int
    compressor: str | None  # None, "blosc" (lz4, shuffle, clevel 5), "zstd" (3), "gzip" (1)
    sharded: bool = False

    def chunks(self, ds: Dataset) -> tuple[int, ...]:
        """The chunks a reader sees (inner chunks when sharded)."""
        return ds.inner if self.sharded else ds.chunks

    def describe(self, ds: Dataset) -> str:
        comp = {None: "no compressor", "blosc": "blosc lz4+shuffle clevel 5",
                "zstd": "zstd level 3", "gzip": "gzip level 1"}[self.compressor]
        if self.sharded:
            return (f"v3 shards {_x(ds.shards)} of {_x(ds.inner)} inner chunks, {comp}, "
                    "index bytes+crc32c at end")
        return f"v{self.zarr_format} chunks {_x(ds.chunks)}, {comp}"


def _x(shape) -> str:
    return "x".join(map(str, shape))


# 2-D analogue of the 3-D layout, by bytes: a 512x256 float32 chunk = 64^3 uint16 =
# 512 KiB; a 128x128 inner chunk = 32^3 uint16 = 64 KiB; a 4096x2048 shard = 256^3
# uint16 = 32 MiB; both arrays are 256 MiB.
def datasets(quick: bool) -> dict[str, Dataset]:
    n3, n2 = (128, 2048) if quick else (512, 8192)

    def shard(full, shape):  # at least 2 shards along each axis in quick mode
        return tuple(min(f, s // 2) for f, s in zip(full, shape))

    return {
        "u16": Dataset("u16", (n3,) * 3, "uint16", (64,) * 3, shard((256,) * 3, (n3,) * 3), (32,) * 3,
                       (16,) * 3),
        "f32": Dataset("f32", (n2, n2), "float32", (512, 256), shard((4096, 2048), (n2, n2)), (128, 128),
                       (64, 64)),
    }


LAYOUTS = {
    "raw": Layout("raw", 3, None),
    "blosc-lz4": Layout("blosc-lz4", 3, "blosc"),
    "zstd-3": Layout("zstd-3", 3, "zstd"),
    "gzip-1": Layout("gzip-1", 3, "gzip"),
    "sharded": Layout("sharded", 3, "blosc", sharded=True),
    "v2-blosc-lz4": Layout("v2-blosc-lz4", 2, "blosc"),
}


def tiles(shape, box) -> list[tuple[slice, ...]]:
    """Selections tiling ``shape`` with boxes of shape ``box`` (C order)."""
    ranges = [range(0, s, b) for s, b in zip(shape, box)]
    corners = np.stack(np.meshgrid(*ranges, indexing="ij"), -1).reshape(-1, len(shape))
    return [tuple(slice(int(c), min(int(c) + b, s)) for c, b, s in zip(corner, box, shape))
            for corner in corners]


def random_boxes(shape, box, n: int, seed: int) -> list[tuple[slice, ...]]:
    """``n`` boxes of shape ``box`` at uniformly random corners (not chunk-aligned)."""
    rng = np.random.default_rng(seed)
    corners = rng.integers(0, np.array(shape) - np.array(box) + 1, size=(n, len(shape)))
    return [tuple(slice(int(c), int(c) + b) for c, b in zip(corner, box)) for corner in corners]


def random_points(shape, n: int, seed: int) -> list[tuple[int, ...]]:
    rng = np.random.default_rng(seed)
    return [tuple(int(v) for v in p) for p in rng.integers(0, shape, size=(n, len(shape)))]


def one_inner_chunk_per_shard(ds: Dataset) -> list[tuple[slice, ...]]:
    """For every shard, the inner chunk in its middle (not aligned to the shard start)."""
    mid = [(s // i // 2) * i for s, i in zip(ds.shards, ds.inner)]
    return [tuple(slice(t.start + m, t.start + m + i) for t, m, i in zip(tile, mid, ds.inner))
            for tile in tiles(ds.shape, ds.shards)]
