"""Webhooks through the outbox: signed with the Standard Webhooks scheme, once per change, retried, disabled."""

from __future__ import annotations

import base64
import hashlib
import hmac
import json
from datetime import timedelta

from sqlalchemy import select

from notifier import clock
from notifier.db import utcnow
from notifier.delivery.channels import WebhookChannel
from notifier.delivery.drain import drain
from notifier.notices.compose import MessageBuilder
from notifier.subscribers.webhooks import WebhookEndpoint
from tests.conftest import NOW, add_webhook, outbox_rows

LATER = NOW + timedelta(minutes=1)


def after(hours: float):
    return max(LATER, utcnow()) + timedelta(hours=hours)


def verifies(secret: str, request) -> bool:
    """The signature checked by hand, as the Standard Webhooks specification describes it (not with our library)."""
    key = base64.b64decode(secret.removeprefix("whsec_"))
    signed = f"{request.headers['webhook-id']}.{request.headers['webhook-timestamp']}.".encode() + request.body
    expected = base64.b64encode(hmac.new(key, signed, hashlib.sha256).digest()).decode()
    version, _, signature = request.headers["webhook-signature"].partition(",")
    return version == "v1" and hmac.compare_digest(signature, expected)


def _close_tdsb(run, boards, deliver=True):
    run()
    boards.update("tdsb", status="closed")
    return run(LATER, deliver=deliver)


def _webhook_rows(sessions):
    return [row for row in outbox_rows(sessions) if row.channel == "webhook"]


def test_each_change_arrives_once_with_a_signature_that_verifies(run, sessions, boards, webhook_receiver):
    endpoint = add_webhook(sessions, webhook_receiver.url)
    _close_tdsb(run, boards)
    (request,) = webhook_receiver.requests
    assert verifies(endpoint.secret, request)
    assert request.headers["content-type"] == "application/json"
    document = json.loads(request.body)
    assert document["type"] == "board.status_changed"
    data = document["data"]
    assert data["board_id"] == "tdsb" and data["status"] == "closed"
    assert data["panels"] == {"elementary": "closed", "secondary": "closed"}
    assert data["url"] == "https://status.example.org/boards/tdsb?lang=en"
    assert {"board_name", "message", "withdrawals", "effective_from", "changes"} <= data.keys()


def test_the_signature_also_verifies_with_the_standard_webhooks_library(run, sessions, boards, webhook_receiver):
    from standardwebhooks.webhooks import Webhook

    endpoint = add_webhook(sessions, webhook_receiver.url)
    _close_tdsb(run, boards)
    (request,) = webhook_receiver.requests
    assert Webhook(endpoint.secret).verify(request.body, request.headers)["type"] == "board.status_changed"


def test_a_tampered_body_does_not_verify(run, sessions, boards, webhook_receiver):
    endpoint = add_webhook(sessions, webhook_receiver.url)
    _close_tdsb(run, boards)
    (request,) = webhook_receiver.requests
    forged = type(request)(request.path, request.headers, request.body.replace(b"closed", b"open"))
    assert not verifies(endpoint.secret, forged)


def test_running_the_cycle_again_sends_nothing_twice(run, sessions, boards, fast_settings, webhook_receiver):
    add_webhook(sessions, webhook_receiver.url)
    _close_tdsb(run, boards)
    run(LATER + timedelta(minutes=1))
    run(LATER + timedelta(minutes=2))
    clock.send_due(fast_settings, sessions, now=after(1))
    assert len(webhook_receiver.requests) == 1
    assert len(_webhook_rows(sessions)) == 1


def test_planning_again_after_a_crash_makes_no_second_row(run, sessions, boards, fast_settings, webhook_receiver):
    from notifier.delivery.outbox import ClockState
    from notifier.notices import webhooks

    add_webhook(sessions, webhook_receiver.url)
    _close_tdsb(run, boards, deliver=False)
    with sessions() as session, session.begin():  # as if the cursor's move had been lost
        session.get(ClockState, webhooks.CURSOR).number = 0
    assert webhooks.plan(sessions, fast_settings, LATER) == 0
    assert len(_webhook_rows(sessions)) == 1


