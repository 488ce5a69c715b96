"""The ``zarrc`` command: its argument parser, each command's dispatch, and the
one place errors become a line on stderr and an exit status (1: the command
failed, or ``validate`` found problems; 2: a bad option; 130: interrupted).
``ZARRC_TRACEBACK=1`` in the environment shows a failure's traceback instead."""

from __future__ import annotations

import argparse
import os
import sys
import warnings
from collections.abc import Sequence
from typing import Any

from zarrc.cli.convert_units import JOURNAL, UNIT_BYTES
from zarrc.cli.options import UsageError, storage_options
from zarrc.stores.reference_parquet_write import RECORD_SIZE

WHERE = ("a path (a directory, a .zip file, a node inside a store as store.zarr/group/array) or a URL "
         "(s3://, gs://, az://, https://, file://, memory://, any fsspec URL)")

CONVERT_HELP = f"""\
Copy SRC (an array, or a group and everything below it) to DST, changing what the
options say: rechunk (--chunks), reshard (--shards), recompress (--compressor,
--filters), rename dimensions (--dimension-names), convert Zarr v2 <-> v3
(--zarr-format).  Attributes are copied as they are (GDAL's _CRS, the spatial: and
proj: conventions, units, add_offset / scale_factor, _FillValue); v2's
_ARRAY_DIMENSIONS becomes v3's dimension_names and back.  A group's consolidated
metadata is written again.

Memory: the destination is written in units, one destination shard each (sharded
destinations), else a block of whole destination chunks of at most {UNIT_BYTES >> 20} MiB
decoded.  At most WORKERS units are in flight, each held twice at most (its
values, and its encoded bytes while they are written), plus one source chunk
being decoded per thread: the peak is about
WORKERS x 2 x (unit size) + threads x (source chunk size) above the interpreter's
own, whatever the size of the array.  A destination shard is written whole: choose
shards that fit in memory WORKERS times over.

Resuming: the progress is journaled in DST/{JOURNAL}/ (the job, then a marker after
each unit naming its stored keys and their sizes).  Rerun the same command after an
interruption: the units whose markers verify (each key still holds the bytes it
did) are skipped, the others written again (SRC must not change in between: its
data are not checked again).  The journal is removed when the
conversion finishes.  --overwrite starts again from nothing (DST must hold Zarr
data or nothing).

Each unit is read from SRC with one native read and written with one native write
(the chunks decoded and encoded in parallel without the GIL); WORKERS threads work
on units at once.  A progress bar (tqdm) shows on stderr when it is a terminal.

References: with --references, SRC is a kerchunk JSON reference file and DST the
directory of Parquet references written from it (as GDAL's
CONVERT_TO_KERCHUNK_PARQUET_REFERENCE=YES does): DST/.zmetadata and, per array,
DST/<array>/refs.<n>.parq of --record-size references each, which zarrc, fsspec's
ReferenceFileSystem, kerchunk and GDAL read.  One array's references are in memory
at a time (besides the parsed JSON)."""


def _add_store_options(p: argparse.ArgumentParser) -> None:
    p.add_argument("--storage-option", "-S", action="append", metavar="KEY=VALUE", default=None,
                   help="an option of the URL's store (repeatable), e.g. anon=true, region=eu-west-1, "
                        "endpoint_url=http://127.0.0.1:9000; a JSON value (true, 3) is taken as JSON")


