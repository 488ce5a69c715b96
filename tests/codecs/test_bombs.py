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
from typing import Any

import pytest

pytest.importorskip("numcodecs")

BOMB = 2 << 30              # what each bomb decodes to
MIB = 1 << 20
PCODEC_VALUES = 1 << 26     # the values the pcodec bomb holds (512 MiB of float64)


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
    if kind == "pcodec":        # (2**26 float64 zeros, 512 MiB, in 4 KB; np.zeros maps no memory)
        import numpy as np
        from pcodec import ChunkConfig, standalone
        return bytes(standalone.simple_compress(np.zeros(PCODEC_VALUES), ChunkConfig()))
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


def read_bomb(tmp_path: Path, meta: dict, key: str, kind: str, wrap: Any = None) -> dict:
    """What reading the bomb ``kind`` (``wrap``ped: in another codec's frame) as chunk
    ``key`` of the array ``meta`` describes did, in a subprocess: its error and how
    much its peak memory grew."""
    path = tmp_path / "bomb"
    path.write_bytes(bomb(kind) if wrap is None else wrap(bomb(kind)))
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


# pcodec's streams record their values' count: numcodecs' PCodec.decode allocates it.
# name: (metadata, chunk key, the bytes the chunk's codecs expect of pcodec: the chunk's
# 32 KiB, after item-wise filters too; where the filters leave pcodec's output unknown
# (a checksum before it), 4 times the chunk plus 1 MiB, as a v3 chain bounds it)
PCODEC_CASES = {
    "v3 numcodecs.pcodec": (v3_meta([{"name": "numcodecs.pcodec", "configuration": {"level": 8}}]),
                            "a/c/0", 32768),
    "v3 numcodecs.pcodec, then zstd": (v3_meta([{"name": "numcodecs.pcodec", "configuration": {"level": 8}},
                                                {"name": "zstd", "configuration": {"level": 1}}]),
                                       "a/c/0", 32768),
    "v2 pcodec": (v2_meta({"id": "pcodec"}, None), "a/0", 32768),
    "v2 pcodec after delta": (v2_meta({"id": "pcodec"}, [DELTA]), "a/0", 32768),
    "v2 pcodec after shuffle": (v2_meta({"id": "pcodec"}, [{"id": "shuffle", "elementsize": 8}]), "a/0", 32768),
    "v2 pcodec after fletcher32": (v2_meta({"id": "pcodec"}, [{"id": "fletcher32"}]), "a/0", 4 * 32768 + MIB),
}


@pytest.mark.parametrize("name", list(PCODEC_CASES))
def test_a_pcodec_stream_claiming_512_mib_is_refused_before_it_is_held(tmp_path, name) -> None:
    # a 4 KB stream of 2**26 values in a chunk of 4096 float64: decoded into a buffer
    # of the chunk's bytes (pcodec.standalone.simple_decompress_into), which it overfills
    pytest.importorskip("pcodec", reason="pcodec is not installed (numcodecs[pcodec], Python 3.11+)")
    meta, key, limit = PCODEC_CASES[name]
    if name.endswith("then zstd"):         # (the stream behind a compressor: zstd's frame of it)
        from zarrc.codecs.zstd import Zstd
        (tmp_path / "zstd").mkdir()
        got = read_bomb(tmp_path / "zstd", meta, key, "pcodec", wrap=lambda data: Zstd(level=1).encode(data))
    else:
        got = read_bomb(tmp_path, meta, key, "pcodec")
    assert got["error"] == "CodecError" and got["zarrc"], got
    assert key.split("/", 1)[1] in got["message"] and "pcodec" in got["message"], got
    assert f"more than the {limit // 8} float64 values ({limit} bytes)" in got["message"], got
    assert got["grew_kib"] < 256 * 1024, got


