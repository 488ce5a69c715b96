"""The layer contract of zarrc's modules (docs/architecture.md, "Layers"), checked
over the import graph read from the sources: every import (at module level, in a
function, or under TYPE_CHECKING) goes to the importing module's layer or one
below it, modules listed as independent do not import each other, no two modules
import each other directly or through others, and the kernels import no Python
layer.  A new module must be placed in LAYERS, or the test names it."""

from __future__ import annotations

import ast
import re
from pathlib import Path

import pytest

import zarrc

ROOT = Path(zarrc.__file__).parent

# From the top down; each entry a list of module names (a name covers its
# submodules).  Modules in one entry may import each other (without circles)
# unless INDEPENDENT says otherwise.
LAYERS = [
    ["zarrc.__main__"],                                 # python -m zarrc: runs the command line
    ["zarrc.cli"],                                      # the zarrc command line (not imported by zarrc)
    ["zarrc.integrations.xarray_backend"],              # xarray's engine="zarrc" (not imported by zarrc)
    ["zarrc.demo"],
    ["zarrc.mpi"],                                      # the documented name of integrations.mpi
    ["zarrc.integrations.mpi"],                         # collective MPI writes (not imported by zarrc)
    ["zarrc"],                                          # the package: re-exports the API
    ["zarrc.model"],                                    # the ZEP 6 object model (lazy: zarrc.model)
    ["zarrc.integrations.zarr_pipeline"],               # zarr-python's codec pipeline (lazy)
    ["zarrc.api.asynchronous"],                         # the asyncio API's functions
    ["zarrc.api.copy"],                                 # copy, copy_all, copy_store
    ["zarrc.api.data"],                                 # the data functions (create, zeros, save ...)
    ["zarrc.api.synchronous"],                          # open*, create*, consolidate_metadata ...
    ["zarrc.storage"],                                  # zarr-python's zarr.storage names
    ["zarrc.core.overviews"],                           # building a pyramid (GDAL's BuildOverviews)
    ["zarrc.core.multiscales"],                         # the multiscales convention: read, layout written
    ["zarrc.core.group"],                               # Group, AsyncGroup; builds nodes of both kinds
    ["zarrc.core.like"],                                # the keywords of arrays made like others
    ["zarrc.core.multiscales_levels"],                  # a group's multiscales layout read (Group.multiscales)
    ["zarrc.core.array"],                               # Array, AsyncArray
    ["zarrc.core.node"],                                # the base of the nodes (sync and async)
    ["zarrc.core.create", "zarrc.core.create_v2", "zarrc.core.conventions", "zarrc.core.consolidate", "zarrc.core.hierarchy",
     "zarrc.core.node_metadata", "zarrc.core.resize"],  # node metadata: created, read, written
    ["zarrc.engine"],
    ["zarrc.codecs", "zarrc.stores"],
    ["zarrc.core.chunk_grid", "zarrc.core.chunk_key", "zarrc.core.indexing"],
    ["zarrc.metadata"],
    ["zarrc.runtime.locks"],                            # locks of partial writes (engine.locked)
    ["zarrc.runtime.async_calls"],                      # where the asyncio API's calls run
    ["zarrc.runtime.threads"],
    ["zarrc.runtime.config"],
    ["zarrc.runtime.cores"],                            # the default thread count (dask's share)
    ["zarrc.errors"],
    ["zarrc.api", "zarrc.core", "zarrc.integrations", "zarrc.runtime"],  # the packages' docstrings
    ["zarrc._kernels"],
]

INDEPENDENT = [
    ("zarrc.codecs", "zarrc.stores"),
    ("zarrc.metadata", "zarrc.core.indexing"),
]


def module_name(path: Path) -> str:
    parts = list(path.relative_to(ROOT.parent).with_suffix("").parts)
    if parts[-1] == "__init__":
        parts.pop()
    return ".".join(parts)


def import_graph() -> dict[str, set[str]]:
    """{module: zarrc modules it imports} for every .py file under zarrc/."""
    paths = {module_name(p): p for p in ROOT.rglob("*.py")}
    graph: dict[str, set[str]] = {}
    for name, path in paths.items():
        package = name if path.name == "__init__.py" else name.rpartition(".")[0]
        found = set()
        for node in ast.walk(ast.parse(path.read_text(), str(path))):
            if isinstance(node, ast.Import):
                found.update(a.name for a in node.names if a.name.split(".")[0] == "zarrc")
            elif isinstance(node, ast.ImportFrom):
                base = node.module or ""
                if node.level:
                    parts = package.split(".")[:len(package.split(".")) - node.level + 1]
                    base = ".".join(parts + ([base] if base else []))
                if base.split(".")[0] != "zarrc":
                    continue
                for alias in node.names:            # `from zarrc import engine`: the module
                    sub = f"{base}.{alias.name}"
                    found.add(sub if sub in paths else base)
        found.discard(name)
        graph[name] = found
    return graph


