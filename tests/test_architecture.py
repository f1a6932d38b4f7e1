"""The shape of the code is part of its contract: the domain core runs without Flask, and no web worker schedules."""

from __future__ import annotations

import ast
import subprocess
import sys
from pathlib import Path

from notifier.config import ROOT

CORE = [p for p in (ROOT / "notifier").rglob("*.py") if "web" not in p.relative_to(ROOT / "notifier").parts]


def imported_modules(path: Path) -> set[str]:
    tree = ast.parse(path.read_text(encoding="utf-8"))
    names: set[str] = set()
    for node in ast.walk(tree):
        if isinstance(node, ast.Import):
            names.update(alias.name for alias in node.names)
        elif isinstance(node, ast.ImportFrom) and node.module:
            names.add(node.module)
    return names


def test_the_domain_core_never_imports_flask():
    offenders = [
        str(path.relative_to(ROOT))
        for path in CORE
        if any(name == "flask" or name.startswith(("flask.", "flask_", "werkzeug")) for name in imported_modules(path))
        and path.name != "__init__.py"  # notifier/__init__.py only re-exports create_app, lazily
    ]
    assert offenders == []


def test_importing_the_domain_core_loads_no_flask():
    code = (
        "import sys, notifier.boards, notifier.boardfile, notifier.changes, notifier.cycle, notifier.clock, "
        "notifier.channels, notifier.subscriptions; print('flask' in sys.modules)"
    )
    result = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, cwd=ROOT, check=True)
    assert result.stdout.strip() == "False"


def test_the_web_app_never_starts_a_scheduler(app):
    import apscheduler.schedulers.base as base

    assert "apscheduler" not in " ".join(app.extensions)
    assert not any(isinstance(value, base.BaseScheduler) for value in vars(app).values())
