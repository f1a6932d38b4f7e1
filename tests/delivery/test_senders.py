"""Claims name a process start, not a PID: a restarted sender takes over its predecessor's claims at once, and
without Redis a second live sender is refused."""

from __future__ import annotations

import os
from datetime import timedelta

import pytest
from sqlalchemy import select

from notifier import clock
from notifier.db import utcnow
from notifier.delivery import senders
from notifier.delivery.outbox import OutboxRow
from notifier.delivery.senders import SenderRow
from tests.conftest import NOW, outbox_rows

LATER = NOW + timedelta(minutes=1)


def _registered(sessions, **fields) -> int:
    now = utcnow()
    values = {"host": senders.host(), "pid": os.getpid(), "kind": "worker", "started_at": now, "heartbeat_at": now}
    with sessions() as session, session.begin():
        row = SenderRow(**{**values, **fields})
        session.add(row)
        session.flush()
        return row.id


def _claimed_by(sessions, sender_id: int) -> None:
    with sessions() as session, session.begin():
        for row in session.scalars(select(OutboxRow)):
            row.status, row.claim, row.claimed_at = "sending", f"sender:{sender_id}", utcnow()


def _planned(run, boards, subscribe) -> str:
    _, _, phone = subscribe(email=None)
    run()
    boards.update("tdsb", status="closed")
    run(LATER, deliver=False)
    return phone


def test_a_restart_with_the_same_pid_takes_over_its_predecessors_claims_at_once(
    run, sessions, subscribe, boards, fast_settings, twilio_server
):
    phone = _planned(run, boards, subscribe)
    _claimed_by(sessions, _registered(sessions))  # our PID, a fresh heartbeat: a container restarted
    clock.send_due(fast_settings, sessions, now=LATER)
    assert len(twilio_server.sent_to(phone)) == 1 and outbox_rows(sessions)[0].status == "sent"


def test_claims_of_a_dead_process_on_this_host_are_taken_over_at_once(
    run, sessions, subscribe, boards, fast_settings, twilio_server
):
    phone = _planned(run, boards, subscribe)
    _claimed_by(sessions, _registered(sessions, pid=2**22 + 12345))
    clock.send_due(fast_settings, sessions, now=LATER)
    assert len(twilio_server.sent_to(phone)) == 1


def test_claims_of_another_host_with_a_stale_heartbeat_are_taken_over(
    run, sessions, subscribe, boards, fast_settings, twilio_server
):
    phone = _planned(run, boards, subscribe)
    _claimed_by(sessions, _registered(sessions, host="other-host", heartbeat_at=utcnow() - timedelta(minutes=2)))
    clock.send_due(fast_settings, sessions, now=LATER)
    assert len(twilio_server.sent_to(phone)) == 1


def test_claims_of_a_live_sender_on_another_host_are_left_alone(
    run, sessions, subscribe, boards, fast_env, twilio_server, redis_url
):
    from notifier.config import Settings

    _planned(run, boards, subscribe)
    _claimed_by(sessions, _registered(sessions, host="other-host"))
    clock.send_due(Settings.from_env({**fast_env, "NOTIFIER_REDIS_URL": redis_url}), sessions, now=LATER)
    assert twilio_server.messages == [] and outbox_rows(sessions)[0].status == "sending"


def test_a_second_live_sender_without_redis_is_refused_naming_the_setting(sessions, fast_settings):
    _registered(sessions, host="other-host")
    with pytest.raises(senders.SenderRefused, match="NOTIFIER_REDIS_URL"):
        clock.send_due(fast_settings, sessions)


def test_with_redis_several_senders_may_run(sessions, fast_env, redis_url):
    from notifier.config import Settings

    _registered(sessions, host="other-host")
    clock.send_due(Settings.from_env({**fast_env, "NOTIFIER_REDIS_URL": redis_url}), sessions)
    with sessions() as session:
        hosts = sorted(row.host for row in session.scalars(select(SenderRow)))
    assert len(hosts) == 2 and "other-host" in hosts  # this drain registered beside the other sender, not refused


def test_a_sender_stopping_cleanly_marks_its_registration_stopped(sessions, fast_settings):
    clock.send_due(fast_settings, sessions)
    with sessions() as session:
        assert all(row.stopped_at is not None for row in session.scalars(select(SenderRow)))