def layer_of(module: str) -> tuple[int, str]:
    """(layer index, the LAYERS name that covers ``module``, the longest match)."""
    best = None
    for i, names in enumerate(LAYERS):
        for n in names:
            if (module == n or module.startswith(n + ".")) and (best is None or len(n) > len(best[1])):
                best = (i, n)
    if best is None:
        pytest.fail(f"module {module} is in no layer of tests/test_layers.py: place it")
    return best


def test_every_import_goes_to_the_same_layer_or_below() -> None:
    upward = []
    for module, imports in sorted(import_graph().items()):
        here, _ = layer_of(module)
        for target in sorted(imports):
            there, _ = layer_of(target)
            if there < here:
                upward.append(f"{module} imports {target} (a layer above)")
    assert not upward, "\n".join(upward)


def test_independent_modules_do_not_import_each_other() -> None:
    graph = import_graph()
    found = []
    for a, b in INDEPENDENT:
        for module, imports in graph.items():
            for x, y in ((a, b), (b, a)):
                if module == x or module.startswith(x + "."):
                    found += [f"{module} imports {t}" for t in imports if t == y or t.startswith(y + ".")]
    assert not found, "\n".join(found)


def test_no_import_circles() -> None:
    """No module reaches itself through imports (Tarjan's strongly connected
    components over the graph; every component must be a single module)."""
    graph = import_graph()
    index: dict[str, int] = {}
    low: dict[str, int] = {}
    stack: list[str] = []
    on_stack: set[str] = set()
    circles = []

    def visit(v: str) -> None:
        index[v] = low[v] = len(index)
        stack.append(v)
        on_stack.add(v)
        for w in graph.get(v, ()):
            if w not in graph:
                continue                          # compiled kernels: leaves
            if w not in index:
                visit(w)
                low[v] = min(low[v], low[w])
            elif w in on_stack:
                low[v] = min(low[v], index[w])
        if low[v] == index[v]:
            component = []
            while True:
                w = stack.pop()
                on_stack.discard(w)
                component.append(w)
                if w == v:
                    break
            if len(component) > 1:
                circles.append(sorted(component))

    for v in sorted(graph):
        if v not in index:
            visit(v)
    assert not circles, circles


def test_the_kernels_import_no_python_layer() -> None:
    """Cython sources under zarrc/_kernels import and cimport only zarrc._kernels."""
    pattern = re.compile(r"^\s*(?:from|c?import)\s+(zarrc\.[\w.]+)", re.M)
    found = [f"{p.name}: {m}" for p in sorted((ROOT / "_kernels").glob("*.p[yx]*"))
             for m in pattern.findall(p.read_text()) if not m.startswith("zarrc._kernels")]
    assert not found, found


def layer_table(text: str) -> list[list[str]]:
    """The modules of each row of docs/architecture.md's "Layers" table, top row first."""
    section = text[text.index("## Layers"):]
    section = section[:section.index("\n## ", 1)]
    rows = [line for line in section.splitlines() if line.startswith("| ") and not line.startswith("| layer ")]
    return [re.findall(r"`([\w.]+)`", row.split(" | ")[1]) for row in rows]


def test_the_architecture_table_is_layers() -> None:
    """docs/architecture.md's layer table (bottom-up) lists LAYERS' modules in LAYERS'
    order, each row a run of whole LAYERS entries: the two cannot drift apart."""
    doc = Path(__file__).parents[1] / "docs" / "architecture.md"
    if not doc.exists():
        pytest.skip("docs/ is not beside tests/ here (an installed wheel's test run)")
    table = layer_table(doc.read_text())
    entries = [list(e) for e in reversed(LAYERS)]
    wrong = []
    for row in table:
        take: list[str] = []
        while entries and len(take) < len(row):
            take += entries.pop(0)
        if sorted(take) != sorted(row):
            wrong.append(f"the row {row} should list {take} (LAYERS, bottom-up)")
            break
    if entries:
        wrong.append(f"LAYERS entries missing from the table: {entries}")
    assert not wrong, "\n".join(wrong)


def test_the_contract_catches_an_upward_import(monkeypatch) -> None:
    """The check itself: an import of zarrc.api from the engine is reported."""
    real = import_graph()
    fake = {**real, "zarrc.engine.batch": real["zarrc.engine.batch"] | {"zarrc.api.synchronous"}}
    monkeypatch.setitem(globals(), "import_graph", lambda: fake)
    with pytest.raises(AssertionError, match="zarrc.engine.batch imports zarrc.api.synchronous"):
        test_every_import_goes_to_the_same_layer_or_below()
