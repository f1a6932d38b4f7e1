"""Every Procfile target starts: the web line's app factory and gunicorn options, and the commands of clock and
release (which really applies the migrations)."""

from __future__ import annotations

import os
import shlex
import subprocess
import sys
from pathlib import Path

import pytest

from notifier.config import ROOT


def procfile() -> dict[str, list[str]]:
    """Procfile lines as argument lists, with ${VAR:-default} replaced by its default."""
    import re

    lines = {}
    for line in (ROOT / "Procfile").read_text().splitlines():
        if line.strip() and not line.startswith("#"):
            name, command = line.split(":", 1)
            lines[name.strip()] = shlex.split(re.sub(r"\$\{\w+:-([^}]*)\}", r"\1", command))
    return lines


def clean_env(tmp_path: Path, **extra: str) -> dict[str, str]:
    env = {k: v for k, v in os.environ.items() if not k.startswith(("NOTIFIER_", "TWILIO_"))}
    env.update(NOTIFIER_INSTANCE_DIR=str(tmp_path / "instance"),
               NOTIFIER_DATABASE_URL=f"sqlite:///{tmp_path / 'release.sqlite3'}", **extra)
    return env


def test_the_procfile_has_web_clock_and_release():
    assert set(procfile()) >= {"web", "clock", "release"}


def test_the_web_line_is_gunicorn_on_port_with_options_gunicorn_accepts():
    from gunicorn.config import Config

    web = procfile()["web"]
    assert web[0] == "gunicorn"
    parsed = Config().parser().parse_args(web[1:])
    assert parsed.bind == ["0.0.0.0:5000"]
    assert parsed.args == ["notifier:create_app()"]


def test_the_web_line_serves_with_threads_and_a_keep_alive_limit():
    from gunicorn.config import Config

    parsed = Config().parser().parse_args(procfile()["web"][1:])
    assert (parsed.worker_class, parsed.threads, parsed.keepalive) == ("gthread", 8, 5)


def test_the_web_target_resolves_to_the_flask_app(env, monkeypatch):
    from flask import Flask
    from gunicorn.util import import_app

    for key, value in env.items():
        monkeypatch.setenv(key, value)
    target = procfile()["web"][-1]
    app = import_app(target)
    try:
        assert isinstance(app, Flask)
        assert app.test_client().get("/healthz").status_code == 200
    finally:
        app.extensions["notifier"].engine.dispose()


@pytest.mark.parametrize("name", ["clock", "release", "worker"])
def test_the_python_dash_m_notifier_targets_are_real_commands(name):
    command = procfile()[name]
    assert command[:3] == ["python", "-m", "notifier"]
    from notifier.cli import cli

    group = cli
    for word in command[3:]:
        group = group.commands[word]  # KeyError if the command does not exist
    assert group.callback is not None


def test_python_dash_m_notifier_lists_the_commands_the_procfile_uses():
    result = subprocess.run([sys.executable, "-m", "notifier", "--help"], capture_output=True, text=True,
                            cwd=ROOT, timeout=60, check=True)
    for command in ("clock", "db", "web", "check", "tick"):
        assert f"  {command}" in result.stdout


def test_the_release_target_applies_the_migrations(tmp_path):
    command = [sys.executable if word == "python" else word for word in procfile()["release"]]
    result = subprocess.run(command, capture_output=True, text=True, cwd=ROOT, timeout=120, env=clean_env(tmp_path))
    assert result.returncode == 0, result.stderr
    assert "database is up to date" in result.stdout
    import sqlite3

    with sqlite3.connect(tmp_path / "release.sqlite3") as connection:
        tables = {row[0] for row in connection.execute("SELECT name FROM sqlite_master WHERE type='table'")}
    assert {"board_states", "change_events", "cycles"} <= tables


def test_the_web_line_opens_no_control_socket():
    from gunicorn.config import Config

    parsed = Config().parser().parse_args(procfile()["web"][1:])
    assert parsed.control_socket_disable is True  # gunicorn 27 would put one under $HOME/.gunicorn/


