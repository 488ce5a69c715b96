"""Sharding over a rectilinear grid between zarrc and zarr-python >= 3.2 (where
zarr-python allows it: regular inner chunks dividing every shard edge): read and
written through the sharded strategy over the whole grid (shards located by a
boundary search, ``ShardLevel.offsets``, and the BasicReader's ``shard_starts`` for
ints and slices of shard files; no regular part made), every selection
kind against what zarr-python reads and writes, partial writes, resize and append.
Skips with zarr-python 3.1, which has no rectilinear grid."""

from __future__ import annotations

import numpy as np
import pytest

import zarrc
from zarrc.engine.basic import BasicStrategy
from zarrc.engine.rectilinear import RectilinearStrategy
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
def _rectilinear_enabled(monkeypatch):
    def refuse(self, key):
        raise AssertionError(f"part {key} made: not read through the whole grid")
    monkeypatch.setattr(RectilinearStrategy, "part", refuse)
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
