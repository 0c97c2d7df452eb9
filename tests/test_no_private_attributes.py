"""No module of the package touches a private name of code that is not its own.

A private name starts with ``_`` and is not a dunder. Reading or writing ``x._name`` (or
``getattr(x, "_name")`` and the like) is allowed only where ``x`` is provably ours:

* ``self`` / ``cls`` / ``super()`` inside one of our classes, or a parameter annotated
  with one of our classes, for a name that class or one of its bases in the package
  defines (a method, a class attribute, or an attribute its methods assign on
  ``self``): a private name inherited from a dependency's class (LangGraph's
  ``BaseStore``…) is not ours;
* a module of the package, for a name it defines at module level;
* a class of the package, for a name it (or a base in the package) defines.

Any other receiver (a SQLAlchemy connection, a pool, a FAISS index, a psycopg or sqlite3
connection, a local variable the test cannot type) fails, as does importing a private
name or module of another package (``from re import _parser``).
"""

from __future__ import annotations

import ast
from collections import defaultdict
from collections.abc import Iterator
from dataclasses import dataclass, field
from pathlib import Path

PACKAGE = Path(__file__).resolve().parents[1] / "hy_memory_langgraph"
ROOT = "hy_memory_langgraph"
_REFLECTION = {"getattr", "setattr", "hasattr", "delattr"}


def _private(name: str) -> bool:
    return name.startswith("_") and not (name.startswith("__") and name.endswith("__"))


@dataclass
class _Class:
    bases: list[str]
    names: set[str] = field(default_factory=set)


@dataclass
class _Module:
    rel: str
    tree: ast.Module
    names: set[str] = field(default_factory=set)  # defined at module level
    aliases: dict[str, str] = field(default_factory=dict)  # local name -> dotted name in the package
    foreign: set[str] = field(default_factory=set)  # local names bound to other packages


def _dotted(rel: Path) -> str:
    parts = [ROOT, *rel.with_suffix("").parts]
    return ".".join(parts[:-1] if parts[-1] == "__init__" else parts)


def _base_name(node: ast.expr) -> str:
    return node.attr if isinstance(node, ast.Attribute) else node.id if isinstance(node, ast.Name) else ""


def _load() -> tuple[dict[str, _Module], dict[str, list[_Class]]]:
    modules: dict[str, _Module] = {}
    classes: dict[str, list[_Class]] = defaultdict(list)
    for path in sorted(PACKAGE.rglob("*.py")):
        rel = path.relative_to(PACKAGE)
        module = _Module(rel.as_posix(), ast.parse(path.read_text(encoding="utf-8")))
        modules[_dotted(rel)] = module
        for node in module.tree.body:
            if isinstance(node, (ast.FunctionDef, ast.AsyncFunctionDef, ast.ClassDef)):
                module.names.add(node.name)
            elif isinstance(node, (ast.Assign, ast.AnnAssign)):
                targets = node.targets if isinstance(node, ast.Assign) else [node.target]
                module.names |= {n.id for t in targets for n in ast.walk(t) if isinstance(n, ast.Name)}
        for node in ast.walk(module.tree):
            if isinstance(node, ast.ClassDef):
                classes[node.name].append(_class(node))
            elif isinstance(node, ast.ImportFrom) and node.level == 0 and node.module:
                for alias in node.names:
                    local = alias.asname or alias.name
                    if node.module.split(".")[0] == ROOT:
                        module.aliases[local] = f"{node.module}.{alias.name}"
                    else:
                        module.foreign.add(local)
            elif isinstance(node, ast.Import):
                for alias in node.names:
                    local = alias.asname or alias.name.split(".")[0]
                    if alias.name.split(".")[0] == ROOT:
                        module.aliases[local] = alias.name if alias.asname else ROOT
                    else:
                        module.foreign.add(local)
    return modules, classes


def _class(node: ast.ClassDef) -> _Class:
    """A class's bases and the names it defines (body, and assignments on ``self``/``cls``)."""
    found = _Class([_base_name(b) for b in node.bases])
    for item in node.body:
        if isinstance(item, (ast.FunctionDef, ast.AsyncFunctionDef, ast.ClassDef)):
            found.names.add(item.name)
        elif isinstance(item, (ast.Assign, ast.AnnAssign)):
            targets = item.targets if isinstance(item, ast.Assign) else [item.target]
            found.names |= {n.id for t in targets for n in ast.walk(t) if isinstance(n, ast.Name)}
    for sub in ast.walk(node):
        if (isinstance(sub, ast.Attribute) and isinstance(sub.ctx, ast.Store)
                and isinstance(sub.value, ast.Name) and sub.value.id in ("self", "cls")):
            found.names.add(sub.attr)
    return found


def _defines(classes: dict[str, list[_Class]], name: str, attr: str, seen: frozenset[str] = frozenset()) -> bool:
    """Whether our class ``name`` or one of its bases in the package defines ``attr``."""
    if name in seen:
        return False
    return any(attr in c.names or any(_defines(classes, b, attr, seen | {name}) for b in c.bases)
               for c in classes.get(name, []))


def _annotated(function: ast.FunctionDef | ast.AsyncFunctionDef) -> dict[str, str]:
    """The class each parameter of ``function`` is annotated with (``x: Store``, ``"Store"``)."""
    found = {}
    for arg in (*function.args.posonlyargs, *function.args.args, *function.args.kwonlyargs):
        note = arg.annotation
        if isinstance(note, ast.Constant) and isinstance(note.value, str):
            found[arg.arg] = note.value.rsplit(".", 1)[-1]
        elif isinstance(note, (ast.Name, ast.Attribute)):
            found[arg.arg] = _base_name(note)
    return found


