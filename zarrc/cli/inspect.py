"""``zarrc info``, ``tree``, ``ls`` and ``consolidate``: what a node holds, read
through zarrc's API (metadata, and for ``info`` a listing of the stored keys)."""

from __future__ import annotations

import json
from argparse import Namespace
from typing import Any

import zarrc
from zarrc.cli.options import json_safe, open_node, options_for, store_for
from zarrc.core.array import Array
from zarrc.core.group import Group


def codecs_of(a: Array) -> list[Any]:
    """The array's codecs as their JSON: v3 ``codecs``; v2 its filters, then its
    compressor (numcodecs' configurations)."""
    md = a.metadata.to_json()
    if a.zarr_format == 3:
        return list(md.get("codecs") or [])
    return list(md.get("filters") or []) + ([md["compressor"]] if md.get("compressor") else [])


def dimension_names_of(a: Array) -> list[str | None] | None:
    """v3 ``dimension_names``, or v2's ``_ARRAY_DIMENSIONS`` attribute (xarray, GDAL)."""
    if a.dimension_names is not None:
        return list(a.dimension_names)
    names = a.attrs.get("_ARRAY_DIMENSIONS")
    if isinstance(names, list) and len(names) == a.ndim:
        return names
    return None


def array_info(a: Array, path: str) -> dict[str, Any]:
    """What ``zarrc info`` says of an array, as JSON values."""
    md_json = a.metadata.to_json()
    stored = a.nbytes_stored()
    return json_safe({
        "node_type": "array", "path": path, "zarr_format": a.zarr_format, "shape": a.shape,
        "dtype": md_json["data_type"] if a.zarr_format == 3 else md_json["dtype"],
        "chunks": a.chunks, "shards": a.shards, "codecs": codecs_of(a),
        "fill_value": md_json["fill_value"], "dimension_names": dimension_names_of(a),
        "order": a.order, "nbytes": a.nbytes, "stored_bytes": stored,
        "compression_ratio": round(a.nbytes / stored, 3) if stored else None,
        "chunks_initialized": a.nchunks_initialized, "nchunks": a.nchunks,
        "shards_initialized": a._nshards_initialized() if a.shards else None,
        "attributes": a.attrs.asdict(),
    })


def group_info(g: Group, path: str) -> dict[str, Any]:
    """What ``zarrc info`` says of a group: its members, counted, with each array's
    shape, data type, chunks and shards (no data read, no keys listed)."""
    members = g.members(None)
    arrays = [(name, node) for name, node in members if isinstance(node, Array)]
    return json_safe({
        "node_type": "group", "path": path, "zarr_format": g.zarr_format,
        "consolidated": g.consolidated, "groups": sum(1 for _, n in members if isinstance(n, Group)),
        "arrays": len(arrays), "nbytes": sum(a.nbytes for _, a in arrays),
        "attributes": g.attrs.asdict(),
        "members": [{"path": name, "shape": a.shape, "dtype": str(a.dtype), "chunks": a.chunks,
                     "shards": a.shards} for name, a in arrays],
    })


def _human(n: int) -> str:
    size = float(n)
    for unit in ("B", "KiB", "MiB", "GiB", "TiB"):
        if size < 1024 or unit == "TiB":
            return f"{n:,} B" if unit == "B" else f"{size:.1f} {unit} ({n:,} B)"
        size /= 1024
    return str(n)


def _text(info: dict[str, Any]) -> str:
    rows: list[tuple[str, Any]]
    if info["node_type"] == "array":
        ratio = info["compression_ratio"]
        init = f"{info['chunks_initialized']:,} of {info['nchunks']:,}"
        if info["shards"] is not None:
            init += f" (in {info['shards_initialized']:,} shards)"
        rows = [("Type", "array"), ("Path", info["path"] or "/"), ("Zarr format", info["zarr_format"]),
                ("Shape", tuple(info["shape"])), ("Data type", info["dtype"]),
                ("Chunks", tuple(info["chunks"])),
                ("Shards", None if info["shards"] is None else tuple(info["shards"])),
                ("Codecs", json.dumps(info["codecs"])), ("Fill value", json.dumps(info["fill_value"])),
                ("Dimension names", info["dimension_names"]), ("Order", info["order"]),
                ("Bytes", _human(info["nbytes"])), ("Stored bytes", _human(info["stored_bytes"])),
                ("Compression ratio", "-" if ratio is None else f"{ratio:.2f}"),
                ("Chunks initialized", init)]
    else:
        rows = [("Type", "group"), ("Path", info["path"] or "/"), ("Zarr format", info["zarr_format"]),
                ("Consolidated", info["consolidated"]), ("Groups", info["groups"]),
                ("Arrays", info["arrays"]), ("Bytes (arrays)", _human(info["nbytes"]))]
    rows.append(("Attributes", json.dumps(info["attributes"]) if info["attributes"] else "-"))
    lines = [f"{k:<19}: {v}" for k, v in rows]
    if info["node_type"] == "group" and info["members"]:
        lines.append("Members:")
        for m in info["members"]:
            shards = "" if m["shards"] is None else f" shards {tuple(m['shards'])}"
            lines.append(f"  {m['path']}  {tuple(m['shape'])} {m['dtype']} chunks {tuple(m['chunks'])}{shards}")
    return "\n".join(lines)


def _label(node: Array | Group, where: str) -> str:
    """A node's name: its base name in its store, or the last part of ``where``."""
    return node.basename or where.rstrip("/").rsplit("/", 1)[-1] or "/"


def info(args: Namespace) -> int:
    node = open_node(args.path, args.storage_options)
    path = node.path.strip("/")
    result = array_info(node, path) if isinstance(node, Array) else group_info(node, path)
    print(json.dumps(result, indent=2) if args.json else _text(result))
    return 0


def tree(args: Namespace) -> int:
    node = open_node(args.path, args.storage_options)
    if isinstance(node, Array):
        print(f"{_label(node, args.path)} {node.shape} {node.dtype}")
    else:
        print(node.tree(level=args.level))
    return 0


def ls(args: Namespace) -> int:
    node = open_node(args.path, args.storage_options)
    if isinstance(node, Array):
        name = _label(node, args.path)
        print(f"{name}  array  v{node.zarr_format} {node.shape} {node.dtype}" if args.long else name)
        return 0
    for name, member in node.members(None if args.recursive else 0):
        if not args.long:
            print(name + ("/" if isinstance(member, Group) else ""))
        elif isinstance(member, Group):
            print(f"{name}/  group  v{member.zarr_format}")
        else:
            shards = "" if member.shards is None else f" shards {member.shards}"
            print(f"{name}  array  v{member.zarr_format} {member.shape} {member.dtype} "
                  f"chunks {member.chunks}{shards}")
    return 0


def consolidate(args: Namespace) -> int:
    store = store_for(args.path, args.storage_options, mode="a")
    try:
        group = zarrc.consolidate_metadata(store)
        count = len(group.members(None))
    finally:
        store.close()
    print(f"consolidated the metadata of {count:,} node(s) below / "
          f"({'.zmetadata' if group.zarr_format == 2 else 'zarr.json'})")
    return 0


def model(args: Namespace) -> int:
    """The hierarchy's ZEP 6 description (``zarrc.model.from_store``), as JSON."""
    from zarrc.model import from_store

    spec = from_store(args.path, depth=args.depth, storage_options=options_for(args.path, args.storage_options))
    print(json.dumps(json_safe(spec.to_dict()), indent=2))
    return 0
