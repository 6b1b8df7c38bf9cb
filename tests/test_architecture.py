"""The house rules of docs/architecture.md, computed from the source (``ast``, no imports run).

Floors, top to bottom: cli → evals → bot → agent → tools → store → core → alerts → config. A module
imports only its own floor and the floors below; no modules import each other in a circle;
the Gemini seam (``agent.model``) reaches nothing of the engine but ``agent.errors``.
"""

from __future__ import annotations

import ast
from collections import defaultdict
from collections.abc import Iterator
from pathlib import Path

REPO = Path(__file__).resolve().parents[1]
FLOORS = ["cli", "evals", "bot", "agent", "tools", "store", "core", "alerts", "config"]  # top first
MAX_LINES = 300

Graph = dict[str, set[str]]


def modules(root: Path) -> dict[str, Path]:
    """Every module of the floors under ``root``, by dotted name."""
    found: dict[str, Path] = {}
    for floor in FLOORS:
        for path in sorted((root / floor).rglob("*.py")):
            parts = list(path.relative_to(root).with_suffix("").parts)
            if parts[-1] == "__init__":
                parts.pop()
            found[".".join(parts)] = path
    return found


def _imported(node: ast.Import | ast.ImportFrom, name: str, is_package: bool) -> Iterator[str]:
    if isinstance(node, ast.Import):
        yield from (alias.name for alias in node.names)
        return
    base = node.module or ""
    if node.level:
        package = name.split(".") if is_package else name.split(".")[:-1]
        package = package[: len(package) - (node.level - 1)]
        base = ".".join([*package, base] if base else package)
    yield base
    yield from (f"{base}.{alias.name}" for alias in node.names)


def import_graph(root: Path) -> Graph:
    """Module → the modules of the floors it imports (at any depth of its code)."""
    mods = modules(root)

    def resolve(dotted: str) -> str | None:
        while dotted and dotted not in mods:
            dotted = dotted.rpartition(".")[0]
        return dotted or None

    graph: Graph = defaultdict(set)
    for name, path in mods.items():
        for node in ast.walk(ast.parse(path.read_text(), str(path))):
            if isinstance(node, ast.Import | ast.ImportFrom):
                for dotted in _imported(node, name, path.name == "__init__.py"):
                    target = resolve(dotted)
                    if target is not None and target != name:
                        graph[name].add(target)
    return graph


def upward(graph: Graph) -> list[str]:
    """Imports that go from a floor to a floor above it."""
    rank = {floor: i for i, floor in enumerate(FLOORS)}
    return sorted(
        f"{src} -> {dst}"
        for src, targets in graph.items()
        for dst in targets
        if rank[dst.split(".")[0]] < rank[src.split(".")[0]]
    )


def cycles(graph: Graph) -> list[list[str]]:
    """The strongly connected groups of more than one module (Tarjan, iterative)."""
    index: dict[str, int] = {}
    low: dict[str, int] = {}
    stack: list[str] = []
    on_stack: set[str] = set()
    found: list[list[str]] = []
    nodes = sorted(set(graph) | {t for ts in graph.values() for t in ts})
    for start in nodes:
        if start in index:
            continue
        work = [(start, iter(sorted(graph.get(start, ()))))]
        index[start] = low[start] = len(index)
        stack.append(start)
        on_stack.add(start)
        while work:
            node, children = work[-1]
            child = next(children, None)
            if child is None:
                work.pop()
                if work:
                    low[work[-1][0]] = min(low[work[-1][0]], low[node])
                if low[node] == index[node]:
                    group = []
                    while True:
                        member = stack.pop()
                        on_stack.discard(member)
                        group.append(member)
                        if member == node:
                            break
                    if len(group) > 1:
                        found.append(sorted(group))
            elif child not in index:
                index[child] = low[child] = len(index)
                stack.append(child)
                on_stack.add(child)
                work.append((child, iter(sorted(graph.get(child, ())))))
            elif child in on_stack:
                low[node] = min(low[node], index[child])
    return found


def seam_leaks(graph: Graph) -> list[str]:
    """Imports from ``agent.model`` into the rest of the engine (``agent.errors`` is allowed)."""
    return sorted(
        f"{src} -> {dst}"
        for src, targets in graph.items()
        if src.startswith("agent.model")
        for dst in targets
        if dst.startswith("agent")
        and not dst.startswith("agent.model")
        and dst not in {"agent", "agent.errors"}
    )


def test_no_import_goes_up_a_floor() -> None:
    assert upward(import_graph(REPO)) == []


def test_no_modules_import_each_other_in_a_circle() -> None:
    assert cycles(import_graph(REPO)) == []


def test_the_gemini_seam_imports_nothing_of_the_engine() -> None:
    assert seam_leaks(import_graph(REPO)) == []


def test_every_package_says_what_it_owns() -> None:
    packages = [p for p in modules(REPO).values() if p.name == "__init__.py"]
    assert len(packages) >= len(FLOORS)
    silent = [
        str(p.relative_to(REPO))
        for p in packages
        if not ast.get_docstring(ast.parse(p.read_text()))
    ]
    assert silent == []


def test_modules_stay_small() -> None:
    long = {
        str(path.relative_to(REPO)): n
        for path in modules(REPO).values()
        if (n := len(path.read_text().splitlines())) > MAX_LINES
    }
    assert long == {}


def test_the_rules_catch_what_they_forbid(tmp_path: Path) -> None:
    """A tree with an upward import, a circle and a leak from the seam fails every rule."""
    files = {
        "alerts/__init__.py": "",
        "alerts/model.py": "from agent.engine import Engine\n",
        "agent/__init__.py": "",
        "agent/engine.py": "from agent import waves\n",
        "agent/waves.py": "from .engine import Engine\n",
        "agent/model/__init__.py": "",
        "agent/model/gateway.py": "import agent.waves\nfrom agent.errors import E\n",
        "agent/errors.py": "",
    }
    for name, text in files.items():
        (tmp_path / name).parent.mkdir(parents=True, exist_ok=True)
        (tmp_path / name).write_text(text)
    graph = import_graph(tmp_path)
    assert upward(graph) == ["alerts.model -> agent.engine"]
    assert cycles(graph) == [["agent.engine", "agent.waves"]]
    assert seam_leaks(graph) == ["agent.model.gateway -> agent.waves"]
