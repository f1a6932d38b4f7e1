"""Web Push through the outbox: encrypted so only the browser reads it, signed (VAPID), once per change, with TTL
and Urgency; 404/410 forget the subscription, 429 and 5xx are retried no sooner than Retry-After."""

from __future__ import annotations

from datetime import timedelta

import pytest
from sqlalchemy import select

from notifier.clock import send_due
from notifier.config import Settings
from notifier.db import utcnow
from notifier.delivery.channels.push import retry_after
from notifier.subscribers import push
from notifier.subscribers.models import Contact
from notifier.subscribers.push import PushSubscription
from tests.conftest import NOW, outbox_rows

LATER = NOW + timedelta(minutes=1)


@pytest.fixture
def push_settings(fast_env, push_env) -> Settings:
    return Settings.from_env({**fast_env, **{k: v for k, v in push_env.items() if "PUSH" in k or "VAPID" in k},
                              "NOTIFIER_RETRY_BASE_SECONDS": "1"})


@pytest.fixture
def follow(sessions, push_service):
    """`follow(boards={"tdsb": [...]}, language="en")`: a browser subscribed through the domain; returns it."""

    def subscribe(boards=None, language="en"):
        browser = push_service.browser()
        request = push.parse({"subscription": browser.subscription, "language": language,
                              "boards": boards or {"tdsb": ["elementary", "secondary"]}},
                             {"tdsb", "tcdsb"}, (push_service.origin,))
        with sessions() as session, session.begin():
            push.store(session, request, source="/boards/tdsb 127.0.0.1")
        return browser

    return subscribe


def _close_tdsb(run, boards, settings):
    run(settings=settings)
    boards.update("tdsb", status="closed")
    return run(LATER, settings=settings)


def _push_rows(sessions):
    return [row for row in outbox_rows(sessions) if row.channel == "push"]


def test_a_closure_reaches_push_email_and_text_subscribers_of_the_board_exactly_once(
        run, boards, sessions, subscribe, follow, push_service, push_settings, smtp_server, twilio_server):
    run(settings=push_settings)
    _, email, number = subscribe()
    browser = follow()
    boards.update("tdsb", status="closed")
    run(LATER, settings=push_settings)
    run(LATER + timedelta(minutes=1), settings=push_settings)
    assert [d.browser for d in push_service.delivered] == [browser.id]
    assert [e.rcpt_tos for e in smtp_server[0].envelopes] == [[email]]
    assert len(twilio_server.sent_to(number)) == 1


def test_the_browser_decrypts_the_notice_in_its_language_with_the_board_page_and_tag(
        run, boards, follow, push_service, push_settings, twilio_server):
    follow(language="fr")
    _close_tdsb(run, boards, push_settings)
    (delivered,) = push_service.delivered
    notice = delivered.payload
    assert set(notice) == {"title", "body", "url", "tag"}
    assert notice["tag"] == "tdsb"
    assert notice["url"] == "https://status.example.org/boards/tdsb?lang=fr"
    assert "fermée" in notice["body"] or "fermées" in notice["body"]
    assert "https://" not in notice["body"]  # the link is the notification's own, not in its words
    assert notice["title"]


def test_a_closure_is_urgent_with_a_ttl_of_at_least_an_hour(run, boards, follow, push_service, push_settings):
    follow()
    _close_tdsb(run, boards, push_settings)
    (delivered,) = push_service.delivered
    assert delivered.headers["urgency"] == "high"
    assert int(delivered.headers["ttl"]) >= 3600
    assert delivered.headers["content-encoding"] == "aes128gcm"
    assert delivered.headers["topic"] == "tdsb"


def test_a_change_that_is_not_a_closure_is_normal(run, boards, follow, push_service, push_settings):
    follow()
    run(settings=push_settings)
    boards.update("tdsb", status="work-to-rule")
    run(LATER, settings=push_settings)
    (delivered,) = push_service.delivered
    assert delivered.headers["urgency"] == "normal"


def test_the_vapid_token_names_the_service_origin_and_the_operator(run, boards, follow, push_service, push_settings):
    follow()
    _close_tdsb(run, boards, push_settings)
    claims = push_service.delivered[0].claims
    assert claims["aud"] == push_service.origin
    assert claims["sub"] == "mailto:ops@example.org"
    assert claims["exp"] - utcnow().timestamp() <= 24 * 3600


