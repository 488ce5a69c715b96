"""``zarrc overviews``: a multiscale pyramid built as GDAL's BuildOverviews does
(``zarrc.build_overviews``: the spatial dimensions reduced, each level from the one
before, the multiscales layout written)."""

from __future__ import annotations

from argparse import Namespace

import zarrc
from zarrc.cli.options import UsageError, open_node


def overviews(args: Namespace) -> int:
    factors = None
    if args.factors is not None:
        try:
            factors = [int(f) for f in args.factors.split(",")] if args.factors.lower() != "none" else []
        except ValueError:
            raise UsageError(f"--factors {args.factors!r}: expected integers separated by commas "
                             "(e.g. 2,4,8), or none to remove the overviews") from None
    node = open_node(args.path, args.storage_options, mode="r+")
    pyramid = zarrc.build_overviews(node, factors, levels=args.levels, method=args.method)
    if factors == []:
        print("removed the overviews")
    else:
        print(f"built {max(0, len(pyramid.levels) - 1)} overview level(s)")
    return 0
