"""ReferenceStore: kerchunk references (JSON v0 / v1, Parquet) over local files and HTTP.

Hand-written reference sets over files of known bytes; kerchunk's own output for an
HDF5 file written by h5py, read through zarrc and compared with h5py's read; targets
served by a real HTTP server on 127.0.0.1 honouring byte ranges.
"""

from __future__ import annotations

import base64
import gzip
import importlib.util
import json
import pickle
import threading
from pathlib import Path

import numpy as np
import pytest
from stores.reference_support import write_hdf5
from stores.servers import http_server  # noqa: F401  (fixture)
from stores.test_conformance import KEYS, RANGE_CASES

import zarrc
from zarrc.errors import ArgumentError, MetadataError, ReadOnlyError, StoreError, StoreNotFoundError
from zarrc.stores.reference import ReferenceStore, open_reference_store

# kerchunk writes Parquet through pandas' fastparquet engine, which pandas 3 deprecates
pytestmark = [pytest.mark.filterwarnings("ignore:The .fastparquet. engine is deprecated"),
              pytest.mark.filterwarnings("ignore:The .future.infer_string. option is deprecated")]

DATA = bytes(range(256)) * 40  # data.bin: 10240 bytes, byte i is i % 256
OTHER = b"other file contents"


@pytest.fixture
def files(tmp_path):
    (tmp_path / "data.bin").write_bytes(DATA)
    (tmp_path / "other.bin").write_bytes(OTHER)
    return tmp_path


def v0_refs(d):
    return {
        ".zgroup": {"zarr_format": 2},                          # a JSON object, serialised back
        "a/text": "héllo text",                                 # inline text: UTF-8
        "a/b64": "base64:" + base64.b64encode(b"\x00\xff\x01").decode(),
        "a/range": [str(d / "data.bin"), 100, 50],
        "a/whole": [str(d / "other.bin")],
        "a/sub/url": ["file://" + str(d / "data.bin"), 300, 7],
    }


def test_v0_get_size_list(files):
    store = ReferenceStore(v0_refs(files))
    assert json.loads(store.get(".zgroup")) == {"zarr_format": 2}
    assert store.get("a/text") == "héllo text".encode()
    assert store.get("a/b64") == b"\x00\xff\x01"
    assert store.get("a/range") == DATA[100:150]
    assert store.get("a/whole") == OTHER
    assert store.get("a/sub/url") == DATA[300:307]
    assert store.get("a/missing") is None and store.get("a") is None
    assert store.get_range("a/range", 10, 5) == DATA[110:115]
    assert store.get_range("a/range", -3) == DATA[147:150]
    assert store.get_range("a/range", 45, 100) == DATA[145:150]      # clipped at the reference's end
    assert store.get_range("a/whole", 6) == OTHER[6:]
    assert store.get_range("a/text", 1, 3) == "héllo text".encode()[1:4]
    assert store.get_ranges("a/range", [(0, 2), (48, None), (-1, None)]) == [DATA[100:102], DATA[148:150],
                                                                          DATA[149:150]]
    assert [store.size(k) for k in ("a/range", "a/whole", "a/b64", "nope")] == [50, len(OTHER), 3, None]
    assert store.exists("a/range") and not store.exists("a/nope")
    assert store.list_dir("") == ([".zgroup"], ["a"])
    assert store.list_dir("a") == (["b64", "range", "text", "whole"], ["sub"])
    assert store.list_dir("a/sub/") == (["url"], [])
    assert list(store.list_prefix("a/s")) == ["a/sub/url"]
    assert store.get_many(["a/range", "nope", "a/b64", "a/whole"]) == [DATA[100:150], None, b"\x00\xff\x01",
                                                                      OTHER]
    assert store.local_path("a/range") is None and store.file_prefix("a/") is None


def test_v1_templates_and_gen(files):
    refs = {
        "version": 1,
        "templates": {"d": str(files), "f": "{{name}}.bin"},
        "gen": [{
            "key": "g/{{i}}.{{j}}",
            "url": "{{d}}/data.bin",
            "offset": "{{(i * 2 + j) * 16 + 1}}",
            "length": "16",
            "dimensions": {"i": {"stop": 3}, "j": [0, 1]},
        }, {
            "key": "w/{{k}}", "url": "{{d}}/other.bin", "dimensions": {"k": {"start": 2, "stop": 7, "step": 2}},
        }],
        "refs": {
            "k1": "inline",
            "k2": ["{{d}}/data.bin", 5, 4],
            "k3": ["{{d}}/{{f(name='other')}}", 0, 5],
        },
    }
    store = ReferenceStore(refs)
    assert store.get("k1") == b"inline"
    assert store.get("k2") == DATA[5:9]
    assert store.get("k3") == OTHER[:5]
    for i in range(3):
        for j in (0, 1):
            start = (i * 2 + j) * 16 + 1
            assert store.get(f"g/{i}.{j}") == DATA[start:start + 16]
    assert store.list_dir("g/") == (["0.0", "0.1", "1.0", "1.1", "2.0", "2.1"], [])
    assert store.list_dir("w") == (["2", "4", "6"], [])
    assert store.get("w/4") == OTHER
    overridden = ReferenceStore(refs, template_overrides={"f": "data.bin"})
    assert overridden.get("k3") == DATA[:5]


