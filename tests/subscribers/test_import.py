"""`python -m notifier subscribers import FILE.csv` and `export-consent`: a board's existing list, row by row."""

from __future__ import annotations

import csv
import io

import pytest
from sqlalchemy import select

from notifier.db import transaction
from notifier.subscribers.contacts import mark_opted_out
from notifier.subscribers.models import Consent, Contact, Follow
from tests.subscribers.conftest import contacts, everything

GOOD_AND_BAD = """email,phone,board,panel,language
ann@example.org,,tdsb,elementary,en
,613-555-0131,cepeo,,
bob@example,613-555-0132,tdsb,secondary,en
carl@example.org,+1 876 555 0133,nosuchboard,middle,de
dee@example.org,613-555-0134,peel,both,fr
"""


def _write(tmp_path, text: str):
    path = tmp_path / "contacts.csv"
    path.write_text(text, encoding="utf-8")
    return str(path)


def test_good_rows_are_stored_as_pending_and_invited(runner, tmp_path, sessions, env):
    result = runner.invoke("subscribers", "import", _write(tmp_path, GOOD_AND_BAD))
    assert "3 row(s) stored" in result.output
    assert contacts(sessions) == [("email", "ann@example.org", "pending"), ("sms", "+16135550131", "pending"),
                                  ("email", "dee@example.org", "pending"), ("sms", "+16135550134", "pending")]
    from notifier.delivery.channels.local import read_outbox

    assert len(read_outbox(env["NOTIFIER_OUTBOX_DIR"])) == 4


def test_bad_rows_are_reported_with_their_line_and_nothing_of_them_is_stored(runner, tmp_path, sessions):
    result = runner.invoke("subscribers", "import", _write(tmp_path, GOOD_AND_BAD))
    assert result.exit_code == 1
    assert "contacts.csv:4: email is not a valid address" in result.output
    assert "contacts.csv:5: board 'nosuchboard' is not a board id in boards.yaml" in result.output
    assert "contacts.csv:5: panel 'middle' must be elementary, secondary, both or empty" in result.output
    assert "contacts.csv:5: phone is not a Canadian number" in result.output
    addresses = [address for _, address, _ in contacts(sessions)]
    assert "+16135550132" not in addresses and "carl@example.org" not in addresses


def test_a_second_import_of_the_same_file_changes_nothing(runner, tmp_path, sessions, env):
    path = _write(tmp_path, GOOD_AND_BAD)
    runner.invoke("subscribers", "import", path)
    before = everything(sessions), contacts(sessions)
    result = runner.invoke("subscribers", "import", path)
    assert "0 row(s) stored, 3 unchanged" in result.output and "0 invitation(s) sent" in result.output
    assert (everything(sessions), contacts(sessions)) == before


def test_rows_for_the_same_family_add_boards_to_one_subscription(runner, tmp_path, sessions):
    runner.invoke("subscribers", "import", _write(tmp_path, "email,phone,board,panel,language\n"
                                                             "ann@example.org,,tdsb,elementary,en\n"
                                                             "ann@example.org,,peel,secondary,en\n"))
    with sessions() as session:
        assert sorted((f.board_id, f.panel) for f in session.scalars(select(Follow))) == [
            ("peel", "secondary"), ("tdsb", "elementary")]
    assert len(contacts(sessions)) == 1


def test_confirmed_import_records_the_consent_note_and_sends_no_invitation(runner, tmp_path, sessions, env):
    result = runner.invoke("subscribers", "import", _write(tmp_path, "email,phone,board,panel,language\n"
                                                                      "ann@example.org,,tdsb,,en\n"),
                           "--confirmed", "--consent-note", "Opted in on the 2025 registration form")
    assert result.exit_code == 0
    assert contacts(sessions) == [("email", "ann@example.org", "active")]
    with sessions() as session:
        rows = session.scalars(select(Consent).order_by(Consent.id)).all()
    assert [(r.action, r.method, r.note) for r in rows] == [
        ("given", "import", "Opted in on the 2025 registration form"),
        ("confirmed", "import", "Opted in on the 2025 registration form")]
    from notifier.delivery.channels.local import read_outbox

    assert read_outbox(env["NOTIFIER_OUTBOX_DIR"]) == []


def test_confirmed_import_needs_a_consent_note(runner, tmp_path, sessions):
    from click.testing import CliRunner

    from notifier.cli import cli

    result = CliRunner().invoke(cli, ["subscribers", "import", _write(tmp_path, GOOD_AND_BAD), "--confirmed"])
    assert result.exit_code == 2 and "--consent-note" in result.output
    assert everything(sessions)["Contact"] == 0


