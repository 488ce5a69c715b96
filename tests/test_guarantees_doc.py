"""docs/guarantees.md names, on every line of its lists, the tests that prove it:
each named test must exist, so the document cannot drift from the tests."""

from __future__ import annotations

import ast
import os
import re

import pytest

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
DOC = os.path.join(ROOT, "docs", "guarantees.md")
NAMED = re.compile(r"`(tests/[\w/]+\.py)::(\w+)`")
pytestmark = pytest.mark.skipif(not os.path.exists(DOC),
                                reason="docs/ is not beside tests/ here (an installed wheel's test run)")


def _tests_in(path: str) -> set[str]:
    with open(os.path.join(ROOT, path), encoding="utf-8") as f:
        tree = ast.parse(f.read())
    return {node.name for node in ast.walk(tree)
            if isinstance(node, (ast.FunctionDef, ast.AsyncFunctionDef)) and node.name.startswith("test")}


def test_every_line_of_guarantees_names_a_test() -> None:
    with open(DOC, encoding="utf-8") as f:
        lines = [line for line in f if line.startswith("- ")]
    assert len(lines) >= 30
    assert [line for line in lines if not NAMED.search(line)] == []


def test_every_test_guarantees_names_exists() -> None:
    with open(DOC, encoding="utf-8") as f:
        named = NAMED.findall(f.read())
    missing = [f"{path}::{name}" for path, name in named
               if not os.path.exists(os.path.join(ROOT, path)) or name not in _tests_in(path)]
    assert missing == []
