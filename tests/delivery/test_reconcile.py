"""Exactly once whatever Twilio's queue does: a text left in flight is looked up without relying on its send date,
and a request that may have reached Twilio is never retried blindly."""

from __future__ import annotations

import re
import time
from datetime import timedelta

from sqlalchemy import event, select, update

from notifier import clock
from notifier.db import utcnow
from notifier.delivery.outbox import OutboxRow
from tests.conftest import NOW, outbox_rows

LATER = NOW + timedelta(minutes=1)


def _closed(run, boards, subscribe, deliver: bool):
    _, _, phone = subscribe(email=None)
    run()
    boards.update("tdsb", status="closed")
    run(LATER, deliver=deliver)
    return phone


def _left_in_flight(sessions, claimed_at=None) -> None:
    with sessions() as session, session.begin():
        row = session.scalars(select(OutboxRow)).one()
        row.status, row.claim, row.provider_id = "sending", "sender:999999", None
        row.claimed_at = claimed_at or utcnow()


def test_a_text_still_queued_at_twilio_without_a_send_date_is_found_and_not_sent_again(
    run, sessions, subscribe, boards, fast_settings, twilio_server
):
    twilio_server.rate(0.0001)  # a busy sender: accepted and queued for hours, no date_sent yet
    phone = _closed(run, boards, subscribe, deliver=True)
    _left_in_flight(sessions)  # as if the process died before recording "sent"
    clock.send_due(fast_settings, sessions, now=LATER)
    assert len(twilio_server.sent_to(phone)) == 1
    (row,) = outbox_rows(sessions)
    assert row.status == "sent" and row.provider_id == twilio_server.messages[0]["sid"]


def test_a_read_timeout_is_reconciled_before_any_resend(
    run, sessions, subscribe, boards, fast_env, twilio_server
):
    from notifier.config import Settings

    slow = Settings.from_env({**fast_env, "TWILIO_TIMEOUT": "0.3"})
    phone = _closed(run, boards, subscribe, deliver=False)
    twilio_server.accept_then_stall(phone, 1.0)  # Twilio takes the message but answers after our timeout
    clock.send_due(slow, sessions, now=LATER)
    (row,) = outbox_rows(sessions)
    assert row.status == "sending" and row.claim == "uncertain"
    clock.send_due(slow, sessions, now=LATER)  # within the grace: Twilio may still be creating it; nothing is sent
    assert outbox_rows(sessions)[0].claim == "uncertain" and len(twilio_server.sent_to(phone)) <= 1
    deadline = time.monotonic() + 10
    while not twilio_server.sent_to(phone) and time.monotonic() < deadline:  # the slow request ends at Twilio
        time.sleep(0.05)
    with sessions() as session, session.begin():  # a minute later
        session.scalars(select(OutboxRow)).one().claimed_at = utcnow() - timedelta(minutes=2)
    clock.send_due(slow, sessions, now=LATER)
    assert len(twilio_server.sent_to(phone)) == 1
    (row,) = outbox_rows(sessions)
    assert row.status == "sent" and row.provider_id == twilio_server.sent_to(phone)[0]["sid"]


def test_a_claim_renewed_after_a_reconciliation_saw_it_expire_stays_with_its_sender(
    engine, run, sessions, subscribe, boards, fast_settings, twilio_server
):
    phone = _closed(run, boards, subscribe, deliver=False)
    _left_in_flight(sessions, claimed_at=utcnow() - timedelta(hours=1))
    renewed = []

    def renew_first(conn, cursor, statement, parameters, context, executemany):
        """The sender still holds the row: it renews its claim just before the reconciliation writes."""
        if not renewed and re.match(r"UPDATE outbox SET status=\S+, due_at=", statement):  # the take-back
            renewed.append(statement)
            with engine.begin() as sender:
                sender.execute(update(OutboxRow.__table__).values(claimed_at=utcnow()))

    event.listen(engine, "before_cursor_execute", renew_first)
    try:
        clock.send_due(fast_settings, sessions, now=LATER)
    finally:
        event.remove(engine, "before_cursor_execute", renew_first)
    assert renewed and twilio_server.sent_to(phone) == []
    assert [row.status for row in outbox_rows(sessions)] == ["sending"]
