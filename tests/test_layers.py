"""The house's import rules, read from the source with ``ast`` (docs/architecture.md, "Three
rooms, one direction"): the engine imports nothing of web/ or worker/, web/ nothing of worker/;
no module imports another's ``_private`` name; no import cycle among module-level imports; no
function over 80 lines; imports inside functions no more than today's count, each saying why; the
worker reaches web/ only through its surface (``WORKER_SURFACE``)."""

from __future__ import annotations

import ast
import tomllib
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
ROOMS = ("engine", "web", "worker")
MAX_LINES = 80
# Imports of our own modules inside functions, each with its reason on its line (a cycle, or the
# CLI's lazy loads): lower it as they go, never raise it.
MAX_FUNCTION_IMPORTS = 5
# The web modules the worker may import (docs/architecture.md, "What the worker takes from
# web/"): each a door for one of its jobs. Widen a door rather than add one.
WORKER_SURFACE = (
    "imtheboss.web",  # create_app: every task and listener runs in the app's context
    "imtheboss.web.settings",  # one settings object for web, worker and beat
    "imtheboss.web.models",  # the tables and rows the worker claims and marks
    "imtheboss.web.games.driven",  # a game driven from outside a request: load, submit, clock
    "imtheboss.web.app.process",  # broker and queue settings, log setup, the sweep's heartbeat
    "imtheboss.web.app.commands",  # what the imtheboss command (worker/cli.py) says and runs
    "imtheboss.web.mail.outgoing",  # mail: composed by web/, sent by the worker
    "imtheboss.web.replies.inbound",  # replies by mail: read and applied by web/
    "imtheboss.web.outbound.requests",  # webhook and push posts: their requests made by web/
    "imtheboss.web.games.timeouts",  # deadlines: timeouts of several games in one transaction
)
# Modules at web/'s top level: features move into folders; lower it as they go, never raise it.
MAX_WEB_TOP_MODULES = 5


def _modules() -> dict[str, Path]:
    """``{dotted name: file}`` of every module in engine/, web/ and worker/."""
    found = {}
    for room in ROOMS:
        for path in sorted((ROOT / room).rglob("*.py")):
            parts = list(path.relative_to(ROOT).with_suffix("").parts)
            if parts[-1] == "__init__":
                parts.pop()
            found[".".join(["imtheboss", *parts])] = path
    return found


MODULES = _modules()
TREES = {name: ast.parse(path.read_text(encoding="utf-8")) for name, path in MODULES.items()}


def _imports(name: str) -> list[tuple[ast.stmt, str, str | None, bool]]:
    """``(node, module, imported name or None, inside a function)`` for each of our imports in
    module ``name``; ``if TYPE_CHECKING:`` blocks left out."""
    out: list[tuple[ast.stmt, str, str | None, bool]] = []
    package = name if MODULES[name].name == "__init__.py" else name.rpartition(".")[0]

    def walk(node: ast.AST, in_function: bool) -> None:
        for child in ast.iter_child_nodes(node):
            if isinstance(child, ast.If) and "TYPE_CHECKING" in ast.unparse(child.test):
                continue
            inside = in_function or isinstance(child, ast.FunctionDef | ast.AsyncFunctionDef)
            if isinstance(child, ast.Import):
                out.extend((child, a.name, None, inside) for a in child.names)
            elif isinstance(child, ast.ImportFrom):
                base = child.module or ""
                if child.level:
                    up = package.split(".")[: len(package.split(".")) - child.level + 1]
                    base = ".".join(up + ([child.module] if child.module else []))
                out.extend((child, base, a.name, inside) for a in child.names)
            walk(child, inside)

    walk(TREES[name], False)
    return [i for i in out if i[1].startswith("imtheboss.")]


def _target(module: str, imported: str | None) -> str:
    """The module an import names (``from imtheboss.web.say import messages``:
    ``imtheboss.web.say.messages``)."""
    if imported is not None and f"{module}.{imported}" in MODULES:
        return f"{module}.{imported}"
    return module


def test_the_engine_imports_nothing_of_web_or_worker_and_web_nothing_of_worker() -> None:
    banned = {"engine": ("web", "worker"), "web": ("worker",), "worker": ()}
    wrong = [
        f"{MODULES[name].relative_to(ROOT)}:{node.lineno} imports {module}"
        for name in MODULES
        for node, module, _imported, _inside in _imports(name)
        if module.split(".")[1] in banned[name.split(".")[1]]
    ]
    assert wrong == []


