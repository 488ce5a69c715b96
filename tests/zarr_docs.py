"""zarr-python's own documentation examples, run against zarrc: where the pages come
from, how they are cut into blocks, and how a page's examples run with ``zarr`` bound
to zarrc.  A plain module, used by test_zarr_docs.py (nothing of zarr-python is kept
in this repository: the pages are fetched from PyPI when the tests run).

The pages: zarr-python's sdists carry its ``docs/`` folder only in release 3.0.0 (every
later sdist leaves it out), so that release's quickstart and user guide are the sample,
on every Python and zarr-python version the suite runs with.  Its examples are doctest
sessions (reStructuredText with ``>>>`` prompts and the output they print); the page's
examples share one namespace and run in order, as sphinx's doctest runs them.
"""

from __future__ import annotations

import contextlib
import doctest
import importlib
import importlib.abc
import importlib.util
import io
import os
import re
import subprocess
import sys
import tarfile
import tempfile
import traceback
import warnings
from dataclasses import dataclass, field
from pathlib import Path

import numpy as np

DOCS_VERSION = "3.0.0"
# the sdist's sha256 (PyPI's): pip checks it, so the pages are always the same text
SDIST_SHA256 = "d491480e35d344125671d7300ddcd5fd86d5ec060480d79bd450d203a98b9cda"
PAGES = ("quickstart.rst", "user-guide/arrays.rst", "user-guide/groups.rst",
         "user-guide/attributes.rst", "user-guide/storage.rst",
         "user-guide/consolidated_metadata.rst", "user-guide/config.rst",
         "user-guide/performance.rst")
FLAGS = doctest.ELLIPSIS | doctest.NORMALIZE_WHITESPACE


class Unavailable(Exception):
    """The pages could not be fetched (no network, no pip ...); the message says why."""


def cache_dir() -> Path:
    """Where the pages are kept between runs: ``$ZARRC_TEST_CACHE``, else the user's
    cache directory (``$XDG_CACHE_HOME`` or ``~/.cache``), in a folder named by the
    release (the suite's copy of tests/ may be a temporary one, as in the wheel test,
    and pytest's own cache may be off)."""
    root = os.environ.get("ZARRC_TEST_CACHE")
    if not root:
        root = os.path.join(os.environ.get("XDG_CACHE_HOME") or os.path.expanduser("~/.cache"),
                            "zarrc-tests")
    return Path(root) / f"zarr-{DOCS_VERSION}-docs"


def fetch_pages() -> Path:
    """The folder holding PAGES, downloaded (zarr's sdist, with pip, hash-checked) and
    unpacked on first use; Unavailable if that fails."""
    target = cache_dir()
    if all((target / page).is_file() for page in PAGES):
        return target
    target.parent.mkdir(parents=True, exist_ok=True)
    with tempfile.TemporaryDirectory(dir=target.parent) as tmp:
        requirements = Path(tmp, "requirements.txt")
        requirements.write_text(f"zarr=={DOCS_VERSION} --hash=sha256:{SDIST_SHA256}\n")
        # --ignore-requires-python: zarr 3.0.0 declares Python 3.11+, and only its text is used
        command = [sys.executable, "-m", "pip", "download", "--quiet", "--no-deps",
                   "--no-binary", ":all:", "--ignore-requires-python",
                   "--disable-pip-version-check", "-r", str(requirements), "-d", tmp]
        try:
            done = subprocess.run(command, check=False, capture_output=True, text=True, timeout=900)
        except (OSError, subprocess.TimeoutExpired) as e:
            raise Unavailable(f"`pip download` of zarr=={DOCS_VERSION}'s sdist failed: {e}") from None
        sdist = Path(tmp, f"zarr-{DOCS_VERSION}.tar.gz")
        if done.returncode or not sdist.is_file():
            tail = " ".join((done.stderr or done.stdout).strip().splitlines()[-3:])
            raise Unavailable(f"`pip download` of zarr=={DOCS_VERSION}'s sdist failed "
                              f"(exit {done.returncode}): {tail}")
        unpacked = Path(tmp, "pages")
        with tarfile.open(sdist) as tar:
            for page in PAGES:
                member = tar.extractfile(f"zarr-{DOCS_VERSION}/docs/{page}")
                if member is None:
                    raise Unavailable(f"zarr-{DOCS_VERSION}.tar.gz has no docs/{page}")
                (unpacked / page).parent.mkdir(parents=True, exist_ok=True)
                (unpacked / page).write_bytes(member.read())
        try:
            os.replace(unpacked, target)            # whole or not at all
        except OSError:
            if not all((target / page).is_file() for page in PAGES):
                raise
    return target


