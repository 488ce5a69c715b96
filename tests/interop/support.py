"""Helpers of the interop tests: deterministic data, bit-exact comparison, the
model of an array's content, chunk keys on disk, and creating arrays of a case
(matrix.py's ``Case``) with zarr-python, tensorstore and zarrc."""

from __future__ import annotations

import itertools
import math
import os
from typing import Any

import numpy as np

NAN_PAYLOAD_BITS = {2: [0x7C01, 0xFE01], 4: [0x7FA00001, 0xFFC00123], 8: [0x7FF0000000000001,
                                                                         0xFFF8DEADBEEF0000]}
UINT = {1: np.uint8, 2: np.uint16, 4: np.uint32, 8: np.uint64}


def fill_json(value: np.generic) -> Any:
    """The zarr.json form of a fill value (for tensorstore's metadata)."""
    def part(x: Any) -> Any:
        x = float(x)
        if math.isnan(x):
            return "NaN"
        if math.isinf(x):
            return "Infinity" if x > 0 else "-Infinity"
        return x
    kind = value.dtype.kind
    if kind == "b":
        return bool(value)
    if kind in "iu":
        return int(value)
    if kind == "f":
        return part(value)
    return [part(value.real), part(value.imag)]


# ---------------------------------------------------------------- data

def sample(dtype: Any, shape: tuple[int, ...], seed: int) -> np.ndarray:
    """Deterministic data of ``dtype``; floats include NaNs with payloads (quiet and
    signalling, both signs), -0.0, +-inf and subnormals; integers span the full range."""
    dt = np.dtype(dtype)
    rng = np.random.default_rng(seed)
    n = math.prod(shape)
    if dt.kind == "b":
        flat = rng.random(n) < 0.5
    elif dt.kind in "iu":
        info = np.iinfo(dt)
        flat = rng.integers(info.min, info.max, size=n, dtype=dt, endpoint=True)
        flat[: min(n, 2)] = [info.min, info.max][: min(n, 2)]
    elif dt.kind == "f":
        flat = _floats(dt, n, rng)
    else:
        part = np.dtype(f"f{dt.itemsize // 2}")
        flat = np.empty(n, dt)
        flat.real = _floats(part, n, rng)
        flat.imag = _floats(part, n, rng)[::-1]
    return flat.reshape(shape)


def _floats(dt: np.dtype, n: int, rng: np.random.Generator) -> np.ndarray:
    flat = (rng.standard_normal(n) * 100).astype(dt)
    bits = flat.view(UINT[dt.itemsize])
    specials = [dt.type(-0.0), dt.type(np.inf), dt.type(-np.inf), np.finfo(dt).smallest_subnormal,
                np.finfo(dt).max]
    specials_bits = [np.asarray(s, dt).view(UINT[dt.itemsize]) for s in specials]
    specials_bits += [UINT[dt.itemsize](b) for b in NAN_PAYLOAD_BITS[dt.itemsize]]
    if n > 1:  # (a lone -0.0 equals a 0.0 fill value to zarr-python, which then stores nothing)
        where = rng.choice(n, size=min(n, 2 * len(specials_bits)), replace=False)
        for i, w in enumerate(where):
            bits[w] = specials_bits[i % len(specials_bits)]
    return flat


def native(a: Any) -> np.ndarray:
    """``a`` as a numpy array in native byte order (values and NaN payloads kept)."""
    a = np.asarray(a)
    return a if a.dtype.isnative else a.astype(a.dtype.newbyteorder("="))


