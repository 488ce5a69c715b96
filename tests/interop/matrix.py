"""The interop matrix: which array configurations the interop tests run.

A case is one array configuration: data type x codec chain x chunk key encoding x
endianness x transpose x fill value x layout (shape, chunks, the regions the tests
write and read) x whether the writer fills every chunk.  The cases cover every
*pair* of values of these axes (built greedily and deterministically) instead of
the full cartesian product: 168 cases, each value of each axis in a dozen or more.
"""

from __future__ import annotations

import itertools
import math
from dataclasses import dataclass
from typing import Any

import numpy as np

# ---------------------------------------------------------------- axes

DTYPES = ["bool", "int8", "int16", "int32", "int64", "uint8", "uint16", "uint32", "uint64",
          "float16", "float32", "float64", "complex64", "complex128"]


def _blosc(cname: str, shuffle: str, clevel: int = 5) -> dict:
    # typesize is filled in per data type (see Case.compressors)
    return {"name": "blosc", "configuration": {"cname": cname, "clevel": clevel, "shuffle": shuffle,
                                               "blocksize": 0}}


ZSTD = {"name": "zstd", "configuration": {"level": 3, "checksum": False}}
ZSTD_CHECKSUM = {"name": "zstd", "configuration": {"level": 1, "checksum": True}}
GZIP = {"name": "gzip", "configuration": {"level": 6}}
CRC32C = {"name": "crc32c"}

# bytes->bytes codecs after the serializer (the "bytes" codec, always present)
CHAINS: dict[str, list[dict]] = {
    "bytes": [],
    "blosc-lz4-noshuffle": [_blosc("lz4", "noshuffle")],
    "blosc-lz4-bitshuffle": [_blosc("lz4", "bitshuffle", 9)],
    "blosc-zstd-shuffle": [_blosc("zstd", "shuffle", 3)],
    "blosc-zlib-bitshuffle": [_blosc("zlib", "bitshuffle", 1)],
    "blosc-zlib-noshuffle": [_blosc("zlib", "noshuffle", 7)],
    "zstd": [ZSTD],
    "zstd-checksum": [ZSTD_CHECKSUM],
    "gzip": [GZIP],
    "crc32c": [CRC32C],
    "blosc-crc32c": [_blosc("lz4", "shuffle"), CRC32C],
    "zstd-crc32c": [ZSTD_CHECKSUM, CRC32C],
}

# name -> (encoding, separator)
KEY_ENCODINGS = {"default/": ("default", "/"), "default.": ("default", "."),
                 "v2.": ("v2", "."), "v2/": ("v2", "/")}

ENDIANS = ["little", "big"]
TRANSPOSES = [False, True]
FILL_KINDS = ["zero", "one", "nan", "inf", "ninf", "nzero"]
WRITTEN = ["full", "partial"]


@dataclass(frozen=True)
class Layout:
    """shape, chunks; ``region``: what a "partial" writer writes (the rest of the
    chunks stay missing; None: nothing); ``update`` / ``step``: the partial writes
    (over existing and missing chunks; with steps) of support.apply_updates, None
    for none; ``selections``: what readers read besides the whole array."""

    shape: tuple[int, ...]
    chunks: tuple[int, ...]
    region: tuple
    update: tuple
    step: tuple
    selections: tuple


S = slice
LAYOUTS = {
    "1d": Layout((53,), (8,), (S(5, 30),), (S(20, 45),), (S(1, 53, 7),),
                 ((S(3, 50, 4),), (7,), (-1,), (S(None, None, 9),), (S(40, None),), (S(13, 14),))),
    "2d": Layout((23, 17), (5, 6), (S(3, 14), S(6, 17)), (S(2, 9), S(5, 13)), (S(0, 23, 4), S(1, 17, 3)),
                 ((S(1, 22, 3), S(None)), (4, S(2, 16, 5)), (-1, -1), (S(10, 11), 16), (S(20, None),))),
    "3d": Layout((37, 20, 15), (8, 7, 4), (S(10, 30), S(0, 20), S(3, 9)),
                 (S(5, 20), S(3, 12), S(2, 11)), (S(0, 37, 6), 4, S(None, None, 2)),
                 ((S(None, None, 5), 3, S(1, 14, 3)), (36, 19, 14), (S(7, 17), S(6, 15), S(None)),
                  (Ellipsis, 2), (S(32, 37), S(14, 20), S(12, 15)))),
    "2d-exact": Layout((16, 12), (4, 6), (S(4, 8), S(0, 12)), (S(1, 7), S(3, 9)), (S(0, 16, 3), S(None)),
                       ((S(2, 14, 5), S(1, 12, 2)), (15, 11), (S(4, 8), 6))),
    "big-chunk": Layout((3, 5), (4, 8), (S(0, 2), S(1, 4)), (S(1, 3), S(0, 2)), (S(0, 3, 2), S(0, 5, 3)),
                        ((S(None, None, 2), S(1, None, 3)), (2, 4), (S(1, 2), 0))),
    "0d": Layout((), (), None, (), (), ((),)),
    "empty": Layout((0, 5), (3, 5), None, None, None, ((S(0, 0), S(1, 3)),)),
}

AXES: dict[str, list] = {
    "dtype": DTYPES,
    "chain": list(CHAINS),
    "cke": list(KEY_ENCODINGS),
    "endian": ENDIANS,
    "transpose": TRANSPOSES,
    "fill": FILL_KINDS,
    "layout": list(LAYOUTS),
    "written": WRITTEN,
}


def _valid(assign: dict[str, Any]) -> bool:
    """False for combinations that mean nothing (and whose pairs need no cover)."""
    dtype, layout = assign.get("dtype"), assign.get("layout")
    if dtype is not None and assign.get("endian") == "big" and np.dtype(dtype).itemsize == 1:
        return False
    if layout is not None and assign.get("transpose") and len(LAYOUTS[layout].shape) < 2:
        return False
    if layout == "empty" and assign.get("written") == "partial":
        return False
    return True