def test_a_500_is_retried_with_backoff_and_the_same_webhook_id(run, sessions, boards, fast_settings,
                                                              webhook_receiver):
    endpoint = add_webhook(sessions, webhook_receiver.url)
    webhook_receiver.fail(500, times=2)
    _close_tdsb(run, boards)
    (row,) = _webhook_rows(sessions)
    assert row.status == "pending" and row.attempts == 1 and row.due_at > utcnow()
    clock.send_due(fast_settings, sessions, now=row.due_at - timedelta(milliseconds=1))
    assert len(webhook_receiver.requests) == 1  # not before its backoff
    clock.send_due(fast_settings, sessions, now=after(1))
    clock.send_due(fast_settings, sessions, now=after(2))
    clock.send_due(fast_settings, sessions, now=after(3))
    assert len(webhook_receiver.requests) == 3
    ids = {r.headers["webhook-id"] for r in webhook_receiver.requests}
    assert len(ids) == 1
    assert all(verifies(endpoint.secret, r) for r in webhook_receiver.requests)
    (row,) = _webhook_rows(sessions)
    assert row.status == "sent" and row.attempts == 2
    with sessions() as session:
        assert session.scalar(select(WebhookEndpoint.failing_since)) is None


def test_a_slack_endpoint_gets_a_line_of_text_in_english(run, sessions, boards, webhook_receiver):
    add_webhook(sessions, webhook_receiver.url, format="slack")
    _close_tdsb(run, boards)
    (request,) = webhook_receiver.requests
    document = json.loads(request.body)
    assert list(document) == ["text"]
    assert "closed" in document["text"] and "https://status.example.org/boards/tdsb?lang=en" in document["text"]
    assert "\n" not in document["text"]


def test_a_slack_endpoint_gets_a_line_of_text_in_french(run, sessions, boards, webhook_receiver):
    add_webhook(sessions, webhook_receiver.url, format="slack", language="fr")
    _close_tdsb(run, boards)
    document = json.loads(webhook_receiver.requests[0].body)
    assert list(document) == ["text"]
    assert "fermées" in document["text"] and "?lang=fr" in document["text"]
    assert "\u00a0:" in document["text"]  # French typography: a no-break space before the colon


def test_an_endpoint_following_one_panel_hears_only_of_it(run, sessions, boards, webhook_receiver):
    add_webhook(sessions, webhook_receiver.url, panels=["secondary"])
    run()
    boards.update("tdsb", panels={"elementary": "closed"})
    run(LATER)
    assert webhook_receiver.requests == []
    boards.update("tdsb", status="closed", panels={"secondary": "work-to-rule"})
    run(LATER + timedelta(minutes=1))
    assert len(webhook_receiver.requests) == 1


def test_an_endpoint_added_after_a_change_does_not_hear_of_it(run, sessions, boards, webhook_receiver):
    _close_tdsb(run, boards)
    add_webhook(sessions, webhook_receiver.url, now=LATER + timedelta(seconds=30))
    run(LATER + timedelta(minutes=1))
    assert webhook_receiver.requests == []


def test_410_gone_disables_the_endpoint_at_once(run, sessions, boards, webhook_receiver):
    add_webhook(sessions, webhook_receiver.url)
    webhook_receiver.fail(410)
    _close_tdsb(run, boards)
    (row,) = _webhook_rows(sessions)
    assert row.status == "failed"
    with sessions() as session:
        assert session.scalar(select(WebhookEndpoint.disabled_at)) is not None


def test_a_4xx_is_the_endpoints_fault_and_is_not_retried(run, sessions, boards, fast_settings, webhook_receiver):
    add_webhook(sessions, webhook_receiver.url)
    webhook_receiver.fail(401)
    _close_tdsb(run, boards)
    clock.send_due(fast_settings, sessions, now=after(2))
    assert len(webhook_receiver.requests) == 1
    (row,) = _webhook_rows(sessions)
    assert row.status == "failed" and row.failure == "message"


def test_redirects_are_not_followed(run, sessions, boards, webhook_receiver):
    add_webhook(sessions, webhook_receiver.url)
    webhook_receiver.fail(302)
    _close_tdsb(run, boards)
    assert len(webhook_receiver.requests) == 1
    (row,) = _webhook_rows(sessions)
    assert row.status == "failed"