@pytest.mark.parametrize("refs, match", [
    ({"version": 1, "templates": {"u": "x"}, "refs": {"k": ["{{u | upper}}", 0, 1]}}, "unsupported expression"),
    ({"version": 1, "refs": {"k": ["{{nope}}/x", 0, 1]}}, "unknown name 'nope'"),
    ({"version": 1, "gen": [{"key": "a/{{i}}", "url": "u", "offset": "1", "dimensions": {"i": [1]}}]},
     "offset"),
    ({"version": 1, "gen": [{"key": "a/{{i}}", "url": "u", "dimensions": {"i": {"start": 1}}}]}, "dimension 'i'"),
    ({"version": 2, "refs": {}}, "unknown reference spec version 2"),
    ({"k": ["u", 1]}, r"key 'k': a reference is \[url\]"),
    ({"k": ["u", -1, 3]}, "offset must be a non-negative integer"),
    ({"k": 5}, "key 'k'"),
    ({"k": "base64:@@@"}, "invalid base64"),
    ({"../x": "v"}, r"reference key '\.\./x' is not a valid store key"),
])
def test_malformed_reference_sets(refs, match):
    with pytest.raises(MetadataError, match=match):
        ReferenceStore(refs)


def test_arrays_v2_and_v3_from_hand_written_references(files):
    data = np.arange(40, dtype="<i4").reshape(4, 10)
    raw = files / "raw.bin"
    # chunks of (2, 5) written one after the other, with a 3-byte header before them
    chunks = {(i, j): data[i * 2:i * 2 + 2, j * 5:j * 5 + 5].tobytes() for i in range(2) for j in range(2)}
    blob, refs2, refs3, pos = b"HDR", {}, {}, 3
    for (i, j), chunk in chunks.items():
        if (i, j) != (1, 1):  # the last chunk is missing: fill value
            refs2[f"x/{i}.{j}"] = [str(raw), pos, len(chunk)]
            refs3[f"y/c/{i}/{j}"] = ["{{r}}", pos, len(chunk)]
        blob += chunk
        pos += len(chunk)
    raw.write_bytes(blob)
    refs2[".zgroup"] = {"zarr_format": 2}
    refs2["x/.zarray"] = {"zarr_format": 2, "shape": [4, 10], "chunks": [2, 5], "dtype": "<i4",
                          "compressor": None, "fill_value": -1, "order": "C", "filters": None}
    refs3["zarr.json"] = json.dumps({"zarr_format": 3, "node_type": "group"})
    refs3["y/zarr.json"] = {"zarr_format": 3, "node_type": "array", "shape": [4, 10], "data_type": "int32",
                            "chunk_grid": {"name": "regular", "configuration": {"chunk_shape": [2, 5]}},
                            "chunk_key_encoding": {"name": "default"}, "fill_value": -1,
                            "codecs": [{"name": "bytes", "configuration": {"endian": "little"}}]}
    expected = data.copy()
    expected[2:, 5:] = -1
    assert np.array_equal(zarrc.open_array(ReferenceStore(refs2), path="x", mode="r")[...], expected)
    v3 = ReferenceStore({"version": 1, "templates": {"r": str(raw)}, "refs": refs3})
    assert list(zarrc.open_group(v3, mode="r").array_keys()) == ["y"]
    assert np.array_equal(zarrc.open_array(v3, path="y", mode="r")[1:3, 3:8], expected[1:3, 3:8])


def test_snapshot(files):
    store = ReferenceStore(v0_refs(files))
    with store.snapshot("a/range") as snap:
        assert snap.size == 50 and snap.read(2, 3) == DATA[102:105]
        assert snap.token is not None and snap.token == store.snapshot("a/range").token
        with pytest.raises(StoreError):
            snap.read(49, 2)
    assert store.snapshot("a/b64").read(1, 2) == b"\xff\x01"
    assert store.snapshot("nope") is None
    store.close()


