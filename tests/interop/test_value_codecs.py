"""Arrays with scale_offset / cast_value (and bitround, zfp) between zarrc and
zarr-python 3.4, which writes scale_offset and cast_value: what it writes reads
identically in zarrc, what zarrc writes has the same metadata and byte-identical
chunks (these codecs are deterministic), unsharded and inside a sharding codec.
zarr-python 3.1 (the 3.11 test venv) has neither codec: these tests skip there."""

from __future__ import annotations

import json
import pathlib

import numpy as np
import pytest
import values_peer
from interop.support import assert_bit_equal

import zarrc
from zarrc.engine.python import PythonStrategy

pytestmark = pytest.mark.skipif(values_peer.REASON is not None, reason=values_peer.REASON or "")


def data(shape=(70, 45), seed=0) -> np.ndarray:
    rng = np.random.default_rng(seed)
    return (rng.normal(size=shape) * 10 + 270).astype("float32")


def filters(lib, dtype="int16"):
    """[scale_offset, cast_value] as ``lib`` (zarr or zarrc) builds them."""
    codecs = lib.codecs
    return [codecs.ScaleOffset(offset=270, scale=100),
            codecs.CastValue(data_type=dtype, out_of_range="clamp", rounding="nearest-away")]


CASES = {
    "float32-int16": dict(dtype="float32", fill_value=0),
    "float64-uint8-nan": dict(dtype="float64", fill_value="NaN"),
    "sharded": dict(dtype="float32", fill_value=0, shards=(40, 40)),
    "transposed-big-endian": dict(dtype="float32", fill_value=1.5),
}


def make(lib, path, case, arr):
    opts = dict(CASES[case])
    dtype = opts.pop("dtype")
    if case == "float64-uint8-nan":
        codecs = lib.codecs
        flt = [codecs.ScaleOffset(offset=-10, scale=0.1),
               codecs.CastValue(data_type="uint8", rounding="nearest-even",
                                scalar_map={"encode": [["NaN", 0]], "decode": [[0, "NaN"]]})]
        arr = np.clip(arr.astype("float64") - 260, 0, 2540)
        arr[::7, ::5] = np.nan
    elif case == "transposed-big-endian":
        flt = [lib.codecs.TransposeCodec(order=(1, 0)), *filters(lib)]
        opts["serializer"] = lib.codecs.BytesCodec(endian="big")
    else:
        flt = filters(lib)
    z = lib.create_array(str(path), shape=arr.shape, chunks=(20, 20), dtype=dtype, filters=flt,
                         compressors=[{"name": "zstd", "configuration": {"level": 3, "checksum": False}}], **opts)
    z[...] = arr
    return z


def chunk_files(root: pathlib.Path) -> dict[str, bytes]:
    return {str(p.relative_to(root)): p.read_bytes() for p in sorted((root / "c").rglob("*")) if p.is_file()}


def inner_chunks(shard: bytes, n: int = 4) -> list[bytes | None]:
    """The inner chunks' bytes of a shard of ``n`` inner chunks, index at the end with
    its crc32c, in chunk order (None: empty)."""
    index = np.frombuffer(shard[-(16 * n + 4):-4], "<u8").reshape(n, 2)
    return [None if off == 2**64 - 1 else shard[off:off + size] for off, size in index.tolist()]


@pytest.mark.parametrize("kind", sorted(CASES))
def test_zarr_python_writes_zarrc_reads(tmp_path, kind):
    case = kind
    zarr = values_peer.zarr
    theirs = make(zarr, tmp_path / "zp", case, data())
    mine = zarrc.open_array(str(tmp_path / "zp"))
    assert not isinstance(mine._engine, PythonStrategy)      # the kernels' Chain runs the codecs
    assert_bit_equal(mine[...], theirs[...], case)
    assert_bit_equal(mine[5:33, 7:41], theirs[5:33, 7:41], case)


@pytest.mark.parametrize("kind", sorted(CASES))
def test_zarrc_writes_the_same_bytes(tmp_path, kind):
    case = kind
    zarr = values_peer.zarr
    make(zarr, tmp_path / "zp", case, data())
    make(zarrc, tmp_path / "zc", case, data())
    assert json.loads((tmp_path / "zc/zarr.json").read_text()) == json.loads((tmp_path / "zp/zarr.json").read_text())
    mine, theirs = chunk_files(tmp_path / "zc"), chunk_files(tmp_path / "zp")
    if "shards" in CASES[case]:
        # zarr-python 3.4 lays a shard's inner chunks out in Morton order, zarrc in C
        # order: the same inner chunks' bytes, in another order (and so another index)
        mine, theirs = ({k: inner_chunks(v) for k, v in files.items()} for files in (mine, theirs))
    assert mine == theirs
    assert_bit_equal(zarr.open_array(str(tmp_path / "zc"))[...], zarrc.open_array(str(tmp_path / "zc"))[...])


def test_zarr_python_codec_objects_are_accepted(tmp_path):
    zarr = values_peer.zarr
    z = zarrc.create_array(str(tmp_path / "a"), shape=(30,), chunks=(10,), dtype="float32", filters=filters(zarr))
    z[...] = np.linspace(260, 280, 30, dtype="float32")
    assert_bit_equal(zarr.open_array(str(tmp_path / "a"))[...], z[...])



def test_partial_writes_and_missing_chunks(tmp_path):
    zarr = values_peer.zarr
    arr = data()
    for lib, name in ((zarr, "zp"), (zarrc, "zc")):
        z = make(lib, tmp_path / name, "float32-int16", arr)
        z[3:17, 30:44] = 300.0              # partial chunk writes: read, modify, write
        z[60:, :] = 0                       # chunks equal to the fill value: not stored
    mine, theirs = chunk_files(tmp_path / "zc"), chunk_files(tmp_path / "zp")
    assert mine == theirs
    assert_bit_equal(zarrc.open_array(str(tmp_path / "zp"))[...], zarr.open_array(str(tmp_path / "zp"))[...])