def parser() -> argparse.ArgumentParser:
    top = argparse.ArgumentParser(
        prog="zarrc", description="Inspect, validate and convert Zarr (v2 and v3) arrays and groups. "
        f"Every PATH is {WHERE}.")
    top.add_argument("--version", action="store_true", help="print zarrc's version and exit")
    sub = top.add_subparsers(dest="command", metavar="COMMAND")

    p = sub.add_parser("info", help="what an array or group is and holds",
                       description="Print an array's format, shape, data type, chunks, shards, codecs, "
                       "fill value, dimension names, stored bytes, compression ratio and chunks "
                       "initialized (the store's keys are listed); for a group, a summary of its members.")
    p.add_argument("path", metavar="PATH")
    p.add_argument("--json", action="store_true", help="print JSON")
    _add_store_options(p)

    p = sub.add_parser("tree", help="the hierarchy below a group",
                       description="Print the hierarchy below a group, with each array's shape and type.")
    p.add_argument("path", metavar="PATH")
    p.add_argument("--level", "-L", type=int, default=None, help="at most this many levels down")
    _add_store_options(p)

    p = sub.add_parser("ls", help="a group's members",
                       description="List a group's members (groups end in /).")
    p.add_argument("path", metavar="PATH")
    p.add_argument("--long", "-l", action="store_true", help="with the format, shape, type, chunks, shards")
    p.add_argument("--recursive", "-r", action="store_true", help="every member below, by its path")
    _add_store_options(p)

    p = sub.add_parser("validate", help="check metadata (and data) against the specification",
                       description="Check every node's metadata against the specification, the "
                       "members that cannot be opened, and consolidated metadata against the nodes' "
                       "own documents; with --data, decode every stored chunk (shard) and list the "
                       "damaged ones by key.  Exit status 0: valid; 1: problems (listed on stdout).")
    p.add_argument("path", metavar="PATH")
    p.add_argument("--data", action="store_true", help="also decode every stored chunk")
    _add_store_options(p)

    p = sub.add_parser("convert", help="rechunk, reshard, recompress, convert v2 <-> v3",
                       description=CONVERT_HELP, formatter_class=argparse.RawDescriptionHelpFormatter)
    p.add_argument("src", metavar="SRC")
    p.add_argument("dst", metavar="DST")
    p.add_argument("--zarr-format", type=int, choices=(2, 3), default=None,
                   help="the destination's format (default: the source's)")
    p.add_argument("--chunks", metavar="N,N,...",
                   help="the chunk shape (inside shards, when sharded; default: the source's)")
    p.add_argument("--shards", metavar="N,N,...|none",
                   help="the shard shape, a multiple of the chunks (v3; default: the source's, "
                        "or none); none: unsharded")
    p.add_argument("--compressor", metavar="SPEC",
                   help="none, zstd[:LEVEL], blosc[:CNAME[:LEVEL[:SHUFFLE]]] (e.g. blosc:lz4:5, "
                        "blosc:zstd:3:bitshuffle), gzip[:LEVEL], zlib[:LEVEL], or a codec's JSON "
                        "(default: the source's)")
    p.add_argument("--filters", metavar="JSON|none",
                   help='a JSON list of filter codecs (v2: [{"id": "delta", "dtype": "<i4"}], v3: '
                        '[{"name": "transpose", ...}]), or none (default: the source\'s)')
    p.add_argument("--dimension-names", metavar="NAME,NAME,...|none",
                   help="the dimension names (v3 dimension_names, v2 _ARRAY_DIMENSIONS; default: "
                        "the source's)")
    p.add_argument("--workers", "-j", type=int, default=None,
                   help="units converted at once (default: the cores this process may use, plus one, "
                        "whose reads and writes overlap the others' codecs; each costs the memory stated above)")
    p.add_argument("--overwrite", action="store_true",
                   help="replace what DST holds (Zarr data only), and start again")
    p.add_argument("--consolidate", action="store_true",
                   help="consolidate the destination group's metadata (done anyway when the source's is)")
    p.add_argument("--references", action="store_true",
                   help="SRC is a kerchunk JSON reference file (v0 or v1, templates and gen "
                        "expanded): write it as Parquet references in the directory DST (fsspec's "
                        "and kerchunk's layout, which GDAL reads); the data are not copied")
    p.add_argument("--record-size", type=int, default=RECORD_SIZE, metavar="N",
                   help=f"with --references: references per Parquet record file (default: {RECORD_SIZE:,})")
    p.add_argument("--quiet", "-q", action="store_true", help="no progress bar and no summary")
    _add_store_options(p)
    p.add_argument("--dst-storage-option", action="append", metavar="KEY=VALUE", default=None,
                   help="an option of DST's store when it differs from SRC's (repeatable; "
                        "default: --storage-option, when DST is a URL)")

    p = sub.add_parser("model", help="a hierarchy's ZEP 6 description, as JSON",
                       description="Print the ZEP 6 object model of the array or group (zarrc.model: "
                       "its metadata only, from consolidated metadata when there is some), as JSON.")
    p.add_argument("path", metavar="PATH")
    p.add_argument("--depth", type=int, default=None, help="levels of members described (default: all)")
    _add_store_options(p)

    p = sub.add_parser("overviews", help="build a multiscale pyramid (as GDAL does)",
                       description="Build the overviews of an array, or of every array of 2 or more "
                       "dimensions in a group, as GDAL's BuildOverviews does (zarrc.build_overviews): "
                       "the spatial dimensions reduced, each level from the one before, in parallel and "
                       "in blocks, the codecs those of the source; the levels are groups ovr_<factor>x "
                       "beside the array and the multiscales layout is written.")
    p.add_argument("path", metavar="PATH")
    p.add_argument("--factors", metavar="F,F,...|none",
                   help="each level's reduction (2,4,8; each a multiple of the one before); none removes "
                        "the overviews (default: halve until a level fits in one chunk)")
    p.add_argument("--levels", type=int, default=None, help="n levels: factors 2, 4, ..., 2**n")
    p.add_argument("--method", choices=("mean", "nearest", "mode"), default="mean",
                   help="how a window becomes a value (default: mean)")
    _add_store_options(p)

    p = sub.add_parser("consolidate", help="write a group's consolidated metadata",
                       description="Gather the metadata of every node below the group into "
                       "consolidated metadata (v2: .zmetadata; v3: the group's zarr.json).")
    p.add_argument("path", metavar="PATH")
    _add_store_options(p)
    return top


