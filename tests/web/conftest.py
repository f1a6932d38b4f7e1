"""Fixtures for the public site: an app that notices edits at once, a board in the middle of job action, and
helpers to read pages the way a parent (or a feed reader) does."""

from __future__ import annotations

import json
import re
from datetime import datetime, timedelta
from html import unescape
from pathlib import Path

import pytest

from notifier.config import ROOT
from notifier.formatting import TORONTO
from tests.conftest import make_withdrawal

ALL_BOARD_IDS = re.findall(r"^  - id: (\S+)$", (ROOT / "boards.yaml").read_text(encoding="utf-8"), re.MULTILINE)
OPENAPI = json.loads((ROOT / "docs" / "openapi.json").read_text(encoding="utf-8"))


@pytest.fixture
def app(app):
    """The shared app, looking at boards.yaml and the history on every request (tests edit within a second)."""
    services = app.extensions["notifier"]
    services.boards.check_every = 0
    services.pages.check_every = 0
    return app


def in_a_week() -> str:
    return (datetime.now(TORONTO) + timedelta(days=7)).replace(hour=0, minute=1, second=0, microsecond=0) \
        .strftime("%Y-%m-%dT%H:%M")


RICH_BOARD = "tdsb"


@pytest.fixture
def job_action(boards):
    """TDSB in work-to-rule with secondary closed, buses and cleaning withdrawn; Peel open, a strike announced ahead."""
    boards.update(
        RICH_BOARD, status="work-to-rule", panels={"secondary": "closed"}, effective="2026-11-02T00:01",
        message={"en": "Secondary schools are closed during the strike. Elementary schools are open.",
                 "fr": "Les écoles secondaires sont fermées pendant la grève. Les écoles élémentaires sont ouvertes."},
        announcement={"en": "https://www.tdsb.on.ca/strike", "fr": "https://www.tdsb.on.ca/greve"},
        withdrawals=[
            make_withdrawal(panels=["secondary"]),
            make_withdrawal(category="custodial-cleaning",
                            description={"en": "Hallways and gyms are cleaned less often.",
                                         "fr": "Les couloirs et gymnases sont moins nettoyés."},
                            advice={"en": "Send a full water bottle with your child.",
                                    "fr": "Donnez une gourde pleine à votre enfant."}),
        ],
        updated_at="2026-11-01T18:30",
    )
    boards.update("peel", upcoming=[{"from": in_a_week(), "status": "closed", "withdrawals": [make_withdrawal()]}])
    return boards


def visible_text(html: str) -> str:
    """The words a reader sees (tags, scripts and styles removed, entities decoded, spaces collapsed)."""
    html = re.sub(r"<(script|style)\b.*?</\1>", " ", html, flags=re.S)
    return " ".join(unescape(re.sub(r"<[^>]+>", " ", html)).split())


def board_names_in(html: str) -> list[str]:
    """Board names in page order, as linked from the index."""
    return [unescape(n) for n in re.findall(r'<a class="board-name" href="[^"]+">([^<]+)</a>', html)]


def board_ids_in(html: str) -> list[str]:
    return re.findall(r'<a class="board-name" href="/boards/([^"]+)">', html)


# --- the W3C Nu HTML checker --------------------------------------------------------------------------------------

VNU_VERSION = "26.9.27"  # npm's vnu-jar, pinned
VNU_DIR = ROOT / ".cache" / "vnu"
VNU_JAR = VNU_DIR / "node_modules" / "vnu-jar" / "build" / "dist" / "vnu.jar"


class Vnu:
    """The W3C Nu HTML checker: `errors({name: html, …})` checks every document in ONE Java run (a JVM takes seconds
    to start) and answers `{name: ["line 12: Stray end tag “div”.", …]}`, [] for a valid document."""

    def __init__(self, jar: Path, java: str) -> None:
        self.jar, self.java = jar, java

    def errors(self, documents: dict[str, str]) -> dict[str, list[str]]:
        """Every error vnu finds in each document (warnings left out)."""
        import subprocess
        import tempfile

        found: dict[str, list[str]] = {name: [] for name in documents}
        with tempfile.TemporaryDirectory(prefix="vnu-") as folder:
            by_path = {}
            for index, (name, html) in enumerate(documents.items()):
                path = Path(folder) / f"{index:04d}.html"
                path.write_text(html, encoding="utf-8")
                by_path[path.name] = name
            command = [self.java, "-XX:TieredStopAtLevel=1", "-XX:+UseSerialGC", "-Xss4m", "-jar", str(self.jar),
                       "--errors-only", "--exit-zero-always", "--format", "json",
                       *(str(Path(folder) / p) for p in sorted(by_path))]
            result = subprocess.run(command, capture_output=True, text=True, timeout=600, check=False)
        report = json.loads(result.stderr or result.stdout)
        for message in report.get("messages", []):
            if message.get("type") == "non-document-error":
                raise RuntimeError(f"vnu.jar could not check a document: {message.get('message')}")
            name = by_path.get(message.get("url", "").rsplit("/", 1)[-1])
            if name is not None and message.get("type") == "error":
                line = message.get("lastLine") or message.get("firstLine")
                found[name].append(f"line {line}: {message.get('message', '').strip()}")
        return found


def _install_vnu() -> None:
    """npm's vnu-jar into .cache/vnu/, once for every xdist worker (a file lock), saying so before it starts."""
    import shutil
    import subprocess
    import sys
    import warnings

    from filelock import FileLock

    VNU_DIR.parent.mkdir(exist_ok=True)
    with FileLock(str(VNU_DIR.parent / "vnu.lock")):
        if VNU_JAR.exists():
            return
        if shutil.which("npm") is None:
            pytest.fail("the HTML validity tests need npm to install the W3C Nu HTML checker: apt-get install npm")
        announcement = f"Installing the W3C Nu HTML checker (npm vnu-jar@{VNU_VERSION}) into {VNU_DIR} ..."
        print(announcement, file=sys.__stderr__, flush=True)  # noqa: T201 - the one line saying what is installed
        warnings.warn(announcement, stacklevel=1)
        shutil.rmtree(VNU_DIR, ignore_errors=True)
        result = subprocess.run(["npm", "install", "--prefix", str(VNU_DIR), "--no-save", "--no-audit", "--no-fund",
                                 "--loglevel=error", f"vnu-jar@{VNU_VERSION}"], capture_output=True, text=True,
                                timeout=600, check=False)
        if result.returncode != 0 or not VNU_JAR.exists():
            pytest.fail(f"could not install vnu-jar@{VNU_VERSION} from npm: {result.stderr[-2000:]}")


@pytest.fixture(scope="session")
def vnu() -> Vnu:
    """The W3C Nu HTML checker (installed on first use; needs Java: Debian's default-jre-headless)."""
    import shutil

    java = shutil.which("java") or "/usr/bin/java"
    if not Path(java).exists():
        pytest.fail("the HTML validity tests need Java: apt-get install default-jre-headless")
    _install_vnu()
    return Vnu(VNU_JAR, java)
