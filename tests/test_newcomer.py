"""A newcomer's path: the README's commands work as written, in a checkout, without activating anything; the
Makefile says what it installs before it installs it."""

from __future__ import annotations

import os
import re
import shlex
import subprocess
import sys
from pathlib import Path

import pytest
from sqlalchemy import select

from notifier.config import ROOT

README = (ROOT / "README.md").read_text(encoding="utf-8")


def readme_commands() -> list[list[str]]:
    """The commands of the README's shell blocks, as argument lists (comments and continuation lines left out)."""
    commands = []
    for block in re.findall(r"```sh\n(.*?)```", README, re.S):
        for line in block.splitlines():
            line = line.split("#", 1)[0].strip()
            if line:
                commands.append(shlex.split(line))
    return commands


def make(*args: str, env: dict[str, str] | None = None) -> subprocess.CompletedProcess:
    """`make` in the project folder with this interpreter's environment as the virtualenv (never reinstalled)."""
    venv, bin_dir = sys.prefix, str(Path(sys.executable).parent)
    command = ["make", "--no-print-directory", f"VENV={venv}", f"BIN={bin_dir}", "-o", f"{venv}/.runtime",
               "-o", f"{venv}/.dev", *args]
    return subprocess.run(command, cwd=ROOT, env={**os.environ, **(env or {})}, capture_output=True, text=True,
                          timeout=300, check=False)


def test_every_make_command_of_the_readme_is_a_target():
    targets = [c for c in readme_commands() if c[0] == "make" or "make" in c[:2]]
    assert len(targets) >= 5
    for command in targets:
        words = command[command.index("make") + 1:]
        dry = make("-n", *words)
        assert dry.returncode == 0, (command, dry.stderr)


def test_the_readme_runs_the_command_line_through_the_virtualenv():
    assert [c for c in readme_commands() if c[:3] == ["python", "-m", "notifier"]] == []
    assert any(c[0] == ".venv/bin/python" and c[1:3] == ["-m", "notifier"] for c in readme_commands())


def test_make_staff_add_creates_an_account_for_each_board(env, sessions):
    from notifier.staff import accounts
    from notifier.staff.models import StaffMember

    result = make("staff-add", "EMAIL=comms@tdsb.example.org", "BOARD=tdsb peel", env=env)
    assert result.returncode == 0, result.stdout + result.stderr
    with sessions() as session:
        member = session.scalars(select(StaffMember)).one()
        assert member.email == "comms@tdsb.example.org"
        assert sorted(accounts.boards_of(session, member)) == ["peel", "tdsb"]
    listed = make("staff-list", env=env)
    assert listed.returncode == 0 and "comms@tdsb.example.org" in listed.stdout


def test_make_staff_add_without_an_email_says_how_to_use_it(env):
    result = make("staff-add", env=env)
    assert result.returncode != 0 and "Usage: make staff-add EMAIL=" in result.stdout


def test_make_import_invites_a_boards_list(env, sessions, tmp_path):
    from notifier.subscribers.models import Contact

    csv = tmp_path / "parents.csv"
    csv.write_text("email,phone,board,panel,language\nparent@example.org,,tdsb,both,en\n", encoding="utf-8")
    result = make("import", f"FILE={csv}", env=env)
    assert result.returncode == 0, result.stdout + result.stderr
    with sessions() as session:
        assert [(c.address, c.status) for c in session.scalars(select(Contact))] == [("parent@example.org", "pending")]


@pytest.mark.parametrize(("target", "announcement"), [
    (".venv/.runtime", "Installing the runtime dependencies"),
    (".venv/.dev", "Installing the runtime, test and lint dependencies"),
    ("browser", "Installing Debian's chromium"),
])
def test_every_install_announces_itself(target, announcement):
    result = subprocess.run(["make", "-n", "-B", target], cwd=ROOT, capture_output=True, text=True, timeout=60,
                            check=False)
    assert announcement in result.stdout


def test_make_run_on_another_port_gives_every_process_links_to_that_port():
    dry = make("-n", "run", env={"PORT": "5302"})
    assert dry.returncode == 0, dry.stderr
    honcho = next(line for line in dry.stdout.splitlines() if "honcho start" in line)
    assert "NOTIFIER_BASE_URL='http://localhost:5302' " in honcho


def test_make_run_keeps_a_base_url_that_is_given():
    dry = make("-n", "run", env={"PORT": "5302", "NOTIFIER_BASE_URL": "https://status.example.org"})
    honcho = next(line for line in dry.stdout.splitlines() if "honcho start" in line)
    assert "NOTIFIER_BASE_URL='https://status.example.org' " in honcho


def test_make_notifier_and_the_virtualenvs_python_behave_the_same(env):
    """Only `make run` turns debug mode on: a loopback webhook is refused both ways in a checkout."""
    checkout = {name: value for name, value in env.items() if name != "NOTIFIER_WEBHOOKS_ALLOW_PRIVATE"}
    args = ["webhooks", "add", "--board", "tdsb", "--url", "http://127.0.0.1:9/hook"]
    through_make = make("notifier", f"ARGS={shlex.join(args)}", env=checkout)
    direct = subprocess.run([sys.executable, "-m", "notifier", *args], cwd=ROOT,
                            env={**{k: v for k, v in os.environ.items() if k != "NOTIFIER_DEBUG"}, **checkout},
                            capture_output=True, text=True, timeout=120, check=False)
    assert direct.returncode != 0, direct.stdout + direct.stderr
    assert through_make.returncode != 0, through_make.stdout + through_make.stderr