def test_a_day_of_failures_disables_the_endpoint_and_emails_its_owner_once(
    run, sessions, boards, fast_settings, webhook_receiver, smtp_server
):
    inbox, _ = smtp_server
    add_webhook(sessions, webhook_receiver.url)
    webhook_receiver.fail(503, times=100)
    _close_tdsb(run, boards)  # the first failure, at the real time
    start = utcnow()

    def send_at(moment):
        factory = _factory(sessions, fast_settings, lambda: moment)
        drain(sessions, fast_settings, MessageBuilder, now=moment, factory=factory)

    send_at(start + timedelta(hours=12))
    with sessions() as session:
        endpoint = session.scalars(select(WebhookEndpoint)).one()
        assert endpoint.disabled_at is None and endpoint.failing_since is not None
    send_at(start + timedelta(hours=25))
    with sessions() as session:
        endpoint = session.scalars(select(WebhookEndpoint)).one()
        assert endpoint.disabled_at is not None
    (row,) = _webhook_rows(sessions)
    assert row.status == "failed"
    tries = len(webhook_receiver.requests)
    run(LATER + timedelta(days=1, minutes=5))
    run(LATER + timedelta(days=1, minutes=6))
    owner_mail = [m for m in inbox.messages() if m["To"] == "it@daycare.example"]
    assert len(owner_mail) == 1
    assert "turned off" in owner_mail[0]["Subject"]
    assert "127.0.0.1" in owner_mail[0].get_body(("plain",)).get_content()
    boards.update("tdsb", status="open")
    run(LATER + timedelta(days=1, minutes=7))
    assert len(webhook_receiver.requests) == tries  # a disabled endpoint gets nothing more


def _factory(sessions, settings, now):
    from notifier.delivery import channels

    def build(name):
        if name == "webhook":
            return WebhookChannel(sessions, allow_private=True, timeout=2, clock=now)
        return channels.build(settings, sessions)[name]

    return build


def test_no_secret_and_no_url_path_in_the_logs_of_failing_webhooks(run, sessions, boards, fast_settings,
                                                                   webhook_receiver, caplog):
    import logging

    caplog.set_level(logging.DEBUG, logger="notifier")
    endpoint = add_webhook(sessions, webhook_receiver.url.replace("/hooks/school-status", "/services/T0/SECRETPATH"))
    webhook_receiver.fail(500, times=1)
    webhook_receiver.fail(410)
    _close_tdsb(run, boards)
    clock.send_due(fast_settings, sessions, now=after(1))
    ours = "\n".join(r.getMessage() for r in caplog.records if r.name.startswith("notifier"))
    assert "disabled" in ours
    assert "SECRETPATH" not in ours and endpoint.secret not in ours and "whsec_" not in ours
    with sessions() as session:
        stored = session.scalars(select(WebhookEndpoint)).one()
    assert "SECRETPATH" not in (stored.last_error or "") + (stored.disabled_reason or "")


def test_a_refused_connection_is_retried_later(run, sessions, boards):
    from tests.conftest import free_port

    add_webhook(sessions, f"http://127.0.0.1:{free_port()}/hooks")
    _close_tdsb(run, boards)
    (row,) = _webhook_rows(sessions)
    assert row.status == "pending" and row.attempts == 1 and row.due_at > utcnow()
    assert "ConnectionError" in row.last_error and "/hooks" not in row.last_error


def test_a_webhook_left_in_flight_by_a_dead_sender_is_sent_again_with_the_same_id(run, sessions, boards,
                                                                                   fast_settings, webhook_receiver):
    from sqlalchemy import update

    from notifier.delivery.outbox import OutboxRow

    add_webhook(sessions, webhook_receiver.url)
    _close_tdsb(run, boards, deliver=False)
    (row,) = _webhook_rows(sessions)
    with sessions() as session, session.begin():  # claimed by a process that died long ago
        session.execute(update(OutboxRow).where(OutboxRow.id == row.id).values(
            status="sending", claim="sender:999999", claimed_at=utcnow() - timedelta(hours=1)))
    clock.send_due(fast_settings, sessions, now=after(0))
    (request,) = webhook_receiver.requests
    assert request.headers["webhook-id"] == row.digest_key
    assert _webhook_rows(sessions)[0].status == "sent"


def test_every_time_in_the_json_is_utc_as_documented(run, sessions, boards, webhook_receiver):
    add_webhook(sessions, webhook_receiver.url)
    run()
    boards.update("tdsb", status="closed", effective="2026-11-23T09:00:00-05:00")
    run(LATER)
    (request,) = webhook_receiver.requests
    document = json.loads(request.body)
    assert document["timestamp"].endswith("Z")
    assert document["data"]["effective_from"] == "2026-11-23T14:00:00Z"
