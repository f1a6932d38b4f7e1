"""Delivery through the outbox: retries end in one message, permanent errors mark the contact, nothing twice."""

from __future__ import annotations

import threading
from datetime import datetime, timedelta

from sqlalchemy import select

from notifier import clock
from notifier.db import utcnow
from notifier.subscribers.models import Contact
from tests.conftest import NOW, outbox_rows

LATER = NOW + timedelta(minutes=1)


def after(hours: float) -> datetime:
    """A time `hours` after both the test's cycle and the real clock (backoff is measured on the real clock)."""
    return max(LATER, utcnow()) + timedelta(hours=hours)


def _close_tdsb(run, boards, deliver=True):
    run()
    boards.update("tdsb", status="closed")
    return run(LATER, deliver=deliver)


def _contact(sessions, channel: str) -> Contact:
    with sessions() as session:
        return session.scalars(select(Contact).where(Contact.channel == channel)).one()


def test_texts_refused_with_429_then_500_are_sent_exactly_once(
    run, sessions, subscribe, boards, fast_settings, twilio_server, smtp_server
):
    _, _, phone = subscribe(email=None)
    twilio_server.script(phone, (429, 20429), (500, None))
    _close_tdsb(run, boards)
    assert twilio_server.sent_to(phone) == []
    clock.send_due(fast_settings, sessions, now=after(2))
    clock.send_due(fast_settings, sessions, now=after(4))
    clock.send_due(fast_settings, sessions, now=after(6))
    assert len(twilio_server.sent_to(phone)) == 1
    assert len(twilio_server.requests) == 3
    (row,) = outbox_rows(sessions)
    assert row.status == "sent" and row.attempts == 2 and row.provider_id.startswith("SM")


def test_a_retry_waits_for_its_backoff(run, sessions, subscribe, boards, fast_settings, twilio_server):
    _, _, phone = subscribe(email=None)
    twilio_server.script(phone, (500, None))
    _close_tdsb(run, boards)
    (row,) = outbox_rows(sessions)
    assert row.status == "pending" and row.due_at > utcnow()
    clock.send_due(fast_settings, sessions, now=row.due_at - timedelta(milliseconds=1))
    assert twilio_server.sent_to(phone) == []


def test_smtp_4xx_is_retried_and_then_sent_once(
    run, sessions, subscribe, boards, fast_settings, smtp_server, twilio_server
):
    inbox, _ = smtp_server
    _, email, _ = subscribe(phone=None)
    inbox.refuse(email, 451)
    _close_tdsb(run, boards)
    assert inbox.messages() == []
    inbox.refusals.clear()
    clock.send_due(fast_settings, sessions, now=after(1))
    assert [m["To"] for m in inbox.messages()] == [email]


def test_a_number_that_replied_stop_is_opted_out_and_never_retried(
    run, sessions, subscribe, boards, fast_settings, twilio_server
):
    _, _, phone = subscribe(email=None)
    twilio_server.always(phone, 400, 21610)
    _close_tdsb(run, boards)
    clock.send_due(fast_settings, sessions, now=after(24))
    assert len(twilio_server.requests) == 1
    assert outbox_rows(sessions)[0].status == "failed"
    assert _contact(sessions, "sms").status == "opted_out"


def test_an_invalid_number_is_marked_invalid(run, sessions, subscribe, boards, fast_settings, twilio_server):
    _, _, phone = subscribe(email=None)
    twilio_server.always(phone, 400, 21211)
    _close_tdsb(run, boards)
    clock.send_due(fast_settings, sessions, now=after(24))
    assert len(twilio_server.requests) == 1
    assert _contact(sessions, "sms").status == "invalid"


def test_a_landline_is_marked_invalid(run, sessions, subscribe, boards, fast_settings, twilio_server):
    _, _, phone = subscribe(email=None)
    twilio_server.always(phone, 400, 21614)
    _close_tdsb(run, boards)
    assert len(twilio_server.requests) == 1
    assert _contact(sessions, "sms").status == "invalid"
    assert outbox_rows(sessions)[0].status == "failed"


def test_an_smtp_5xx_marks_the_address_invalid(run, sessions, subscribe, boards, smtp_server, twilio_server):
    inbox, _ = smtp_server
    _, email, _ = subscribe(phone=None)
    inbox.refuse(email, 550)
    _close_tdsb(run, boards)
    assert _contact(sessions, "email").status == "invalid"
    assert outbox_rows(sessions)[0].status == "failed"


def test_a_contact_that_left_before_the_send_gets_nothing(
    run, sessions, subscribe, boards, fast_settings, twilio_server, smtp_server
):
    _, _, phone = subscribe(email=None)
    _close_tdsb(run, boards, deliver=False)
    with sessions() as session, session.begin():
        session.scalars(select(Contact)).one().status = "opted_out"
    clock.send_due(fast_settings, sessions, now=LATER)
    assert twilio_server.messages == []
    assert outbox_rows(sessions)[0].status == "cancelled"