def test_pcodec_streams_of_fewer_values_or_another_type_are_refused() -> None:
    # exactly the chunk's values of the chunk's type: a stream of fewer (another
    # chunk's), of int32s, or cut short is a CodecError naming the key
    pytest.importorskip("pcodec", reason="pcodec is not installed (numcodecs[pcodec], Python 3.11+)")
    import numpy as np
    from pcodec import ChunkConfig, standalone

    import zarrc
    from zarrc.errors import CodecError
    from zarrc.stores import MemoryStore
    for fmt, meta, key in ((3, v3_meta([{"name": "numcodecs.pcodec", "configuration": {"level": 8}}]), "a/c/0"),
                           (2, v2_meta({"id": "pcodec"}, None), "a/0")):
        store = MemoryStore()
        for k, v in meta.items():
            store.set(k, json.dumps(v).encode())
        values = np.linspace(0, 1, 4096)
        store.set(key, bytes(standalone.simple_compress(values, ChunkConfig())))
        np.testing.assert_array_equal(zarrc.open_array(store, path="a", mode="r")[:4096], values)
        for data, match in ((standalone.simple_compress(values[:100], ChunkConfig()), "holds 100 float64 values"),
                            (standalone.simple_compress(values.astype("i4"), ChunkConfig()), "decode failed"),
                            (standalone.simple_compress(values, ChunkConfig())[:-40], "decode failed")):
            store.set(key, bytes(data))
            with pytest.raises(CodecError, match=f"chunk {key} of /a: .*pcodec.*{match}"):
                zarrc.open_array(store, path="a", mode="r")[...]


@pytest.mark.parametrize("dtype", ["int16", "uint16", "float16", "int32", "uint32", "float32",
                                   "int64", "uint64", "float64"])
def test_pcodec_chunks_zarr_python_writes_read_bit_for_bit(tmp_path, dtype) -> None:
    # v3 numcodecs.pcodec and v2 pcodec (alone and after delta), edge chunks included,
    # written by zarr-python through numcodecs, read by zarrc exactly; and zarrc's read back
    pytest.importorskip("pcodec", reason="pcodec is not installed (numcodecs[pcodec], Python 3.11+)")
    zarr = pytest.importorskip("zarr")
    codecs3 = pytest.importorskip("zarr.codecs.numcodecs")
    import numcodecs
    import numpy as np

    import zarrc
    rng = np.random.default_rng(3)
    dt = np.dtype(dtype)
    if dt.kind == "f":
        values = rng.standard_normal((37, 29)).astype(dt)
        values[0, :4] = [np.nan, np.inf, -np.inf, -0.0]
    else:
        info = np.iinfo(dt)
        values = rng.integers(info.min, info.max, (37, 29), dtype=dt, endpoint=True)
    kw = {"shape": values.shape, "chunks": (16, 10), "dtype": dtype}
    nodes = {
        "v3": dict(kw, compressors=None, serializer=codecs3.PCodec(level=8)),
        "v2": dict(kw, zarr_format=2, compressors=numcodecs.PCodec(level=8), filters=None),
        "v2 delta": dict(kw, zarr_format=2, compressors=numcodecs.PCodec(), filters=[numcodecs.Delta(dtype=dtype)]),
    }
    for name, args in nodes.items():
        if name == "v2 delta" and dt.kind == "f":
            continue                    # (delta of floats is not exact)
        path = str(tmp_path / name.replace(" ", "_"))
        zarr.create_array(path, **args)[...] = values
        got = zarrc.open_array(path, mode="r")[...]
        assert got.dtype == dt and got.tobytes() == values.tobytes(), name
        mine = str(tmp_path / f"zarrc_{name.replace(' ', '_')}")
        zarrc.create_array(mine, **args)[...] = values
        assert np.asarray(zarr.open_array(mine, mode="r")[...]).tobytes() == values.tobytes(), name