def test_the_worker_reaches_web_only_through_its_surface() -> None:
    wrong = [
        f"{MODULES[name].relative_to(ROOT)}:{node.lineno} imports {_target(module, imported)}"
        for name in MODULES
        if name.startswith("imtheboss.worker")
        for node, module, imported, _inside in _imports(name)
        if module.startswith("imtheboss.web") and _target(module, imported) not in WORKER_SURFACE
    ]
    assert wrong == [], "the worker imports web/ only through WORKER_SURFACE"
    assert all(door in MODULES for door in WORKER_SURFACE)


def test_no_module_imports_another_modules_private_name() -> None:
    wrong = []
    for name, tree in TREES.items():
        aliases = {}  # local name -> our module it stands for
        for node, module, imported, _inside in _imports(name):
            local = next((a.asname or a.name for a in node.names if a.name == imported), None)
            if imported is None:  # import imtheboss.x.y as z
                local = next((a.asname for a in node.names if a.name == module), None)
            if local and (imported is None or _target(module, imported) != module):
                aliases[local] = _target(module, imported)
            elif imported and imported.startswith("_") and module != name:
                wrong.append(f"{MODULES[name].relative_to(ROOT)}:{node.lineno} {imported}")
        for node in ast.walk(tree):
            if (
                isinstance(node, ast.Attribute)
                and isinstance(node.value, ast.Name)
                and aliases.get(node.value.id, name) != name
                and node.attr.startswith("_")
                and not node.attr.startswith("__")
            ):
                wrong.append(f"{MODULES[name].relative_to(ROOT)}:{node.lineno} .{node.attr}")
    assert wrong == []


def test_no_import_cycle() -> None:
    graph = {
        name: {
            _target(module, imported)
            for _node, module, imported, inside in _imports(name)
            if not inside and _target(module, imported) in MODULES
        }
        - {name}
        for name in MODULES
    }
    cycles = []
    for start in graph:  # a path back to ``start`` through module-level imports
        seen, todo = set(), [(start, [start])]
        while todo:
            node, path = todo.pop()
            for nxt in graph[node]:
                if nxt == start:
                    cycles.append(" -> ".join([*path, start]))
                elif nxt not in seen:
                    seen.add(nxt)
                    todo.append((nxt, [*path, nxt]))
    assert cycles == []


def test_no_function_over_80_lines() -> None:
    # migrations are the schema's frozen history: never edited, so not split either
    long = [
        f"{MODULES[name].relative_to(ROOT)}:{node.lineno} {node.name} "
        f"{node.end_lineno - node.lineno + 1} lines"
        for name, tree in TREES.items()
        if ".migrations." not in name
        for node in ast.walk(tree)
        if isinstance(node, ast.FunctionDef | ast.AsyncFunctionDef)
        and node.end_lineno - node.lineno + 1 > MAX_LINES
    ]
    assert long == []


def test_imports_inside_functions_are_few_and_say_why() -> None:
    inside = {
        (name, node.lineno)
        for name in MODULES
        for node, _module, _imported, in_function in _imports(name)
        if in_function
    }
    where = sorted(f"{MODULES[name].relative_to(ROOT)}:{line}" for name, line in inside)
    assert len(inside) <= MAX_FUNCTION_IMPORTS, "\n".join(where)
    lines = {name: MODULES[name].read_text(encoding="utf-8").splitlines() for name, _ in inside}
    silent = [
        f"{MODULES[name].relative_to(ROOT)}:{line}"
        for name, line in sorted(inside)
        if "#" not in lines[name][line - 1]
    ]
    assert silent == [], "an import inside a function says why on its line (# cycle: ...)"


def test_web_keeps_few_modules_at_its_top_level_and_ships_every_folder() -> None:
    """web/ goes into feature folders (``web/replies/``, …): its top level only shrinks, and every
    folder with Python in it is a package the wheel ships (pyproject's ``packages``)."""
    top = sorted(p.name for p in (ROOT / "web").glob("*.py"))
    assert len(top) <= MAX_WEB_TOP_MODULES, top
    shipped = tomllib.loads((ROOT / "pyproject.toml").read_text(encoding="utf-8"))
    packages = set(shipped["tool"]["setuptools"]["packages"])
    folders = {
        ".".join(["imtheboss", *path.parent.relative_to(ROOT).parts])
        for room in ROOMS
        for path in (ROOT / room).rglob("*.py")
    }
    assert folders - packages == set()
