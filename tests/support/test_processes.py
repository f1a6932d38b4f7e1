"""The process harness starts the Procfile's own commands as real processes, waits for their logs and ports,
kills whole process groups, restarts, and leaves nothing running after a test."""

from __future__ import annotations

import os
import signal
import subprocess
import sys
import textwrap
import time
from pathlib import Path

import pytest

from tests.support.processes import ROOT, Processes, command, procfile


def alive(pid: int) -> bool:
    """True while `pid` runs (a zombie, dead but not yet reaped, does not count)."""
    try:
        state = Path(f"/proc/{pid}/stat").read_text().rsplit(") ", 1)[1][0]
    except (FileNotFoundError, IndexError):
        return False
    return state != "Z"


def gone(pid: int, timeout: float = 10.0) -> bool:
    """True once `pid` has stopped running (signals are delivered asynchronously)."""
    deadline = time.monotonic() + timeout
    while alive(pid):
        if time.monotonic() > deadline:
            return False
        time.sleep(0.02)
    return True


@pytest.fixture
def app_env(tmp_path: Path, boards_file: Path) -> dict[str, str]:
    """Settings for the app's own processes: a SQLite file of their own, no provider."""
    return {
        "NOTIFIER_DATABASE_URL": f"sqlite:///{tmp_path / 'processes.sqlite3'}",
        "NOTIFIER_BOARDS_FILE": str(boards_file),
        "NOTIFIER_SECRET_KEY": "test-secret-key",
        "NOTIFIER_INSTANCE_DIR": str(tmp_path / "instance"),
        "NOTIFIER_OUTBOX_DIR": str(tmp_path / "outbox"),
        "WEB_CONCURRENCY": "1",
    }


def test_commands_are_read_from_the_procfile_with_variables_filled():
    assert set(procfile()) >= {"web", "clock", "worker", "release"}
    assert command("clock", {}) == [sys.executable, "-m", "notifier", "clock"]
    web = command("web", {"PORT": "8123", "WEB_CONCURRENCY": "3"})
    assert web[0] == str(Path(sys.executable).parent / "gunicorn")
    assert web[web.index("--bind") + 1] == "0.0.0.0:8123" and web[web.index("--workers") + 1] == "3"
    assert web[-1] == "notifier:create_app()"
    default = command("web", {})
    assert default[default.index("--bind") + 1] == "0.0.0.0:5000", "the Procfile's default when PORT is not set"


def test_an_unknown_process_type_says_which_exist():
    with pytest.raises(KeyError, match="release"):
        command("scheduler", {})


def test_a_short_command_runs_to_its_end_with_its_output_in_the_log(processes, app_env, monkeypatch):
    monkeypatch.setenv("NOTIFIER_SMTP_URL", "smtp://the-test-runs-own.example")
    check = processes.command(["python", "-m", "notifier", "check"], app_env)
    assert check.wait(60) == 0
    assert check.wait_for_log(r"OK, \d+ boards")
    assert "NOTIFIER_SMTP_URL" not in check.env, "no setting of the test run's own leaks into a process"


def test_gunicorn_serves_healthz_and_dies_with_its_workers_on_sigkill(processes, app_env):
    processes.run("release", app_env)
    web = processes.start("web", app_env)
    assert '"status"' in web.wait_http(f"{web.url}/healthz", timeout=60)
    worker_pid = int(web.wait_for_log(r"Booting worker with pid: (\d+)").group(1))
    assert web.kill() == -signal.SIGKILL
    assert gone(worker_pid), "SIGKILL reaches the whole process group"

    web.restart()
    web.wait_http(f"{web.url}/healthz", timeout=60)
    assert web.log().count("=== start:") == 2
    assert web.terminate() == 0, "gunicorn stops cleanly on SIGTERM"


def test_a_process_that_exits_early_fails_the_wait_with_its_log(processes):
    failing = processes.command(["python", "-c", "import sys; print('boom'); sys.exit(3)"], {})
    with pytest.raises(RuntimeError, match="boom"):
        failing.wait_for_log("never printed", timeout=30)
    assert failing.returncode == 3


def test_stop_all_ends_every_process_and_its_children(tmp_path):
    script = "import subprocess, time; child = subprocess.Popen(['sleep', '60']); print(child.pid); time.sleep(60)"
    with Processes(tmp_path / "logs") as group:
        parent = group.command(["python", "-c", script], {})
        child_pid = int(parent.wait_for_log(r"^(\d+)$").group(1))
    assert not parent.running and gone(child_pid)


def test_the_fixture_stops_processes_even_when_the_test_fails(tmp_path):
    pid_file = tmp_path / "pid"
    (tmp_path / "test_inner.py").write_text(textwrap.dedent(f"""
        def test_fails(processes):
            sleeper = processes.command(["sleep", "60"], {{}})
            open({str(pid_file)!r}, "w").write(str(sleeper.pid))
            assert False, "this test fails on purpose"
    """))
    result = subprocess.run([sys.executable, "-m", "pytest", "-p", "tests.conftest", "-p", "no:cacheprovider",
                             "-q", str(tmp_path / "test_inner.py"), "--rootdir", str(tmp_path)],
                            cwd=ROOT, capture_output=True, text=True, timeout=120,
                            env={**os.environ, "PYTHONPATH": str(ROOT)})
    assert "1 failed" in result.stdout, result.stdout[-3000:]
    assert gone(int(pid_file.read_text()))
