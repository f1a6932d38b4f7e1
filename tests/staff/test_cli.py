"""`python -m notifier staff add|list|remove`: accounts are managed from the command line."""

from __future__ import annotations

from click.testing import CliRunner

from notifier.staff.models import AuditEntry


def test_staff_add_gives_an_address_its_boards(runner):
    result = runner.invoke("staff", "add", "Comms@TDSB.example.org", "--board", "tdsb", "--board", "peel")
    assert result.exit_code == 0
    assert "comms@tdsb.example.org: boards: peel, tdsb" in result.output


def test_staff_list_shows_every_account_with_its_boards(runner):
    runner.invoke("staff", "add", "comms@tdsb.example.org", "--board", "tdsb")
    runner.invoke("staff", "add", "admin@province.example.org", "--admin")
    output = runner.invoke("staff", "list").output.splitlines()
    assert output == ["admin@province.example.org\tadmin\t", "comms@tdsb.example.org\t\ttdsb"]


def test_staff_add_refuses_an_unknown_board(env, monkeypatch):
    from notifier.cli import cli

    for key, value in env.items():
        monkeypatch.setenv(key, value)
    result = CliRunner().invoke(cli, ["staff", "add", "x@example.org", "--board", "nosuchboard"])
    assert result.exit_code == 1 and "unknown board id(s): nosuchboard" in result.output


def test_staff_add_refuses_something_that_is_not_an_address(env, monkeypatch):
    from notifier.cli import cli

    for key, value in env.items():
        monkeypatch.setenv(key, value)
    result = CliRunner().invoke(cli, ["staff", "add", "not-an-address", "--board", "tdsb"])
    assert result.exit_code == 1 and "is not an email address" in result.output


def test_staff_remove_takes_access_away(runner):
    runner.invoke("staff", "add", "comms@tdsb.example.org", "--board", "tdsb")
    assert runner.invoke("staff", "remove", "comms@tdsb.example.org").exit_code == 0
    assert "comms@tdsb.example.org" not in runner.invoke("staff", "list").output


def test_account_changes_are_audited(runner, sessions):
    runner.invoke("staff", "add", "comms@tdsb.example.org", "--board", "tdsb")
    runner.invoke("staff", "remove", "comms@tdsb.example.org")
    with sessions() as session:
        actions = [e.action for e in session.query(AuditEntry).order_by(AuditEntry.id)]
    assert actions == ["staff_add", "staff_remove"]
