"""The package's layers import one way, and no import hides inside a function to dodge a cycle.

Layers, lowest first (a module may import its own layer's lower units and any lower
layer, never a higher one):

0. foundation: ``errors``, ``scenes``, ``config``, ``ids``, ``timeutil``, ``redact``, ``values``, ``fences``, ``lazy``, ``limits``
1. infrastructure: ``store``, ``models``, ``messages``, ``prompts``, ``retrieval``, ``pipeline_log``
2. domain data: ``repos``, ``chain``, ``jobs`` (the background queue)
3. ``services``: the run-time context, model calls, turn planning, node stage records
4. ``flows``: the graph families (state, nodes, builder per family); ``workflow``: workflow
   memory, its documents and its extraction graph
5. ``client``
6. faces: ``integrations``, ``cli``, ``testing``, the package root
"""

from __future__ import annotations

import ast
from collections import defaultdict
from pathlib import Path

import pytest

PACKAGE = Path(__file__).resolve().parents[1] / "hy_memory_langgraph"

LAYERS: dict[str, int] = {
    "errors": 0, "scenes": 0, "config": 0, "ids": 0, "timeutil": 0, "redact": 0, "values": 0, "results": 0,
    "openmp": 0, "embedding_batch": 0, "fences": 0, "lazy": 0, "limits": 0,
    "store": 1, "models": 1, "messages": 1, "prompts": 1, "retrieval": 1, "pipeline_log": 1,
    "repos": 2, "chain": 2, "jobs": 2,
    "services": 3,
    "flows": 4, "workflow": 4,
    "client": 5,
    "integrations": 6, "cli": 6, "testing": 6, "__init__": 6,
}
#: Function-level imports of our own modules, each made where it is first needed: modules
#: that need an optional extra (the middleware, ``agents``: langchain; the queue's PostgreSQL
#: connections, ``postgres``: psycopg), the secret detectors (tens of compiled tables)
#: that every error and every seal needs and no import of ``errors`` or of the gate does
#: (``hy-memory --help``, the reading commands; tests/store/test_store_threads.py and
#: tests/cli/test_cli_reading.py check it), and the store's vector side (NumPy,
#: FAISS), which only a store opened with an index computes with (the reading commands
#: open none; the same test checks it).
LAZY_ALLOWED = {("integrations/__init__.py", "hy_memory_langgraph.integrations.middleware"),
                ("jobs/checkpoints.py", "hy_memory_langgraph.jobs.pg"),
                ("errors.py", "hy_memory_langgraph.redact"),
                ("ids.py", "hy_memory_langgraph.redact"),
                ("redact/gate.py", "hy_memory_langgraph.redact.values"),
                ("store/store.py", "hy_memory_langgraph.store.vector.scoped")}


def _modules() -> list[tuple[str, Path, ast.Module]]:
    out = []
    for path in sorted(PACKAGE.rglob("*.py")):
        rel = path.relative_to(PACKAGE)
        unit = rel.parts[0].removesuffix(".py") if len(rel.parts) > 1 or rel.name != "__init__.py" \
            else "__init__"
        out.append((unit, rel, ast.parse(path.read_text(encoding="utf-8"))))
    return out


def _own_imports(tree: ast.AST) -> list[ast.ImportFrom | ast.Import]:
    found: list[ast.ImportFrom | ast.Import] = []
    for node in ast.walk(tree):
        if isinstance(node, ast.ImportFrom) and (node.module or "").startswith("hy_memory_langgraph"):
            found.append(node)
        elif isinstance(node, ast.Import) and any(a.name.startswith("hy_memory_langgraph")
                                                  for a in node.names):
            found.append(node)
    return found


def _target_unit(node: ast.ImportFrom | ast.Import) -> str:
    name = node.module if isinstance(node, ast.ImportFrom) else node.names[0].name
    parts = (name or "").split(".")
    return parts[1] if len(parts) > 1 else "__init__"


def test_every_unit_has_a_layer() -> None:
    units = {unit for unit, _, _ in _modules()}
    assert units <= set(LAYERS), f"give these a layer in LAYERS: {sorted(units - set(LAYERS))}"


def test_imports_never_point_up() -> None:
    upward = []
    for unit, rel, tree in _modules():
        for node in _own_imports(tree):
            target = _target_unit(node)
            if target != unit and LAYERS[target] > LAYERS[unit]:
                upward.append(f"{rel}:{node.lineno} {unit} (layer {LAYERS[unit]}) imports "
                              f"{target} (layer {LAYERS[target]})")
    assert upward == []


def test_units_of_one_layer_do_not_form_cycles() -> None:
    graph: dict[str, set[str]] = defaultdict(set)
    for unit, _, tree in _modules():
        for node in _own_imports(tree):
            target = _target_unit(node)
            if target != unit and LAYERS[target] == LAYERS[unit]:
                graph[unit].add(target)

    def reaches(start: str, goal: str, seen: set[str]) -> bool:
        return any(nxt == goal or (nxt not in seen and reaches(nxt, goal, seen | {nxt}))
                   for nxt in graph.get(start, set()))

    cycles = sorted(u for u in list(graph) if reaches(u, u, {u}))
    assert cycles == []


def test_no_function_level_imports_of_our_own_modules() -> None:
    hidden = []
    for _, rel, tree in _modules():
        for fn in ast.walk(tree):
            if not isinstance(fn, (ast.FunctionDef, ast.AsyncFunctionDef)):
                continue
            for node in _own_imports(fn):
                name = node.module if isinstance(node, ast.ImportFrom) else node.names[0].name
                if (str(rel), name) not in LAZY_ALLOWED:
                    hidden.append(f"{rel}:{node.lineno} imports {name} inside {fn.name}()")
    assert hidden == []


@pytest.mark.parametrize("private", ["_msg_", "repos._time"])
def test_no_private_cross_package_helpers(private: str) -> None:
    offenders = [str(rel) for _, rel, tree in _modules() for node in _own_imports(tree)
                 if private in (getattr(node, "module", "") or "")]
    assert offenders == []
