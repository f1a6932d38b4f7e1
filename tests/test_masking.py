"""Logs are safe by construction: a filter on every handler masks phone numbers, email addresses, link tokens,
account SIDs and secrets in every record, whoever logged it; a whole fan-out, a crash recovery and the webhooks
leave no whole address in any log line."""

from __future__ import annotations

import io
import logging
import os
import re
import subprocess
import sys
from datetime import timedelta

import pytest
from sqlalchemy import select

from notifier import masking
from notifier.config import ROOT
from notifier.db import utcnow
from tests.conftest import ACCOUNT_SID, AUTH_TOKEN, make_subscriber

SECRET_LINK = "https://status.example.org/manage/WzEyLCJhYmMiXQ.Zx0aBc.abcdefghijklmnopqrstuvwxyz1"


@pytest.fixture
def logged():
    """A handler like the processes' own, with the filter installed; yields a function returning what it wrote."""
    stream = io.StringIO()
    handler = logging.StreamHandler(stream)
    root = logging.getLogger()
    root.addHandler(handler)
    level = root.level
    root.setLevel(logging.DEBUG)
    masking.install([AUTH_TOKEN])
    yield stream.getvalue
    root.removeHandler(handler)
    root.setLevel(level)


def test_numbers_addresses_tokens_sids_and_secrets_are_masked_in_message_and_arguments(logged):
    log = logging.getLogger("some.library")
    log.info("sent to %s and %s via %s", "+16135550123", "parent@example.org", SECRET_LINK)
    log.warning("GET /2010-04-01/Accounts/%s/Messages.json To=613-555-0142 auth %s", ACCOUNT_SID, AUTH_TOKEN)
    text = logged()
    for whole in ("+16135550123", "parent@example.org", "WzEyLCJhYmMiXQ", ACCOUNT_SID, AUTH_TOKEN, "613-555-0142"):
        assert whole not in text
    assert "+1613***0123" in text and "p***@example.org" in text and "/manage/***" in text


def test_a_traceback_is_masked_too(logged):
    try:
        raise ValueError("refused parent@example.org")
    except ValueError:
        logging.getLogger("x").exception("failed")
    assert "parent@example.org" not in logged() and "p***@example.org" in logged()


def test_the_twilio_sdk_request_log_is_held_at_warning(logged):
    assert logging.getLogger("twilio.http_client").getEffectiveLevel() >= logging.WARNING


def _scan(text: str, addresses: set[str]) -> list[str]:
    bad = [line for line in text.splitlines() if any(a in line for a in addresses)]
    bad += [line for line in text.splitlines()
            if ACCOUNT_SID in line or AUTH_TOKEN in line
            or re.search(r"/(manage|unsubscribe|confirm)/(?!\*)[\w.-]{8,}", line)]
    return bad


def test_a_fan_out_a_crash_recovery_and_the_webhooks_log_no_whole_address(
    sessions, fast_env, fast_settings, boards, smtp_server, twilio_server, logged
):
    from twilio.request_validator import RequestValidator

    from notifier import create_app
    from notifier.delivery.outbox import OutboxRow
    from notifier.status import cycle
    from tests.subscribers.conftest import sign_up

    cycle.run(sessions, str(fast_settings.boards_file), follow=True)
    with sessions() as session, session.begin():
        people = [make_subscriber(session) for _ in range(30)]
        addresses = {c.address for p in people for c in p.contacts}
    boards.update("tdsb", status="closed")
    env = {**os.environ, **fast_env}
    twilio_server.script(next(a for a in addresses if a.startswith("+")), (500, None))  # a retry, logged
    first = subprocess.run([sys.executable, "-m", "notifier", "tick"], cwd=ROOT, env=env, capture_output=True,
                           text=True, timeout=300)
    with sessions() as session, session.begin():  # crash recovery: rows left in flight by a process now gone
        for row in session.scalars(select(OutboxRow).where(OutboxRow.status == "sent").limit(5)):
            row.status, row.claim, row.claimed_at = "sending", "sender:999999", utcnow() - timedelta(seconds=5)
        for row in session.scalars(select(OutboxRow).where(OutboxRow.status == "pending")):
            row.due_at = utcnow() - timedelta(seconds=1)
    second = subprocess.run([sys.executable, "-m", "notifier", "tick"], cwd=ROOT, env=env, capture_output=True,
                            text=True, timeout=300)
    assert "reconciled" in second.stderr

    app = create_app({**fast_env, "TESTING": True})
    client = app.test_client()
    phone = "+16135550188"
    params = {"MessageSid": "SM" + "2" * 32, "AccountSid": ACCOUNT_SID, "From": phone, "To": "+16135550100",
              "Body": "TDSB", "NumMedia": "0"}
    signature = RequestValidator(AUTH_TOKEN).compute_signature("https://status.example.org/twilio/inbound", params)
    client.post("/twilio/inbound", data=params, headers={"X-Twilio-Signature": signature})
    sign_up(client, email="someone@example.org", phone="+16135550189")
    app.extensions["notifier"].engine.dispose()

    text = first.stderr + second.stderr + logged()
    assert "sent" in text
    assert _scan(text, addresses | {phone, "+16135550189", "someone@example.org"}) == []


def test_chat_webhook_urls_and_webhook_secrets_are_masked():
    from notifier.masking import redact

    line = redact("POST https://hooks.slack.com/services/T0/B0/abcdef to whsec_abcdEFGH1234== failed")
    assert line == "POST https://hooks.slack.com/*** to whsec_*** failed"
