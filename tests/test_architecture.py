"""The shape of the code is part of its contract: wings with one-way arrows, no import cycles, a domain core that runs
without Flask, and no scheduler in a web worker (see docs/architecture.md)."""

from __future__ import annotations

import ast
import subprocess
import sys
from pathlib import Path

from notifier.config import ROOT

PACKAGE = ROOT / "notifier"
# Lower wings never import higher ones: web and cli -> staff -> clock -> notices -> delivery -> subscribers -> status
# -> the kernel (the top-level modules). The package itself (`notifier`, `notifier.__main__`) sits above them all.
LEVELS = {"kernel": 0, "status": 1, "subscribers": 2, "delivery": 3, "notices": 4, "clock": 5, "staff": 6, "web": 7,
          "cli": 8, "package": 9}
DOMAIN = ("kernel", "status", "subscribers", "delivery", "notices", "clock", "staff")
WEB_LIBRARIES = ("flask", "flask_", "werkzeug")


def module_name(path: Path) -> str:
    parts = path.relative_to(ROOT).with_suffix("").parts
    return ".".join(parts[:-1] if parts[-1] == "__init__" else parts)


MODULES = {module_name(path): path for path in PACKAGE.rglob("*.py")}


def wing_of(module: str) -> str:
    """The wing a module belongs to: its subpackage, `clock`, the package itself, or the kernel."""
    parts = module.split(".")
    if len(parts) == 1 or parts[1] == "__main__":
        return "package"
    return parts[1] if parts[1] in LEVELS else "kernel"


def imports_of(module: str) -> tuple[set[str], set[str]]:
    """(modules of this package, other top-level packages) imported anywhere in `module`, lazy imports included."""
    tree = ast.parse(MODULES[module].read_text(encoding="utf-8"))
    ours, others = set(), set()
    for node in ast.walk(tree):
        if isinstance(node, ast.Import):
            names = [alias.name for alias in node.names]
        elif isinstance(node, ast.ImportFrom) and node.level == 0 and node.module:
            # `from notifier import links` imports the module notifier.links, not the package's __init__
            names = [f"{node.module}.{alias.name}" if f"{node.module}.{alias.name}" in MODULES else node.module
                     for alias in node.names]
        else:
            continue
        for name in names:
            if name.split(".")[0] != "notifier":
                others.add(name.split(".")[0])
                continue
            while name not in MODULES:
                name = name.rpartition(".")[0]
            if name != module:
                ours.add(name)
    return ours, others


GRAPH = {module: imports_of(module)[0] for module in MODULES}


def cycles(graph: dict[str, set[str]]) -> list[list[str]]:
    """Every strongly connected group of more than one module (Tarjan's algorithm)."""
    index: dict[str, int] = {}
    low: dict[str, int] = {}
    stack: list[str] = []
    found: list[list[str]] = []

    def visit(node: str) -> None:
        index[node] = low[node] = len(index)
        stack.append(node)
        for target in graph[node]:
            if target not in index:
                visit(target)
                low[node] = min(low[node], low[target])
            elif target in stack:
                low[node] = min(low[node], index[target])
        if low[node] == index[node]:
            group = []
            while True:
                member = stack.pop()
                group.append(member)
                if member == node:
                    break
            if len(group) > 1:
                found.append(sorted(group))

    for node in sorted(graph):
        if node not in index:
            visit(node)
    return found


def test_no_module_imports_another_that_imports_it_back():
    assert cycles(GRAPH) == []


def test_wings_import_only_themselves_and_the_wings_below():
    upward = sorted(
        f"{module} -> {target}"
        for module, targets in GRAPH.items()
        for target in targets
        if LEVELS[wing_of(target)] > LEVELS[wing_of(module)]
    )
    assert upward == []


def test_the_domain_wings_never_import_flask():
    offenders = sorted(
        f"{module} imports {library}"
        for module in MODULES
        if wing_of(module) in DOMAIN
        for library in imports_of(module)[1]
        if library.startswith(WEB_LIBRARIES)
    )
    assert offenders == []


def test_the_package_keeps_at_most_a_dozen_top_level_modules():
    assert len(list(PACKAGE.glob("*.py"))) <= 12


def test_a_wing_package_says_what_it_is_for_and_imports_nothing():
    for path in PACKAGE.glob("*/__init__.py"):
        if path.parent.name in ("web", "cli"):
            continue  # the thin layers: their __init__ builds the app or the command group
        tree = ast.parse(path.read_text(encoding="utf-8"))
        assert ast.get_docstring(tree), path
        assert "May import" in ast.get_docstring(tree), path
        assert not [node for node in tree.body if isinstance(node, ast.Import | ast.ImportFrom)
                    and not (isinstance(node, ast.ImportFrom) and node.module == "__future__")], path


def test_importing_the_domain_core_loads_no_flask():
    code = (
        "import sys, notifier.status.cycle, notifier.subscribers.signup, notifier.notices.planning, notifier.clock, "
        "notifier.delivery.drain, notifier.staff.publishing, notifier.cli; print('flask' in sys.modules)"
    )
    result = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, cwd=ROOT, check=True)
    assert result.stdout.strip() == "False"


def test_the_web_app_never_starts_a_scheduler(app):
    import apscheduler.schedulers.base as base

    assert "apscheduler" not in " ".join(app.extensions)
    assert not any(isinstance(value, base.BaseScheduler) for value in vars(app).values())
