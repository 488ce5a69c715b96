"""Every codec against numcodecs: zarrc encodes and numcodecs decodes, and the other
way round, over parameters and dtypes/shapes; where encoding is deterministic the
bytes must be identical.

Identical bytes: blosc with numcodecs single-threaded, zstd where both link the same
zstd release, crc32c.  gzip and zlib are deflated by libdeflate here and by zlib in
numcodecs: each reads the other's.
"""


import numpy as np
import pytest

from zarrc._kernels import library_versions
from zarrc.codecs import Blosc, Crc32c, Gzip, Zlib, Zstd

numcodecs = pytest.importorskip("numcodecs")
# zstd releases differ in what some levels emit (1.5.7 vs 1.5.6: levels 0 and 3)
_v = numcodecs.zstd.VERSION_NUMBER
SAME_ZSTD = f"{_v // 10000}.{_v // 100 % 100}.{_v % 100}" == library_versions()["zstd"]

# lz4 1.10 changed what lz4hc levels 1 and 2 emit: numcodecs 0.13 (the newest for Python
# 3.10) has an older c-blosc and lz4, so there lz4hc is compared by decoding only
SAME_BLOSC = numcodecs.blosc.VERSION_STRING == library_versions()["blosc"]

SHUFFLES = {"noshuffle": 0, "shuffle": 1, "bitshuffle": 2}
try:  # numcodecs' Blosc takes typesize from 0.14 on; 0.13 (the newest for Python 3.10) does not
    numcodecs.Blosc(typesize=3)
    BLOSC_TYPESIZE = True
except TypeError:
    BLOSC_TYPESIZE = False
# gzip and zlib: we deflate with libdeflate, numcodecs with Python's zlib module, so
# each must read the other's streams, but the bytes differ


def as_bytes(buf):
    return memoryview(np.ascontiguousarray(buf)).cast("B").tobytes() if not isinstance(buf, bytes) else buf


def check_both_ways(ours, theirs, a, same_bytes=True, mask=None, label=""):
    label = f"{ours!r} on {label or (a.dtype, a.shape)}"
    raw = a.tobytes(order="A")
    enc_ours = ours.encode(a)
    enc_theirs = as_bytes(theirs.encode(a))
    # numcodecs 0.16.6's blosc and zstd cannot decode an empty frame, even their own
    if a.size or not isinstance(theirs, (numcodecs.Blosc, numcodecs.Zstd)):
        assert as_bytes(theirs.decode(enc_ours)) == raw, label
    assert bytes(ours.decode(enc_theirs)) == raw, label
    out = np.empty_like(a)
    ours.decode(enc_theirs, out=out)
    np.testing.assert_array_equal(out, a, err_msg=label)
    if same_bytes:
        if mask is not None:
            enc_ours, enc_theirs = mask(enc_ours), mask(enc_theirs)
        assert enc_ours == enc_theirs, label


@pytest.mark.parametrize("cname", ["lz4", "lz4hc", "blosclz", "zstd", "zlib"])
@pytest.mark.parametrize("clevel", [0, 1, 5, 9])
@pytest.mark.parametrize("shuffle", list(SHUFFLES))
def test_blosc(cname, clevel, shuffle, arrays, numcodecs_single_threaded):
    for blocksize in (0, 256, 4096):
        for typesize in (None, 3) if BLOSC_TYPESIZE else (None,):
            ours = Blosc(cname, clevel, shuffle, typesize=typesize, blocksize=blocksize)
            theirs = numcodecs.Blosc(cname, clevel, SHUFFLES[shuffle], blocksize=blocksize,
                                     **({"typesize": typesize} if BLOSC_TYPESIZE else {}))
            assert ours.get_config() == {k: v for k, v in theirs.get_config().items() if k != "typesize"}
            for a in arrays.values():
                check_both_ways(ours, theirs, a, same_bytes=SAME_BLOSC or cname != "lz4hc")


def test_blosc_threaded_numcodecs_decodes_equal():
    # numcodecs with threads: block order may differ, decoded data may not
    import numcodecs.blosc
    a = np.tile(np.arange(1 << 15, dtype="<f8"), 16)          # 4 MiB
    old = numcodecs.blosc.use_threads
    numcodecs.blosc.use_threads = True
    try:
        for cname in ("lz4", "zstd"):
            check_both_ways(Blosc(cname, 5, "shuffle", blocksize=1 << 16),
                            numcodecs.Blosc(cname, 5, 1, blocksize=1 << 16), a, same_bytes=False)
    finally:
        numcodecs.blosc.use_threads = old


@pytest.mark.parametrize("level", [-131072, -5, -1, 0, 1, 3, 9, 19, 22])
@pytest.mark.parametrize("checksum", [False, True])
def test_zstd(level, checksum, arrays):
    ours, theirs = Zstd(level, checksum), numcodecs.Zstd(level=level, checksum=checksum)
    assert ours.get_config() == theirs.get_config()
    for a in arrays.values():
        check_both_ways(ours, theirs, a, same_bytes=SAME_ZSTD)


@pytest.mark.parametrize("level", range(10))
def test_gzip(level, arrays):
    ours, theirs = Gzip(level), numcodecs.GZip(level)
    assert ours.get_config() == theirs.get_config()
    for a in arrays.values():
        check_both_ways(ours, theirs, a, same_bytes=False)
        assert ours.encode(a)[4:8] == bytes(4)


@pytest.mark.parametrize("level", range(10))
def test_zlib(level, arrays):
    ours, theirs = Zlib(level), numcodecs.Zlib(level)
    assert ours.get_config() == theirs.get_config()
    for a in arrays.values():
        check_both_ways(ours, theirs, a, same_bytes=False)


def test_crc32c(arrays, numcodecs_crc32c):
    theirs = numcodecs_crc32c
    ours = Crc32c()
    assert ours.get_config() == theirs.get_config()
    for a in arrays.values():
        check_both_ways(ours, theirs, a)
    check_both_ways(ours, theirs, np.asfortranarray(np.arange(600, dtype="<i4").reshape(20, 30)))


def test_fortran_ordered_arrays(numcodecs_single_threaded):
    a = np.asfortranarray(np.arange(600, dtype="<i4").reshape(20, 30))
    for ours, theirs in [(Blosc("lz4", 5, "shuffle"), numcodecs.Blosc("lz4", 5, 1)),
                         (Zstd(3), numcodecs.Zstd(3)), (Zlib(5), numcodecs.Zlib(5)),
                         (Gzip(5), numcodecs.GZip(5))]:
        check_both_ways(ours, theirs, a, same_bytes=not isinstance(ours, (Gzip, Zlib)))
