"""The house rules of docs/architecture.md, computed from the source (``ast``, no imports run).

Floors, top to bottom: cli → evals → bot → agent → tools → store → core → alerts → config. A module
imports only its own floor and the floors below; no modules import each other in a circle;
the Gemini seam (``agent.model``) reaches nothing of the engine but ``agent.errors``. Inside
``bot/`` and ``store/`` the wings (folders) are in an order of their own (``WINGS``): a
package's top-level modules may import any of its wings, a wing only the wings below it, and
another wing only what a wing's ``__init__`` lists in ``__all__`` (``_``-named modules are
the wing's own).
"""

from __future__ import annotations

import ast
import re
from collections import defaultdict
from collections.abc import Iterator
from pathlib import Path

REPO = Path(__file__).resolve().parents[1]
FLOORS = ["cli", "evals", "bot", "agent", "tools", "store", "core", "alerts", "config"]  # top first
MAX_LINES = 300
# each package's wings, top first (docs/architecture.md says why this order)
WINGS = {
    "bot": [
        "web",
        "transport",
        "events",
        "intake",
        "decisions",
        "notify",
        "slack",
        "blocks",
        "work",
        "observe",
    ],
    "bot.web": ["pages", "view", "auth"],
    "bot.intake": ["policy"],
    "store": ["cases", "playbook", "triage", "queue", "investigations", "db", "schema"],
}
MAX_TOP_MODULES = {"bot": 8, "store": 10}  # the app and its lifecycle; the rest is in wings

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


def wing_of(module: str, package: str, root: Path) -> str | None:
    """The wing of ``package`` that ``module`` is in, ``""`` for a top-level module of the
    package (or the package itself), ``None`` outside it."""
    if module != package and not module.startswith(package + "."):
        return None
    rest = module[len(package) + 1 :].split(".") if module != package else []
    if rest and (root / package.replace(".", "/") / rest[0] / "__init__.py").exists():
        return rest[0]
    return ""


def wing_violations(graph: Graph, root: Path) -> list[str]:
    """Imports against the wings' order, and wings missing from it."""
    found = []
    for package, order in WINGS.items():
        if not (root / package.replace(".", "/") / "__init__.py").exists():
            found.append(f"{package} has wings in WINGS but is no package")
            continue
        folders = sorted(
            p.name
            for p in (root / package.replace(".", "/")).iterdir()
            if (p / "__init__.py").exists() and p.name != "migrations"
        )
        found += [f"{package}.{w} is in no place of WINGS" for w in folders if w not in order]
        rank = {w: i for i, w in enumerate(order)}
        for src, targets in graph.items():
            a = wing_of(src, package, root)
            for dst in targets:
                b = wing_of(dst, package, root)
                if a is None or b is None or a == b or a == "" or dst == package:
                    continue
                if b == "" or rank.get(a, -1) >= rank.get(b, -1):
                    found.append(f"{src} -> {dst}")
    return sorted(found)


def _declared_all(init: Path) -> list[str] | None:
    for node in ast.parse(init.read_text()).body:
        if isinstance(node, ast.Assign) and any(
            isinstance(t, ast.Name) and t.id == "__all__" for t in node.targets
        ):
            return [str(name) for name in ast.literal_eval(node.value)]
    return None


def wing_packages(root: Path) -> list[str]:
    """Every package below ``bot`` and ``store`` (and ``tools.sql``): the wings."""
    found = []
    for top in ("bot", "store", "tools/sql"):
        for init in sorted((root / top).rglob("__init__.py")):
            parts = init.parent.relative_to(root).parts
            if init.parent.name not in ("bot", "store") and "migrations" not in parts:
                found.append(".".join(parts))
    return found


def private_reaches(graph: Graph, root: Path) -> list[str]:
    """Imports from outside a wing of what its ``__all__`` does not list; wings without one."""
    found = []
    for wing in wing_packages(root):
        public = _declared_all(root / wing.replace(".", "/") / "__init__.py")
        if public is None:
            found.append(f"{wing} has no __all__")
            continue
        found += [f"{wing}.__all__ lists {n}" for n in public if n.startswith("_")]
        for src, targets in graph.items():
            if src == wing or src.startswith(wing + "."):
                continue
            for dst in targets:
                if dst.startswith(wing + ".") and dst[len(wing) + 1 :].split(".")[0] not in public:
                    found.append(f"{src} -> {dst}")
    return sorted(found)


def test_no_import_goes_up_a_floor() -> None:
    assert upward(import_graph(REPO)) == []


def test_no_modules_import_each_other_in_a_circle() -> None:
    assert cycles(import_graph(REPO)) == []


