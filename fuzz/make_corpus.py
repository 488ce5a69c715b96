"""Make the fuzz targets' seed corpus: fuzz/corpus/<target>/<name>, valid inputs
encoded by zarrc itself and by numcodecs (a few KB per target), each led by the
option bytes its target reads (see fuzz/targets.py).

    .venv/bin/python fuzz/make_corpus.py        # rewrites fuzz/corpus/

Nearly deterministic: numcodecs' gzip header records the time, and a few numcodecs
blosc frames (bit-shuffled) came out different in two runs.
"""

from __future__ import annotations

import gzip
import os
import shutil
import struct
import sys
import zlib

import numcodecs
import numpy as np

HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, HERE)

import targets

import zarrc
from zarrc._kernels import blosc as kblosc
from zarrc._kernels import zstd as kzstd
from zarrc.codecs import (
    Blosc,
    Bytes,
    Crc32c,
    Gzip,
    ShardingIndexed,
    Transpose,
    Zstd,
)
from zarrc.codecs.shard_index import IndexFormat

CORPUS = os.path.join(HERE, "corpus")


def data(n: int, dtype: str, seed: int = 0) -> np.ndarray:
    """Smooth values with a little noise: compressible, not trivially."""
    rng = np.random.default_rng(seed)
    x = np.sin(np.arange(n) / 17.0) * 100 + rng.integers(0, 4, n)
    return x.astype(dtype)


def blosc_frames() -> dict[str, bytes]:
    frames = {}
    for i, (cname, shuffle, dtype, blocksize) in enumerate([
            ("lz4", 1, "<i4", 0), ("lz4", 1, "<u2", 256), ("lz4", 2, "<f8", 512),
            ("lz4hc", 1, "<i8", 0), ("blosclz", 0, "u1", 128), ("zstd", 1, "<f4", 0),
            ("zlib", 2, "<i2", 256), ("lz4", 1, "<i4", 64)]):
        x = data(150 + 37 * i, dtype, i)
        frames[f"zarrc-{cname}-s{shuffle}-{np.dtype(dtype).itemsize}"] = kblosc.blosc_compress(
            x, 5, shuffle, x.itemsize, cname, blocksize)
        frames[f"numcodecs-{cname}-s{shuffle}-{np.dtype(dtype).itemsize}"] = bytes(numcodecs.Blosc(
            cname=cname, clevel=5, shuffle=shuffle, blocksize=blocksize).encode(x))
    frames["zarrc-memcpyed"] = kblosc.blosc_compress(data(100, "<i4"), 0, 1, 4, "lz4")
    frames["zarrc-random"] = kblosc.blosc_compress(
        np.random.default_rng(1).integers(0, 256, 300, dtype=np.uint8), 5, 1, 1, "lz4", 128)
    return frames


def rows_frames() -> dict[str, bytes]:
    """Byte-shuffled LZ4 frames of typesize 2, 4, 8: the ones blosc_decode_rows takes,
    led by its 4 option bytes (item size, rank, stream, split; dimensions; rows kept)."""
    out = {}
    for size_bits, dtype in ((1, "<u2"), (2, "<i4"), (3, "<f8")):
        for rank, blocksize in ((0, 0), (1, 256), (2, 128)):
            x = data(240, dtype, size_bits + rank)
            frame = bytes(numcodecs.Blosc("lz4", 5, 1, blocksize).encode(x))
            opt = size_bits | rank << 2 | (16 if rank == 1 else 0) | ((rank + 1) << 5 if rank else 0)
            out[f"lz4-{dtype[1:]}-rank{rank + 1}"] = bytes([opt, 11, 3, rank * 5]) + frame
    return out


def zstd_frames() -> dict[str, bytes]:
    x = data(1000, "<i4")
    one = kzstd.zstd_compress(x, 3)
    return {
        "zarrc": one,
        "zarrc-checksum": kzstd.zstd_compress(x[:300], 1, True),
        "numcodecs": bytes(numcodecs.Zstd(5).encode(x[:500])),
        "two-frames": one[:0] + kzstd.zstd_compress(x[:100], 1) + kzstd.zstd_compress(x[100:200], 1),
        "empty": kzstd.zstd_compress(b"", 1),
    }


def shard_blobs() -> dict[str, bytes]:
    out = {}
    rng = np.random.default_rng(2)
    for at_start, big, crc, n in ((False, False, True, 4), (True, False, True, 9),
                                  (False, True, False, 16), (True, True, False, 3)):
        fmt = IndexFormat(at_start, big, crc)
        parts = [None if i % 3 == 2 else bytes(rng.integers(0, 256, 5 + 7 * i, dtype=np.uint8))
                 for i in range(n)]
        blob = fmt.assemble(parts)
        opt = int(at_start) | int(big) << 1 | int(crc) << 2
        out[f"{'start' if at_start else 'end'}-{'be' if big else 'le'}-{'crc' if crc else 'nocrc'}-{n}"] = \
            bytes([opt, n - 1]) + blob
        out[f"empty-{opt}-{n}"] = bytes([opt, n - 1]) + fmt.empty(n)
    return out


def chunk_files(sharded: bool) -> dict[str, bytes]:
    out = {}
    for i, (arr, path) in enumerate(targets._chunk_arrays(sharded)):
        with open(path, "rb") as f:
            out[f"{arr.basename}-{i}"] = bytes([i]) + f.read()
    return out