def test_an_address_that_opted_out_is_not_imported_again(runner, tmp_path, sessions):
    with transaction(sessions) as session:
        mark_opted_out(session, "email", "ann@example.org", "web", "test")
    runner.invoke("subscribers", "import", _write(tmp_path, "email,phone,board,panel,language\n"
                                                             "ann@example.org,,tdsb,,en\n"))
    assert contacts(sessions) == []


def test_a_file_without_the_expected_columns_is_refused_whole(runner, tmp_path, sessions):
    from click.testing import CliRunner

    from notifier.cli import cli

    result = CliRunner().invoke(cli, ["subscribers", "import", _write(tmp_path, "mail,board\nann@example.org,tdsb\n")])
    assert result.exit_code == 1 and "missing column(s): email, phone, panel, language" in result.output
    assert everything(sessions)["Contact"] == 0


def test_export_consent_writes_every_record_without_addresses(runner, tmp_path, sessions):
    runner.invoke("subscribers", "import", _write(tmp_path, "email,phone,board,panel,language\n"
                                                             "ann@example.org,613-555-0131,tdsb,,en\n"))
    with transaction(sessions) as session:
        mark_opted_out(session, "sms", "+16135550131", "sms-keyword", "+1613***0131")
    result = runner.invoke("subscribers", "export-consent")
    rows = list(csv.DictReader(io.StringIO(result.output)))
    assert [(r["channel"], r["action"], r["method"]) for r in rows] == [
        ("email", "given", "import"), ("sms", "given", "import"), ("sms", "withdrawn", "sms-keyword")]
    assert "ann@example.org" not in result.output and "+16135550131" not in result.output
    assert rows[0]["address_masked"] == "a***@example.org" and rows[0]["source"] == "import:contacts.csv"


def test_a_re_run_imports_nothing_new_and_counts_every_row_as_a_duplicate(runner, tmp_path, sessions, env):
    path = _write(tmp_path, "email,phone,board,panel,language\n" + "".join(
        f"p{i}@example.org,613-555-{i:04d},tdsb,both,en\n" for i in range(1, 31)))
    first = runner.invoke("subscribers", "import", path, "--confirmed", "--consent-note", "2025 form")
    before = everything(sessions), contacts(sessions)
    second = runner.invoke("subscribers", "import", path, "--confirmed", "--consent-note", "2025 form")
    assert "30 row(s) stored, 0 unchanged" in first.output
    assert "0 row(s) stored, 30 unchanged" in second.output and second.exit_code == 0
    assert (everything(sessions), contacts(sessions)) == before
    assert before[0] == {"Subscriber": 30, "Contact": 60, "Follow": 60, "Consent": 120}


def test_a_line_repeated_in_the_file_is_stored_once(runner, tmp_path, sessions, env):
    result = runner.invoke("subscribers", "import", _write(tmp_path, "email,phone,board,panel,language\n"
                                                                      "ann@example.org,613-555-0131,tdsb,,en\n"
                                                                      "ANN@example.org,(613) 555-0131,tdsb,,en\n"
                                                                      "ann@example.org,,tdsb,elementary,en\n"))
    assert "1 row(s) stored, 2 unchanged" in result.output and "2 invitation(s) sent" in result.output
    assert everything(sessions) == {"Subscriber": 1, "Contact": 2, "Follow": 2, "Consent": 2}
    from notifier.delivery.channels.local import read_outbox

    assert len(read_outbox(env["NOTIFIER_OUTBOX_DIR"])) == 2


def test_every_bad_line_is_reported_with_its_number_and_stores_nothing(runner, tmp_path, sessions):
    lines = ["email,phone,board,panel,language"] + [f"p{i}@example.org,,tdsb,,en" for i in range(1, 8)]
    lines[3] = "p3@example,,tdsb,,en"
    lines[6] = "p6@example.org,+1 876 555 0133,tdsb,,en"
    result = runner.invoke("subscribers", "import", _write(tmp_path, "\n".join(lines) + "\n"), "--confirmed",
                           "--consent-note", "2025 form")
    assert result.exit_code == 1
    assert "contacts.csv:4: email is not a valid address" in result.output
    assert "contacts.csv:7: phone is not a Canadian number" in result.output
    assert "5 row(s) stored, 0 unchanged, 2 problem(s)" in result.output
    addresses = {address for _, address, _ in contacts(sessions)}
    assert addresses == {f"p{i}@example.org" for i in (1, 2, 4, 5, 7)}
    assert everything(sessions) == {"Subscriber": 5, "Contact": 5, "Follow": 10, "Consent": 10}


