"""Sharding over a rectilinear grid between zarrc and zarr-python >= 3.2 (where
zarr-python allows it: regular inner chunks dividing every shard edge): read and
written through the sharded strategy over the whole grid (shards located by a
boundary search, ``ShardLevel.offsets``, and the BasicReader's ``shard_starts`` for
ints and slices of shard files), every selection
kind against what zarr-python reads and writes, partial writes, resize and append;
nested sharding (sub-shards inside the rectilinear shards) alike.  Skips with
zarr-python 3.1, which has no rectilinear grid."""

from __future__ import annotations

import numpy as np
import pytest

import zarrc
from zarrc.engine.basic import BasicStrategy
from zarrc.engine.sharding.strategy import ShardedStrategy

zarr = pytest.importorskip("zarr")
if not hasattr(zarr.Array, "read_chunk_sizes"):
    pytest.skip(f"zarr-python {zarr.__version__} has no rectilinear chunk grids (3.2 added them)",
                allow_module_level=True)

SHAPE = (60, 48, 3)
LAYOUT = {"chunks": (4, 6, 3), "shards": [[8, 20, 4, 28], [12, 36], 3]}
CODECS = {"plain": {"compressors": None},
          "zstd": {"compressors": [{"name": "zstd", "configuration": {"level": 1}}],
                                "serializer": "auto"}}
REF = np.arange(np.prod(SHAPE), dtype="i4").reshape(SHAPE)


@pytest.fixture(autouse=True)
def _rectilinear_enabled():
    with zarr.config.set({"array.rectilinear_chunks": True}):
        yield


def _selections():
    rng = np.random.default_rng(3)
    pts = tuple(rng.integers(0, n, 50) for n in SHAPE)
    mask = rng.random(SHAPE) < 0.1
    rows = np.array([0, 7, 8, 27, 28, 31, 59])
    return [
        ("basic", np.s_[...], lambda a: a[...], lambda r: r),
        ("basic", np.s_[5:50:3, 11:40], lambda a: a[5:50:3, 11:40], lambda r: r[5:50:3, 11:40]),
        ("basic", np.s_[29, -1], lambda a: a[29, -1], lambda r: r[29, -1]),
        ("orthogonal", None, lambda a: a.oindex[rows, 3:45:4, [2, 0]], lambda r: r[np.ix_(rows, np.arange(3, 45, 4), [2, 0])]),
        ("coordinate", None, lambda a: a.vindex[pts], lambda r: r[pts]),
        ("mask", None, lambda a: a.vindex[mask], lambda r: r[mask]),
        ("block", None, lambda a: a.blocks[1:3, 1], lambda r: r[8:32, 12:48]),
    ]


def _zarr_python(path, codecs):
    return zarr.create_array(str(path), shape=SHAPE, dtype="i4", fill_value=-1, **LAYOUT, **CODECS[codecs])


def _zarrc(path, codecs):
    return zarrc.create_array(str(path), shape=SHAPE, dtype="i4", fill_value=-1, **LAYOUT, **CODECS[codecs])


@pytest.mark.parametrize("codecs", CODECS)
def test_zarr_python_writes_zarrc_reads_every_kind(tmp_path, codecs):
    z = _zarr_python(tmp_path, codecs)
    z[:] = REF
    z[:4, :6] = -1                      # an inner chunk left empty
    ref = REF.copy()
    ref[:4, :6] = -1
    a = zarrc.open_array(str(tmp_path))
    assert isinstance(a._engine, BasicStrategy) and isinstance(a._engine.fallback, ShardedStrategy)
    assert a.read_chunk_sizes == z.read_chunk_sizes and a.write_chunk_sizes == z.write_chunk_sizes
    for kind, _, read, want in _selections():
        np.testing.assert_array_equal(read(a), want(ref), err_msg=kind)
    m = zarrc.open_array(_files(tmp_path))
    for kind, _, read, want in _selections():       # (a store that is not files: byte ranges in memory)
        np.testing.assert_array_equal(read(m), want(ref), err_msg=kind)


CPS = ([2, 5, 1, 7], [2, 6], [1])      # inner chunks per shard, per dimension (LAYOUT)


def _inner_chunks(key, raw):
    """A shard's inner chunks' bytes, in index order (index at the end, crc32c)."""
    n = int(np.prod([c[int(i)] for c, i in zip(CPS, key.split("/")[1:])]))
    index = np.frombuffer(raw, "<u8", count=2 * n, offset=len(raw) - 16 * n - 4).reshape(n, 2)
    return [None if o == 2**64 - 1 else raw[o:o + m] for o, m in index.tolist()]