@dataclass
class Block:
    """One literal block of a page: the examples between two pieces of prose."""

    page: str
    line: int                       # 1-based line of its first prompt
    examples: list = field(default_factory=list)

    @property
    def id(self) -> str:
        return f"{self.page.rpartition('/')[2]}:{self.line}"

    @property
    def source(self) -> str:
        return "".join(e.source for e in self.examples)

    def text(self) -> str:
        """The block's examples, source and expected output (what a key matches)."""
        return "".join(e.source + e.want for e in self.examples)


def blocks(folder: Path, page: str) -> list[Block]:
    """The page's blocks in order, each a list of doctest.Example."""
    parts = doctest.DocTestParser().parse((folder / page).read_text(encoding="utf-8"), page)
    found: list[Block] = []
    joined = False                          # the next example continues the current block
    for part in parts:
        if isinstance(part, str):
            joined = joined and not part.strip()
            continue
        if not joined:
            found.append(Block(page, part.lineno + 1))
        found[-1].examples.append(part)
        joined = True
    return found


class _ZarrFinder(importlib.abc.MetaPathFinder, importlib.abc.Loader):
    """Imports ``zarr.X`` as the module ``zarrc.X`` (the same object, not a copy)."""

    def find_spec(self, name, path=None, target=None):
        if not name.startswith("zarr."):
            return None
        real = "zarrc" + name[len("zarr"):]
        if real not in sys.modules and importlib.util.find_spec(real) is None:
            return None
        return importlib.util.spec_from_loader(name, self)

    def create_module(self, spec):
        module = importlib.import_module("zarrc" + spec.name[len("zarr"):])
        self._spec = module.__spec__
        return module

    def exec_module(self, module):
        module.__spec__ = self._spec            # (the import system set it to the alias's)


@contextlib.contextmanager
def zarr_is_zarrc():
    """While inside: ``import zarr`` and ``import zarr.X`` give zarrc and its modules.
    zarr-python's modules already imported are set aside and put back on exit."""
    import zarrc

    # numcodecs.zarr3 (0.16+) checks zarr-python's version when imported, then hands
    # out zarr.codecs.numcodecs' classes on first use and keeps them in its globals:
    # imported before the switch, with those it kept set aside, so that inside it
    # hands out zarrc's and afterwards zarr-python's again
    shim = None
    with contextlib.suppress(ImportError):
        shim = importlib.import_module("numcodecs.zarr3")
    shim_globals = dict(vars(shim)) if shim is not None else {}
    if shim is not None and callable(shim_globals.get("__getattr__")):
        for name in getattr(shim, "__all__", ()):
            vars(shim).pop(name, None)
    saved = {name: mod for name, mod in sys.modules.items()
             if name == "zarr" or name.startswith("zarr.")}
    for name in saved:
        del sys.modules[name]
    sys.modules["zarr"] = zarrc
    for name, mod in list(sys.modules.items()):
        if name.startswith("zarrc."):
            sys.modules["zarr" + name[len("zarrc"):]] = mod
    finder = _ZarrFinder()
    sys.meta_path.insert(0, finder)
    try:
        yield zarrc
    finally:
        sys.meta_path.remove(finder)
        for name in [n for n in sys.modules if n == "zarr" or n.startswith("zarr.")]:
            del sys.modules[name]
        sys.modules.update(saved)
        if shim is not None:
            vars(shim).clear()
            vars(shim).update(shim_globals)


@dataclass
class Outcome:
    """What one example did: ``problem`` is None if it ran and printed what the page
    shows (or a repr that is not compared), else what went wrong."""

    example: doctest.Example
    problem: str | None = None
    repr_differs: bool = False              # printed a repr unlike the page's (not a failure)


def _array(obj, dtype=None, shape=None):
    """numpy's array repr, as a value (`shape=` is printed by numpy 2.2+)."""
    if "..." in repr(obj):
        raise ValueError("a summarized array")
    return np.array(obj, dtype=dtype)


def _data(text: str):
    """The value a page's expected output shows, if it is data (a number, a string,
    a list, a tuple, a dict, a numpy array or scalar); else raises."""
    names = {"array": _array, "np": np, "nan": np.nan, "inf": np.inf,
             **{k: getattr(np, k) for k in ("int8", "int16", "int32", "int64", "uint8",
                                            "uint16", "uint32", "uint64", "float16",
                                            "float32", "float64", "complex64",
                                            "complex128", "bool_")}}
    value = eval(text, {"__builtins__": {}}, names)    # the page's own output, a literal
    if "..." in repr(value):
        raise ValueError("summarized")
    return value