#: ``(receiver, private name, line, enclosing class, parameter classes)``
_Access = tuple[ast.expr, str, int, str | None, dict[str, str]]


def _accesses(tree: ast.AST) -> Iterator[_Access]:
    """Every private access, with the class it is written in and the classes the
    parameters of its function are annotated with."""
    def visit(node: ast.AST, owner: str | None, params: dict[str, str]) -> Iterator[_Access]:
        for child in ast.iter_child_nodes(node):
            if isinstance(child, ast.ClassDef):
                yield from visit(child, child.name, {})
                continue
            if isinstance(child, (ast.FunctionDef, ast.AsyncFunctionDef)):
                yield from visit(child, owner, {**params, **_annotated(child)})
                continue
            if isinstance(child, ast.Attribute) and _private(child.attr):
                yield child.value, child.attr, child.lineno, owner, params
            elif (isinstance(child, ast.Call) and isinstance(child.func, ast.Name) and child.func.id in _REFLECTION
                  and len(child.args) >= 2 and isinstance(child.args[1], ast.Constant)
                  and isinstance(child.args[1].value, str) and _private(child.args[1].value)):
                yield child.args[0], child.args[1].value, child.lineno, owner, params
            yield from visit(child, owner, params)
    yield from visit(tree, None, {})


def _ours(module: _Module, modules: dict[str, _Module], classes: dict[str, list[_Class]],
          receiver: ast.expr, attr: str, owner: str | None, params: dict[str, str]) -> bool:
    if isinstance(receiver, ast.Call) and isinstance(receiver.func, ast.Name) and receiver.func.id == "super":
        return owner is not None and any(_defines(classes, b, attr) for c in classes[owner] for b in c.bases)
    if not isinstance(receiver, ast.Name):
        return False
    if receiver.id in params:  # an annotated parameter (``self: Store`` of a decorator's wrapper)
        return _defines(classes, params[receiver.id], attr)
    if receiver.id in ("self", "cls"):
        return owner is not None and _defines(classes, owner, attr)
    target = module.aliases.get(receiver.id)
    if target is not None:
        if target in modules:  # one of our modules
            return attr in modules[target].names
        return _defines(classes, target.rsplit(".", 1)[-1], attr)  # one of our classes
    if receiver.id in module.names and receiver.id in classes and receiver.id not in module.foreign:
        return _defines(classes, receiver.id, attr)  # a class of this very module
    return False


def _private_imports(module: _Module) -> Iterator[tuple[str, int]]:
    for node in ast.walk(module.tree):
        if isinstance(node, ast.ImportFrom) and node.level == 0 and node.module and node.module.split(".")[0] != ROOT:
            for part in node.module.split("."):
                if _private(part):
                    yield part, node.lineno
            yield from ((a.name, node.lineno) for a in node.names if _private(a.name))
        elif isinstance(node, ast.Import):
            for alias in node.names:
                if alias.name.split(".")[0] != ROOT:
                    yield from ((part, node.lineno) for part in alias.name.split(".") if _private(part))


def _violations() -> list[tuple[str, str, int]]:
    modules, classes = _load()
    found = []
    for module in modules.values():
        for receiver, attr, line, owner, params in _accesses(module.tree):
            if not _ours(module, modules, classes, receiver, attr, owner, params):
                found.append((module.rel, attr, line))
        found += [(module.rel, name, line) for name, line in _private_imports(module)]
    return found


def test_no_module_touches_a_private_name_of_code_not_its_own() -> None:
    found = _violations()
    unexpected = [f"{rel}:{line}: {name}" for rel, name, line in found]
    assert unexpected == [], "private names of other packages (use their public API):\n" + "\n".join(unexpected)


def test_the_check_tells_ours_from_theirs() -> None:
    """The rules on a sample: each foreign use is caught, each own use is not."""
    sample = ast.parse('''
import sqlalchemy as sa
from sqlalchemy import event

class Base:
    def _helper(self) -> None: ...

class Mine(Base):
    def __init__(self, conn):
        self._conn = conn
    def run(self):
        self._helper()
        self._conn.execute()
        self._conn._echo
        getattr(self._conn, "_dispatch", None)
        super()._helper()
        self._inherited_from_a_dependency()
        sa._private
        Mine._conn

def wrapper(self: "Mine", conn: sa.engine.Connection):
    self._conn
    conn._echo
''')
    module = _Module("sample.py", sample, names={"Base", "Mine"}, foreign={"sa", "event"})
    classes: dict[str, list[_Class]] = defaultdict(list)
    for node in ast.walk(sample):
        if isinstance(node, ast.ClassDef):
            classes[node.name].append(_class(node))
    verdicts = [(attr, _ours(module, {}, classes, receiver, attr, owner, params))
                for receiver, attr, _, owner, params in _accesses(sample)]
    assert verdicts == [
        ("_conn", True), ("_helper", True), ("_conn", True), ("_echo", False), ("_conn", True),
        ("_dispatch", False), ("_conn", True), ("_helper", True), ("_inherited_from_a_dependency", False),
        ("_private", False), ("_conn", True), ("_conn", True), ("_echo", False),
    ]
    imports = _Module("imports.py", ast.parse("from re import _parser\nimport faiss._swig\nfrom re import compile"))
    assert [name for name, _ in _private_imports(imports)] == ["_parser", "_swig"]
