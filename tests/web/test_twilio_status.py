"""POST /twilio/status: signed, recorded per message, idempotent, in any order."""

from __future__ import annotations

from datetime import timedelta

import pytest
from sqlalchemy import select
from twilio.request_validator import RequestValidator

from notifier.delivery.outbox import DeliveryReceipt
from notifier.subscribers.models import Contact
from tests.conftest import AUTH_TOKEN, BASE_URL, NOW

URL = f"{BASE_URL}/twilio/status"


@pytest.fixture
def callback(fast_env, monkeypatch):
    """Post a signed status callback to the app: `callback(sid, status, error_code=None)`."""
    from notifier import create_app

    app = create_app({**fast_env, "TESTING": True})
    client = app.test_client()

    def post(sid: str, status: str, error_code: str | None = None, signature: str | None = None):
        form = {"MessageSid": sid, "MessageStatus": status, "AccountSid": "AC" + "7" * 32}
        if error_code:
            form["ErrorCode"] = error_code
        signed = signature if signature is not None else RequestValidator(AUTH_TOKEN).compute_signature(URL, form)
        return client.post("/twilio/status", data=form, headers={"X-Twilio-Signature": signed})

    yield post
    app.extensions["notifier"].engine.dispose()


def receipt(sessions, sid: str) -> DeliveryReceipt | None:
    with sessions() as session:
        return session.get(DeliveryReceipt, sid)


def test_a_delivered_callback_is_recorded(callback, sessions):
    assert callback("SM1", "delivered").status_code == 204
    assert receipt(sessions, "SM1").status == "delivered"


def test_the_same_callback_twice_changes_nothing(callback, sessions):
    callback("SM2", "delivered")
    first = receipt(sessions, "SM2").updated_at
    assert callback("SM2", "delivered").status_code == 204
    assert receipt(sessions, "SM2").status == "delivered"
    assert receipt(sessions, "SM2").updated_at >= first
    with sessions() as session:
        assert len(session.scalars(select(DeliveryReceipt)).all()) == 1


def test_a_late_earlier_status_does_not_overwrite_a_final_one(callback, sessions):
    callback("SM3", "delivered")
    callback("SM3", "sent")
    callback("SM3", "queued")
    assert receipt(sessions, "SM3").status == "delivered"


def test_undelivered_keeps_its_error_code(callback, sessions):
    callback("SM4", "sent")
    callback("SM4", "undelivered", "30003")
    assert (receipt(sessions, "SM4").status, receipt(sessions, "SM4").error_code) == ("undelivered", "30003")


def test_an_unsigned_callback_is_refused_and_changes_nothing(callback, sessions):
    assert callback("SM5", "delivered", signature="forged").status_code == 403
    assert receipt(sessions, "SM5") is None


def test_a_malformed_callback_is_refused(callback, sessions):
    assert callback("SM6", "exploded").status_code == 400
    assert receipt(sessions, "SM6") is None


def test_undelivered_because_blocked_opts_the_contact_out(
    callback, run, sessions, subscribe, boards, twilio_server
):
    run()
    subscribe(email=None)
    boards.update("tdsb", status="closed")
    run(NOW + timedelta(minutes=1))
    sid = twilio_server.messages[0]["sid"]
    callback(sid, "undelivered", "30004")
    with sessions() as session:
        assert session.scalars(select(Contact)).one().status == "opted_out"


def test_status_counts_delivered_messages(callback, run, subscribe, boards, twilio_server, runner):
    run()
    subscribe(email=None)
    boards.update("tdsb", status="closed")
    run(NOW + timedelta(minutes=1))
    callback(twilio_server.messages[0]["sid"], "delivered")
    output = runner.invoke("status").output
    sms = next(line for line in output.splitlines() if line.startswith("sms"))
    assert sms.split() == ["sms", "0", "0", "1", "1", "0", "0", "0"]
    assert "last cycle: #" in output and ": ok (" in output