def test_errors_name_key_target_and_range(files):
    refs = {"gone": [str(files / "missing.bin"), 0, 10], "long": [str(files / "other.bin"), 10, 100]}
    store = ReferenceStore(refs)
    with pytest.raises(StoreError, match=r"'gone'.*missing\.bin.*\[0, 10\)"):
        store.get("gone")
    with pytest.raises(StoreError, match=r"'long'.*other\.bin.*\[10, 110\).*past the end"):
        store.get("long")
    with pytest.raises(StoreError, match="past the end"):
        store.get_range("long", 0, 2)  # the reference as a whole lies past the end
    with pytest.raises(StoreError, match="'long'"):
        store.snapshot("long")
    with pytest.raises(StoreError, match="escapes the store root"):
        store.get("../x")
    with pytest.raises(StoreError, match="escapes the store root"):
        store.list_dir("../x/")
    bad = files / "bad.json"
    bad.write_text('{"a": ["x", 0, ')
    with pytest.raises(MetadataError, match=r"bad\.json.*not valid JSON"):
        ReferenceStore(str(bad))
    with pytest.raises(StoreNotFoundError, match="nothing.json"):
        ReferenceStore(str(files / "nothing.json"))


def test_read_only_and_open_reference_store(files):
    path = files / "refs.json.gz"
    path.write_bytes(gzip.compress(json.dumps(v0_refs(files)).encode()))
    store = open_reference_store("reference://", "r", {"fo": str(path), "remote_protocol": "file",
                                                       "max_gap": 0})
    assert store.get("a/range") == DATA[100:150]
    assert open_reference_store(str(path)).get("a/whole") == OTHER
    for call in (lambda: store.set("k", b"x"), lambda: store.delete("a/range"),
                 lambda: store.set_many({"k": b"x"}), lambda: store.delete_prefix("a/")):
        with pytest.raises(ReadOnlyError, match="read-only"):
            call()
    with pytest.raises(ReadOnlyError):
        ReferenceStore(str(path), mode="a")
    with pytest.raises(ReadOnlyError):
        open_reference_store("reference://", "w", {"fo": str(path)})
    with pytest.raises(ArgumentError, match="fo"):
        open_reference_store("reference://", "r", {})
    with pytest.raises(ArgumentError, match="bogus"):
        open_reference_store(str(path), "r", {"bogus": 1})


def test_pickles_to_its_description(files):
    path = files / "refs.json"
    path.write_text(json.dumps(v0_refs(files)))
    for store in (ReferenceStore(str(path), remote_options={"x": 1}), ReferenceStore(v0_refs(files))):
        store.get("a/range")  # (a descriptor is open: not pickled)
        blob = pickle.dumps(store)
        clone = pickle.loads(blob)
        assert clone == store and hash(clone) == hash(store)
        assert clone.get_many(["a/range", "a/whole"]) == [DATA[100:150], OTHER]
    assert DATA[100:150] not in pickle.dumps(ReferenceStore(str(path)))


def test_descriptor_cache_under_threads(tmp_path):
    refs = {}
    for f in range(6):
        (tmp_path / f"t{f}.bin").write_bytes(bytes([f]) * 1000 + DATA)
        for k in range(20):
            refs[f"t{f}/{k}"] = [str(tmp_path / f"t{f}.bin"), 1000 + k * 50, 50]
    store = ReferenceStore(refs, max_open_files=2)
    errors = []

    def work(seed):
        rng = np.random.default_rng(seed)
        for _ in range(200):
            f, k = int(rng.integers(6)), int(rng.integers(20))
            if store.get(f"t{f}/{k}") != DATA[k * 50:k * 50 + 50]:
                errors.append((f, k))
        keys = [f"t{f}/{k}" for f in range(6) for k in range(0, 20, 3)]
        if store.get_many(keys) != [DATA[k * 50:k * 50 + 50] for f in range(6) for k in range(0, 20, 3)]:
            errors.append("many")

    threads = [threading.Thread(target=work, args=(s,)) for s in range(4)]
    for t in threads:
        t.start()
    for t in threads:
        t.join()
    assert errors == []
    assert len(store.targets.local._open) <= 2


def test_many_keys_list_fast(files):
    refs = {"version": 1, "gen": [{"key": "v/{{i}}.{{j}}", "url": str(files / "data.bin"), "offset": "{{j}}",
                                   "length": "1", "dimensions": {"i": {"stop": 400}, "j": {"stop": 250}}}]}
    store = ReferenceStore(refs)
    keys, dirs = store.list_dir("v/")
    assert len(keys) == 100_000 and dirs == [] and keys[0] == "0.0"
    assert store.list_dir("") == ([], ["v"])
    assert sum(1 for _ in store.list_prefix("v/39")) == 11 * 250
    assert store.get("v/7.201") == DATA[201:202]


