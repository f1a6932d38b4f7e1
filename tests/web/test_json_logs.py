"""NOTIFIER_LOG_FORMAT=json: every line of the web process (gunicorn's own and its access lines included) and of a
command is one JSON object on standard error, masked like a plain line; a command's report stays on stdout."""

from __future__ import annotations

import json
import subprocess
import sys
import urllib.error
import urllib.request
from pathlib import Path

from notifier.config import ROOT
from tests.test_procfile import clean_env

ADDRESS = "parent.jsonlog@example.org"
TOKEN = "WzEyLCJhYmMiXQ.Zx0aBc.abcdefghijklmnopqrstuvwxyz1"


def _get(url: str) -> None:
    try:
        urllib.request.urlopen(url, timeout=10).close()  # noqa: S310 - loopback
    except urllib.error.HTTPError:
        pass


def _lines(text: str) -> list[dict]:
    """Every line as JSON (the test harness's own `=== start:` lines left out)."""
    return [json.loads(line) for line in text.splitlines() if line.strip() and not line.startswith("=== ")]


def test_the_web_process_writes_only_json_lines_holding_no_whole_address(processes, tmp_path, boards_file: Path):
    env = {"NOTIFIER_DATABASE_URL": f"sqlite:///{tmp_path / 'web.sqlite3'}", "NOTIFIER_BOARDS_FILE": str(boards_file),
           "NOTIFIER_SECRET_KEY": "test-secret-key", "NOTIFIER_INSTANCE_DIR": str(tmp_path / "instance"),
           "NOTIFIER_OUTBOX_DIR": str(tmp_path / "outbox"), "WEB_CONCURRENCY": "1", "NOTIFIER_LOG_FORMAT": "json"}
    processes.run("release", env)
    web = processes.start("web", env)
    web.wait_http(f"{web.url}/healthz", timeout=60)
    _get(f"{web.url}/manage/{TOKEN}?email={ADDRESS}")
    _get(f"{web.url}/healthz?done=1")
    web.wait_for_log(r"done=1", timeout=30)
    web.wait_for_log(r"GET /manage/", timeout=30)  # each thread writes its own access line: in any order
    lines = _lines(web.log())  # every line parses, or json.loads raises
    assert all({"time", "level", "logger", "message", "role", "process"} <= set(line) for line in lines)
    assert any(line["logger"] == "gunicorn.error" for line in lines)  # gunicorn's own lines
    access = [line for line in lines if line["logger"] == "gunicorn.access"]
    assert any(line.get("method") == "GET" and line.get("status") == 200 for line in access)
    assert ADDRESS not in web.log() and TOKEN not in web.log()
    assert any("/manage/***" in line["message"] for line in access)


def test_a_commands_log_is_json_on_stderr_and_its_report_plain_on_stdout(tmp_path):
    env = clean_env(tmp_path, NOTIFIER_LOG_FORMAT="json", NOTIFIER_DEBUG="1")
    subprocess.run([sys.executable, "-m", "notifier", "db", "upgrade"], cwd=ROOT, env=env, check=True,
                   capture_output=True, timeout=120)
    result = subprocess.run([sys.executable, "-m", "notifier", "tick"], cwd=ROOT, env=env, capture_output=True,
                            text=True, timeout=120)
    assert result.stdout.startswith("cycle ")
    lines = _lines(result.stderr)
    assert lines and all(line["role"] == "tick" for line in lines)