VLEN_CASES = {
    "v3 string, zstd": ({"a/zarr.json": {
        "zarr_format": 3, "node_type": "array", "shape": [8], "data_type": "string",
        "chunk_grid": {"name": "regular", "configuration": {"chunk_shape": [4]}},
        "chunk_key_encoding": {"name": "default"}, "fill_value": "",
        "codecs": [{"name": "vlen-utf8"}, {"name": "zstd", "configuration": {"level": 1}}]}}, "a/c/0"),
    "v3 bytes, numcodecs.zstd": ({"a/zarr.json": {
        "zarr_format": 3, "node_type": "array", "shape": [8], "data_type": "bytes",
        "chunk_grid": {"name": "regular", "configuration": {"chunk_shape": [4]}},
        "chunk_key_encoding": {"name": "default"}, "fill_value": "",
        "codecs": [{"name": "vlen-bytes"}, {"name": "numcodecs.zstd", "configuration": {"level": 1}}]}},
        "a/c/0"),
    "v2 vlen-utf8, zstd": ({"a/.zarray": {
        "zarr_format": 2, "shape": [8], "chunks": [4], "dtype": "|O", "fill_value": "", "order": "C",
        "filters": [{"id": "vlen-utf8"}], "compressor": {"id": "zstd", "level": 1}}}, "a/0"),
}


@pytest.mark.parametrize("name", list(VLEN_CASES))
def test_a_2_gib_bomb_of_variable_length_items_is_refused_at_the_setting(tmp_path, name) -> None:
    # nothing in the metadata bounds a chunk of strings or bytes: it may decompress to
    # zarrc.config.vlen_chunk_bytes (1 GiB), a 2 GiB zstd bomb refused before it is held
    meta, key = VLEN_CASES[name]
    got = read_bomb(tmp_path, meta, key, "zstd")
    assert got["error"] == "CodecError" and got["zarrc"], got
    assert key.split("/", 1)[1] in got["message"], got
    assert f"at most {1 << 30}" in got["message"] and "zarrc.config.vlen_chunk_bytes" in got["message"], got
    assert got["grew_kib"] < 256 * 1024, got


@pytest.mark.parametrize("name", list(VLEN_CASES) + ["v2 vlen-bytes, gzip"])
def test_variable_length_chunks_read_within_the_setting_and_are_refused_beyond_it(name) -> None:
    # a chunk of 4 items of 1 MiB (4 MiB decompressed, a few KB stored): read with the
    # setting at 8 MiB, refused at 1 MiB naming the key and the setting, read again
    # once it is raised; small chunks read under the small setting
    import numcodecs
    import numpy as np

    import zarrc
    from zarrc.errors import CodecError
    from zarrc.stores import MemoryStore
    if name == "v2 vlen-bytes, gzip":
        meta, key = ({"a/.zarray": {**VLEN_CASES["v2 vlen-utf8, zstd"][0]["a/.zarray"], "fill_value": None,
                                    "filters": [{"id": "vlen-bytes"}], "compressor": {"id": "gzip", "level": 1}}},
                     "a/0")
    else:
        meta, key = VLEN_CASES[name]
    store = MemoryStore()
    for k, v in meta.items():
        store.set(k, json.dumps(v).encode())
    binary = "bytes" in name
    item = (lambda s: s.encode()) if binary else (lambda s: s)
    big = [item(c * MIB) for c in "abcd"]
    small = [item(s) for s in ("e", "fé", "", "g" * 100)]
    a = zarrc.open_array(store, path="a")
    with zarrc.config.set(vlen_chunk_bytes=8 * MIB):
        a[:4] = np.array(big, dtype=object)
        a[4:] = np.array(small, dtype=object)
        assert list(a[...]) == big + small
    assert len(store.get(key)) < 64 * 1024
    with zarrc.config.set(vlen_chunk_bytes=MIB):
        assert list(a[4:]) == small
        with pytest.raises(CodecError, match=f"chunk {key} of /a: .*vlen_chunk_bytes") as info:
            a[...]
        assert str(MIB) in str(info.value), info.value
    assert list(zarrc.open_array(store, path="a", mode="r")[:4]) == big
    if name.startswith("v2"):           # (numcodecs decodes the same chunk alike)
        codec = numcodecs.get_codec(meta["a/.zarray"]["compressor"])
        vlen = numcodecs.get_codec(meta["a/.zarray"]["filters"][0])
        assert list(vlen.decode(codec.decode(store.get(key)))) == big
