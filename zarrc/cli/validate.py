"""``zarrc validate``: every node's metadata parsed as the specification says
(zarrc's parsers are strict: what they refuse is invalid), members that cannot be
opened, consolidated metadata that disagrees with the nodes' own documents; with
``--data``, every stored chunk (shard) decoded, the damaged ones listed by key.

Problems go to stdout, one a line (``error: ...``, ``warning: ...``); the exit
status is 0 when there is no error, 1 otherwise."""

from __future__ import annotations

import itertools
import warnings
from argparse import Namespace
from collections.abc import Iterator
from concurrent.futures import ThreadPoolExecutor
from typing import Any

import zarrc
from zarrc.cli.options import open_node
from zarrc.core.array import Array
from zarrc.core.group import Group
from zarrc.errors import ZarrcError
from zarrc.runtime.config import config


class Report:
    def __init__(self) -> None:
        self.errors = 0
        self.warnings = 0

    def error(self, text: str) -> None:
        self.errors += 1
        print(f"error: {text}", flush=True)

    def warning(self, text: str) -> None:
        self.warnings += 1
        print(f"warning: {text}", flush=True)


def _one_line(exc: BaseException) -> str:
    return " ".join(str(exc).split()) or type(exc).__name__


def _walk(args: Namespace, report: Report) -> list[tuple[str, Array | Group]]:
    """The node at ``args.path`` and every node below it that opens, the others
    reported (and what the parsers warn of).  A root that does not open raises."""
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        try:
            node = open_node(args.path, args.storage_options)
            nodes: list[tuple[str, Array | Group]] = [(node.path.strip("/"), node)]
            if isinstance(node, Group):
                nodes += [(m.path.strip("/"), m) for _, m in node.members(None)]
        finally:
            for w in caught:
                text = " ".join(str(w.message).split())
                (report.error if "is skipped" in text else report.warning)(text)
    return nodes


def _check_consolidated(group: Group, where: str, options: Any, report: Report) -> None:
    """The consolidated metadata against the nodes' own documents."""
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        plain = zarrc.open(group.store, path=group.path, mode="r", use_consolidated=False)
        assert isinstance(plain, Group)
        seen = {name: node.metadata.to_json() for name, node in group.members(None)}
        real = {name: node.metadata.to_json() for name, node in plain.members(None)}
    for name in sorted(set(seen) | set(real)):
        if name not in real:
            report.error(f"consolidated metadata lists {name}, which has no metadata document")
        elif name not in seen:
            report.error(f"{name} is missing from the consolidated metadata")
        elif seen[name] != real[name]:
            report.error(f"the consolidated metadata of {name} differs from its own document")


def stored_boxes(a: Array) -> Iterator[tuple[str, tuple[slice, ...]]]:
    """(store key, region) of every stored chunk (shard) of ``a``."""
    sizes = a.write_chunk_sizes
    starts = [list(itertools.accumulate(s, initial=0)) for s in sizes]
    for coords in sorted(a._stored_chunk_coords()):
        key = a._encoding.encode(coords, a._prefix)
        yield key, tuple(slice(starts[d][c], starts[d][c] + sizes[d][c]) for d, c in enumerate(coords))


def check_data(a: Array, report: Report) -> int:
    """Decode every stored chunk (shard) of ``a``; report each that fails by key.
    Returns how many were decoded."""
    boxes: list[tuple[str, tuple[slice, ...]]]
    if a.ndim == 0:
        boxes = [(a._encoding.encode((), a._prefix), ())] if a.nchunks_initialized else []
    else:
        boxes = list(stored_boxes(a))

    def decode(item: tuple[str, Any]) -> str | None:
        key, box = item
        try:
            a[box]
        except (ZarrcError, ValueError, OSError) as exc:
            return f"damaged chunk {key}: {_one_line(exc)}"
        return None

    with ThreadPoolExecutor(max(1, config.threads)) as pool:
        for problem in pool.map(decode, boxes):
            if problem:
                report.error(problem)
    return len(boxes)


def validate(args: Namespace) -> int:
    report = Report()
    nodes = _walk(args, report)         # (a root that does not open: main's one line on stderr)
    root = nodes[0][1]
    if isinstance(root, Group) and root.consolidated:
        _check_consolidated(root, args.path, args.storage_options, report)
    arrays = [(p, n) for p, n in nodes if isinstance(n, Array)]
    decoded = 0
    if args.data:
        for _, a in arrays:
            decoded += check_data(a, report)
    summary = f"{len(nodes):,} node(s), {len(arrays):,} array(s)"
    if args.data:
        summary += f", {decoded:,} stored chunk(s)/shard(s) decoded"
    if report.errors:
        print(f"invalid: {report.errors:,} error(s), {report.warnings:,} warning(s) in {summary}")
        return 1
    print(f"valid: {summary}" + (f" ({report.warnings:,} warning(s))" if report.warnings else ""))
    return 0
