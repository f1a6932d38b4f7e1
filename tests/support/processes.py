"""Runs the project's own commands as real processes, the way the Procfile does, for tests of what several
processes do together (clock, workers, gunicorn web) and of what killing one of them leaves behind.

    group = Processes(tmp_path / "logs")          # the `processes` fixture makes one and stops it after the test
    group.run("release", env)                     # the Procfile's release line, to the end (migrations)
    web = group.start("web", {**env, "WEB_CONCURRENCY": "1"})   # PORT is picked free unless given
    web.wait_http(f"{web.url}/healthz")
    worker = group.start("worker", env)
    worker.wait_for_log(r"drained \\d+")
    worker.kill()                                 # SIGKILL to its whole process group
    worker.restart()

Commands come from the Procfile itself (`${VAR:-default}` and `$VAR` filled from the process's environment;
`python` is this interpreter, other programs come from its virtualenv's bin/ when there). Each process gets its
own process group (signals reach gunicorn's workers too), the environment given on top of this one without any
NOTIFIER_* or TWILIO_* variable of the test run's own, PYTHONUNBUFFERED=1, an XDG_RUNTIME_DIR of its own (where
gunicorn puts its control socket), and a log file holding its stdout and stderr. It does not restart crashed
processes by itself (honcho does not either).
"""

from __future__ import annotations

import os
import re
import shlex
import shutil
import signal
import socket
import subprocess
import sys
import time
import urllib.error
import urllib.request
from collections.abc import Mapping, Sequence
from pathlib import Path

ROOT = Path(__file__).resolve().parents[2]
BIN = Path(sys.executable).parent
_VARIABLE = re.compile(r"\$\{(\w+)(?::-([^}]*))?\}|\$(\w+)")


def procfile(path: Path = ROOT / "Procfile") -> dict[str, str]:
    """The Procfile's lines: process type -> command line as written."""
    lines = {}
    for line in path.read_text(encoding="utf-8").splitlines():
        if line.strip() and not line.lstrip().startswith("#"):
            name, _, command = line.partition(":")
            lines[name.strip()] = command.strip()
    return lines


def command(name: str, env: Mapping[str, str], path: Path = ROOT / "Procfile") -> list[str]:
    """The Procfile line `name` as arguments, with its variables filled from `env` and programs resolved."""
    lines = procfile(path)
    if name not in lines:
        raise KeyError(f"no {name!r} line in {path}; it has {sorted(lines)}")

    def fill(match: re.Match) -> str:
        variable = match.group(1) or match.group(3)
        return env.get(variable) or (match.group(2) or "")

    return [_program(word) if i == 0 else word for i, word in enumerate(shlex.split(_VARIABLE.sub(fill, lines[name])))]


def _program(word: str) -> str:
    if word == "python":
        return sys.executable
    local = BIN / word
    return str(local) if local.exists() else (shutil.which(word) or word)


def free_port() -> int:
    """A TCP port nothing listens on now."""
    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        return sock.getsockname()[1]


def base_environment(extra: Mapping[str, str]) -> dict[str, str]:
    """This process's environment without the test run's NOTIFIER_*/TWILIO_* settings, plus `extra`."""
    env = {k: v for k, v in os.environ.items() if not k.startswith(("NOTIFIER_", "TWILIO_"))}
    env["PATH"] = f"{BIN}{os.pathsep}{env.get('PATH', '')}"
    env["PYTHONUNBUFFERED"] = "1"
    env.update(extra)
    return env