def pairwise(axes: dict[str, list]) -> list[dict[str, Any]]:
    """Rows (axis -> value) in which every valid pair of values of two axes occurs.

    Greedy and deterministic: each row starts from the first uncovered pair and
    takes, axis by axis, the value that covers the most uncovered pairs (ties: the
    value used least so far, which spreads the values evenly)."""
    names = list(axes)
    uncovered = set()
    for a, b in itertools.combinations(names, 2):
        for va, vb in itertools.product(axes[a], axes[b]):
            if _valid({a: va, b: vb}):
                uncovered.add((a, repr(va), b, repr(vb)))
    order = sorted(uncovered)
    used = {(n, repr(v)): 0 for n in names for v in axes[n]}
    rows = []
    while uncovered:
        a, ra, b, rb = next(p for p in order if p in uncovered)
        row = {a: next(v for v in axes[a] if repr(v) == ra), b: next(v for v in axes[b] if repr(v) == rb)}
        for name in names:
            if name in row:
                continue
            best, best_score = None, None
            for v in axes[name]:
                trial = {**row, name: v}
                if not _valid(trial):
                    continue
                gain = sum(_covers(uncovered, n, row[n], name, v) for n in row)
                score = (gain, -used[name, repr(v)])  # ties: the least used value
                if best_score is None or score > best_score:
                    best, best_score = v, score
            row[name] = best
        for x, y in itertools.combinations(names, 2):
            uncovered.discard((x, repr(row[x]), y, repr(row[y])))
        for n in names:
            used[n, repr(row[n])] += 1
        rows.append(row)
    return rows


def _covers(uncovered: set, n1: str, v1: Any, n2: str, v2: Any) -> bool:
    return (n1, repr(v1), n2, repr(v2)) in uncovered or (n2, repr(v2), n1, repr(v1)) in uncovered


# ---------------------------------------------------------------- cases

def fill_for(dtype: str, kind: str) -> np.generic:
    """The fill value (a numpy scalar of ``dtype``) of a fill kind."""
    dt = np.dtype(dtype)
    if dt.kind == "b":
        return np.bool_(kind in ("one", "nan", "ninf"))
    if dt.kind in "iu":
        info = np.iinfo(dt)
        value = {"zero": 0, "one": 7, "nan": info.max, "inf": info.min,
                 "ninf": 42, "nzero": -1 if dt.kind == "i" else 1}[kind]
        return dt.type(value)
    if dt.kind == "f":
        return dt.type({"zero": 0.0, "one": -1.5, "nan": math.nan, "inf": math.inf,
                        "ninf": -math.inf, "nzero": -0.0}[kind])
    value = {"zero": 0j, "one": complex(1.5, -2.25), "nan": complex(math.nan, 0.0),
             "inf": complex(math.inf, -math.inf), "ninf": complex(-0.0, math.nan),
             "nzero": complex(-0.0, -0.0)}[kind]
    return dt.type(value)


@dataclass(frozen=True)
class Case:
    index: int
    dtype: str
    chain: str
    cke: str
    endian: str
    transpose: bool
    fill: str
    layout: str
    written: str

    @property
    def id(self) -> str:
        return "-".join([self.dtype, self.chain, self.cke.replace("/", "slash"),
                         self.endian if self.multibyte else "1B", "T" if self.transpose else "noT",
                         self.fill, self.layout, self.written])

    @property
    def np_dtype(self) -> np.dtype:
        return np.dtype(self.dtype)

    @property
    def multibyte(self) -> bool:
        return self.np_dtype.itemsize > 1

    @property
    def geometry(self) -> Layout:
        return LAYOUTS[self.layout]

    @property
    def shape(self) -> tuple[int, ...]:
        return self.geometry.shape

    @property
    def chunks(self) -> tuple[int, ...]:
        return self.geometry.chunks

    @property
    def fill_value(self) -> np.generic:
        return fill_for(self.dtype, self.fill)

    @property
    def order(self) -> tuple[int, ...] | None:
        """The transpose codec's order (None: no transpose codec)."""
        if not self.transpose:
            return None
        n = len(self.shape)
        return tuple(range(n))[::-1] if n == 2 else tuple(range(1, n)) + (0,)

    # ----- the codec chain as v3 JSON
    @property
    def filters(self) -> list[dict]:
        if self.order is None:
            return []
        return [{"name": "transpose", "configuration": {"order": list(self.order)}}]

    @property
    def serializer(self) -> dict:
        if not self.multibyte:
            return {"name": "bytes"}
        return {"name": "bytes", "configuration": {"endian": self.endian}}

    @property
    def compressors(self) -> list[dict]:
        out = []
        for codec in CHAINS[self.chain]:
            codec = {**codec}
            if codec["name"] == "blosc":
                codec["configuration"] = {**codec["configuration"], "typesize": self.np_dtype.itemsize}
            out.append(codec)
        return out

    @property
    def codecs(self) -> list[dict]:
        return self.filters + [self.serializer] + self.compressors

    @property
    def key_encoding(self) -> dict:
        name, sep = KEY_ENCODINGS[self.cke]
        return {"name": name, "configuration": {"separator": sep}}

    @property
    def writes_region(self) -> tuple | None:
        """What a peer writes: the whole array (...), a region, or None (nothing)."""
        if self.written == "full":
            return None if 0 in self.shape else Ellipsis
        return self.geometry.region


def build_cases() -> list[Case]:
    return [Case(i, **row) for i, row in enumerate(pairwise(AXES))]


CASES = build_cases()