def _files(path):
    return {p.relative_to(path).as_posix(): p.read_bytes() for p in path.rglob("*") if p.is_file()}


@pytest.mark.parametrize("codecs", CODECS)
def test_zarrc_writes_zarr_python_reads_the_same_shards(tmp_path, codecs):
    """Whole writes give zarr-python's inner chunks byte for byte (its shards lay
    them out in Morton order, zarrc's in C order: the same index entries); partial
    writes of every kind leave what zarr-python's same writes leave."""
    z = _zarr_python(tmp_path / "z", codecs)
    a = _zarrc(tmp_path / "c", codecs)
    z[:] = REF
    a[:] = REF
    zf, cf = _files(tmp_path / "z"), _files(tmp_path / "c")
    assert sorted(zf) == sorted(cf)
    for key in zf:
        if key != "zarr.json":
            assert _inner_chunks(key, zf[key]) == _inner_chunks(key, cf[key]), key
    rng = np.random.default_rng(11)
    pts = tuple(rng.integers(0, n, 30) for n in SHAPE)
    writes = [
        lambda x: x.__setitem__(np.s_[3:30, 5:41:2], 7),
        lambda x: x.oindex.__setitem__((np.array([0, 8, 29, 55]), slice(None), [1]), 8),
        lambda x: x.vindex.__setitem__(pts, 9),
        lambda x: x.vindex.__setitem__(REF % 97 == 0, 10),
        lambda x: x.blocks.__setitem__((2, 0), 11),
        lambda x: x.__setitem__(np.s_[28:56, 12:], -1),          # whole shards (in the array) to fill
    ]
    for w in writes:
        w(z)
        w(a)
        np.testing.assert_array_equal(zarr.open_array(str(tmp_path / "c"))[...], z[...])
    np.testing.assert_array_equal(zarrc.open_array(str(tmp_path / "z"))[...], z[...])
    assert sorted(_files(tmp_path / "c")) == sorted(_files(tmp_path / "z"))     # (emptied shards deleted)


def test_resize_and_append_as_zarr_python(tmp_path):
    z = _zarr_python(tmp_path / "z", "plain")
    a = _zarrc(tmp_path / "c", "plain")
    for x in (z, a):
        x[:] = REF
        x.resize((30, 48, 3))           # cuts into a shard: its outside is cleared by the next writes
        x.append(np.full((12, 48, 3), 5, "i4"), axis=0)
        x[40:, :] = 6
        x.resize((42, 54, 3))
    assert a.write_chunk_sizes == z.write_chunk_sizes
    np.testing.assert_array_equal(zarrc.open_array(str(tmp_path / "c"))[...], z[...])
    np.testing.assert_array_equal(zarr.open_array(str(tmp_path / "c"))[...], zarrc.open_array(str(tmp_path / "z"))[...])


def test_a_damaged_index_entry_is_named_in_its_shard(tmp_path):
    a = _zarrc(tmp_path, "plain")
    a[:] = REF
    path = tmp_path / "c" / "1" / "1" / "0"          # shard (1, 1): 5 x 6 inner chunks
    raw = bytearray(path.read_bytes())
    n = 5 * 6
    index = np.frombuffer(raw, "<u8", count=2 * n, offset=len(raw) - 16 * n - 4).reshape(n, 2).copy()
    assert len(raw) == 16 * n + 4 + index[:, 1].sum()
    index[7, 0] = len(raw) * 4                        # inner chunk (1, 1, 0): past the shard's end
    body = index.tobytes()
    raw[-16 * n - 4:-4] = body
    from zarrc._kernels.crc32c import crc32c
    raw[-4:] = crc32c(body).to_bytes(4, "little")
    path.write_bytes(bytes(raw))
    b = zarrc.open_array(str(tmp_path))
    with pytest.raises(zarrc.errors.CodecError, match=r"c/1/1/0 .*inner chunk \(1, 1, 0\).*chunk \(3, 3, 0\)"):
        b[12:16, 18:24]
    np.testing.assert_array_equal(b[:8], REF[:8])


# ------------------------------------------------------------------ nested sharding
# shards on an irregular grid holding sub-shards of (4, 6) holding inner chunks of
# (2, 3): the sharded strategy over the whole grid too (no part made)
NESTED_SHAPE = (44, 48)
NESTED_EDGES = [[8, 12, 20, 4], [12, 6, 30]]
NESTED_REF = np.arange(np.prod(NESTED_SHAPE), dtype="i4").reshape(NESTED_SHAPE)


