"""The words themselves: every sentence of the sign-up pages, messages and texts exists in French, and each text
stays within two SMS segments in both languages (French accents outside GSM-7 would triple the cost)."""

from __future__ import annotations

from pathlib import Path

import pytest
from babel.messages.pofile import read_po
from jinja2.ext import babel_extract

from notifier.config import ROOT
from notifier.delivery.channels import segments
from notifier.notices import templates
from notifier.status.boards import Panel

NOT_MINE = {"digest.txt", "reminder.txt"}  # notices about boards: tests/notices covers them
MINE = [*ROOT.glob("templates/subscribe/*.html"), *ROOT.glob("templates/manage/*.html"),
        *ROOT.glob("templates/email/confirm.*"), *ROOT.glob("templates/email/manage_link.*"),
        *(p for p in ROOT.glob("templates/sms/*.txt") if p.name not in NOT_MINE)]
TEXTS = sorted(p.stem for p in ROOT.glob("templates/sms/*.txt") if p.name not in NOT_MINE)


def _msgids(path: Path) -> set[str]:
    if path.name == "outbox.html":  # a developer's page, English on purpose
        return set()
    with path.open("rb") as handle:
        return {m if isinstance(m, str) else m[0] for _, _, m, _ in babel_extract(handle, ["_"], [], {})}


def test_every_sentence_of_the_subscription_pages_and_messages_has_a_french_translation():
    with (ROOT / "translations" / "fr" / "subscriptions.po").open("rb") as handle:
        french = {m.id for m in read_po(handle) if m.id and m.string}
    missing = {(p.name, m) for p in MINE for m in _msgids(p) if m not in french}
    assert missing == set()


@pytest.mark.parametrize("language", ["en", "fr"])
@pytest.mark.parametrize("template", TEXTS)
def test_each_text_fits_in_two_segments(template, language):
    from notifier.status.document import load

    board = load(ROOT / "boards.yaml").status.by_id()["cscmonavenir"]
    context = {"base_url": "https://status.example.org", "manage_url": "https://status.example.org/manage/" + "x" * 80,
               "follows": [{"board": board, "code": "CSCMONAVENIR", "panels": ["elementary", "secondary"]}],
               "code": "CSCMONAVENIR", "panels": [p.value for p in Panel], "board": board, "invited": True}
    text = templates.render(f"sms/{template}.txt", language, **context).strip()
    assert segments.segments(text) <= 2, (text, segments.count(text))


def test_every_email_names_its_sender_with_a_mailing_address_and_a_contact(make_app, smtp_server):
    from tests.subscribers.conftest import sign_up

    inbox, _ = smtp_server
    app = make_app(NOTIFIER_SENDER_NAME="Ontario School Status Service",
                   NOTIFIER_SENDER_ADDRESS="20 Bay Street, Toronto ON M5J 2N8",
                   NOTIFIER_SENDER_CONTACT="help@example.org")
    sign_up(app.test_client(), email="parent@example.org")
    [message] = inbox.messages()
    for part in ("plain", "html"):
        body = message.get_body((part,)).get_content()
        assert "Ontario School Status Service" in body
        assert "20 Bay Street, Toronto ON M5J 2N8" in body
        assert "help@example.org" in body


@pytest.mark.parametrize("invited", [False, True])
@pytest.mark.parametrize("template", ["email/confirm.txt", "email/manage_link.txt"])
def test_an_email_lists_each_board_on_a_line_of_its_own(template, invited):
    from notifier.status.document import load

    boards = load(ROOT / "boards.yaml").status.by_id()
    context = {"base_url": "https://status.example.org", "subject": "Subject", "invited": invited,
               "confirm_url": "https://status.example.org/confirm/x", "manage_url": "https://status.example.org/m/x",
               "unsubscribe_url": "https://status.example.org/unsubscribe/x",
               "sender": {"name": "Sender", "address": "", "contact": ""},
               "follows": [{"board": boards["tdsb"], "code": "TDSB", "panels": ["elementary", "secondary"]},
                           {"board": boards["peel"], "code": "PEEL", "panels": ["secondary"]}]}
    lines = templates.render(template, "en", **context).splitlines()
    assert "- Toronto District School Board: elementary and secondary" in lines
    assert "- Peel District School Board: secondary" in lines
    french = templates.render(template, "fr", **context).splitlines()
    assert "- Toronto District School Board\u00a0: élémentaire et secondaire" in french
