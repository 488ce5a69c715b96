"""kerchunk JSON references written as Parquet references (``reference_parquet_write``,
``zarrc convert --references``): read back by zarrc's ReferenceStore and by fsspec's
ReferenceFileSystem, and compared row by row with what ``kerchunk.df.refs_to_dataframe``
writes from the same references."""

from __future__ import annotations

import base64
import json
import math
import subprocess
import sys

import numpy as np
import pytest
from stores.test_reference import DATA, check_hierarchy, hdf5, translate  # noqa: F401  (hdf5: fixture)

from zarrc.errors import ArgumentError, MetadataError
from zarrc.stores.local import LocalStore
from zarrc.stores.reference import ReferenceStore
from zarrc.stores.reference_parquet_write import write_parquet_references
from zarrc.stores.reference_spec import ReferenceSet

pq = pytest.importorskip("pyarrow.parquet")

# kerchunk writes Parquet through pandas' fastparquet engine, which pandas 3 deprecates
pytestmark = [pytest.mark.filterwarnings("ignore:The .fastparquet. engine is deprecated"),
              pytest.mark.filterwarnings("ignore:The .future.infer_string. option is deprecated")]


def convert(refs: dict, out, record_size: int) -> tuple[int, int]:
    return write_parquet_references(ReferenceSet(refs, "test refs"), LocalStore(str(out)), record_size)


def same_keys(a: ReferenceStore, b: ReferenceStore) -> list[str]:
    """Every chunk key of ``a`` holds the same bytes in ``b``, every metadata key the
    same JSON; returns the chunk keys."""
    keys = sorted(k for k in a.list_prefix("") if k != ".zmetadata")
    assert keys == sorted(k for k in b.list_prefix("") if k != ".zmetadata")
    meta = [k for k in keys if k.rpartition("/")[2].startswith(".z")]
    assert [json.loads(v) for v in a.get_many(meta)] == [json.loads(v) for v in b.get_many(meta)]
    chunks = [k for k in keys if k not in meta]
    assert chunks and a.get_many(chunks) == b.get_many(chunks)
    return chunks


def columns(path) -> dict[str, list]:
    table = pq.read_table(str(path))
    out = {}
    for name in ("path", "offset", "size", "raw"):
        values = table.column(name).to_pylist()
        out[name] = [None if isinstance(v, float) and math.isnan(v) else v for v in values]
    return out


def test_kerchunk_json_to_parquet(hdf5, tmp_path):  # noqa: F811
    d, data = hdf5
    refs = translate(str(d / "f.h5"))
    out = tmp_path / "refs.parq"
    arrays, count = convert(refs, out, 5)
    chunks = [k for k in refs["refs"] if not k.rpartition("/")[2].startswith(".z")]
    assert (arrays, count) == (4, len(chunks))
    parquet = ReferenceStore(str(out))
    check_hierarchy(parquet, data)
    keys = same_keys(ReferenceStore(refs), parquet)
    # fsspec's own reader of the layout, over the same files
    fsspec = pytest.importorskip("fsspec")
    pytest.importorskip("fastparquet")
    fs = fsspec.filesystem("reference", fo=str(out), remote_protocol="file")
    for key in keys:
        assert fs.cat(key) == ReferenceStore(refs).get(key), key


def test_the_layout_is_kerchunks(hdf5, tmp_path):  # noqa: F811
    """Row for row what kerchunk.df.refs_to_dataframe writes (its files are padded to
    the record size with empty rows; ours end at the grid's last chunk)."""
    pytest.importorskip("fastparquet")
    df = pytest.importorskip("kerchunk.df")
    d, _ = hdf5
    refs = translate(str(d / "f.h5"))
    ours, theirs = tmp_path / "ours", tmp_path / "theirs"
    convert(refs, ours, 4)
    df.refs_to_dataframe(refs, str(theirs), record_size=4)
    mine, kerchunks = json.loads((ours / ".zmetadata").read_text()), json.loads((theirs / ".zmetadata").read_text())
    assert mine == kerchunks
    files = sorted(p.relative_to(theirs) for p in theirs.rglob("*.parq"))
    assert files == sorted(p.relative_to(ours) for p in ours.rglob("*.parq"))
    for name in files:
        a, b = columns(ours / name), columns(theirs / name)
        n = len(a["path"])
        assert {k: v[:n] for k, v in b.items()} == a, name
        assert all(p is None and r is None for p, r in zip(b["path"][n:], b["raw"][n:]))


