"""``zarrc convert SRC DST``: the plan (each destination node's metadata, from the
source's and the options) and the command; the data are streamed by
:mod:`zarrc.cli.convert_units`.

The options apply to every array converted: ``--chunks`` / ``--shards`` must have
each array's number of dimensions.  Not given, a setting is the source array's
(its codecs translated when the format changes: numcodecs' zstd, blosc and gzip
become the v3 codecs of those names and back, other numcodecs codecs
``numcodecs.<id>``)."""

from __future__ import annotations

import copy
from argparse import Namespace
from pathlib import Path
from typing import Any

import zarrc
from zarrc.cli import convert_units, references
from zarrc.cli.convert_units import ArrayPlan, GroupPlan
from zarrc.cli.options import (
    KEEP,
    SHUFFLES,
    UsageError,
    compressor_option,
    filters_option,
    is_url,
    names_option,
    open_node,
    shape_option,
    storage_options,
    store_for,
)
from zarrc.codecs._base import BYTES_TO_BYTES
from zarrc.codecs.chain import CodecChain
from zarrc.codecs.registry import codec_class
from zarrc.core.array import Array
from zarrc.core.create import array_metadata
from zarrc.core.group import Group

SHUFFLE_NAMES = {v: k for k, v in SHUFFLES.items()}


def v2_to_v3(config: dict[str, Any], itemsize: int) -> dict[str, Any]:
    """A numcodecs configuration as a v3 codec."""
    d = dict(config)
    name = d.pop("id")
    if name == "zstd":
        return {"name": "zstd", "configuration": {"level": d.get("level", 0),
                                                  "checksum": bool(d.get("checksum", False))}}
    if name == "blosc":
        shuffle = d.get("shuffle", 1)
        return {"name": "blosc", "configuration": {
            "cname": d.get("cname", "lz4"), "clevel": d.get("clevel", 5),
            "shuffle": SHUFFLE_NAMES.get(shuffle, "shuffle"), "typesize": itemsize,
            "blocksize": d.get("blocksize", 0)}}
    if name == "gzip":
        return {"name": "gzip", "configuration": {"level": d.get("level", 1)}}
    return {"name": f"numcodecs.{name}", "configuration": d}


def v3_to_v2(codec: dict[str, Any], where: str) -> dict[str, Any]:
    """A v3 codec as a numcodecs configuration (UsageError where there is none)."""
    name, conf = codec["name"], dict(codec.get("configuration") or {})
    if name == "zstd":
        return {"id": "zstd", "level": conf.get("level", 0), **({"checksum": True} if conf.get("checksum") else {})}
    if name == "blosc":
        return {"id": "blosc", "cname": conf.get("cname", "lz4"), "clevel": conf.get("clevel", 5),
                "shuffle": SHUFFLES.get(conf.get("shuffle", "shuffle"), 1), "blocksize": conf.get("blocksize", 0)}
    if name == "gzip":
        return {"id": "gzip", "level": conf.get("level", 1)}
    if name.startswith("numcodecs."):
        return {"id": name[len("numcodecs."):], **conf}
    raise UsageError(f"{where}: the v3 codec {name!r} has no Zarr v2 form; give --compressor / --filters")


def _source_codecs(a: Array) -> tuple[list[dict], Any, list[dict]]:
    """(filters, serializer, compressors) of ``a`` as JSON (v2: serializer None)."""
    md = a.metadata.to_json()
    if a.zarr_format == 2:
        return list(md.get("filters") or []), None, [md["compressor"]] if md.get("compressor") else []
    codecs = md["codecs"]
    if codecs and codecs[0]["name"] == "sharding_indexed":
        codecs = codecs[0]["configuration"]["codecs"]
    chain = CodecChain(codecs)
    return ([c.to_dict() for c in chain.array_to_array], chain.array_to_bytes.to_dict(),
            [c.to_dict() for c in chain.bytes_to_bytes])


def _dimension_names(a: Array) -> Any:
    if a.dimension_names is not None:
        return tuple(a.dimension_names)
    names = a.attrs.get("_ARRAY_DIMENSIONS")
    if isinstance(names, list) and len(names) == a.ndim and all(isinstance(n, str) for n in names):
        return tuple(names)
    return None


def _check_ndim(value: Any, a: Array, where: str, option: str) -> None:
    if isinstance(value, tuple) and len(value) != a.ndim:
        raise UsageError(f"--{option} {','.join(map(str, value))}: {len(value)} length(s), but {where} "
                         f"has {a.ndim} dimension(s) {a.shape}")


