"""An account-wide refusal pauses the channel for every process: nobody is marked, every row waits, `tick`,
`status` and /healthz say so, and the channel resumes by itself once the provider accepts us again."""

from __future__ import annotations

import time
from datetime import timedelta

from sqlalchemy import select, update

from notifier import clock
from notifier.db import utcnow
from notifier.delivery import health
from notifier.delivery.outbox import OutboxRow
from notifier.subscribers.models import Contact
from tests.conftest import NOW, outbox_rows

LATER = NOW + timedelta(minutes=1)


def _fan_out(run, boards, subscribe, count: int = 5, **kind) -> None:
    for _ in range(count):
        subscribe(**kind)
    run()
    boards.update("tdsb", status="closed")
    run(LATER, deliver=False)


def _statuses(sessions, channel: str) -> set[str]:
    return {row.status for row in outbox_rows(sessions) if row.channel == channel}


def test_a_wrong_auth_token_pauses_texts_marks_nobody_and_keeps_every_row(
    run, sessions, subscribe, boards, fast_settings, twilio_server, smtp_server
):
    _fan_out(run, boards, subscribe)
    twilio_server.auth_token = "rotated-token"
    clock.send_due(fast_settings, sessions, now=LATER)
    assert len(twilio_server.requests) == 0 or len(twilio_server.messages) == 0
    assert _statuses(sessions, "sms") == {"pending"}
    assert _statuses(sessions, "email") == {"sent"}  # email is another channel: it goes on
    with sessions() as session:
        assert set(session.scalars(select(Contact.status))) == {"active"}
        [pause] = health.pauses(session)
    assert pause.channel == "sms" and pause.code == "20003"


def test_tick_exits_non_zero_with_a_clear_line_while_a_channel_is_paused(runner, sessions, settings):
    health.pause(sessions, "sms", "Twilio 401/20003: Authenticate", 20003)
    result = runner.invoke("tick")
    assert result.exit_code == 1
    assert "SMS PAUSED since" in result.output and "20003" in result.output


def test_status_prints_a_paused_channel_first(runner, sessions):
    health.pause(sessions, "email", "SMTP 535 at LOGIN: authentication failed", 535)
    result = runner.invoke("status")
    assert result.output.splitlines()[0].startswith("EMAIL PAUSED since")


def test_healthz_is_degraded_naming_the_channel_the_reason_and_since_when(client, sessions):
    health.pause(sessions, "sms", "Twilio 400/21606: not an SMS-capable number", 21606)
    body = client.get("/healthz").get_json()
    assert body["status"] == "degraded"
    [paused] = body["paused_channels"]
    assert paused["channel"] == "sms" and "21606" in paused["reason"] and paused["since"]


def test_an_operator_resumes_a_channel_at_once(runner, sessions):
    health.pause(sessions, "sms", "Twilio 401/20003", 20003)
    assert "resumed" in runner.invoke("channels", "resume", "sms").output
    with sessions() as session:
        assert health.pauses(session) == []


def test_a_paused_channel_claims_nothing_even_after_the_provider_is_fixed(
    run, sessions, subscribe, boards, fast_settings, twilio_server
):
    _fan_out(run, boards, subscribe, email=None)
    health.pause(sessions, "sms", "Twilio 401/20003", 20003)
    clock.send_due(fast_settings, sessions, now=LATER)
    assert twilio_server.messages == [] and _statuses(sessions, "sms") == {"pending"}


def test_the_sending_loop_probes_a_paused_channel_and_resumes_by_itself_when_fixed(
    run, sessions, subscribe, boards, fast_settings, twilio_server
):
    _fan_out(run, boards, subscribe, email=None)
    twilio_server.auth_token = "rotated-token"
    clock.send_due(fast_settings, sessions, now=LATER)
    with sessions() as session:
        assert [p.channel for p in health.pauses(session)] == ["sms"]
    twilio_server.auth_token = "test-auth-token"  # the operator fixed the setting (here: the provider's side)
    with sessions() as session, session.begin():  # the loop runs on the real clock; the probe interval has passed
        session.execute(update(OutboxRow).values(due_at=utcnow() - timedelta(minutes=1)))
        session.execute(update(health.ChannelHealth).values(probed_at=utcnow() - timedelta(minutes=5)))
    loop = clock.sending_loop(fast_settings, sessions, "worker")
    loop.start()
    try:
        deadline = time.monotonic() + 20
        while _statuses(sessions, "sms") != {"sent"} and time.monotonic() < deadline:
            time.sleep(0.2)
    finally:
        loop.stop()
    assert _statuses(sessions, "sms") == {"sent"}
    with sessions() as session:
        assert health.pauses(session) == []


def test_an_smtp_relay_refusal_pauses_email_and_texts_go_on(
    run, sessions, subscribe, boards, fast_settings, twilio_server, smtp_server
):
    inbox, _ = smtp_server
    _fan_out(run, boards, subscribe, count=3)
    with sessions() as session:
        for address in session.scalars(select(Contact.address).where(Contact.channel == "email")):
            inbox.refusals[address] = "550 5.7.1 Relaying denied"
    clock.send_due(fast_settings, sessions, now=LATER)
    assert _statuses(sessions, "email") == {"pending"} and _statuses(sessions, "sms") == {"sent"}
    with sessions() as session:
        assert [p.channel for p in health.pauses(session)] == ["email"]
        assert set(session.scalars(select(Contact.status))) == {"active"}


def test_rows_of_a_paused_channel_stay_due_for_when_it_resumes(run, sessions, subscribe, boards, fast_settings,
                                                               twilio_server):
    _fan_out(run, boards, subscribe, email=None)
    twilio_server.auth_token = "rotated-token"
    clock.send_due(fast_settings, sessions, now=LATER)
    with sessions() as session:
        assert all(r.attempts == 0 for r in session.scalars(select(OutboxRow)))
    twilio_server.auth_token = "test-auth-token"
    health.resume(sessions, "sms", "test")
    clock.send_due(fast_settings, sessions, now=LATER)
    assert _statuses(sessions, "sms") == {"sent"}
