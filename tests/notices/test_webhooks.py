"""Planning webhooks: one row per endpoint per board change, nothing for silent edits, removed endpoints or the
past; every word of the chat line and the owner's email in French."""

from __future__ import annotations

from datetime import timedelta
from pathlib import Path

from babel.messages.pofile import read_po
from jinja2.ext import babel_extract
from sqlalchemy import update

from notifier.config import ROOT
from notifier.db import transaction
from notifier.notices import webhooks
from notifier.notices.webhooks import payload_of
from notifier.status.history import ChangeEvent
from notifier.subscribers.webhooks import find
from tests.conftest import NOW, add_webhook, outbox_rows

LATER = NOW + timedelta(minutes=1)
URL = "http://127.0.0.1:9/hooks"
TEMPLATES = [ROOT / "templates/webhook/slack.txt", ROOT / "templates/email/webhook_disabled.txt",
             ROOT / "templates/email/webhook_disabled.html", ROOT / "templates/staff/webhooks.html"]


def _webhook_rows(sessions):
    return [row for row in outbox_rows(sessions) if row.channel == "webhook"]


def _msgids(path: Path) -> set[str]:
    with path.open("rb") as handle:
        return {m if isinstance(m, str) else m[0] for _, _, m, _ in babel_extract(handle, ["_"], [], {})}


def test_every_sentence_of_the_webhook_templates_has_a_french_translation():
    french: set[str] = set()
    for catalogue in (ROOT / "translations" / "fr").glob("*.po"):
        with catalogue.open("rb") as handle:
            french |= {m.id for m in read_po(handle) if m.id and m.string}
    assert {(p.name, m) for p in TEMPLATES for m in _msgids(p) if m not in french} == set()


def test_one_change_of_two_panels_is_one_row_per_endpoint(run, sessions, boards):
    first = add_webhook(sessions, URL)
    second = add_webhook(sessions, URL, format="slack")
    run()
    boards.update("tdsb", status="closed")
    run(LATER, deliver=False)
    rows = _webhook_rows(sessions)
    assert len(rows) == 2 and {r.contact_id for r in rows} == {None}
    assert {payload_of(r)["to"] for r in rows} == {first.public_id, second.public_id}
    assert all(r.digest_key == payload_of(r)["reference"] for r in rows)


def test_a_silent_edit_plans_nothing(run, sessions, boards, fast_settings):
    from notifier.delivery.outbox import ClockState

    add_webhook(sessions, URL)
    run()
    boards.update("tdsb", status="closed")
    with sessions() as session:
        before = session.get(ClockState, webhooks.CURSOR).number
    run(LATER, deliver=False)
    with transaction(sessions) as session:  # plan the same events again, now marked silent
        session.execute(update(ChangeEvent).values(notify=False))
        session.get(ClockState, webhooks.CURSOR).number = before
        session.execute(webhooks.OutboxRow.__table__.delete().where(webhooks.OutboxRow.channel == "webhook"))
    assert webhooks.plan(sessions, fast_settings, LATER) == 0


def test_removing_an_endpoint_cancels_what_it_has_waiting(run, sessions, boards):
    endpoint = add_webhook(sessions, URL)
    run()
    boards.update("tdsb", status="closed")
    run(LATER, deliver=False)
    with transaction(sessions) as session:
        assert webhooks.remove(session, find(session, endpoint.public_id)) == 1
    (row,) = _webhook_rows(sessions)
    assert row.status == "cancelled" and row.payload is None


def test_the_database_refuses_a_second_row_for_one_change_and_endpoint(run, sessions, boards):
    import pytest
    from sqlalchemy.exc import IntegrityError

    from notifier.delivery import express
    from notifier.delivery.channels import Message

    endpoint = add_webhook(sessions, URL)
    run()
    boards.update("tdsb", status="closed")
    run(LATER, deliver=False)
    (row,) = _webhook_rows(sessions)
    with pytest.raises(IntegrityError), transaction(sessions) as session:
        express.enqueue(session, Message("webhook", endpoint.public_id, "{}", row.digest_key), None)
