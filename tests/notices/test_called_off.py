"""An announced period called off is told in words parents act on: what will not happen, for which schools, when it
was planned; its subject names it, and its text keeps to a closure's one segment."""

from __future__ import annotations

from dataclasses import dataclass
from datetime import datetime

import pytest

from notifier.config import ROOT, Settings
from notifier.delivery.channels import segments
from notifier.notices import templates
from notifier.notices.digests import PANELS, Event, select_for
from notifier.notices.render import render_digest
from notifier.status import document
from notifier.status.boards import Board
from notifier.status.changes import diff

SETTINGS = Settings.from_env({"NOTIFIER_SECRET_KEY": "k", "NOTIFIER_BASE_URL": "https://status.example.org"})
BOARDS = document.load(str(ROOT / "boards.yaml")).status.by_id()
WEDNESDAY = datetime.fromisoformat("2026-11-25T23:00-05:00")  # the deal, the night before
THURSDAY = {"from": "2026-11-26T00:01:00-05:00", "until": "2026-11-27T00:01:00-05:00", "status": "closed",
            "panels": ["secondary"]}


def plain(text: str) -> str:
    return text.translate(templates.GSM_PLAIN)


def with_periods(board: Board, *periods: dict, **fields) -> Board:
    return Board.model_validate({**board.model_dump(mode="json", exclude_none=True), "upcoming": list(periods),
                                 **fields})


@dataclass(frozen=True)
class Rendered:
    email_subject: str
    email_text: str
    sms_text: str
    sms_segments: int


def preview(old: Board, new: Board, language: str, settings: Settings) -> Rendered:
    """What a parent following both panels gets for old → new, as the clock sees it on Wednesday night."""
    events = [Event.from_change(i, c, new) for i, c in enumerate(diff(old, new, WEDNESDAY), start=1)]
    events = select_for(events, {new.id: frozenset(PANELS)}, True).events
    email = render_digest(events, {new.id: new}, language, "email", settings)
    sms = render_digest(events, {new.id: new}, language, "sms", settings)
    return Rendered(email.subject, email.text, sms.text, segments.segments(sms.text))


def called_off(language: str, period: dict = THURSDAY, board_id: str = "tdsb"):
    board = with_periods(BOARDS[board_id])
    return preview(with_periods(board, period), board, language, SETTINGS)


def test_the_english_subject_names_the_closure_the_schools_the_day_and_the_board():
    assert plain(called_off("en").email_subject) == (
        "Closure called off: secondary schools, Thursday, Nov. 26 (Toronto District School Board)")


def test_the_english_email_says_what_was_planned_from_when_to_when():
    assert ("- Called off: the closure of secondary schools planned from Thursday, November 26, 12:01 a.m. to "
            "Friday, November 27, 12:01 a.m.\n") in plain(called_off("en").email_text)


def test_the_french_subject_and_sentence_read_as_a_french_writer_puts_them():
    rendered = called_off("fr")
    name = BOARDS["tdsb"].display_name("fr")
    assert rendered.email_subject == f"Fermeture annulée\u00a0: écoles secondaires, jeudi 26 nov. ({name})"
    assert ("Annulation\u00a0: la fermeture des écoles secondaires prévue du jeudi 26 novembre, 0\u00a0h\u00a001, "
            "au vendredi 27 novembre, 0\u00a0h\u00a001.") in rendered.email_text


@pytest.mark.parametrize("language", ["en", "fr"])
def test_the_text_is_one_gsm7_segment_like_a_closure(language):
    text = called_off(language).sms_text
    assert segments.count(text).encoding == "GSM-7" and segments.count(text).segments == 1, text
    assert ("Closure called off: secondary schools, Thursday, Nov. 26." if language == "en"
            else "Fermeture annulée : écoles secondaires, jeudi 26 nov.") in text


@pytest.mark.parametrize("language", ["en", "fr"])
def test_every_boards_called_off_closure_text_fits_the_digest_budget(language):
    counts = {board_id: called_off(language, board_id=board_id).sms_segments for board_id in BOARDS}
    assert max(counts.values()) <= segments.DIGEST_BUDGET, counts


def test_a_work_to_rule_called_off_is_named_as_such_with_no_end():
    rendered = called_off("en", {"from": "2026-11-30T00:01:00-05:00", "status": "work-to-rule"})
    assert plain(rendered.email_subject).startswith("Work-to-rule called off: all schools, Monday, Nov. 30 (")
    assert ("Called off: the work-to-rule at all schools planned from Monday, November 30, 12:01 a.m.\n"
            in plain(rendered.email_text))


def test_a_call_off_with_another_change_keeps_the_subject_of_what_changed_most():
    board = with_periods(BOARDS["tdsb"])
    elementary_closed = with_periods(board, panels={"elementary": "closed"})
    rendered = preview(with_periods(board, THURSDAY), elementary_closed, "en", SETTINGS)
    assert rendered.email_subject.startswith("Elementary schools closed:")
    assert "Called off: the closure of secondary schools" in plain(rendered.email_text)