def test_a_family_on_several_lines_gets_the_new_address_and_boards_on_one_subscription(runner, tmp_path, sessions):
    runner.invoke("subscribers", "import", _write(tmp_path, "email,phone,board,panel,language\n"
                                                             "ann@example.org,,tdsb,elementary,fr\n"
                                                             ",613-555-0131,peel,secondary,en\n"
                                                             "ann@example.org,613-555-0131,ocdsb,,en\n"))
    with sessions() as session:
        owners = {c.address: c.subscriber_id for c in session.scalars(select(Contact))}
        consents = {(r.channel, r.subscriber_id, r.language) for r in session.scalars(select(Consent))}
    assert owners["ann@example.org"] != owners["+16135550131"]  # the phone came first on a line of its own
    assert consents == {("email", owners["ann@example.org"], "fr"), ("sms", owners["+16135550131"], "en")}
    with sessions() as session:
        follows = {(f.subscriber_id, f.board_id, f.panel) for f in session.scalars(select(Follow))}
    ann = owners["ann@example.org"]
    assert {(b, p) for s, b, p in follows if s == ann} == {
        ("tdsb", "elementary"), ("ocdsb", "elementary"), ("ocdsb", "secondary")}


def test_invitations_from_an_import_wait_behind_closures(runner, tmp_path, sessions, env):
    from notifier.delivery import senders
    from notifier.delivery.outbox import OutboxRow, Priority

    registration = senders.acquire(sessions, "clock", shared_limiter=False)  # a sending process is running
    try:
        result = runner.invoke("subscribers", "import", _write(tmp_path, GOOD_AND_BAD))
    finally:
        senders.release(sessions, registration)
    assert "4 invitation(s) queued for the sending process" in result.output
    with sessions() as session:
        rows = session.scalars(select(OutboxRow)).all()
    assert [(r.priority, r.status) for r in rows] == [(Priority.DIGEST, "pending")] * 4


@pytest.mark.parametrize("evil", ["=2+5+cmd|' /C calc'!A0", "+1+1", "-1+1", "@SUM(A1)", "\tx", "\rx"])
def test_export_consent_neutralises_spreadsheet_formulas(runner, sessions, evil):
    from notifier.subscribers import consent

    with transaction(sessions) as session:
        consent.record(session, channel="email", address="ann@example.org", action="given", method="web",
                       source=evil, note=evil)
    result = runner.invoke("subscribers", "export-consent")
    [row] = list(csv.DictReader(io.StringIO(result.output, newline="")))
    assert row["source"] == row["note"] == "'" + evil


def test_a_file_stored_a_chunk_at_a_time_ends_as_if_stored_at_once(runner, tmp_path, sessions, monkeypatch):
    from notifier.subscribers import importer

    monkeypatch.setattr(importer, "CHUNK", 1)  # every row its own chunk: each sees what the rows before it wrote
    result = runner.invoke("subscribers", "import", _write(tmp_path, "email,phone,board,panel,language\n"
                                                                      "ann@example.org,613-555-0131,tdsb,,en\n"
                                                                      "ANN@example.org,(613) 555-0131,tdsb,,en\n"
                                                                      "ann@example.org,,peel,elementary,en\n"))
    assert "2 row(s) stored, 1 unchanged" in result.output
    assert everything(sessions) == {"Subscriber": 1, "Contact": 2, "Follow": 3, "Consent": 2}


def test_a_long_file_checked_by_worker_processes_reports_the_same_problems_on_the_same_lines(runner, tmp_path, sessions,
                                                                                           monkeypatch):
    from notifier.subscribers import importer

    monkeypatch.setattr(importer, "POOL_LINES", 4)  # "long" from 4 lines, 3 lines per task: several tasks, in order
    monkeypatch.setattr(importer, "POOL_BATCH", 3)
    lines = ["email,phone,board,panel,language"] + [f"p{i}@example.org,613-555-{i:04d},tdsb,,en" for i in range(1, 15)]
    lines[2], lines[7] = "p2@example,,tdsb,,en", "p7@example.org,+1 876 555 0133,peel,middle,de"
    lines[11] = '"p11@example.org",,"no\nboard",,'  # a quoted line break: the next record starts two lines down
    path = _write(tmp_path, "\n".join(lines) + "\n")
    pooled = runner.invoke("subscribers", "import", path, "--workers", "2")
    here = runner.invoke("subscribers", "import", path, "--workers", "0")  # everything already stored: unchanged
    problems = [line for line in pooled.output.splitlines() if line.startswith("contacts.csv:")]
    assert problems == [line for line in here.output.splitlines() if line.startswith("contacts.csv:")]
    assert problems == ["contacts.csv:3: email is not a valid address",
                        "contacts.csv:8: panel 'middle' must be elementary, secondary, both or empty",
                        "contacts.csv:8: language 'de' must be en or fr",
                        "contacts.csv:8: phone is not a Canadian number",
                        "contacts.csv:13: board 'no\\nboard' is not a board id in boards.yaml"]
    assert "11 row(s) stored, 0 unchanged, 5 problem(s)" in pooled.output
    assert "0 row(s) stored, 11 unchanged, 5 problem(s)" in here.output
    assert everything(sessions)["Contact"] == 22