class Process:
    """One command running in its own process group, logging to a file."""

    def __init__(self, label: str, argv: Sequence[str], env: Mapping[str, str], log_path: Path,
                 cwd: Path = ROOT) -> None:
        self.label = label
        self.argv = list(argv)
        self.env = dict(env)
        self.log_path = log_path
        self.cwd = cwd
        self.port = int(env["PORT"]) if env.get("PORT", "").isdigit() else None
        self._popen: subprocess.Popen | None = None
        self._since = 0  # log offset of the latest start

    @property
    def url(self) -> str:
        """http://127.0.0.1:PORT for a process given a PORT (web)."""
        return f"http://127.0.0.1:{self.port}"

    @property
    def pid(self) -> int | None:
        return self._popen.pid if self._popen else None

    @property
    def returncode(self) -> int | None:
        return self._popen.poll() if self._popen else None

    @property
    def running(self) -> bool:
        return self._popen is not None and self._popen.poll() is None

    def start(self) -> Process:
        """Start (or start again), appending to the log."""
        self.log_path.parent.mkdir(parents=True, exist_ok=True)
        with self.log_path.open("ab") as log:
            log.write(f"=== start: {shlex.join(self.argv)}\n".encode())
            self._since = log.tell()
            self._popen = subprocess.Popen(self.argv, cwd=self.cwd, env=self.env, stdout=log,
                                           stderr=subprocess.STDOUT, stdin=subprocess.DEVNULL,
                                           start_new_session=True)
        return self

    def log(self, since_start: bool = False) -> str:
        """The whole log (or only what the latest start wrote)."""
        if not self.log_path.exists():
            return ""
        data = self.log_path.read_bytes()
        return data[self._since:].decode(errors="replace") if since_start else data.decode(errors="replace")

    def wait_for_log(self, pattern: str, timeout: float = 30.0) -> re.Match:
        """Wait until the output since the latest start matches `pattern` (a regex); its match."""
        expression = re.compile(pattern, re.MULTILINE)
        deadline = time.monotonic() + timeout
        while True:
            found = expression.search(self.log(since_start=True))
            if found:
                return found
            if not self.running:
                raise RuntimeError(f"{self.label} exited ({self.returncode}) before logging /{pattern}/:\n"
                                   f"{self.tail()}")
            if time.monotonic() > deadline:
                raise TimeoutError(f"{self.label} did not log /{pattern}/ in {timeout} s:\n{self.tail()}")
            time.sleep(0.05)

    def wait_http(self, url: str, timeout: float = 30.0, status: int = 200) -> str:
        """Wait until GET `url` answers `status`; the body."""
        deadline = time.monotonic() + timeout
        last = "no answer yet"
        while time.monotonic() < deadline:
            if not self.running:
                raise RuntimeError(f"{self.label} exited ({self.returncode}) before {url} answered:\n{self.tail()}")
            try:
                with urllib.request.urlopen(url, timeout=5) as response:  # noqa: S310 - loopback
                    body = response.read().decode(errors="replace")
                    if response.status == status:
                        return body
                    last = f"{response.status}"
            except urllib.error.HTTPError as error:
                if error.code == status:
                    return error.read().decode(errors="replace")
                last = f"{error.code}"
            except OSError as error:
                last = f"{type(error).__name__}: {error}"
            time.sleep(0.1)
        raise TimeoutError(f"{url} did not answer {status} in {timeout} s (last: {last}):\n{self.tail()}")

    def wait(self, timeout: float = 60.0) -> int:
        """Wait for the process to end by itself; its exit code."""
        return self._popen.wait(timeout=timeout)

    def send_signal(self, signum: int) -> None:
        """Send `signum` to the whole process group."""
        if self._popen is not None:
            try:
                os.killpg(self._popen.pid, signum)
            except ProcessLookupError:
                pass

    def kill(self, signum: int = signal.SIGKILL) -> int | None:
        """Kill the process group at once (SIGKILL by default: no cleanup runs); its exit code."""
        self.send_signal(signum)
        return self._popen.wait(timeout=30) if self._popen else None

    def terminate(self, grace: float = 10.0) -> int | None:
        """SIGTERM to the process group, then SIGKILL after `grace` seconds; the exit code."""
        if self._popen is None:
            return None
        if self._popen.poll() is None:
            self.send_signal(signal.SIGTERM)
            try:
                self._popen.wait(timeout=grace)
            except subprocess.TimeoutExpired:
                self.send_signal(signal.SIGKILL)
                self._popen.wait(timeout=30)
        self.send_signal(signal.SIGKILL)  # children that outlived their parent
        return self._popen.returncode

    def restart(self, grace: float = 10.0) -> Process:
        """Terminate (if running) and start again with the same command and environment."""
        self.terminate(grace)
        return self.start()

    def tail(self, characters: int = 4000) -> str:
        return self.log()[-characters:]


class Processes:
    """The processes one test started; `stop_all()` (or leaving a `with` block) ends every one of them."""

    def __init__(self, log_dir: Path) -> None:
        self.log_dir = log_dir
        self.started: list[Process] = []

    def __enter__(self) -> Processes:
        return self

    def __exit__(self, *exc) -> None:
        self.stop_all()

    def start(self, name: str, env: Mapping[str, str], *extra_args: str, label: str | None = None) -> Process:
        """Start the Procfile's `name` line (web gets a free PORT unless `env` has one) with `extra_args`."""
        env = base_environment(env)
        if name == "web":
            env.setdefault("PORT", str(free_port()))
        return self._launch([*command(name, env), *extra_args], env, label or name)

    def command(self, argv: Sequence[str], env: Mapping[str, str], label: str | None = None) -> Process:
        """Start any command (`python` means this interpreter) as a managed process."""
        return self._launch([_program(argv[0]), *argv[1:]], base_environment(env), label or Path(argv[0]).name)

    def run(self, name: str, env: Mapping[str, str], *extra_args: str, timeout: float = 120.0) -> Process:
        """Run the Procfile's `name` line to its end (e.g. release); raises with the log if it fails."""
        process = self.start(name, env, *extra_args)
        code = process.wait(timeout)
        if code != 0:
            raise RuntimeError(f"{process.label} exited {code}:\n{process.tail()}")
        return process

    def stop_all(self, grace: float = 10.0) -> None:
        """Terminate every process started here (the still running ones first get SIGTERM, then SIGKILL)."""
        for process in reversed(self.started):
            process.terminate(grace)

    def logs(self) -> str:
        """Every process's log tail, for a failing test's report."""
        return "\n".join(f"----- {p.label} (exit {p.returncode}) -----\n{p.tail()}" for p in self.started)

    def _launch(self, argv: list[str], env: dict[str, str], label: str) -> Process:
        label = self._unique(label)
        # gunicorn (27) puts its control socket in $XDG_RUNTIME_DIR, else in ~/.gunicorn/ shared by every
        # gunicorn of the user: one folder per process keeps parallel tests from replacing each other's socket.
        runtime = self.log_dir / "runtime" / label
        runtime.mkdir(parents=True, exist_ok=True, mode=0o700)
        env = {**env, "XDG_RUNTIME_DIR": str(runtime)}
        process = Process(label, argv, env, self.log_dir / f"{label}.log")
        self.started.append(process)
        return process.start()

    def _unique(self, label: str) -> str:
        taken = {p.label for p in self.started}
        if label not in taken:
            return label
        return next(f"{label}-{n}" for n in range(2, 1000) if f"{label}-{n}" not in taken)