def assert_bit_equal(actual: Any, expected: Any, what: str = "") -> None:
    """Same shape, same data type and the very same bits in every element."""
    actual, expected = native(actual), native(expected)
    prefix = f"{what}: " if what else ""
    assert actual.dtype == expected.dtype, f"{prefix}dtype {actual.dtype} != {expected.dtype}"
    assert actual.shape == expected.shape, f"{prefix}shape {actual.shape} != {expected.shape}"
    isz = actual.dtype.itemsize
    a = np.ascontiguousarray(actual).reshape(-1).view(np.uint8).reshape(-1, isz)
    e = np.ascontiguousarray(expected).reshape(-1).view(np.uint8).reshape(-1, isz)
    bad = np.flatnonzero((a != e).any(axis=1))
    if bad.size:
        idx = [np.unravel_index(i, actual.shape) if actual.shape else () for i in bad[:5]]
        shown = [(tuple(int(j) for j in at), actual[at], expected[at],
                  a[i].tobytes().hex(), e[i].tobytes().hex()) for at, i in zip(idx, bad[:5])]
        raise AssertionError(f"{prefix}{bad.size} of {actual.size} elements differ "
                             f"(index, actual, expected, actual bits, expected bits): {shown}")


def assert_scalar_bit_equal(actual: Any, expected: np.generic, what: str = "fill_value") -> None:
    assert_bit_equal(np.asarray(actual, dtype=np.asarray(actual).dtype), np.asarray(expected), what)


def model(case: Case, seed: int = 0) -> tuple[np.ndarray, np.ndarray]:
    """(data, expected): the data a writer writes, and the array's content after
    it wrote ``case.writes_region`` of it (fill value elsewhere)."""
    data = sample(case.dtype, case.shape, seed=1000 + case.index * 7 + seed)
    expected = np.full(case.shape, case.fill_value, dtype=case.np_dtype)
    region = case.writes_region
    if region is not None:
        expected[region] = data[region]
    return data, expected


def apply_updates(case: Case, a: Any, expected: np.ndarray, seed: int) -> None:
    """Write to ``a`` (any array object with numpy-style ``__setitem__``) and to the
    model ``expected``: a partial write over existing and missing chunks, a write
    with steps (every other time a broadcast row), then the fill value over the
    first and the last chunk, so that they become all fill value (an edge chunk,
    for most layouts)."""
    layout = case.geometry
    if layout.update is None:
        return
    update = sample(case.dtype, case.shape, seed=seed)
    a[layout.update] = update[layout.update]
    expected[layout.update] = update[layout.update]
    value = sample(case.dtype, case.shape, seed=seed + 1)[layout.step]
    if seed % 2 and value.ndim:
        value = value[(0,) * (value.ndim - 1)]  # one row, broadcast over the others
    a[layout.step] = value
    expected[layout.step] = value
    boxes = chunk_boxes(case)
    for coords in (min(boxes), max(boxes)):
        a[boxes[coords]] = case.fill_value
        expected[boxes[coords]] = case.fill_value


def selections(case: Case) -> list:
    """The whole array and the layout's sub-selections."""
    return [Ellipsis, *case.geometry.selections]


# ---------------------------------------------------------------- chunks on disk

def chunk_key(case: Case, coords: tuple[int, ...]) -> str:
    name, sep = case.key_encoding["name"], case.key_encoding["configuration"]["separator"]
    if not coords:
        return "c" if name == "default" else "0"
    body = sep.join(str(c) for c in coords)
    return f"c{sep}{body}" if name == "default" else body


def stored_chunk_keys(array_dir: str) -> set[str]:
    """Keys of every file below ``array_dir`` except zarr.json (and temporary files)."""
    keys = set()
    for root, _, files in os.walk(array_dir):
        for f in files:
            key = os.path.relpath(os.path.join(root, f), array_dir).replace(os.sep, "/")
            if key != "zarr.json":
                keys.add(key)
    return keys


def chunk_boxes(case: Case) -> dict[tuple[int, ...], tuple[slice, ...]]:
    """Grid coordinates -> the (in-bounds) region of each chunk."""
    grid = [math.ceil(s / c) if c else 0 for s, c in zip(case.shape, case.chunks)]
    out = {}
    for coords in itertools.product(*[range(g) for g in grid]):
        out[coords] = tuple(slice(i * c, min((i + 1) * c, s))
                            for i, c, s in zip(coords, case.chunks, case.shape))
    return out


