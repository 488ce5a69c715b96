"""Golden encodings made by numcodecs (see make_golden.py): zarrc decodes each to
its known input and, where encoding is deterministic, reproduces the bytes (blosc,
zstd, crc32c; gzip and zlib encode with libdeflate, whose streams Python's gzip and
zlib modules must read back instead)."""

import gzip
import hashlib
import json
import zlib
from pathlib import Path

import numpy as np
import pytest

from zarrc.codecs import Blosc, Crc32c, Gzip, Zlib, Zstd

GOLDEN = Path(__file__).parent / "golden"
MANIFEST = json.loads((GOLDEN / "manifest.json").read_text())
CODECS = {"blosc": Blosc, "zstd": Zstd, "gzip": Gzip, "zlib": Zlib, "crc32c": Crc32c}


def codec_from_v3(spec):
    return CODECS[spec["name"]].from_config(spec.get("configuration", {}))


def load_input(name):
    meta = MANIFEST["inputs"][name]
    raw = (GOLDEN / meta["file"]).read_bytes()
    assert hashlib.sha256(raw).hexdigest() == meta["sha256"]
    return raw


def test_golden_set_is_complete_and_small():
    names = {entry["file"] for entry in MANIFEST["files"]}
    assert {n.split("-")[0].split(".")[0] for n in names} == set(CODECS)
    assert {p.name for p in GOLDEN.glob("*.bin")} == names | {m["file"] for m in MANIFEST["inputs"].values()}
    assert sum(p.stat().st_size for p in GOLDEN.iterdir()) < 200_000


def test_inputs_are_the_documented_formulas():
    i = np.arange(1536)
    assert load_input("int32") == (((i // 6) % 64) * 37 + i // 300 - 1000).astype("<i4").tobytes()
    j = np.arange(768)
    assert load_input("float64") == ((j % 97) * 0.25 - 3.0).astype("<f8").tobytes()
    k = np.arange(3001)
    assert load_input("bytes") == ((k * k) % 251).astype("u1").tobytes()


@pytest.mark.parametrize("entry", MANIFEST["files"], ids=lambda e: e["file"])
def test_decodes_golden(entry):
    golden = (GOLDEN / entry["file"]).read_bytes()
    raw = load_input(entry["input"])
    codec = codec_from_v3(entry["v3"])
    assert bytes(codec.decode(golden)) == raw
    out = np.empty(len(raw) // np.dtype(entry["dtype"]).itemsize, entry["dtype"])
    codec.decode(golden, out=out)
    assert out.tobytes() == raw
    # any configuration of the same codec decodes it: the parameters are in the data
    assert bytes(type(codec)().decode(golden)) == raw


@pytest.mark.parametrize("entry", MANIFEST["files"], ids=lambda e: e["file"])
def test_encodes_golden(entry):
    golden = (GOLDEN / entry["file"]).read_bytes()
    data = np.frombuffer(load_input(entry["input"]), entry["dtype"])
    codec = codec_from_v3(entry["v3"])
    enc = codec.encode(data)
    if isinstance(codec, (Gzip, Zlib)):
        decompress = gzip.decompress if isinstance(codec, Gzip) else zlib.decompress
        assert decompress(enc) == data.tobytes()
        assert len(enc) <= len(golden) * 1.25 + 64      # compresses about as well
        assert entry["compare"] in ("mtime", "exact")
    elif entry["compare"] == "mtime":
        assert enc[:4] + enc[8:] == golden[:4] + golden[8:]
        assert enc[4:8] == bytes(4)
    else:
        assert entry["compare"] == "exact"
        assert enc == golden


@pytest.mark.parametrize("entry", MANIFEST["files"], ids=lambda e: e["file"])
def test_v3_and_numcodecs_forms_match_the_manifest(entry):
    codec = codec_from_v3(entry["v3"])
    assert codec.to_dict() == entry["v3"]
    assert codec.get_config() == entry["numcodecs"]