def _same(got, want) -> bool:
    if isinstance(want, (np.ndarray, np.generic)):
        if not isinstance(got, (np.ndarray, np.generic)):
            return False
        got, want = np.asarray(got), np.asarray(want)
        return (got.shape == want.shape and got.dtype == want.dtype
                and bool(np.array_equal(got, want, equal_nan=want.dtype.kind in "fc")))
    return type(got) is type(want) and got == want


def _check(example: doctest.Example, printed: str, values: list) -> tuple[str | None, bool]:
    """(problem or None, whether a repr differs) for an example that ran."""
    checker = doctest.OutputChecker()
    if checker.check_output(example.want, printed, FLAGS):
        return None, False
    if not example.want:
        return f"printed {printed.strip()[:200]!r} where zarr-python prints nothing", False
    if not printed.strip():
        return f"printed nothing (gave None) where the page shows {example.want.strip()[:200]!r}", False
    try:
        want = _data(example.want)
    except Exception:                        # noqa: BLE001 (not a literal: a repr)
        want = None
        is_data = example.want.lstrip().startswith("array(")
    else:
        is_data = True
    if not is_data:
        return None, True                    # a repr (of a node, codec, info, tree ...)
    if want is None:                         # a summarized numpy array: compare the text
        if checker.check_output(_drop_shape(example.want), _drop_shape(printed), FLAGS):
            return None, False
        return f"printed {printed.strip()[:300]!r}, the page shows {example.want.strip()[:300]!r}", False
    if len(values) == 1 and _same(values[0], want):
        return None, False
    got = values[0] if len(values) == 1 else printed.strip()
    return f"gave {got!r:.300}, the page shows {example.want.strip()[:300]}", False


def _drop_shape(text: str) -> str:
    """numpy's array repr without its `shape=(...)` part (numpy 2.2+ prints it for a
    summarized array)."""
    return re.sub(r",\s*shape=\([0-9, ]*\)", "", text)


def run_page(page_blocks: list[Block], workdir: Path, leave_out=lambda block: set()
             ) -> dict[int, Outcome]:
    """Runs a page's examples (its ``blocks``) in order in ``workdir`` with ``zarr``
    bound to zarrc, but those whose ids ``leave_out(block)`` gives: {id(example):
    Outcome}.  An example that raises is a problem (unless the page shows a
    traceback); the page goes on, as doctest does."""
    import zarrc

    outcomes: dict[int, Outcome] = {}
    namespace: dict = {"__name__": "__zarr_docs__"}
    settings = {name: zarrc.config.get(name) for name in ("threads", "write_empty_chunks")}
    here = os.getcwd()
    values: list = []

    def hook(value):
        if value is not None:
            values.append(value)
            print(repr(value))

    old_hook = sys.displayhook
    os.chdir(workdir)
    try:
        with zarr_is_zarrc(), warnings.catch_warnings():
            warnings.simplefilter("ignore")     # (what the examples warn about is not checked)
            for block in page_blocks:
                left_out = leave_out(block)
                for example in block.examples:
                    if id(example) not in left_out:
                        outcomes[id(example)] = _run_one(example, block.page, namespace, hook,
                                                         values)
    finally:
        sys.displayhook = old_hook
        os.chdir(here)
        zarrc.config.set(settings)
    return outcomes


def _run_one(example, page, namespace, hook, values) -> Outcome:
    if example.options.get(doctest.SKIP):
        return Outcome(example)
    values.clear()
    out = io.StringIO()
    code = compile(example.source, f"<{page.rpartition('/')[2]}:{example.lineno + 1}>", "single")
    sys.displayhook = hook
    try:
        with contextlib.redirect_stdout(out):
            exec(code, namespace)           # noqa: S102 (the page's example, as doctest runs it)
    except Exception as e:                  # noqa: BLE001 (any error is the example's outcome)
        if example.exc_msg is not None:
            return Outcome(example)
        where = traceback.extract_tb(e.__traceback__)[-1]
        return Outcome(example, f"raised {type(e).__name__}: {str(e)[:300]} "
                                f"({Path(where.filename).name}:{where.lineno})")
    if example.exc_msg is not None:
        return Outcome(example, "raised nothing where zarr-python raises")
    problem, differs = _check(example, out.getvalue(), values)
    return Outcome(example, problem, differs)