def nonfill_chunk_keys(case: Case, expected: np.ndarray) -> set[str]:
    """The chunk keys a writer that drops chunks equal to the fill value (bit for bit)
    must have stored for content ``expected``."""
    fill = np.full((), case.fill_value, case.np_dtype)
    keys = set()
    for coords, box in chunk_boxes(case).items():
        part = expected[box]
        same = (np.ascontiguousarray(part).view(np.uint8).reshape(-1) ==
                np.tile(fill.reshape(1).view(np.uint8), part.size)).all()
        if not same:
            keys.add(chunk_key(case, coords))
    return keys


# ---------------------------------------------------------------- peers

def zarr_python_codecs(case: Case) -> dict[str, Any]:
    """filters / serializer / compressors for zarr.create_array."""
    from zarr.codecs import BloscCodec, BytesCodec, Crc32cCodec, GzipCodec, TransposeCodec, ZstdCodec

    def make(spec: dict) -> Any:
        conf = spec.get("configuration", {})
        return {"blosc": BloscCodec, "zstd": ZstdCodec, "gzip": GzipCodec, "crc32c": Crc32cCodec,
                "transpose": TransposeCodec, "bytes": BytesCodec}[spec["name"]](**conf)
    return {"filters": [make(c) for c in case.filters] or None,
            "serializer": make(case.serializer),
            "compressors": [make(c) for c in case.compressors] or None}


def zarr_python_create(case: Case, root: str, name: str) -> Any:
    import zarr
    encoding = {"name": case.key_encoding["name"],  # zarr-python's spelling
                "separator": case.key_encoding["configuration"]["separator"]}
    return zarr.create_array(root, name=name, shape=case.shape, dtype=case.dtype, chunks=case.chunks,
                             fill_value=case.fill_value, chunk_key_encoding=encoding,
                             **zarr_python_codecs(case))


def tensorstore_spec(path: str) -> dict:
    return {"driver": "zarr3", "kvstore": {"driver": "file", "path": path}}


def tensorstore_create(case: Case, path: str) -> Any:
    import tensorstore as ts
    metadata = {
        "shape": list(case.shape), "data_type": case.dtype,
        "chunk_grid": {"name": "regular", "configuration": {"chunk_shape": list(case.chunks)}},
        "chunk_key_encoding": case.key_encoding, "fill_value": fill_json(case.fill_value),
        "codecs": case.codecs,
    }
    return ts.open({**tensorstore_spec(path), "metadata": metadata}, create=True,
                   dtype=getattr(ts, case.dtype)).result()


def tensorstore_open(path: str) -> Any:
    import tensorstore as ts
    return ts.open(tensorstore_spec(path), open=True).result()


def zarrc_codecs(case: Case, objects: bool) -> dict[str, Any]:
    """filters / serializer / compressors for zarrc.create_array: v3 JSON dicts, or
    zarrc codec objects when ``objects``."""
    if not objects:
        return {"filters": case.filters or None, "serializer": case.serializer,
                "compressors": case.compressors or None}
    from zarrc import codecs as zc

    def make(spec: dict) -> Any:
        conf = spec.get("configuration", {})
        return {"blosc": zc.Blosc, "zstd": zc.Zstd, "gzip": zc.Gzip, "crc32c": zc.Crc32c,
                "transpose": zc.Transpose, "bytes": zc.Bytes}[spec["name"]](**conf)
    serializer = make(case.serializer) if case.multibyte else zc.Bytes(None)
    return {"filters": [make(c) for c in case.filters] or None, "serializer": serializer,
            "compressors": [make(c) for c in case.compressors] or None}


def zarrc_create(case: Case, root: str, name: str) -> Any:
    import zarrc
    # the v3 JSON form; zarr-python's {"name": ..., "separator": ...} has its own test
    return zarrc.create_array(root, name=name, shape=case.shape, dtype=case.dtype, chunks=case.chunks,
                              fill_value=case.fill_value, chunk_key_encoding=case.key_encoding,
                              **zarrc_codecs(case, objects=case.index % 2 == 1))
