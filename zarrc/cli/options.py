"""What the command line's options parse into, and how its commands open nodes.

Every parser raises :class:`UsageError` with a message naming the option and the
value, which ``main`` prints as one line (exit status 2)."""

from __future__ import annotations

import json
import math
from collections.abc import Sequence
from typing import Any

import zarrc
from zarrc.core.array import Array
from zarrc.core.group import Group
from zarrc.errors import ZarrcError
from zarrc.stores import Store, make_store, names_references

KEEP = "keep"


class UsageError(ZarrcError, ValueError):
    """A command-line option's value that cannot be used (exit status 2)."""


def is_url(where: str) -> bool:
    """True for a URL (``s3://...``, ``file://...``, chained ``simplecache::s3://``)."""
    return "://" in where


def storage_options(pairs: Sequence[str] | None) -> dict[str, Any] | None:
    """``--storage-option KEY=VALUE`` (repeated) as a dict; a VALUE that is JSON
    (``true``, ``3``, ``{"a": 1}``) is taken as JSON, else as a string."""
    if not pairs:
        return None
    out: dict[str, Any] = {}
    for pair in pairs:
        key, sep, value = pair.partition("=")
        if not sep or not key:
            raise UsageError(f"--storage-option {pair!r}: expected KEY=VALUE")
        try:
            out[key] = json.loads(value)
        except ValueError:
            out[key] = value
    return out


def options_for(where: str, options: dict[str, Any] | None) -> dict[str, Any] | None:
    """The storage options for ``where``: only a URL (or kerchunk references) takes them."""
    if options and not (is_url(where) or names_references(where)):
        raise UsageError(f"--storage-option is for URLs (s3://..., gs://..., https://...); "
                         f"{where!r} is a local path")
    return options


def open_node(where: str, options: dict[str, Any] | None, mode: str = "r") -> Array | Group:
    """The array or group at ``where`` (a path or URL; a node inside a store as
    ``store.zarr/path/to/node``), through zarrc's store layer."""
    return zarrc.open(where, mode=mode, storage_options=options_for(where, options))


def store_for(where: str, options: dict[str, Any] | None, mode: str) -> Store:
    """The store at ``where`` opened with ``mode``."""
    return make_store(where, mode=mode, storage_options=options_for(where, options))


def shape_option(value: str | None, name: str, none_ok: bool = False) -> tuple[int, ...] | str | None:
    """``--chunks 100,100`` as (100, 100); ``keep`` (or not given) as "keep";
    ``none`` (where ``none_ok``) as None."""
    if value is None or value == KEEP:
        return KEEP
    if none_ok and value.lower() == "none":
        return None
    try:
        parts = tuple(int(p) for p in value.replace("x", ",").split(","))
    except ValueError:
        raise UsageError(f"--{name} {value!r}: expected positive integers separated by commas "
                         f"(e.g. 256,256){' or none' if none_ok else ''}") from None
    if not parts or any(p <= 0 for p in parts):
        raise UsageError(f"--{name} {value!r}: every length must be a positive integer")
    return parts


SHUFFLES = {"noshuffle": 0, "shuffle": 1, "bitshuffle": 2}
BLOSC_CNAMES = ("lz4", "lz4hc", "blosclz", "zstd", "zlib", "snappy")


def _level(text: str, option: str, low: int, high: int) -> int:
    try:
        level = int(text)
    except ValueError:
        raise UsageError(f"--compressor {option!r}: level {text!r} is not an integer") from None
    if not low <= level <= high:
        raise UsageError(f"--compressor {option!r}: level {level} is not in {low}..{high}")
    return level