def plan_array(a: Array, path: str, args: Namespace) -> ArrayPlan:
    """The destination metadata of the source array ``a``."""
    where = f"array /{path}" if path else "the source array"
    fmt = args.zarr_format or a.zarr_format
    same = fmt == a.zarr_format
    chunks = shape_option(args.chunks, "chunks") if a.ndim else KEEP   # (a 0-d array: one chunk)
    shards = shape_option(args.shards, "shards", none_ok=True) if a.ndim else KEEP
    _check_ndim(chunks, a, where, "chunks")
    _check_ndim(shards, a, where, "shards")
    chunks = a.chunks if not isinstance(chunks, tuple) else chunks
    if fmt == 2 and shards not in (KEEP, None):
        raise UsageError("--shards: Zarr v2 has no shards (give --zarr-format 3)")
    if shards == KEEP:
        shards = a.shards if fmt == 3 else None
        if isinstance(shards, tuple) and any(s % c for s, c in zip(shards, chunks)):
            raise UsageError(f"{where}: its shards {shards} are not a multiple of the chunks {chunks}; "
                             "give --shards (or --shards none)")
    itemsize = a.dtype.itemsize
    filters, serializer, compressors = _source_codecs(a)
    md = a.metadata
    vlen = [f for f in filters if str(f.get("id", "")).startswith("vlen")] if a.dtype.kind == "O" else []
    filters = [f for f in filters if f not in vlen]     # (v2 object arrays: their type's codec, made again)
    compressor = compressor_option(args.compressor, fmt, itemsize)
    if compressor != KEEP:
        compressors = [] if compressor is None else [compressor]
    elif not same:
        compressors = ([v2_to_v3(c, itemsize) for c in compressors] if fmt == 3
                       else [v3_to_v2(c, where) for c in compressors])
    given_filters = filters_option(args.filters)
    if given_filters != KEEP:
        filters = given_filters or []
    elif not same and fmt == 3:
        # v2 filters on bytes (shuffle, zlib: kerchunk puts HDF5's there) are bytes -> bytes codecs in
        # v3, after the serializer and before the compressor
        filters = [v2_to_v3(c, itemsize) for c in filters]
        on_bytes = [c for c in filters if codec_class(c["name"]).category == BYTES_TO_BYTES]
        filters = [c for c in filters if c not in on_bytes]
        compressors = on_bytes + compressors
    elif not same:
        filters = [v3_to_v2(c, where) for c in filters]
    attrs = copy.deepcopy(a.attrs.asdict())
    names = names_option(args.dimension_names)
    names = _dimension_names(a) if names == KEEP else names
    if names is not None and len(names) != a.ndim:
        raise UsageError(f"--dimension-names: {len(names)} name(s), but {where} has {a.ndim} dimension(s)")
    kws: dict[str, Any] = {"shape": a.shape, "chunks": chunks, "shards": shards, "zarr_format": fmt,
                           "compressors": compressors or None, "filters": filters or None}
    if a.zarr_format == 3 and same:
        kws["dtype"] = md.data_type
    elif a.dtype.kind == "O":       # v2 object arrays: their object codec names the type
        kws["dtype"] = bytes if any(f.get("id") == "vlen-bytes" for f in vlen) else str
    else:
        kws["dtype"] = a.dtype
    if md.fill_value is not None or fmt == 2:
        kws["fill_value"] = md.fill_value
    if fmt == 3:
        attrs.pop("_ARRAY_DIMENSIONS", None)
        kws["dimension_names"] = names
        if same and serializer is not None:
            kws["serializer"] = serializer
        if same:
            kws["chunk_key_encoding"] = md.to_json()["chunk_key_encoding"]
    else:
        attrs.pop("_ARRAY_DIMENSIONS", None)
        if names is not None and all(isinstance(n, str) for n in names):
            attrs["_ARRAY_DIMENSIONS"] = list(names)
        if same:
            kws["order"] = md.order
            kws["dimension_separator"] = md.to_json().get("dimension_separator", ".")
    kws["attributes"] = attrs
    return ArrayPlan(path, a, array_metadata(**kws))


def plan(source: Array | Group, args: Namespace) -> tuple[list[GroupPlan], list[ArrayPlan]]:
    """Every destination node: the groups (top down) and the arrays."""
    if isinstance(source, Array):
        return [], [plan_array(source, "", args)]
    fmt = args.zarr_format or source.zarr_format
    groups = [GroupPlan("", fmt, copy.deepcopy(source.attrs.asdict()))]
    arrays = []
    for name, node in source.members(None):
        if isinstance(node, Group):
            groups.append(GroupPlan(name, fmt, copy.deepcopy(node.attrs.asdict())))
        else:
            arrays.append(plan_array(node, name, args))
    return groups, arrays


def convert(args: Namespace) -> int:
    if args.references:
        return references.convert_references(args)
    if not is_url(args.src) and not is_url(args.dst):
        src_path, dst_path = Path(args.src).resolve(), Path(args.dst).resolve()
        if src_path == dst_path or src_path in dst_path.parents or dst_path in src_path.parents:
            raise UsageError(f"SRC {args.src} and DST {args.dst} overlap: convert into another place")
    src_options = storage_options(args.storage_option)
    dst_options = storage_options(args.dst_storage_option) if args.dst_storage_option else (
        src_options if is_url(args.dst) else None)
    if src_options and not (is_url(args.src) or is_url(args.dst)):
        raise UsageError("--storage-option is for URLs (s3://..., gs://..., https://...); "
                         f"{args.src!r} and {args.dst!r} are local paths")
    source = open_node(args.src, src_options if is_url(args.src) else None)
    groups, arrays = plan(source, args)
    if args.workers is not None and args.workers < 1:
        raise UsageError(f"--workers {args.workers}: give at least 1")
    dst = store_for(args.dst, dst_options, mode="a")
    try:
        result = convert_units.run(groups, arrays, dst, args)
        if isinstance(source, Group) and (source.consolidated or args.consolidate):
            zarrc.consolidate_metadata(dst)
        convert_units.finish(dst)
    finally:
        dst.close()
    if not args.quiet:
        print(result)
    return 0
