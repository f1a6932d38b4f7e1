"""What a parent waits for goes first: confirmations, manage links and replies, then urgent digests, then the rest;
a confirmation asked for during a fan-out arrives within seconds, and counts against the same rate."""

from __future__ import annotations

import time
from datetime import timedelta

from sqlalchemy import update

from notifier import clock
from notifier.db import transaction, utcnow
from notifier.delivery import express
from notifier.delivery.channels import Message
from notifier.delivery.claims import claim
from notifier.delivery.outbox import OutboxRow, Priority
from tests.conftest import NOW, outbox_rows
from tests.support.waiting import wait_for

LATER = NOW + timedelta(minutes=1)


def _fan_out(run, boards, subscribe, count: int) -> None:
    for _ in range(count):
        subscribe(email=None)
    run()
    boards.update("tdsb", status="closed")
    run(LATER, deliver=False)


def test_claims_take_account_messages_then_urgent_digests_then_the_rest(run, sessions, subscribe, boards):
    _fan_out(run, boards, subscribe, 4)
    rows = [row.id for row in outbox_rows(sessions)]
    with sessions() as session, session.begin():
        session.execute(update(OutboxRow).where(OutboxRow.id.in_(rows[:2])).values(urgent=False))
    with transaction(sessions) as session:
        reply = express.enqueue(session, Message("sms", "+16135550199", "Alerts are on.", "reply-1"), None, now=LATER)
    with sessions() as session, session.begin():
        order = [claim(session, "sms", LATER, 1, "t")[0] for _ in range(5)]
    assert order == [reply, rows[2], rows[3], rows[0], rows[1]]


def test_the_end_of_a_closure_is_claimed_before_older_urgent_digests(run, sessions, subscribe, boards):
    _fan_out(run, boards, subscribe, 3)
    rows = [row.id for row in outbox_rows(sessions)]
    with sessions() as session, session.begin():  # the newest row says the closure is off (a correction)
        session.execute(update(OutboxRow).where(OutboxRow.id == rows[2]).values(priority=Priority.ENDING))
    with sessions() as session, session.begin():
        order = [claim(session, "sms", LATER, 1, "t")[0] for _ in range(3)]
    assert order == [rows[2], rows[0], rows[1]]


def test_a_confirmation_asked_for_during_a_fan_out_arrives_within_seconds(
    run, sessions, subscribe, boards, fast_env, twilio_server
):
    from notifier import create_app
    from notifier.config import Settings
    from tests.subscribers.conftest import sign_up

    env = {**fast_env, "NOTIFIER_SMS_PER_SECOND": "20", "NOTIFIER_SMS_CONCURRENCY": "4"}
    settings = Settings.from_env(env)
    _fan_out(run, boards, subscribe, 200)  # ten seconds of texts at 20/s
    with sessions() as session, session.begin():
        session.execute(update(OutboxRow).values(due_at=utcnow() - timedelta(seconds=1)))
    app = create_app({**env, "TESTING": True})
    loop = clock.sending_loop(settings, sessions, "clock")
    loop.start()
    try:
        while len(twilio_server.messages) < 20:
            time.sleep(0.05)
        asked = time.monotonic()
        response = sign_up(app.test_client(), phone="+16135550177")
        waited = time.monotonic() - asked
        assert response.status_code == 200 and waited < 1, waited  # queued: the page does not wait for it
        assert wait_for(lambda: "+16135550177" in [m["to"] for m in twilio_server.messages], 5 - waited)
        bodies = [m["to"] for m in twilio_server.messages]
        assert bodies.index("+16135550177") < 150  # it overtook most of the fan-out
    finally:
        loop.stop()
        app.extensions["notifier"].engine.dispose()