def metadata_docs() -> tuple[dict[str, bytes], dict[str, bytes], dict[str, bytes]]:
    """(.zarray / .zgroup / .zattrs, zarr.json, consolidated) documents zarrc writes."""
    v2, v3, cons = {}, {}, {}
    store: dict = {}
    g2 = zarrc.open_group(zarrc.storage.MemoryStore(store), mode="w", zarr_format=2)
    g2.attrs["title"] = "fuzz"
    g2.create_array("a", shape=(10, 20), chunks=(5, 7), dtype="<f8", fill_value=float("nan"),
                    compressor=numcodecs.Blosc("zstd", 3, 2))
    g2.create_array("sub/b", shape=(4,), chunks=(2,), dtype="|S3", compressor=None,
                    order="F")
    g2.create_array("c", shape=(), chunks=(), dtype="<M8[s]", compressor=numcodecs.Zlib(1))
    g2.create_array("d", shape=(6, 6), chunks=(3, 3), dtype="<c16", fill_value=0,
                    compressor=numcodecs.GZip(1), dimension_separator="/")
    g2["a"].attrs["_ARRAY_DIMENSIONS"] = ["y", "x"]
    zarrc.consolidate_metadata(zarrc.storage.MemoryStore(store))
    for key, value in sorted(store.items()):
        blob = bytes(value)
        if key.endswith(".zarray"):
            v2[f"zarray-{key.replace('/', '-')}"] = bytes([0]) + blob
        elif key.endswith(".zgroup"):
            v2[f"zgroup-{key.replace('/', '-')}"] = bytes([100]) + blob
        elif key.endswith(".zattrs"):
            v2[f"zattrs-{key.replace('/', '-')}"] = bytes([200]) + blob
        elif key.endswith(".zmetadata"):
            cons["zmetadata"] = bytes([0]) + blob

    store3: dict = {}
    g3 = zarrc.open_group(zarrc.storage.MemoryStore(store3), mode="w")
    g3.attrs["units"] = {"x": "m"}
    g3.create_array("a", shape=(10, 20), chunks=(5, 7), dtype="float32", fill_value=-1.5,
                    dimension_names=["y", "x"])
    g3.create_array("s", shape=(16, 16), chunks=(4, 4), shards=(8, 16), dtype="uint16",
                    compressors=Zstd(1))
    g3.create_array("t", shape=(6, 5), chunks=(3, 5), dtype="int8", filters=[Transpose((1, 0))],
                    compressors=[Blosc("lz4", 5, "bitshuffle")], serializer=Bytes("big"))
    g3.create_array("g/z", shape=(3,), chunks=(3,), dtype="complex64", compressors=[Gzip(1), Crc32c()])
    g3.create_array("v", shape=(4,), chunks=(2,), dtype=str)
    g3.create_array("n", shape=(0, 4), chunks=(1, 2), dtype="bool", chunk_key_encoding={"name": "v2"},
                    compressors=Gzip(1))
    g3.create_array("inner", shape=(8, 8), chunks=(8, 8), dtype="<i4", compressors=None,
                    serializer=ShardingIndexed(chunk_shape=(2, 4), codecs=[Bytes()],
                                               index_location="start"))
    for key, value in sorted(store3.items()):
        if key.endswith("zarr.json"):
            v3[f"zarr-json-{key.replace('/', '-')}"] = bytes(value)
    zarrc.consolidate_metadata(zarrc.storage.MemoryStore(store3))
    cons["zarr-json-consolidated"] = bytes([1]) + bytes(store3["zarr.json"])
    return v2, v3, cons


def main() -> None:
    v2, v3, cons = metadata_docs()
    frames = blosc_frames()
    corpus = {
        "blosc": {k: bytes([0x80 if i % 2 else 0]) + f for i, (k, f) in enumerate(frames.items())},
        "blosc_partial": {k: struct.pack("<IH", 7 * i, 50 + 13 * i) + f
                          for i, (k, f) in enumerate(frames.items())},
        "blosc_rows": rows_frames(),
        "zstd": {k: b"\0" + f for k, f in zstd_frames().items()},
        "deflate": {
            "zlib": b"\0" + zlib.compress(data(800, "<i2").tobytes(), 6),
            "numcodecs-zlib": b"\0" + bytes(numcodecs.Zlib(1).encode(data(300, "<i4"))),
            "gzip": b"\1" + gzip.compress(data(500, "<f4").tobytes(), 5, mtime=0),
            "numcodecs-gzip": b"\1" + bytes(numcodecs.GZip(1).encode(data(200, "<i8"))),
            "zarrc-gzip": b"\1" + Gzip(3).encode(data(300, "<u2")),
        },
        "crc32c": {
            "codec": b"\0\0\0\0" + Crc32c().encode(data(300, "<i4")),
            "short": b"\xff\xff\xff\xff" + b"123456789",
            "empty": b"\0\0\0\0",
        },
        "shard_index": shard_blobs(),
        "chunk": chunk_files(False),
        "shard": chunk_files(True),
        "metadata_v2": v2,
        "metadata_v3": v3,
        "consolidated": cons,
    }
    for name, level, raw in (("raw", 6, b"abc" * 300), ("raw-stored", 0, bytes(range(256)))):
        c = zlib.compressobj(level, zlib.DEFLATED, -15)
        corpus["deflate"][name] = b"\2" + c.compress(raw) + c.flush()
    missing = set(targets.TARGETS) - set(corpus)
    assert not missing, missing
    shutil.rmtree(CORPUS, ignore_errors=True)
    total = 0
    for name, seeds in corpus.items():
        os.makedirs(os.path.join(CORPUS, name))
        for key, blob in seeds.items():
            targets.run(name, blob)        # every seed keeps the contract
            with open(os.path.join(CORPUS, name, key), "wb") as f:
                f.write(blob)
            total += len(blob)
        print(f"{name}: {len(seeds)} seeds, {sum(map(len, seeds.values()))} bytes")
    print(f"corpus: {total} bytes in {CORPUS}")


if __name__ == "__main__":
    main()