def test_templates_gen_inline_records_and_separators(tmp_path):
    (tmp_path / "data.bin").write_bytes(DATA)
    zarray = {"zarr_format": 2, "shape": [6, 4], "chunks": [2, 2], "dtype": "|u1", "compressor": None,
              "filters": None, "fill_value": 0, "order": "C"}
    refs = {
        "version": 1,
        "templates": {"u": str(tmp_path / "data.bin")},
        "refs": {
            ".zgroup": {"zarr_format": 2},
            "a/.zarray": json.dumps(zarray),
            "a/.zattrs": {"units": "m"},
            "a/0.0": ["{{u}}", 0, 4],
            "a/2.1": "base64:" + base64.b64encode(bytes([9, 8, 7, 6])).decode(),
            "a/1.0": "inline",
            "s/.zarray": {**zarray, "dimension_separator": "/"},
            "s/2/1": ["{{u}}"],          # a whole file
        },
        "gen": [{"key": "g/{{i}}.{{j}}", "url": "{{u}}", "offset": "{{(i * 2 + j) * 4}}", "length": "4",
                 "dimensions": {"i": {"stop": 3}, "j": [0, 1]}}],
    }
    refs["refs"]["g/.zarray"] = refs["refs"]["a/.zarray"]
    out = tmp_path / "refs.parq"
    assert convert(refs, out, 4) == (3, 3 + 1 + 6)
    assert sorted(p.name for p in (out / "a").iterdir()) == ["refs.0.parq", "refs.1.parq"]
    assert sorted(p.name for p in (out / "s").iterdir()) == ["refs.1.parq"]   # (record 0: no reference)
    assert columns(out / "a" / "refs.1.parq") == {      # chunks 4 and 5: (2, 0), (2, 1)
        "path": [None, None], "offset": [0, 0], "size": [0, 0], "raw": [None, bytes([9, 8, 7, 6])]}
    parquet = ReferenceStore(str(out))
    same_keys(ReferenceStore(refs), parquet)
    assert parquet.get("s/2/1") == DATA and parquet.get("g/2.1") == DATA[20:24]
    assert json.loads(parquet.get("a/.zattrs")) == {"units": "m"}
    import zarrc

    np.testing.assert_array_equal(zarrc.open_array(parquet, path="g", mode="r")[...],
                                  np.frombuffer(DATA[:24], "u1").reshape(3, 2, 2, 2).transpose(0, 2, 1, 3)
                                  .reshape(6, 4))


@pytest.mark.parametrize(("refs", "match"), [
    ({".zgroup": {"zarr_format": 2}, "zarr.json": {"zarr_format": 3}}, "'zarr.json' is Zarr v3 metadata"),
    ({".zgroup": {"zarr_format": 2}, "b/0": ["x", 0, 1]}, "'b/0' is neither a metadata document nor a chunk"),
    ({"a/.zarray": {"shape": [2], "chunks": [1]}, "a/5": ["x", 0, 1]}, "'a/5' is neither"),
    ({"a/.zarray": {"shape": [2], "chunks": [1]}, "a/0": [None, 0, 1]}, "'a/0' refers to the default target"),
    ({"a/.zattrs": "not json"}, "'a/.zattrs' is not a JSON document"),
    ({".zarray": {"shape": [2], "chunks": [1]}}, "the root is an array"),
])
def test_what_the_layout_cannot_hold(tmp_path, refs, match):
    with pytest.raises(MetadataError, match=match):
        convert(refs, tmp_path / "out", 10)
    assert not (tmp_path / "out" / ".zmetadata").exists()
    with pytest.raises(ArgumentError, match="record_size"):
        convert({}, tmp_path / "out", 0)


def test_the_command(hdf5, tmp_path):  # noqa: F811
    d, data = hdf5
    src = tmp_path / "refs.json"
    src.write_text(json.dumps(translate(str(d / "f.h5"))))

    def zarrc_cli(*args):
        return subprocess.run([sys.executable, "-m", "zarrc", *map(str, args)], capture_output=True, text=True,
                              timeout=120, check=False)

    proc = zarrc_cli("convert", src, tmp_path / "out", "--references", "--record-size", "7")
    assert proc.returncode == 0 and "as Parquet references (7 per record file)" in proc.stdout, proc.stderr
    check_hierarchy(ReferenceStore(str(tmp_path / "out")), data)
    tree = zarrc_cli("tree", tmp_path / "out")          # the directory opens as references
    assert tree.returncode == 0 and "elevation (40, 30, 7) int32" in tree.stdout, tree.stderr
    listed = zarrc_cli("ls", (tmp_path / "out").as_uri())
    assert listed.returncode == 0 and listed.stdout.split() == ["counts", "flags", "grid/", "temperature"]
    again = zarrc_cli("convert", src, tmp_path / "out", "--references")
    assert again.returncode == 2 and "--overwrite" in again.stderr and "Traceback" not in again.stderr
    assert zarrc_cli("convert", src, tmp_path / "out", "--references", "--overwrite", "-q").returncode == 0
    assert json.loads((tmp_path / "out" / ".zmetadata").read_text())["record_size"] == 100_000