def _one_line(exc: BaseException) -> str:
    text = " ".join(str(exc).split())
    if isinstance(exc, KeyError) and text.startswith(("'", '"')):
        text = text[1:-1]
    return text or type(exc).__name__


def _format_warning(message: Any, category: Any, filename: str, lineno: int, line: Any = None) -> str:
    return f"zarrc: warning: {' '.join(str(message).split())}\n"


def _dispatch(args: argparse.Namespace) -> int:
    from zarrc.cli import convert, inspect, overviews, validate

    commands = {"info": inspect.info, "tree": inspect.tree, "ls": inspect.ls,
                "consolidate": inspect.consolidate, "validate": validate.validate,
                "convert": convert.convert, "model": inspect.model, "overviews": overviews.overviews}
    if args.command != "convert":
        args.storage_options = storage_options(args.storage_option)
    result: int = commands[args.command](args)
    return result


def main(argv: Sequence[str] | None = None) -> int:
    """Run the command line with ``argv`` (default: ``sys.argv[1:]``); returns the
    exit status."""
    args = parser().parse_args(argv)
    if args.version:
        import zarrc
        print(f"zarrc {zarrc.__version__}")
        return 0
    if args.command is None:
        parser().print_help()
        return 2
    warnings.formatwarning = _format_warning
    try:
        return _dispatch(args)
    except UsageError as exc:
        print(f"zarrc {args.command}: error: {_one_line(exc)}", file=sys.stderr)
        return 2
    except KeyboardInterrupt:
        print(f"zarrc {args.command}: interrupted", file=sys.stderr)
        return 130
    except BrokenPipeError:
        sys.stderr.close()          # (zarrc ls ... | head: the reader left; say nothing)
        return 1
    except Exception as exc:        # every failure is one line, never a traceback
        if os.environ.get("ZARRC_TRACEBACK"):
            raise
        print(f"zarrc {args.command}: error: {_one_line(exc)}", file=sys.stderr)
        return 1