def test_the_gemini_seam_imports_nothing_of_the_engine() -> None:
    assert seam_leaks(import_graph(REPO)) == []


def test_wings_import_only_the_wings_below_them() -> None:
    assert wing_violations(import_graph(REPO), REPO) == []


def test_a_wing_is_reached_only_through_what_it_lists() -> None:
    assert private_reaches(import_graph(REPO), REPO) == []


def test_the_app_and_the_store_keep_a_short_top_level() -> None:
    top = {
        package: sorted(p.name for p in (REPO / package).glob("*.py") if p.name != "__init__.py")
        for package in MAX_TOP_MODULES
    }
    assert {p: len(m) for p, m in top.items() if len(m) > MAX_TOP_MODULES[p]} == {}, top


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


def tree(root: Path, files: dict[str, str]) -> Path:
    """``files`` (path → text) written under ``root``."""
    for name, text in files.items():
        (root / name).parent.mkdir(parents=True, exist_ok=True)
        (root / name).write_text(text)
    return root


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
    graph = import_graph(tree(tmp_path, files))
    assert upward(graph) == ["alerts.model -> agent.engine"]
    assert cycles(graph) == [["agent.engine", "agent.waves"]]
    assert seam_leaks(graph) == ["agent.model.gateway -> agent.waves"]


def test_the_wing_rules_catch_what_they_forbid(tmp_path: Path) -> None:
    """A wing importing one above it, a top-level module or another wing's private module,
    and a wing with no ``__all__`` or no place in the order, are each named."""
    files = {
        "bot/__init__.py": "",
        "bot/app.py": "from bot.work import worker\n",
        "bot/web/__init__.py": "__all__ = []\n",
        "bot/web/pages/__init__.py": "__all__ = []\n",
        "bot/web/view/__init__.py": "__all__ = []\n",
        "bot/web/auth/__init__.py": "__all__ = []\n",
        "bot/intake/__init__.py": "__all__ = []\n",
        "bot/intake/policy/__init__.py": "__all__ = []\n",
        "bot/work/__init__.py": '__all__ = ["worker"]\n',
        "bot/work/worker.py": "from bot.slack import reporter\nfrom bot import app\n",
        "bot/slack/__init__.py": '__all__ = ["reporter"]\n',
        "bot/slack/reporter.py": "from bot.work import worker\nfrom bot.work import _claimed\n",
        "bot/work/_claimed.py": "",
        "bot/newwing/__init__.py": "",
        "store/__init__.py": "",
        "tools/sql/__init__.py": "__all__ = []\n",
    }
    graph = import_graph(tree(tmp_path, files))
    assert wing_violations(graph, tmp_path) == [
        "bot.newwing is in no place of WINGS",
        "bot.work.worker -> bot.app",
        "bot.work.worker -> bot.slack",
        "bot.work.worker -> bot.slack.reporter",
    ]
    assert private_reaches(graph, tmp_path) == [
        "bot.newwing has no __all__",
        "bot.slack.reporter -> bot.work._claimed",
    ]


def _user_facing_text() -> Iterator[tuple[str, str]]:
    """Docs, prompts, settings and every string of the Slack side that is not a docstring."""
    for folder, pattern in (("docs", "*.md"), ("prompts", "*.j2"), ("config", "*.py")):
        for path in sorted((REPO / folder).rglob(pattern)):
            yield str(path.relative_to(REPO)), path.read_text()
    for path in sorted((REPO / "config").glob("*.toml*")):
        yield str(path.relative_to(REPO)), path.read_text()
    yield "README.md", (REPO / "README.md").read_text()
    for path in sorted((REPO / "bot").rglob("*.py")):
        tree = ast.parse(path.read_text())
        docstrings = {
            id(node.body[0].value)
            for node in ast.walk(tree)
            if isinstance(node, ast.Module | ast.ClassDef | ast.FunctionDef | ast.AsyncFunctionDef)
            and node.body
            and isinstance(node.body[0], ast.Expr)
            and isinstance(node.body[0].value, ast.Constant)
        }
        for node in ast.walk(tree):
            if isinstance(node, ast.Constant) and isinstance(node.value, str):
                if id(node) not in docstrings:
                    yield str(path.relative_to(REPO)), node.value


def test_no_user_facing_text_cites_design_documents_the_repository_lacks() -> None:
    """The seeds socbot came from are not shipped: a setting, a page or a message that says
    "seed 001" points a team at nothing."""
    seed = re.compile(r"\bseeds?\s*0\d\d|\bseeds/", re.IGNORECASE)
    cited = sorted({where for where, text in _user_facing_text() if seed.search(text)})
    assert cited == []