def test_tick_without_delivery_plans_but_sends_nothing(
    run, sessions, subscribe, boards, fast_settings, twilio_server, smtp_server
):
    subscribe()
    _close_tdsb(run, boards, deliver=False)
    assert twilio_server.messages == [] and smtp_server[0].messages() == []
    assert [row.status for row in outbox_rows(sessions)] == ["pending", "pending"]
    clock.send_due(fast_settings, sessions, now=LATER)
    assert len(twilio_server.messages) == 1 and len(smtp_server[0].messages()) == 1


def test_two_workers_draining_at_once_send_nothing_twice(
    run, sessions, subscribe, boards, fast_settings, twilio_server, smtp_server
):
    phones = [subscribe(email=None)[2] for _ in range(60)]
    _close_tdsb(run, boards, deliver=False)
    twilio_server.delay = 0.005
    workers = [threading.Thread(target=clock.send_due, args=(fast_settings, sessions, LATER)) for _ in range(2)]
    for worker in workers:
        worker.start()
    for worker in workers:
        worker.join()
    assert sorted(m["to"] for m in twilio_server.messages) == sorted(phones)
    assert {row.status for row in outbox_rows(sessions)} == {"sent"}


def test_a_row_left_in_flight_that_twilio_has_is_recorded_not_resent(
    run, sessions, subscribe, boards, fast_settings, twilio_server
):
    from notifier.delivery.outbox import OutboxRow

    _, _, phone = subscribe(email=None)
    _close_tdsb(run, boards)
    assert len(twilio_server.sent_to(phone)) == 1
    # As if the process died between "Twilio accepted" and "recorded as sent": a dead claim, still 'sending'.
    with sessions() as session, session.begin():
        row = session.scalars(select(OutboxRow)).one()
        row.status, row.claim, row.provider_id = "sending", "gone-host:1:dead", None
        row.claimed_at = utcnow() - timedelta(hours=1)
    clock.send_due(fast_settings, sessions, now=LATER)
    assert len(twilio_server.sent_to(phone)) == 1
    (row,) = outbox_rows(sessions)
    assert row.status == "sent" and row.provider_id == twilio_server.messages[0]["sid"]


def test_a_row_left_in_flight_that_twilio_never_got_is_sent_once(
    run, sessions, subscribe, boards, fast_settings, twilio_server
):
    from notifier.delivery.outbox import OutboxRow

    _, _, phone = subscribe(email=None)
    _close_tdsb(run, boards, deliver=False)
    with sessions() as session, session.begin():
        row = session.scalars(select(OutboxRow)).one()
        row.status, row.claim, row.claimed_at = "sending", "gone-host:1:dead", utcnow() - timedelta(hours=1)
    clock.send_due(fast_settings, sessions, now=LATER)
    assert len(twilio_server.sent_to(phone)) == 1


def test_a_row_claimed_by_a_live_worker_is_left_alone(
    run, sessions, subscribe, boards, fast_settings, twilio_server
):
    import os
    import socket

    from notifier.delivery.outbox import OutboxRow

    subscribe(email=None)
    _close_tdsb(run, boards, deliver=False)
    with sessions() as session, session.begin():
        row = session.scalars(select(OutboxRow)).one()
        row.status, row.claim, row.claimed_at = "sending", f"{socket.gethostname()[:32]}:{os.getppid()}:x", utcnow()
    clock.send_due(fast_settings, sessions, now=LATER)
    assert twilio_server.messages == []


def _planned_with_its_words(sessions, phone: str, key: str, priority: int) -> None:
    from notifier.db import transaction
    from notifier.delivery import express
    from notifier.delivery.channels import Message
    from notifier.subscribers.contacts import find_contact

    with transaction(sessions) as session:
        contact = find_contact(session, "sms", phone)
        express.enqueue(session, Message(channel="sms", to=phone, text="Schools remain closed today.",
                                         reference=key), contact.id, priority=priority)


def test_a_message_written_in_advance_is_cancelled_not_sent_when_its_contact_opted_out_since(
        sessions, subscribe, fast_settings, twilio_server, smtp_server):
    from notifier.db import transaction
    from notifier.delivery.outbox import Priority
    from notifier.subscribers.contacts import mark_opted_out

    _, _, phone = subscribe(email=None, morning_reminder=True)
    _planned_with_its_words(sessions, phone, "reminder-2026-11-24", Priority.DIGEST)
    with transaction(sessions) as session:
        mark_opted_out(session, "sms", phone, "sms", "test")
    clock.send_due(fast_settings, sessions)
    assert twilio_server.sent_to(phone) == []
    assert [r.status for r in outbox_rows(sessions)] == ["cancelled"]


def test_a_reply_a_parent_waits_for_still_goes_to_a_number_that_just_opted_out(
        sessions, subscribe, fast_settings, twilio_server, smtp_server):
    from notifier.db import transaction
    from notifier.delivery.outbox import Priority
    from notifier.subscribers.contacts import mark_opted_out

    _, _, phone = subscribe(email=None)
    with transaction(sessions) as session:
        mark_opted_out(session, "sms", phone, "sms", "test")
    _planned_with_its_words(sessions, phone, "reply-1", Priority.ACCOUNT)
    clock.send_due(fast_settings, sessions)
    assert [r.status for r in outbox_rows(sessions)] == ["sent"]
