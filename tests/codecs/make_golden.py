"""Write the golden encodings in tests/codecs/golden/ with numcodecs.

    python tests/codecs/make_golden.py        # needs numcodecs (and google-crc32c or crc32c)

It was run once and its output is checked in; test_golden.py checks that zarrc
decodes every file to its input and, where encoding is deterministic, that zarrc
encodes the input to the same bytes.  The files record what one numcodecs version
wrote (see manifest.json): regenerate only on purpose, e.g. to add cases.

Inputs are small, fixed formulas (no randomness), also stored in golden/:
  input-int32.bin    1536 little-endian int32: a stepped sawtooth with a drift (6 KiB)
  input-float64.bin   768 little-endian float64: (i % 97) * 0.25 - 3, exact in binary
  input-bytes.bin    3001 bytes: (i * i) % 251, an odd length
(the element counts of the first two are multiples of 8: c-blosc 1.x bitshuffles
only whole groups of 8 elements and copies the rest as is)

manifest.json lists every golden file: its input, the numcodecs config that made
it, the v3 name/configuration zarrc uses for it, and whether zarrc must reproduce
the bytes exactly ("exact") or all but gzip's mtime, bytes 4..8 ("mtime"; numcodecs
writes the current time there, so the gzip files change whenever this is rerun).
"""

from __future__ import annotations

import hashlib
import json
from pathlib import Path

import numpy as np

GOLDEN = Path(__file__).parent / "golden"


def inputs() -> dict[str, bytes]:
    i = np.arange(1536, dtype=np.int64)
    int32 = (((i // 6) % 64) * 37 + i // 300 - 1000).astype("<i4")
    j = np.arange(768, dtype=np.int64)
    float64 = ((j % 97) * 0.25 - 3.0).astype("<f8")
    k = np.arange(3001, dtype=np.int64)
    raw = ((k * k) % 251).astype("u1")
    return {"int32": int32.tobytes(), "float64": float64.tobytes(), "bytes": raw.tobytes()}


def cases():
    """(file stem, input name, numcodecs config, zarrc v3 dict, comparison)."""
    shuffles = {0: "noshuffle", 1: "shuffle", 2: "bitshuffle"}
    for cname in ("lz4", "lz4hc", "blosclz", "zstd", "zlib"):
        for shuffle in (0, 1, 2):
            conf = {"id": "blosc", "cname": cname, "clevel": 5, "shuffle": shuffle, "blocksize": 0}
            v3 = {"name": "blosc", "configuration": {
                "cname": cname, "clevel": 5, "shuffle": shuffles[shuffle], "typesize": 4, "blocksize": 0}}
            yield f"blosc-{cname}-{shuffles[shuffle]}", "int32", conf, v3, "exact"
    for cname, clevel, shuffle, blocksize in [("zstd", 9, 2, 1024), ("zlib", 1, 1, 2048),
                                             ("lz4", 0, 1, 0), ("blosclz", 9, 1, 0)]:
        conf = {"id": "blosc", "cname": cname, "clevel": clevel, "shuffle": shuffle, "blocksize": blocksize}
        v3 = {"name": "blosc", "configuration": {"cname": cname, "clevel": clevel,
                                                 "shuffle": shuffles[shuffle], "typesize": 8,
                                                 "blocksize": blocksize}}
        yield f"blosc-{cname}-{clevel}-{shuffles[shuffle]}-{blocksize}-f8", "float64", conf, v3, "exact"
    for level, checksum in [(-5, False), (1, False), (0, True), (19, False), (3, True)]:
        conf = {"id": "zstd", "level": level, "checksum": checksum}
        v3 = {"name": "zstd", "configuration": {"level": level, "checksum": checksum}}
        yield f"zstd-{level}-{'checksum' if checksum else 'plain'}", "int32", conf, v3, "exact"
    for level in (0, 1, 5, 9):
        yield (f"gzip-{level}", "bytes", {"id": "gzip", "level": level},
               {"name": "gzip", "configuration": {"level": level}}, "mtime")
    for level in (0, 1, 6, 9):
        yield (f"zlib-{level}", "float64", {"id": "zlib", "level": level},
               {"name": "zlib", "configuration": {"level": level}}, "exact")
    yield "crc32c", "bytes", {"id": "crc32c"}, {"name": "crc32c"}, "exact"


def main() -> None:
    import numcodecs
    import numcodecs.blosc

    numcodecs.blosc.use_threads = False      # threaded blosc output is not reproducible
    GOLDEN.mkdir(exist_ok=True)
    data = inputs()
    for name, raw in data.items():
        (GOLDEN / f"input-{name}.bin").write_bytes(raw)
    manifest = {"numcodecs": numcodecs.__version__,
                "inputs": {name: {"file": f"input-{name}.bin", "sha256": hashlib.sha256(raw).hexdigest()}
                           for name, raw in data.items()},
                "files": []}
    for stem, inp, conf, v3, compare in cases():
        codec = numcodecs.get_codec(dict(conf))
        dtype = {"int32": "<i4", "float64": "<f8", "bytes": "u1"}[inp]
        enc = bytes(memoryview(codec.encode(np.frombuffer(data[inp], dtype))).cast("B"))
        assert bytes(memoryview(codec.decode(enc)).cast("B")) == data[inp], stem
        (GOLDEN / f"{stem}.bin").write_bytes(enc)
        manifest["files"].append({"file": f"{stem}.bin", "input": inp, "dtype": dtype, "numcodecs": conf,
                                  "v3": v3, "compare": compare})
    (GOLDEN / "manifest.json").write_text(json.dumps(manifest, indent=1) + "\n")
    total = sum(p.stat().st_size for p in GOLDEN.iterdir())
    print(f"wrote {len(manifest['files'])} golden files, {total} bytes in all, to {GOLDEN}")


if __name__ == "__main__":
    main()
