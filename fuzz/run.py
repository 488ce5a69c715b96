"""Run one of zarrc's fuzz targets (fuzz/targets.py) under atheris, or replay inputs.

    python fuzz/run.py TARGET [libFuzzer options] [CORPUS_DIR...]   # fuzz (atheris)
    python fuzz/run.py --replay TARGET FILE_OR_DIR...               # run inputs once
    python fuzz/run.py --list                                        # the targets

scripts/fuzz drives this for every target (see its --help).  atheris instruments
zarrc's Python modules for coverage (the kernels' C is built normally: a crash in
it is a signal, which libFuzzer reports with the input that caused it).
"""

from __future__ import annotations

import os
import sys

HERE = os.path.dirname(os.path.abspath(__file__))
# the zarrc modules each target's coverage is taken of (besides fuzz/targets.py):
# the codec objects' Python for the kernels' targets, unless named here
INSTRUMENT = {
    "shard_index": ["zarrc.codecs.shard_index"],
    "chunk": ["zarrc.engine", "zarrc.codecs", "zarrc.core.array"],
    "shard": ["zarrc.engine", "zarrc.codecs", "zarrc.core.array"],
    "metadata_v2": ["zarrc.metadata"],
    "metadata_v3": ["zarrc.metadata"],
    "consolidated": ["zarrc.metadata"],
}


def _inputs(paths: list[str]) -> list[str]:
    files = []
    for p in paths:
        if os.path.isdir(p):
            files += sorted(os.path.join(p, f) for f in os.listdir(p) if not f.startswith("."))
        elif os.path.exists(p):
            files.append(p)
    return files


def main(argv: list[str]) -> int:
    sys.path.insert(0, HERE)
    if argv[:1] == ["--list"]:
        import targets
        print("\n".join(targets.TARGETS))
        return 0
    if argv[:1] == ["--replay"]:
        import targets
        name, paths = argv[1], argv[2:]
        files = _inputs(paths)
        for f in files:
            with open(f, "rb") as fh:
                data = fh.read()
            try:
                targets.run(name, data)
            except BaseException:
                print(f"{name}: {f} fails:", file=sys.stderr)
                raise
        print(f"{name}: {len(files)} inputs passed")
        return 0
    if not argv:
        print(__doc__, file=sys.stderr)
        return 2
    import atheris
    name = argv[0]
    # instrument only the Python the target runs (instrumenting all of zarrc costs
    # seconds of start-up per target)
    include = ["targets"] + INSTRUMENT.get(name, ["zarrc.codecs"])
    with atheris.instrument_imports(include=include):
        import targets

        import zarrc
        import zarrc.metadata.consolidated  # noqa: F401
        from zarrc import codecs  # noqa: F401
    if name not in targets.TARGETS:
        print(f"no target {name!r}: {', '.join(targets.TARGETS)}", file=sys.stderr)
        return 2
    targets.mark = atheris.instrument_func(targets.mark)   # (made by exec: not instrumented yet)
    run = targets.run

    def test_one_input(data: bytes) -> None:
        run(name, data)

    if name in ("chunk", "shard"):
        targets._chunk_arrays(name == "shard")     # made once, before fuzzing
    atheris.Setup([sys.argv[0]] + argv[1:], test_one_input)
    atheris.Fuzz()
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