def test_make_runs_processes_write_nothing_outside_the_project_folder(tmp_path):
    """`make run`'s two processes (honcho, gunicorn and the clock) serve pages and run cycles with HOME, TMPDIR and
    XDG_RUNTIME_DIR pointing at empty folders, which stay empty."""
    import signal
    import time
    import urllib.request

    from tests.conftest import free_port

    outside = {name: tmp_path / name for name in ("home", "tmp", "runtime")}
    for folder in outside.values():
        folder.mkdir()
    port = free_port()
    bin_dir = str(Path(sys.executable).parent)
    env = clean_env(tmp_path, HOME=str(outside["home"]), TMPDIR=str(outside["tmp"]),
                    XDG_RUNTIME_DIR=str(outside["runtime"]), PATH=f"{bin_dir}:{os.environ['PATH']}",
                    NOTIFIER_DEBUG="1", WEB_CONCURRENCY="1")
    subprocess.run([sys.executable, "-m", "notifier", "db", "upgrade"], cwd=ROOT, env=env, check=True,
                   capture_output=True, timeout=120)
    log = (tmp_path / "honcho.log").open("w")
    honcho = subprocess.Popen([str(Path(bin_dir) / "honcho"), "start", "-p", str(port), "web", "clock"], cwd=ROOT,
                              env=env, stdout=log, stderr=subprocess.STDOUT, start_new_session=True)
    try:
        deadline, pages = time.monotonic() + 90, {}
        while time.monotonic() < deadline and not pages:
            try:
                for path in ("/", "/boards/tdsb", "/favicon.ico"):
                    with urllib.request.urlopen(f"http://127.0.0.1:{port}{path}", timeout=10) as response:  # noqa: S310
                        pages[path] = response.status
            except OSError:
                pages = {}
                time.sleep(0.5)
        time.sleep(3)  # a few of the clock's cycles and wake-up polls
        while_running = written(outside)  # a socket or a lock file is removed again at exit: look before
    finally:
        os.killpg(honcho.pid, signal.SIGTERM)
        honcho.wait(timeout=30)
        log.close()
    assert pages == {"/": 200, "/boards/tdsb": 200, "/favicon.ico": 200}, (tmp_path / "honcho.log").read_text()
    assert while_running == written(outside) == {"home": [], "tmp": [], "runtime": []}


def written(folders: dict[str, Path]) -> dict[str, list[str]]:
    """What each folder holds now."""
    return {name: sorted(str(p.relative_to(folder)) for p in folder.rglob("*")) for name, folder in folders.items()}


def test_the_web_line_binds_the_host_it_is_given_and_every_interface_by_default():
    from tests.support.processes import command

    assert "127.0.0.1:5000" in command("web", {"WEB_HOST": "127.0.0.1", "PORT": "5000"})
    assert "0.0.0.0:5000" in command("web", {})  # platforms route to the container's interface


def test_make_run_serves_on_this_machine_only():
    dry = subprocess.run(["make", "-n", "run"], cwd=ROOT, capture_output=True, text=True, timeout=60)
    [start] = [line for line in dry.stdout.splitlines() if "honcho" in line and "start" in line]
    assert "WEB_HOST=127.0.0.1" in start


def test_the_web_line_serves_a_page_while_idle_and_slow_clients_hold_connections(processes, tmp_path, boards_file):
    """A page framing the widget leaves keep-alive connections idle (Chromium), a slow client sends half a
    request: more of them than gunicorn has processes must not hold the site (sync workers waited 30 s on each)."""
    import socket
    import time
    import urllib.request

    env = {"NOTIFIER_DATABASE_URL": f"sqlite:///{tmp_path / 'web.sqlite3'}", "NOTIFIER_BOARDS_FILE": str(boards_file),
           "NOTIFIER_SECRET_KEY": "test-secret-key", "NOTIFIER_INSTANCE_DIR": str(tmp_path / "instance"),
           "WEB_HOST": "127.0.0.1"}  # the Procfile's default WEB_CONCURRENCY (2 processes)
    processes.run("release", env)
    web = processes.start("web", env)
    web.wait_http(f"{web.url}/", timeout=60)
    held = []
    try:
        for _ in range(2):  # one whole request answered, then the connection kept open and idle
            idle = socket.create_connection(("127.0.0.1", web.port), timeout=10)
            idle.sendall(b"GET /healthz HTTP/1.1\r\nHost: 127.0.0.1\r\n\r\n")
            assert idle.recv(65536).startswith(b"HTTP/1.1 200")
            held.append(idle)
        for _ in range(4):  # connected, nothing sent yet (a browser's preconnect)
            held.append(socket.create_connection(("127.0.0.1", web.port)))
        for _ in range(2):  # half a request, the rest never comes
            slow = socket.create_connection(("127.0.0.1", web.port))
            slow.sendall(b"GET / HTTP/1.1\r\nHost: 127.0.0.1\r\n")
            held.append(slow)
        time.sleep(0.5)  # every held connection has reached a worker
        started = time.monotonic()
        try:
            with urllib.request.urlopen(f"{web.url}/", timeout=5) as response:  # noqa: S310 - loopback
                answered = response.status
        except OSError as error:
            answered = f"{type(error).__name__}: {error}"
        assert (answered, time.monotonic() - started < 2.0) == (200, True)
    finally:
        for connection in held:
            connection.close()
    assert "WORKER TIMEOUT" not in web.log()
