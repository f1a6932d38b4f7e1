"""The W3C Nu HTML checker (vnu.jar, from the npm package `vnu-jar` that `make vnu` installs in .cache/vnu/).

`Vnu(jar).errors({"home": html, "board": html})` writes each document to a temporary file and checks all of them
with ONE `java -jar vnu.jar --errors-only --format json …` run (the JVM takes seconds to start, so batch documents
into one call), then answers `{"home": [], "board": ["line 12: Stray end tag “div”."]}`: every name given, with
its errors (warnings are not reported). It checks markup validity only: not accessibility (axe does that), not
CSS, not what a browser renders.
"""

from __future__ import annotations

import json
import shutil
import subprocess
import tempfile
from pathlib import Path

ROOT = Path(__file__).resolve().parents[2]
JAR = ROOT / ".cache" / "vnu" / "node_modules" / "vnu-jar" / "build" / "dist" / "vnu.jar"
JAVA = shutil.which("java") or "/usr/bin/java"
# A short-lived JVM starts faster without the optimising compiler and with the simplest collector.
JVM_OPTIONS = ["-XX:TieredStopAtLevel=1", "-XX:+UseSerialGC", "-Xss4m"]


class VnuError(RuntimeError):
    """The checker itself could not run (no Java, no jar, an unreadable answer)."""


class Vnu:
    """One installed checker; each `errors()` call is one Java process for every document given."""

    def __init__(self, jar: Path = JAR, java: str = JAVA, timeout: float = 300.0) -> None:
        self.jar = Path(jar)
        self.java = java
        self.timeout = timeout

    def available(self) -> str | None:
        """None when the checker can run, else what is missing (and how to get it)."""
        if not Path(self.java).exists() and not shutil.which(self.java):
            return f"no Java runtime at {self.java}: run `make vnu` (it installs Debian's default-jre-headless)"
        if not self.jar.exists():
            return f"the W3C Nu HTML checker is not installed at {self.jar}: run `make vnu`"
        return None

    def errors(self, documents: dict[str, str]) -> dict[str, list[str]]:
        """Validate every document in one run; `{name: ["line N: message", …]}` with [] for a valid one."""
        if not documents:
            return {}
        missing = self.available()
        if missing:
            raise VnuError(missing)
        found: dict[str, list[str]] = {name: [] for name in documents}
        with tempfile.TemporaryDirectory(prefix="vnu-") as folder:
            by_url, paths = {}, []
            for index, (name, html) in enumerate(documents.items()):
                path = Path(folder) / f"document-{index:04d}.html"
                path.write_text(html, encoding="utf-8")
                paths.append(str(path))
                by_url[path.resolve().as_uri().replace("file:///", "file:/")] = name
            command = [self.java, *JVM_OPTIONS, "-jar", str(self.jar), "--errors-only", "--format", "json",
                       "--exit-zero-always", *paths]
            result = subprocess.run(command, capture_output=True, text=True, timeout=self.timeout, check=False)
        try:
            report = json.loads(result.stderr or result.stdout)
        except json.JSONDecodeError:
            raise VnuError(f"vnu.jar answered something else than JSON (exit {result.returncode}): "
                           f"{(result.stderr or result.stdout)[-2000:]}") from None
        for message in report.get("messages", []):
            name = by_url.get(message.get("url", ""))
            if message.get("type") != "error" or name is None:
                if message.get("type") == "non-document-error":
                    raise VnuError(f"vnu.jar could not check a document: {message.get('message')}")
                continue
            line = message.get("lastLine") or message.get("firstLine")
            found[name].append(f"line {line}: {message.get('message', '').strip()}")
        return found