# -- the conformance checks that apply to a read-only store ---------------------------


@pytest.fixture
def conformance_store(tmp_path):
    big = np.random.default_rng(0).integers(0, 256, 3_000_000, dtype="u1").tobytes()
    target = tmp_path / "target.bin"
    target.write_bytes(b"0123456789" + big + b"".join(KEYS.values()))
    refs = {"r/k": [str(target), 0, 10], "big": [str(target), 10, len(big)]}
    pos = 10 + len(big)
    for i, (key, value) in enumerate(KEYS.items()):  # alternately inline and referenced
        refs[key] = ("base64:" + base64.b64encode(value).decode()) if i % 2 else [str(target), pos, len(value)]
        pos += len(value)
    return ReferenceStore(refs), big


def test_conformance_reads(conformance_store):
    store, big = conformance_store
    for key, value in KEYS.items():
        assert store.get(key) == value and type(store.get(key)) is bytes
    assert store.get_many(list(KEYS) + ["missing"]) == list(KEYS.values()) + [None]
    assert store.get_many([]) == []
    assert sorted(store.list()) == sorted([*KEYS, "r/k", "big"])
    assert sorted(store.list_prefix("a")) == ["a/c/0/0", "a/c/0/1", "a/c/1/0", "a/zarr.json", "ab/.zarray"]
    assert store.list_dir("a/c/") == ([], ["0", "1"]) and store.list_dir("b/x/") == ([], [])
    assert store.list_dir("") == (["big", "zarr.json"], ["a", "ab", "b", "r"])
    for start, length, expected in RANGE_CASES:
        assert store.get_range("r/k", start, length) == expected
        assert store.get_range("r/missing", start, length) is None
    assert store.get_ranges("r/k", [(s, n) for s, n, _ in RANGE_CASES]) == [e for _, _, e in RANGE_CASES]
    assert store.get_ranges("r/k", []) == [] and store.get_ranges("r/missing", [(0, 1)]) is None
    assert store.get_range("big", 1_000_001, 77) == big[1_000_001:1_000_078]
    assert store.get_range("big", -5) == big[-5:] and store.get("big") == big
    for start, length in [(-3, 2), (0, -1), (5, -2)]:
        with pytest.raises(ValueError, match="'r/k'"):
            store.get_range("r/k", start, length)
    assert store == store and store != object() and "ReferenceStore" in repr(store)  # noqa: PLR0124
    assert store.read_only


# -- kerchunk's own references ------------------------------------------------------------


@pytest.fixture(scope="module")
def hdf5(tmp_path_factory):
    pytest.importorskip("h5py")
    d = tmp_path_factory.mktemp("hdf5")
    return d, write_hdf5(str(d / "f.h5"))


def translate(url):
    hdf = pytest.importorskip("kerchunk.hdf")
    return hdf.SingleHdf5ToZarr(url).translate()


def check_hierarchy(store, data):
    """Every dataset read through zarrc equals h5py's read, bit for bit."""
    group = zarrc.open_group(store, mode="r")
    assert group.attrs["title"] == "zarrc reference test"
    for name, expected in data.items():
        arr = zarrc.open_array(store, path=name, mode="r")
        got = arr[...]
        assert got.dtype == expected.dtype and got.tobytes() == expected.tobytes(), name
    assert zarrc.open_array(store, path="temperature", mode="r").attrs["units"] == "K"
    t = zarrc.open_array(store, path="temperature", mode="r")
    assert t[31:33, 39:41].tobytes() == data["temperature"][31:33, 39:41].tobytes()


def test_kerchunk_json(hdf5):
    d, data = hdf5
    refs = translate(str(d / "f.h5"))
    path = d / "refs.json"
    path.write_text(json.dumps(refs))
    check_hierarchy(ReferenceStore(str(path)), data)
    check_hierarchy(ReferenceStore(refs), data)