def test_410_deletes_the_subscription_at_once_and_it_is_never_tried_again(
        run, boards, sessions, follow, push_service, push_settings):
    browser = follow()
    push_service.forget(browser)
    _close_tdsb(run, boards, push_settings)
    send_due(push_settings, sessions, now=LATER + timedelta(days=1))
    assert push_service.attempts == [(browser.id, 410)]
    with sessions() as session:
        assert session.scalars(select(PushSubscription)).all() == []
        assert session.scalar(select(Contact.status).where(Contact.channel == "push")) == "invalid"
    (row,) = _push_rows(sessions)
    assert row.status == "failed"


def test_404_is_gone_too(run, boards, sessions, follow, push_service, push_settings):
    follow()
    push_service.answer(404)
    _close_tdsb(run, boards, push_settings)
    with sessions() as session:
        assert session.scalars(select(PushSubscription)).all() == []


@pytest.mark.parametrize("status", [429, 503])
def test_a_busy_service_is_retried_and_then_delivered(run, boards, sessions, follow, push_service, push_settings,
                                                      status):
    browser = follow()
    push_service.answer(status)
    _close_tdsb(run, boards, push_settings)
    assert push_service.attempts == [(browser.id, status)]
    (row,) = _push_rows(sessions)
    assert row.status == "pending" and row.attempts == 1
    send_due(push_settings, sessions, now=utcnow() + timedelta(hours=2))
    assert [d.browser for d in push_service.delivered] == [browser.id]
    assert _push_rows(sessions)[0].status == "sent"


def test_retry_after_is_honoured_when_longer_than_the_backoff(run, boards, sessions, follow, push_service,
                                                              push_settings):
    follow()
    push_service.answer(429, headers={"Retry-After": "600"})
    before = utcnow()
    _close_tdsb(run, boards, push_settings)
    (row,) = _push_rows(sessions)
    assert row.due_at >= before + timedelta(seconds=600)


def test_413_fails_that_message_alone(run, boards, sessions, follow, push_service, push_settings):
    follow()
    push_service.answer(413)
    _close_tdsb(run, boards, push_settings)
    (row,) = _push_rows(sessions)
    assert row.status == "failed" and row.failure == "message"
    with sessions() as session:
        assert session.scalar(select(Contact.status).where(Contact.channel == "push")) == "active"


def test_an_endpoint_no_longer_allowed_is_not_posted_to(run, boards, sessions, follow, push_service, push_settings):
    from dataclasses import replace

    follow()
    narrowed = replace(push_settings, push_services=("https://fcm.googleapis.com",))
    _close_tdsb(run, boards, narrowed)
    assert push_service.attempts == []
    assert _push_rows(sessions)[0].status == "failed"


def test_a_deleted_subscription_gets_nothing(run, boards, sessions, follow, push_service, push_settings):
    browser = follow()
    run(settings=push_settings)
    with sessions() as session, session.begin():
        push.remove(session, browser.endpoint, source="test")
    boards.update("tdsb", status="closed")
    run(LATER, settings=push_settings)
    assert push_service.attempts == []


def test_retry_after_reads_seconds_and_dates_within_an_hour():
    assert retry_after("30") == 30
    assert retry_after("99999") == 3600
    assert retry_after(None) is None and retry_after("soon") is None
    assert retry_after("Thu, 01 Jan 2026 00:01:00 GMT", now=1767225600.0) == 60


def test_a_subscription_unused_for_270_days_is_dropped_by_the_clock(sessions, follow, push_settings):
    from notifier.clock import Clock

    follow()
    Clock(push_settings, sessions).expire_push(utcnow() + timedelta(days=269))
    with sessions() as session:
        assert len(session.scalars(select(PushSubscription)).all()) == 1
    Clock(push_settings, sessions).expire_push(utcnow() + timedelta(days=271))
    with sessions() as session:
        assert session.scalars(select(PushSubscription)).all() == []
        assert session.scalar(select(Contact.status).where(Contact.channel == "push")) == "invalid"


def test_a_subscription_sent_to_recently_is_kept(run, boards, sessions, follow, push_service, push_settings):
    from notifier.clock import Clock

    follow()
    _close_tdsb(run, boards, push_settings)
    with sessions() as session, session.begin():
        for row in session.scalars(select(PushSubscription)):
            row.updated_at = utcnow() - timedelta(days=400)
    Clock(push_settings, sessions).expire_push()
    with sessions() as session:
        assert len(session.scalars(select(PushSubscription)).all()) == 1
