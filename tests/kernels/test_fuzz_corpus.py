"""The fuzz targets (fuzz/targets.py) over their seed corpus (fuzz/corpus/) and the
inputs the fuzzer found (fuzz/regressions/): every input keeps its target's
contract.  Runs from a checkout (the wheels' test runs have no fuzz/: skipped);
needs no atheris.  ./scripts/sanitize runs it under ASan and UBSan."""

from __future__ import annotations

import importlib.util
import os

import pytest

FUZZ = os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "..", "fuzz")
if not os.path.exists(os.path.join(FUZZ, "targets.py")):
    pytest.skip("no fuzz/ beside tests/ (not a checkout)", allow_module_level=True)


def _targets():
    spec = importlib.util.spec_from_file_location("zarrc_fuzz_targets", os.path.join(FUZZ, "targets.py"))
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


targets = _targets()


def _inputs(kind):
    out = []
    for name in targets.TARGETS:
        d = os.path.join(FUZZ, kind, name)
        if os.path.isdir(d):
            out += [(name, os.path.join(d, f)) for f in sorted(os.listdir(d)) if not f.startswith(".")]
    return out


def test_every_target_has_seeds():
    have = {name for name, _ in _inputs("corpus")}
    assert have == set(targets.TARGETS)


@pytest.mark.parametrize("kind", ["corpus", "regressions"])
def test_inputs_keep_the_contract(kind):
    for name, path in _inputs(kind):
        with open(path, "rb") as f:
            targets.run(name, f.read())          # raises ContractError (or crashes) if not
