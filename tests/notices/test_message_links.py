"""Every link in an email or a text names the reader's language (`?lang=fr`), so a French parent opening it reads
French whatever their browser says, and even in a browser that keeps no cookies."""

from __future__ import annotations

import re

import pytest

from notifier.config import ROOT, Settings
from notifier.notices import templates
from notifier.notices.preview import preview
from notifier.status import document
from notifier.status.boards import Board, Panel

BASE = "https://status.example.org"
SETTINGS = Settings.from_env({"NOTIFIER_SECRET_KEY": "k", "NOTIFIER_BASE_URL": BASE})
BOARDS = document.load(str(ROOT / "boards.yaml")).status.by_id()
# Digests and reminders are made of change items: tests/notices/test_matrix.py and test_reminders.py cover them.
MESSAGES = sorted(str(p.relative_to(ROOT / "templates")) for p in [*ROOT.glob("templates/email/*.*"),
                                                                   *ROOT.glob("templates/sms/*.txt")]
                  if not p.name.startswith(("_", "digest.", "reminder")))


def links_in(text: str) -> list[str]:
    """Every address on the site in a message (text or HTML), without the punctuation that may follow it."""
    return [url.rstrip(".,;:)") for url in re.findall(re.escape(BASE) + r"[^\s\"<>]*", text)]


def context() -> dict:
    board = BOARDS["tdsb"]
    return {
        "base_url": BASE, "subject": "Subject", "invited": False, "minutes": 15,
        "confirm_url": f"{BASE}/confirm/TOKEN", "manage_url": f"{BASE}/manage/TOKEN",
        "unsubscribe_url": f"{BASE}/unsubscribe/TOKEN", "link": f"{BASE}/staff/signin/TOKEN",
        "sender": {"name": "Ontario school status", "address": "20 Bay St", "contact": "help@example.org"},
        "follows": [{"board": board, "code": "TDSB", "panels": [p.value for p in Panel]}],
        "code": "TDSB", "panels": [p.value for p in Panel], "board": board,
        "hook_url": "https://hooks.example.org/…", "reason": "HTTP 410", "board_url": f"{BASE}/boards/tdsb",
    }


@pytest.mark.parametrize("language", ["en", "fr"])
@pytest.mark.parametrize("template", MESSAGES)
def test_every_link_of_a_message_names_its_language(template, language):
    links = links_in(templates.render(template, language, **context()))
    assert [url for url in links if not url.split("#")[0].endswith(f"lang={language}")] == []


def _closed(board: Board) -> Board:
    return Board.model_validate({**board.model_dump(mode="json"), "status": "closed"})


@pytest.mark.parametrize("language", ["en", "fr"])
def test_every_link_of_a_digest_names_its_language(language):
    shown = preview(BOARDS["tdsb"], _closed(BOARDS["tdsb"]), language, SETTINGS)
    for body in (shown.email_text, shown.email_html, shown.sms_text):
        links = links_in(body)
        assert links and [url for url in links if not url.endswith(f"lang={language}")] == [], body


def test_a_french_digest_links_to_the_french_board_page():
    shown = preview(BOARDS["tdsb"], _closed(BOARDS["tdsb"]), "fr", SETTINGS)
    assert f"{BASE}/boards/tdsb?lang=fr" in shown.sms_text
    assert f'href="{BASE}/boards/tdsb?lang=fr"' in shown.email_html
