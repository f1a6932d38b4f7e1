"""Saving one board as a new version of the status document: round-trip (the rest of the text untouched), refused
when the board changed meanwhile; and a file written from it (export, development's mirror) is crash-safe."""

from __future__ import annotations

import os
import signal
import subprocess
import sys
import textwrap
import time
from datetime import UTC, datetime

import pytest

from notifier.config import ROOT
from notifier.db import transaction
from notifier.staff import edits
from notifier.status import document, published

COMMENTED = """\
# The status of every board.
boards:
  # Toronto first
  - id: tdsb
    name: Toronto District School Board
    status: open   # checked at 5 a.m.
    withdrawals: []
    updated_at: 2026-11-01T09:00:00-04:00
  # then Peel
  - id: peel
    name: Peel District School Board
    status: open
    withdrawals:
      - category: grounds  # snow
        description: {en: No snow clearing., fr: Pas de déneigement.}
    updated_at: 2026-11-01T09:00:00-04:00
"""


def edited(text: str, board_id: str, **fields):
    board = document.parse(text).by_id()[board_id]
    data = board.model_dump(mode="json", exclude_none=True)
    data.update(fields)
    return board, type(board).model_validate(data)


def test_applying_an_unchanged_board_gives_the_file_back_byte_for_byte():
    text = (ROOT / "boards.yaml").read_text()
    board = document.parse(text).by_id()["tdsb"]
    assert edits.apply(text, board, board) == text


def test_comments_next_to_the_edited_board_survive():
    current, new = edited(COMMENTED, "tdsb", status="closed")
    out = edits.apply(COMMENTED, current, new)
    assert "# Toronto first" in out and "# then Peel" in out and "# The status of every board." in out
    assert document.parse(out).by_id()["tdsb"].status == "closed"


def test_an_unchanged_withdrawal_keeps_its_comment_when_another_is_added():
    current, new = edited(COMMENTED, "peel", withdrawals=[
        {"category": "grounds", "description": {"en": "No snow clearing.", "fr": "Pas de déneigement."}},
        {"category": "transportation", "panels": ["secondary"], "description": {"en": "No buses."}},
    ])
    out = edits.apply(COMMENTED, current, new)
    assert "- category: grounds  # snow" in out
    assert "panels: [secondary]" in out


def test_a_new_field_goes_where_the_model_puts_it():
    current, new = edited(COMMENTED, "tdsb", effective="2026-11-23T00:01:00-05:00")
    lines = edits.apply(COMMENTED, current, new).splitlines()
    assert lines.index("    effective: 2026-11-23T00:01:00-05:00") == lines.index("    withdrawals: []") - 1


def stored(sessions, text: str, author: str = "seed"):
    """`text` published as the newest version; returns it."""
    with transaction(sessions) as session:
        newest = published.newest(session)
        version = published.publish(session, text, author, "", datetime.now(UTC), newest.id if newest else None)
        session.expunge(version)
        return version


def test_a_saved_board_is_a_new_version_based_on_the_one_edited(sessions):
    seed = stored(sessions, COMMENTED)
    current, new = edited(COMMENTED, "tdsb", status="closed")
    with transaction(sessions) as session:
        saved = edits.save_board(session, seed, new, current, seed.version, datetime.now(UTC), "comms@example.org")
    with sessions() as session:
        newest = published.newest(session)
        assert (newest.id, newest.parent_id, newest.author) == (saved.number, seed.id, "comms@example.org")
        assert newest.version == saved.version and "# checked at 5 a.m." in newest.text


def test_a_file_is_written_through_a_temporary_file(tmp_path):
    path = tmp_path / "boards.yaml"
    path.write_text(COMMENTED)
    current, new = edited(COMMENTED, "tdsb", status="closed")
    document.save(path, edits.apply(COMMENTED, current, new))
    assert document.load(path).status.by_id()["tdsb"].status == "closed"
    assert [p.name for p in tmp_path.iterdir() if p.name.endswith(".tmp")] == []


CRASHING_SAVE = """
import os, sys, time
from datetime import UTC, datetime
from notifier.status import document
from notifier.staff import edits

path, marker, when = sys.argv[1], sys.argv[2], sys.argv[3]
real_replace = os.replace

def replace(source, target):
    if when == "after":
        real_replace(source, target)
    open(marker, "w").close()  # tell the test we are between write and rename (or just after)
    time.sleep(60)

os.replace = replace
text = open(path, encoding="utf-8").read()
current = document.parse(text).by_id()["tdsb"]
data = current.model_dump(mode="json", exclude_none=True)
data["status"] = "closed"
new = type(current).model_validate(data)
document.save(path, edits.apply(text, current, new))
"""


@pytest.mark.parametrize("when", ["before", "after"])
def test_a_save_killed_around_the_rename_leaves_the_old_or_the_new_file_never_a_broken_one(tmp_path, when):
    path, marker = tmp_path / "boards.yaml", tmp_path / "paused"
    path.write_text(COMMENTED)
    script = tmp_path / "crash.py"
    script.write_text(textwrap.dedent(CRASHING_SAVE))
    process = subprocess.Popen([sys.executable, str(script), str(path), str(marker), when], cwd=ROOT,
                               env={**os.environ, "PYTHONPATH": str(ROOT)})
    try:
        deadline = time.monotonic() + 30
        while not marker.exists():
            assert process.poll() is None and time.monotonic() < deadline, "the save never reached the rename"
            time.sleep(0.02)
        process.send_signal(signal.SIGKILL)
    finally:
        process.wait(10)
    assert process.returncode == -signal.SIGKILL
    status = document.load(path).status.by_id()["tdsb"].status  # valid, whatever happened
    assert status == ("open" if when == "before" else "closed")
    if when == "before":
        assert path.read_text() == COMMENTED


def test_a_save_refuses_a_board_that_changed_since_the_form_was_shown(sessions):
    seed = stored(sessions, COMMENTED)
    base, new = edited(COMMENTED, "tdsb", status="closed")
    meanwhile = stored(sessions, COMMENTED.replace("status: open   # checked", "status: work-to-rule   # checked"))
    with transaction(sessions) as session, pytest.raises(edits.EditConflict) as conflict:
        edits.save_board(session, meanwhile, new, base, seed.version, datetime.now(UTC), "comms@example.org")
    assert [c.kind for c in conflict.value.changes] == ["status", "panel_status", "panel_status"]
    with sessions() as session:
        assert published.newest_id(session) == meanwhile.id


def test_a_version_based_on_an_older_one_is_refused_and_nothing_is_stored(sessions):
    seed = stored(sessions, COMMENTED)
    newer = stored(sessions, COMMENTED.replace("status: open   # checked", "status: closed   # checked"))
    with transaction(sessions) as session, pytest.raises(published.Outdated) as outdated:
        published.publish(session, COMMENTED, "late@example.org", "", datetime.now(UTC), seed.id)
    assert f"based on version {seed.id}, the newest is version {newer.id}" in str(outdated.value)
    with sessions() as session:
        assert published.newest_id(session) == newer.id


def test_two_versions_can_never_both_follow_the_same_one(sessions):
    from sqlalchemy.exc import IntegrityError

    seed = stored(sessions, COMMENTED)
    stored(sessions, COMMENTED + "# one\n")
    with pytest.raises(IntegrityError), transaction(sessions) as session:  # even without the lock's check
        session.add(published.StatusDocument(text=COMMENTED, author="x", note="", created_at=datetime.now(UTC),
                                             parent_id=seed.id))