def test_kerchunk_parquet(hdf5, tmp_path):
    pytest.importorskip("pyarrow")
    pytest.importorskip("fastparquet")  # (kerchunk writes Parquet with it)
    df = pytest.importorskip("kerchunk.df")
    d, data = hdf5
    out = tmp_path / "refs.parq"
    df.refs_to_dataframe(translate(str(d / "f.h5")), str(out), record_size=3)
    store = ReferenceStore(str(out), cache_size=2)
    check_hierarchy(store, data)
    assert store.list_dir("grid/elevation/")[0][:3] == [".zarray", ".zattrs", "0.0.0"]
    assert json.loads(store.get(".zmetadata"))["zarr_consolidated_format"] == 1
    assert store.get("temperature/9.9") is None  # outside the chunk grid
    clone = pickle.loads(pickle.dumps(store))
    assert clone.get("counts/0") == store.get("counts/0")
    (out / "temperature" / "refs.1.parq").write_bytes(b"not parquet")
    with pytest.raises(MetadataError, match=r"refs\.1\.parq"):
        ReferenceStore(str(out)).get("temperature/1.0")


def test_kerchunk_over_http(hdf5, http_server):  # noqa: F811
    pytest.importorskip("fsspec")
    pytest.importorskip("aiohttp")
    d, data = hdf5
    server = http_server
    server.write("f.h5", (d / "f.h5").read_bytes())
    root = Path(server.root)
    requests = server.switches.requests
    refs = translate(f"{server.url}/f.h5")
    assert refs["refs"]["counts/0"][0] == f"{server.url}/f.h5"
    requests.clear()
    check_hierarchy(ReferenceStore(refs), data)
    assert any(r[2] and r[2].startswith("bytes=") for r in requests)
    path = root / "http_refs.json"
    path.write_text(json.dumps({"version": 1, "templates": {"u": server.url},
                                "refs": {k: [v[0].replace(server.url, "{{u}}"), *v[1:]]
                                         if isinstance(v, list) else v for k, v in refs["refs"].items()}}))
    store = open_reference_store("reference://", "r", {"fo": str(path), "remote_protocol": "http",
                                                       "remote_options": {}})
    check_hierarchy(store, data)
    assert store.get_range("counts/0", 8, 16) == data["counts"].tobytes()[8:24]
    assert store.snapshot("counts/0").read(0, 8) == data["counts"].tobytes()[:8]
    bad = ReferenceStore({"gone": [f"{server.url}/missing.h5", 0, 4], "long": [f"{server.url}/f.h5", 0, 10**9],
                          "whole": [f"{server.url}/f.h5"]})
    with pytest.raises(StoreError, match=r"'gone'.*missing\.h5.*\[0, 4\)"):
        bad.get("gone")
    with pytest.raises(StoreError, match=r"'long'.*past the end"):
        bad.get("long")
    whole = (d / "f.h5").read_bytes()
    assert bad.get("whole") == whole
    assert bad.size("whole") == (d / "f.h5").stat().st_size
    assert bad.get_ranges("whole", [(-4, None), (0, 0), (3, 2)]) == [whole[-4:], b"", whole[3:5]]
    assert store.get_ranges("counts/0", [(10**6, 5), (8, 8)]) == [b"", data["counts"].tobytes()[8:16]]
    # the references themselves on the server: a JSON file, and a Parquet directory
    (root / "served.json").write_text(json.dumps(refs))
    check_hierarchy(ReferenceStore(f"{server.url}/served.json"), data)
    if importlib.util.find_spec("fastparquet") and importlib.util.find_spec("pyarrow"):
        import kerchunk.df

        kerchunk.df.refs_to_dataframe(refs, str(root / "served.parq"), record_size=4)
        check_hierarchy(ReferenceStore(f"{server.url}/served.parq"), data)


def test_parquet_row_with_null_offset_and_size_is_the_whole_file(tmp_path):
    # GDAL's kerchunk_parquet/parquet_ref_0_dim: a row with a path and null offset and
    # size (the whole file), read as fsspec's 0 and 0; it raised a bare TypeError
    pa = pytest.importorskip("pyarrow")
    pq = pytest.importorskip("pyarrow.parquet")
    target = tmp_path / "data.bin"
    target.write_bytes(b"\x07\x08\x09")
    refs = tmp_path / "refs"
    (refs / "x").mkdir(parents=True)
    zarray = {"zarr_format": 2, "shape": [3], "chunks": [3], "compressor": None, "dtype": "|u1",
              "order": "C", "filters": None, "fill_value": None}
    (refs / ".zmetadata").write_text(json.dumps({"record_size": 10, "metadata": {
        ".zgroup": {"zarr_format": 2}, "x/.zarray": zarray}}))
    table = pa.table({"path": [str(target)], "offset": pa.array([None], pa.int64()),
                      "size": pa.array([None], pa.int64()), "raw": pa.array([None], pa.binary())})
    pq.write_table(table, refs / "x" / "refs.0.parq")
    g = zarrc.open_group("reference://", mode="r", storage_options={"fo": str(refs)})
    assert g["x"][...].tolist() == [7, 8, 9]