def _nested(lib, path):
    if lib is zarr:
        from zarr.codecs import BytesCodec, Crc32cCodec, ShardingCodec, ZstdCodec
        index = [BytesCodec(), Crc32cCodec()]
        serializer: object = ShardingCodec(chunk_shape=(4, 6), index_codecs=index, codecs=[ShardingCodec(
            chunk_shape=(2, 3), codecs=[BytesCodec(), ZstdCodec(level=1)], index_codecs=index)])
    else:
        le = {"name": "bytes", "configuration": {"endian": "little"}}

        def sharding(chunk, codecs):
            return {"name": "sharding_indexed", "configuration": {
                "chunk_shape": chunk, "codecs": codecs, "index_codecs": [le, {"name": "crc32c"}],
                "index_location": "end"}}
        serializer = sharding([4, 6], [sharding([2, 3], [le, {"name": "zstd", "configuration": {"level": 1}}])])
    return lib.create_array(str(path), shape=NESTED_SHAPE, chunks=NESTED_EDGES, dtype="i4", fill_value=-1,
                            compressors=None, serializer=serializer)


def _nested_selections():
    rng = np.random.default_rng(8)
    pts = tuple(rng.integers(0, n, 60) for n in NESTED_SHAPE)
    mask = rng.random(NESTED_SHAPE) < 0.1
    rows = np.array([0, 7, 8, 19, 20, 39, 40, 43])
    return [
        ("basic", lambda a: a[...], lambda r: r),
        ("basic", lambda a: a[3:41:3, 10:47], lambda r: r[3:41:3, 10:47]),
        ("basic", lambda a: a[21, -1], lambda r: r[21, -1]),
        ("orthogonal", lambda a: a.oindex[rows, 5:45:4], lambda r: r[np.ix_(rows, np.arange(5, 45, 4))]),
        ("coordinate", lambda a: a.vindex[pts], lambda r: r[pts]),
        ("mask", lambda a: a.vindex[mask], lambda r: r[mask]),
        ("block", lambda a: a.blocks[1:3, 1], lambda r: r[8:40, 12:18]),
    ]


def test_nested_zarr_python_writes_zarrc_reads_every_kind(tmp_path):
    z = _nested(zarr, tmp_path)
    z[:] = NESTED_REF
    z[8:12, 12:18] = -1                  # a sub-shard left empty
    ref = NESTED_REF.copy()
    ref[8:12, 12:18] = -1
    a = zarrc.open_array(str(tmp_path))
    assert type(a._engine) is ShardedStrategy and len(a._chunked.levels) == 2
    assert a.read_chunk_sizes == z.read_chunk_sizes and a.write_chunk_sizes == z.write_chunk_sizes
    assert a.nchunks_initialized == z.nchunks_initialized
    for kind, read, want in _nested_selections():
        np.testing.assert_array_equal(read(a), want(ref), err_msg=kind)


def test_nested_zarrc_writes_zarr_python_reads(tmp_path):
    z = _nested(zarr, tmp_path / "z")
    a = _nested(zarrc, tmp_path / "c")
    rng = np.random.default_rng(12)
    pts = tuple(rng.integers(0, n, 30) for n in NESTED_SHAPE)
    writes = [
        lambda x: x.__setitem__(Ellipsis, NESTED_REF),
        lambda x: x.__setitem__(np.s_[3:30, 5:41:2], 7),
        lambda x: x.oindex.__setitem__((np.array([0, 8, 29, 43]), slice(None)), 8),
        lambda x: x.vindex.__setitem__(pts, 9),
        lambda x: x.vindex.__setitem__(NESTED_REF % 97 == 0, 10),
        lambda x: x.blocks.__setitem__((2, 2), 11),
        lambda x: x.__setitem__(np.s_[8:20, :], -1),           # whole shards to fill
    ]
    for w in writes:
        w(z)
        w(a)
        np.testing.assert_array_equal(zarr.open_array(str(tmp_path / "c"))[...], z[...])
    assert sorted(_files(tmp_path / "c")) == sorted(_files(tmp_path / "z"))     # (emptied shards deleted)
    for x in (z, a):
        x.resize((30, 40))               # (zarr-python keeps the cut shards' outside: overwritten below)
        x.resize((44, 54))
        x[25:, :] = 3
        x[:, 35:] = 4
    np.testing.assert_array_equal(zarr.open_array(str(tmp_path / "c"))[...], z[...])
    np.testing.assert_array_equal(zarrc.open_array(str(tmp_path / "z"))[...], z[...])
