"""The writer tests/test_crash_safety.py kills: ``python crash_writer.py ROOT SEED``
writes versions 1, 2, ... of every node of the hierarchy ROOT (made by ``make``)
until it is killed.  Version v is written as the value v, so a chunk or shard that
holds two values where one write stores one is torn."""

from __future__ import annotations

import random
import sys

import zarrc

SHAPE = (8, 8)
#: name -> (chunks, shards, region written each step)
ARRAYS = {
    "whole": ((4, 4), None, (slice(None), slice(None))),
    "partial": ((4, 4), None, (slice(1, 7), slice(1, 7))),
    "sharded": ((2, 2), (4, 4), (slice(None), slice(None))),
    "inner": ((2, 2), (4, 4), (slice(2, 6), slice(2, 6))),
    "resized": ((4, 4), None, (slice(None), slice(None))),
}


def make(root: str) -> None:
    g = zarrc.open_group(root, mode="w")
    for name, (chunks, shards, _) in ARRAYS.items():
        g.create_array(name, shape=SHAPE, chunks=chunks, shards=shards, dtype="int32", fill_value=0,
                       compressors=zarrc.codecs.ZstdCodec())
    zarrc.create_array(root + "-v2", shape=SHAPE, chunks=(4, 4), dtype="int32", fill_value=0,
                       zarr_format=2)
    zarrc.consolidate_metadata(root)


def run(root: str, seed: int, ready=lambda: print("ready", flush=True)) -> None:
    rng = random.Random(seed)
    g = zarrc.open_group(root, mode="r+", use_consolidated=False)
    arrays = {name: g[name] for name in ARRAYS}
    v2 = zarrc.open_array(root + "-v2", mode="r+")
    ready()
    v = seed * 1000 + 1          # (values differ between writers)
    while True:
        for name in rng.sample(sorted(ARRAYS), len(ARRAYS)):
            a = arrays[name]
            if name == "resized":
                a.resize((8 + 4 * (v % 2), 8))
                a[...] = v
            else:
                a[ARRAYS[name][2]] = v
        v2[...] = v
        g.attrs["version"] = v
        arrays["whole"].attrs["version"] = v
        zarrc.consolidate_metadata(root)
        v += 1


if __name__ == "__main__":
    run(sys.argv[1], int(sys.argv[2]))
