"""Real decompression bombs (2 GiB of zeros, a few MB or KB compressed) in chunks
decoded in Python (v2 compressors before numcodecs filters, v3 ``numcodecs.*``
chains zarrc's kernels cannot run) are refused before the bomb is held: each read
runs in a subprocess whose peak resident memory is measured (VmHWM), and must
stay within 256 MiB of what it held before the read."""

from __future__ import annotations

import bz2
import json
import lzma
import struct
import subprocess
import sys
import zlib
from functools import cache
from pathlib import Path

import pytest

pytest.importorskip("numcodecs")

BOMB = 2 << 30              # what each bomb decodes to
MIB = 1 << 20


def zstd_zeros(total: int) -> bytes:
    """One zstd frame of ``total`` zeros (a multiple of 128 KiB), its content size
    recorded: RLE blocks of 128 KiB, 4 bytes each."""
    blocks = total >> 17
    return b"\x28\xb5\x2f\xfd\xe0" + struct.pack("<Q", total) + b"".join(
        ((i == blocks - 1) | 2 | (1 << 20)).to_bytes(3, "little") + b"\0" for i in range(blocks))


@cache
def bomb(kind: str) -> bytes:
    """2 GiB of zeros as one zlib / gzip stream (a block of 1 MiB repeated: each
    ends with a full flush, so the next is the same bytes), or as bz2 / xz streams
    of 64 MiB concatenated (which bz2.decompress, lzma.decompress and numcodecs
    read as one)."""
    if kind.endswith("+crc32"):                   # (numcodecs' crc32: the checksum first)
        import numcodecs
        return bytes(numcodecs.CRC32().encode(bomb(kind[:-6])))
    if kind in ("zlib", "gzip"):
        c = zlib.compressobj(1, zlib.DEFLATED, 15 if kind == "zlib" else 31)
        zeros = bytes(MIB)
        head = c.compress(zeros) + c.flush(zlib.Z_FULL_FLUSH)
        block = c.compress(zeros) + c.flush(zlib.Z_FULL_FLUSH)
        assert block == c.compress(zeros) + c.flush(zlib.Z_FULL_FLUSH)
        body = head[:-len(block)] + block * (BOMB // MIB)     # (head: the header, then block)
        if kind == "zlib":
            adler = 1
            for _ in range(BOMB // MIB):
                adler = zlib.adler32(zeros, adler)
            return body + b"\x03\x00" + adler.to_bytes(4, "big")
        crc = 0
        for _ in range(BOMB // MIB):
            crc = zlib.crc32(zeros, crc)
        return body + b"\x03\x00" + crc.to_bytes(4, "little") + (BOMB % (1 << 32)).to_bytes(4, "little")
    if kind == "zstd":
        return zstd_zeros(BOMB)
    part = bz2.compress(bytes(64 * MIB), 1) if kind == "bz2" else lzma.compress(bytes(64 * MIB), preset=0)
    return part * (BOMB // (64 * MIB))


def test_the_bombs_are_what_they_claim() -> None:
    for kind, make in (("zlib", lambda: zlib.decompressobj(15)), ("gzip", lambda: zlib.decompressobj(31))):
        d, total, data = make(), 0, bomb(kind)
        while data:
            total += len(d.decompress(data, 64 * MIB))
            data = d.unconsumed_tail
        assert total == BOMB and d.eof and not d.unused_data, kind
    assert len(bz2.decompress(bomb("bz2")[:len(bomb("bz2")) // 32])) == 64 * MIB
    import numcodecs
    assert numcodecs.Zstd().decode(zstd_zeros(8 << 17)) == bytes(8 << 17)


READ = r"""
import json, resource, sys
import zarrc
from zarrc.errors import ZarrcError
from zarrc.stores import MemoryStore
meta, key, path = json.loads(sys.argv[1]), sys.argv[2], sys.argv[3]
store = MemoryStore()
for k, v in meta.items():
    store.set(k, json.dumps(v).encode())
store.set(key, open(path, "rb").read())
a = zarrc.open_array(store, path="a", mode="r")
a[a.shape[0] // 2:]                       # (a chunk that is not the bomb: warms everything up)
def peak_kib():   # (this process' own peak: ru_maxrss keeps that of the process it was spawned from)
    try:
        with open("/proc/self/status") as status:
            return next(int(line.split()[1]) for line in status if line.startswith("VmHWM:"))
    except OSError:
        return resource.getrusage(resource.RUSAGE_SELF).ru_maxrss
before = peak_kib()
try:
    a[...]
    print(json.dumps({"error": None}))
except Exception as exc:
    after = peak_kib()
    print(json.dumps({"error": type(exc).__name__, "zarrc": isinstance(exc, ZarrcError),
                      "message": str(exc), "grew_kib": after - before}))
"""


def read_bomb(tmp_path: Path, meta: dict, key: str, kind: str) -> dict:
    path = tmp_path / "bomb"
    path.write_bytes(bomb(kind))
    proc = subprocess.run([sys.executable, "-c", READ, json.dumps(meta), key, str(path)],
                          capture_output=True, text=True, check=False, timeout=300)
    assert proc.returncode == 0, proc.stderr
    return json.loads(proc.stdout.strip().splitlines()[-1])


def v2_meta(compressor: dict, filters: list | None) -> dict:
    return {"a/.zarray": {"zarr_format": 2, "shape": [8192], "chunks": [4096], "dtype": "<f8",
                          "compressor": compressor, "fill_value": 0, "order": "C", "filters": filters}}


def v3_meta(codecs: list, chunk: int = 4096) -> dict:
    return {"a/zarr.json": {"zarr_format": 3, "node_type": "array", "shape": [2 * chunk], "data_type": "float64",
                            "chunk_grid": {"name": "regular", "configuration": {"chunk_shape": [chunk]}},
                            "chunk_key_encoding": {"name": "default"}, "fill_value": 0.0,
                            "codecs": codecs}}


DELTA = {"id": "delta", "dtype": "<f8"}
# name: (metadata, chunk key, bomb, the bytes the bombed stage may give: the chunk's
# 32 KiB, or (bz2 after zlib) the most zlib may make of it, codecs.bounded.encoded_bound,
# or (around a shard) its 4 inner chunks of 1024 items at 8 bytes and its index;
# the lzma bomb, 305 KiB, is itself more than that bound for 32 KiB: a chunk of 512 KiB)
CASES = {
    "v2 zlib before delta": (v2_meta({"id": "zlib", "level": 1}, [DELTA]), "a/0", "zlib", 32768),
    "v2 gzip before delta": (v2_meta({"id": "gzip", "level": 1}, [DELTA]), "a/0", "gzip", 32768),
    "v2 bz2": (v2_meta({"id": "bz2", "level": 1}, None), "a/0", "bz2", 32768),
    "v2 lzma": (v2_meta({"id": "lzma", "preset": 0}, None), "a/0", "lzma", 32768),
    "v3 numcodecs.zlib after delta": (v3_meta([
        {"name": "numcodecs.delta", "configuration": {"dtype": "<f8"}},
        {"name": "bytes", "configuration": {"endian": "little"}},
        {"name": "numcodecs.zlib", "configuration": {"level": 1}}]), "a/c/0", "zlib", 32768),
    "v3 numcodecs.gzip after shuffle": (v3_meta([
        {"name": "bytes", "configuration": {"endian": "little"}},
        {"name": "numcodecs.shuffle", "configuration": {"elementsize": 8}},
        {"name": "numcodecs.gzip", "configuration": {"level": 1}}]), "a/c/0", "gzip", 32768),
    "v3 numcodecs.lzma with a checksum": (v3_meta([
        {"name": "bytes", "configuration": {"endian": "little"}},
        {"name": "numcodecs.lzma", "configuration": {"preset": 0}},
        {"name": "numcodecs.crc32"}], 1 << 16), "a/c/0", "lzma+crc32", 1 << 19),
    "v2 zstd before delta": (v2_meta({"id": "zstd", "level": 1}, [DELTA]), "a/0", "zstd", 32768),
    "v3 numcodecs.zstd after delta": (v3_meta([
        {"name": "numcodecs.delta", "configuration": {"dtype": "<f8"}},
        {"name": "bytes", "configuration": {"endian": "little"}},
        {"name": "numcodecs.zstd", "configuration": {"level": 1}}]), "a/c/0", "zstd", 32768),
    "v3 numcodecs.zstd around a shard": (v3_meta([
        {"name": "sharding_indexed", "configuration": {
            "chunk_shape": [1024], "codecs": [{"name": "bytes", "configuration": {"endian": "little"}}],
            "index_codecs": [{"name": "bytes", "configuration": {"endian": "little"}}, {"name": "crc32c"}],
            "index_location": "end"}},
        {"name": "numcodecs.zstd", "configuration": {"level": 1}}]), "a/c/0", "zstd", 4 * 8192 + 4 * 16 + 4),
    "v3 numcodecs.bz2 after zlib": (v3_meta([
        {"name": "bytes", "configuration": {"endian": "little"}},
        {"name": "numcodecs.zlib", "configuration": {"level": 1}},
        {"name": "numcodecs.bz2", "configuration": {"level": 1}}]), "a/c/0", "bz2", 32768 + 4096 + 65536),
}


@pytest.mark.parametrize("name", list(CASES))
def test_a_2_gib_bomb_is_refused_before_it_is_held(tmp_path, name) -> None:
    meta, key, kind, limit = CASES[name]
    got = read_bomb(tmp_path, meta, key, kind)
    assert got["error"] == "CodecError" and got["zarrc"], got
    assert key.split("/", 1)[1] in got["message"], got
    if limit is not None:
        assert str(limit) in got["message"], got
    assert got["grew_kib"] < 256 * 1024, got


def test_v3_header_claims_are_refused_before_allocating() -> None:
    # numcodecs' lz4 (no kernel: decoded by numcodecs, which allocates what its header
    # claims) and blosc (after delta: the chain runs in Python, the frame decoded by
    # zarrc's kernel into the chunk's 32 KiB) with headers claiming 2 GiB - 1, 1 GiB
    import numpy as np

    import zarrc
    from zarrc.errors import CodecError
    from zarrc.stores import MemoryStore
    for compressor, claim_at, claim in (
            ({"name": "numcodecs.lz4", "configuration": {"acceleration": 1}}, 0, 2**31 - 1),
            ({"name": "numcodecs.blosc", "configuration": {"cname": "lz4"}}, 4, 2**30)):
        store = MemoryStore()
        for k, v in v3_meta([{"name": "numcodecs.delta", "configuration": {"dtype": "<f8"}},
                             {"name": "bytes", "configuration": {"endian": "little"}}, compressor]).items():
            store.set(k, json.dumps(v).encode())
        a = zarrc.open_array(store, path="a")
        a[...] = np.arange(8192.0)
        np.testing.assert_array_equal(zarrc.open_array(store, path="a", mode="r")[...], np.arange(8192.0))
        good = bytearray(store.get("a/c/0"))
        good[claim_at:claim_at + 4] = claim.to_bytes(4, "little")
        store.set("a/c/0", bytes(good))
        with pytest.raises(CodecError, match=r"chunk a/c/0 of /a: .*claim") as info:
            zarrc.open_array(store, path="a", mode="r")[...]
        if claim_at == 0:       # (blosc's kernel finds the frame too short for 1 GiB first)
            assert f"claims {claim} bytes, the chunk's codecs expect 32768" in str(info.value), info.value


@pytest.mark.parametrize("fmt", [2, 3])
def test_zfpy_header_claims_are_refused_before_allocating(fmt) -> None:
    # zfpy allocates the array its header describes: a header whose sizes claim more
    # than the chunk is refused before zfpy runs (v2 compressor "zfpy", v3
    # numcodecs.zfpy); an untouched one reads
    pytest.importorskip("zfpy")
    import numcodecs
    import numpy as np

    import zarrc
    from zarrc.errors import CodecError
    from zarrc.stores import MemoryStore
    store = MemoryStore()
    values = np.linspace(0, 1, 64 * 8).reshape(64, 8)
    if fmt == 2:
        a = zarrc.create_array(store, name="a", shape=(64, 8), chunks=(64, 8), dtype="f8", zarr_format=2,
                               compressors=numcodecs.ZFPY(mode=4))
        key = "a/0.0"
    else:
        a = zarrc.create_array(store, name="a", shape=(64, 8), chunks=(64, 8), dtype="f8",
                               serializer={"name": "numcodecs.zfpy", "configuration": {"mode": 4}},
                               compressors=None)
        key = "a/c/0/0"
    a[...] = values
    np.testing.assert_array_equal(zarrc.open_array(store, path="a", mode="r")[...], values)
    good = bytearray(store.get(key))
    assert good[:3] == b"zfp"
    head = int.from_bytes(good[:16], "little")
    head |= ((1 << 24) - 1) << (32 + 4)         # nx - 1: 2**24 - 1 (2**27 doubles, 1 GiB)
    good[:16] = head.to_bytes(16, "little")
    store.set(key, bytes(good))
    with pytest.raises(CodecError, match=r"claims \d+ bytes") as info:
        zarrc.open_array(store, path="a", mode="r")[...]
    assert "4096" in str(info.value), info.value


@pytest.mark.parametrize("dtype", ["f4", "f8", "i4", "i8"])
@pytest.mark.parametrize("shape", [(1,), (37,), (5, 9), (1, 1), (3, 5, 6), (1, 2, 3, 5), (4, 4, 4, 4)])
def test_zfp_streams_fit_the_padding_their_decoder_may_read(dtype, shape) -> None:
    # zfp reads its stream without checking where it ends: zarrc follows each stream
    # with zeros up to the most its blocks can take, so a truncated chunk is decoded
    # from zeros, not from memory past the buffer.  The bound holds for the largest
    # streams zfp writes (noise, reversible mode: every bit plane), and a truncated
    # stream decodes from the padding, the same each time.
    zfpy = pytest.importorskip("zfpy")
    import numpy as np

    from zarrc.codecs.bounded import zfp_padded
    rng = np.random.default_rng(7)
    dt = np.dtype(dtype)
    if dt.kind == "f":
        values = (rng.standard_normal(shape) * 1e30).astype(dt)
    else:
        info = np.iinfo(dt)
        values = rng.integers(info.min, info.max, shape, dtype=dt, endpoint=True)
    full = bytes(zfpy.compress_numpy(values))              # (reversible: lossless, largest)
    padded = zfp_padded(full)
    assert isinstance(padded, np.ndarray) and len(padded) >= len(full), (len(padded), len(full))
    np.testing.assert_array_equal(zfpy.decompress_numpy(bytes(padded)), values)
    cut = zfp_padded(full[:16])
    assert len(cut) == len(padded) and not cut[16:].any()
    first = zfpy.decompress_numpy(bytes(cut))
    np.testing.assert_array_equal(zfpy.decompress_numpy(bytes(zfp_padded(full[:16]))), first)


@pytest.mark.parametrize("fmt", ["v2 zfpy", "v3 numcodecs.zfpy", "v3 zfp"])
def test_truncated_fixed_rate_zfp_chunks_are_refused(fmt) -> None:
    # a fixed-rate zfp stream is as long as its rate says: a shorter one is refused
    # before zfp reads past its end
    zfpy = pytest.importorskip("zfpy")
    import numcodecs
    import numpy as np

    import zarrc
    from zarrc.errors import CodecError
    from zarrc.stores import MemoryStore
    store = MemoryStore()
    values = np.linspace(0, 1, 64 * 8).reshape(64, 8)
    kw: dict = {"shape": (64, 8), "chunks": (64, 8), "dtype": "f8"}
    if fmt == "v2 zfpy":
        a = zarrc.create_array(store, name="a", zarr_format=2, **kw,
                               compressors=numcodecs.ZFPY(mode=zfpy.mode_fixed_rate, rate=16))
        key = "a/0.0"
    else:
        serializer = ({"name": "numcodecs.zfpy", "configuration": {"mode": zfpy.mode_fixed_rate, "rate": 16}}
                      if fmt == "v3 numcodecs.zfpy" else
                      {"name": "zfp", "configuration": {"mode": "fixed_rate", "rate": 16}})
        a = zarrc.create_array(store, name="a", serializer=serializer, compressors=None, **kw)
        key = "a/c/0/0"
    a[...] = values
    np.testing.assert_allclose(zarrc.open_array(store, path="a", mode="r")[...], values, atol=1e-3)
    store.set(key, store.get(key)[:200])
    with pytest.raises(CodecError, match="truncated"):
        zarrc.open_array(store, path="a", mode="r")[...]


def test_v2_zfpy_chunks_are_zarr_pythons_bytes(tmp_path) -> None:
    # zfpy codes the dimensions it is given: zarrc hands it the chunk's, as zarr-python
    # does, so both write the same chunks (and the 2-d blocks compress better)
    zfpy = pytest.importorskip("zfpy")
    zarr = pytest.importorskip("zarr")
    import numcodecs
    import numpy as np

    import zarrc
    values = np.linspace(0, 1, 64 * 24).reshape(64, 24)
    kw = {"shape": (64, 24), "chunks": (64, 8), "dtype": "f8", "zarr_format": 2,
          "compressors": numcodecs.ZFPY(mode=zfpy.mode_fixed_accuracy, tolerance=1e-3)}
    zarr.create_array(str(tmp_path / "zp"), **kw)[...] = values
    zarrc.create_array(str(tmp_path / "zc"), **kw)[...] = values
    for key in ("0.0", "0.1", "0.2"):
        assert (tmp_path / "zp" / key).read_bytes() == (tmp_path / "zc" / key).read_bytes(), key
    np.testing.assert_array_equal(zarrc.open_array(str(tmp_path / "zp"))[...],
                                  np.asarray(zarr.open_array(str(tmp_path / "zc"))[...]))
