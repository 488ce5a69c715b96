"""zarrc's build backend: meson-python's, with one line of advice when a build fails.

pyproject.toml names this module (``backend-path = ["backend"]``).  Every hook is
meson-python's own; ``build_wheel`` and ``build_editable`` are wrapped so that when
meson or the compiler fails (meson-python then exits with the failing command's
status, after its output), the last line says what usually fixes it.  A missing
compiler is caught earlier, by meson.build, with its own hint.
"""

from __future__ import annotations

import functools
import sys

import mesonpy
from mesonpy import (  # noqa: F401  (the PEP 517 hooks, re-exported as they are)
    build_sdist,
    get_requires_for_build_editable,
    get_requires_for_build_sdist,
    get_requires_for_build_wheel,
)

HINT = ("zarrc: building the C extensions failed (the compiler's message is above). "
        "They need a C11 compiler, gcc or clang (on a cluster: module load gcc); "
        "the sdist carries every C source, so no network is needed; "
        "or install a wheel instead (Linux x86_64, CPython 3.10-3.13): "
        "pip install --only-binary zarrc zarrc")


def _with_hint(hook):
    @functools.wraps(hook)
    def wrapper(*args, **kwargs):
        try:
            return hook(*args, **kwargs)
        except SystemExit as exc:
            if exc.code not in (0, None):
                print(f"\n{HINT}", file=sys.stderr, flush=True)
            raise
    return wrapper


build_wheel = _with_hint(mesonpy.build_wheel)
build_editable = _with_hint(mesonpy.build_editable)