def compressor_option(value: str | None, zarr_format: int, itemsize: int) -> Any:
    """``--compressor`` as the compressors of ``create_array`` in ``zarr_format``:
    ``none`` -> None; ``zstd[:LEVEL]``; ``blosc[:CNAME[:LEVEL[:SHUFFLE]]]`` (CNAME
    lz4, lz4hc, blosclz, zstd, zlib; SHUFFLE noshuffle, shuffle, bitshuffle);
    ``gzip[:LEVEL]``; ``zlib[:LEVEL]`` (v2, or ``numcodecs.zlib`` in v3); a JSON
    codec configuration (v2: numcodecs' ``{"id": ...}``, v3: ``{"name": ...}``)."""
    if value is None or value == KEEP:
        return KEEP
    if value.lower() == "none":
        return None
    if value.lstrip().startswith(("{", "[")):
        try:
            return json.loads(value)
        except ValueError as exc:
            raise UsageError(f"--compressor {value!r}: not valid JSON ({exc})") from None
    name, *args = value.lower().split(":")
    if name == "zstd" and len(args) <= 1:
        level = _level(args[0], value, -131072, 22) if args else 0
        return ({"id": "zstd", "level": level} if zarr_format == 2 else
                {"name": "zstd", "configuration": {"level": level, "checksum": False}})
    if name in ("gzip", "zlib") and len(args) <= 1:
        level = _level(args[0], value, 0, 9) if args else (5 if name == "gzip" else 1)
        if zarr_format == 2:
            return {"id": name, "level": level}
        return {"name": "gzip" if name == "gzip" else "numcodecs.zlib",
                "configuration": {"level": level}}
    if name == "blosc" and len(args) <= 3:
        cname = args[0] if args else "lz4"
        if cname not in BLOSC_CNAMES:
            raise UsageError(f"--compressor {value!r}: blosc compressor {cname!r} is not one of "
                             f"{', '.join(BLOSC_CNAMES)}")
        clevel = _level(args[1], value, 0, 9) if len(args) > 1 else 5
        shuffle = args[2] if len(args) > 2 else "shuffle"
        if shuffle not in SHUFFLES:
            raise UsageError(f"--compressor {value!r}: shuffle {shuffle!r} is not one of "
                             f"{', '.join(SHUFFLES)}")
        if zarr_format == 2:
            return {"id": "blosc", "cname": cname, "clevel": clevel, "shuffle": SHUFFLES[shuffle],
                    "blocksize": 0}
        return {"name": "blosc", "configuration": {"cname": cname, "clevel": clevel, "shuffle": shuffle,
                                                   "typesize": itemsize, "blocksize": 0}}
    raise UsageError(f"--compressor {value!r}: expected none, zstd[:LEVEL], blosc[:CNAME[:LEVEL[:SHUFFLE]]], "
                     "gzip[:LEVEL], zlib[:LEVEL] or a JSON codec configuration")


def filters_option(value: str | None) -> Any:
    """``--filters``: ``none``, ``keep`` (the default), or a JSON list of codec
    configurations (v2: numcodecs' ``{"id": "delta", "dtype": "<i4"}``; v3:
    ``{"name": "transpose", "configuration": {"order": [1, 0]}}``)."""
    if value is None or value == KEEP:
        return KEEP
    if value.lower() == "none":
        return None
    try:
        filters = json.loads(value)
    except ValueError as exc:
        raise UsageError(f"--filters {value!r}: expected none or a JSON list of codec configurations "
                         f"({exc})") from None
    if isinstance(filters, dict):
        filters = [filters]
    if not isinstance(filters, list) or not all(isinstance(f, dict) for f in filters):
        raise UsageError(f"--filters {value!r}: expected a JSON list of codec configurations (objects)")
    return filters


def names_option(value: str | None) -> Any:
    """``--dimension-names y,x`` as ("y", "x"); ``none`` drops them; not given: keep."""
    if value is None or value == KEEP:
        return KEEP
    if value.lower() == "none":
        return None
    return tuple(n.strip() or None for n in value.split(","))


def json_safe(value: Any) -> Any:
    """``value`` as JSON can hold it (numpy scalars as Python numbers, NaN and
    infinities as the strings Zarr writes, bytes as lists)."""
    if isinstance(value, dict):
        return {str(k): json_safe(v) for k, v in value.items()}
    if isinstance(value, (list, tuple)):
        return [json_safe(v) for v in value]
    if hasattr(value, "item") and not isinstance(value, (str, bytes)):
        try:
            value = value.item()
        except (TypeError, ValueError):
            return str(value)
    if isinstance(value, float) and math.isnan(value):
        return "NaN"
    if isinstance(value, float) and value in (float("inf"), float("-inf")):
        return "Infinity" if value > 0 else "-Infinity"
    if isinstance(value, bytes):
        return list(value)
    if isinstance(value, complex):
        return [json_safe(value.real), json_safe(value.imag)]
    if value is None or isinstance(value, (bool, int, float, str)):
        return value
    return str(value)
