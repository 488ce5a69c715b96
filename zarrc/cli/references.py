"""``zarrc convert SRC DST --references``: a kerchunk JSON reference file (version
0 or 1, compressed or not, a path or URL) written as Parquet references in DST (a
directory or URL), in the layout fsspec's ``LazyReferenceMapper`` and
``kerchunk.df.refs_to_dataframe`` write and GDAL reads
(``zarrc.stores.reference_parquet_write``)."""

from __future__ import annotations

from argparse import Namespace

from zarrc.cli.options import UsageError, is_url, storage_options, store_for
from zarrc.stores.local import LocalStore
from zarrc.stores.reference import read_json_references
from zarrc.stores.reference_parquet_write import write_parquet_references
from zarrc.stores.reference_spec import ReferenceSet

# convert's options about arrays, which references (their data not rewritten) cannot take
ARRAY_OPTIONS = ("zarr_format", "chunks", "shards", "compressor", "filters", "dimension_names", "workers",
                 "consolidate")


def convert_references(args: Namespace) -> int:
    given = [f"--{name.replace('_', '-')}" for name in ARRAY_OPTIONS if getattr(args, name)]
    if given:
        raise UsageError(f"{', '.join(given)}: not with --references (the references are rewritten, "
                         "not the data they point to)")
    record_size = args.record_size
    if record_size < 1:
        raise UsageError(f"--record-size {record_size}: give at least 1")
    src_options = storage_options(args.storage_option) if is_url(args.src) else None
    if args.storage_option and not (is_url(args.src) or is_url(args.dst)):
        raise UsageError("--storage-option is for URLs (s3://..., gs://..., https://...); "
                         f"{args.src!r} and {args.dst!r} are local paths")
    dst_options = storage_options(args.dst_storage_option) if args.dst_storage_option else (
        storage_options(args.storage_option) if is_url(args.dst) else None)
    refs = ReferenceSet(read_json_references(args.src, target_options=src_options), args.src)
    # (a local DST is opened as a plain directory: one holding Parquet references would open as them)
    dst = store_for(args.dst, dst_options, mode="a") if is_url(args.dst) else LocalStore(args.dst, mode="a")
    try:
        other = next(iter(dst.list_prefix("")), None)
        if other is not None and not args.overwrite:
            raise UsageError(f"the destination {args.dst} is not empty (it holds {other!r}): "
                             "give --overwrite to replace it, or another destination")
        if other is not None and dst.get(".zmetadata") is None:
            raise UsageError(f"the destination {args.dst} holds data that are not Parquet references "
                             f"({other!r}); refusing to delete them")
        if other is not None:
            dst.delete_prefix("")
        arrays, count = write_parquet_references(refs, dst, record_size)
    finally:
        dst.close()
    if not args.quiet:
        print(f"wrote {count:,} reference(s) of {arrays:,} array(s) as Parquet references "
              f"({record_size:,} per record file)")
    return 0
