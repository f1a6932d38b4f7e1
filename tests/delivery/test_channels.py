"""Channels hand one message to one provider and say whether a failure is worth retrying."""

from __future__ import annotations

import logging

import pytest

from notifier.config import Settings
from notifier.delivery.channels import Message, build
from notifier.delivery.channels.email import SmtpChannel
from notifier.delivery.channels.local import OutboxChannel, read_outbox
from notifier.delivery.channels.sms import TwilioChannel
from notifier.errors import PermanentDeliveryError, TemporaryDeliveryError
from tests.conftest import ACCOUNT_SID, AUTH_TOKEN, SERVICE_NUMBER

PARENT_PHONE = "+16135550123"
PARENT_EMAIL = "parent@example.org"


def sms(text: str = "TDSB: secondary schools closed Monday.") -> Message:
    return Message(channel="sms", to=PARENT_PHONE, text=text, reference="digest-1")


def email(**overrides) -> Message:
    fields = {"channel": "email", "to": PARENT_EMAIL, "text": "Plain text", "html": "<p>HTML</p>",
              "subject": "Écoles fermées", "reference": "digest-1.contact-7", "language": "fr"}
    fields.update(overrides)
    return Message(**fields)


@pytest.fixture
def twilio(twilio_server) -> TwilioChannel:
    return TwilioChannel(ACCOUNT_SID, AUTH_TOKEN, from_number=SERVICE_NUMBER, api_base_url=twilio_server.url,
                         timeout=5, validity_period=3600)


def test_sms_goes_through_the_twilio_sdk_with_sender_and_validity_period(twilio, twilio_server):
    receipt = twilio.send(sms())
    [sent] = twilio_server.sent_to(PARENT_PHONE)
    assert receipt.provider_id == sent["sid"] and receipt.provider_id.startswith("SM")
    assert sent["_form"]["From"] == SERVICE_NUMBER
    assert sent["_form"]["ValidityPeriod"] == "3600"


@pytest.mark.parametrize("status, code", [(429, 20429), (500, None), (503, None)])
def test_sms_rate_limits_and_server_errors_are_temporary(twilio, twilio_server, status, code):
    twilio_server.script(PARENT_PHONE, (status, code))
    with pytest.raises(TemporaryDeliveryError):
        twilio.send(sms())


@pytest.mark.parametrize("code", [21610, 21211, 21614])
def test_sms_opted_out_invalid_and_landline_numbers_are_permanent_with_their_code(twilio, twilio_server, code):
    twilio_server.always(PARENT_PHONE, 400, code)
    with pytest.raises(PermanentDeliveryError) as caught:
        twilio.send(sms())
    assert caught.value.code == code


def test_sms_to_an_unreachable_api_is_temporary():
    channel = TwilioChannel(ACCOUNT_SID, AUTH_TOKEN, from_number=SERVICE_NUMBER, api_base_url="http://127.0.0.1:9",
                            timeout=1)
    with pytest.raises(TemporaryDeliveryError):
        channel.send(sms())


def test_sms_already_sent_can_be_found_for_reconciliation(twilio, twilio_server):
    from datetime import UTC, datetime, timedelta

    twilio.send(sms("first"))
    found = twilio.find_sent(PARENT_PHONE, datetime.now(UTC) - timedelta(minutes=5), body="first")
    assert [m.body for m in found] == ["first"]


def test_sms_logs_never_hold_the_whole_number(twilio, twilio_server, caplog):
    twilio_server.script(PARENT_PHONE, (500, None))
    with caplog.at_level(logging.DEBUG), pytest.raises(TemporaryDeliveryError):
        twilio.send(sms())
    assert PARENT_PHONE not in caplog.text
    assert "+1613***0123" in caplog.text


def test_email_arrives_as_multipart_text_and_html_with_a_deterministic_message_id(smtp_server):
    inbox, url = smtp_server
    SmtpChannel(url, "School status <status@example.org>").send(email())
    [received] = inbox.messages()
    assert received["Message-ID"] == "<digest-1.contact-7@example.org>"
    assert received["Subject"] == "Écoles fermées"
    assert received["Content-Language"] == "fr"
    assert [p.get_content_type() for p in received.iter_parts()] == ["text/plain", "text/html"]


def test_email_extra_headers_are_kept(smtp_server):
    inbox, url = smtp_server
    headers = {"List-Unsubscribe": "<https://status.example.org/u/t>", "List-Unsubscribe-Post":
               "List-Unsubscribe=One-Click"}
    SmtpChannel(url, "status@example.org").send(email(headers=headers))
    [received] = inbox.messages()
    assert received["List-Unsubscribe-Post"] == "List-Unsubscribe=One-Click"


def test_email_batch_uses_one_smtp_connection(smtp_server):
    inbox, url = smtp_server
    channel = SmtpChannel(url, "status@example.org")
    messages = [email(to=f"parent{i}@example.org", reference=f"d-{i}") for i in range(3)]
    outcomes = list(channel.send_many(messages))
    assert len(inbox.envelopes) == 3 and all(not isinstance(o, Exception) for _, o in outcomes)
    assert inbox.connections == 1


def test_email_refused_with_5xx_is_permanent_and_4xx_is_temporary(smtp_server):
    inbox, url = smtp_server
    inbox.refuse("gone@example.org", 550)
    inbox.refuse("busy@example.org", 451)
    channel = SmtpChannel(url, "status@example.org")
    with pytest.raises(PermanentDeliveryError):
        channel.send(email(to="gone@example.org"))
    with pytest.raises(TemporaryDeliveryError):
        channel.send(email(to="busy@example.org"))


def test_email_to_a_server_that_is_down_is_temporary():
    with pytest.raises(TemporaryDeliveryError):
        SmtpChannel("smtp://127.0.0.1:9", "status@example.org", timeout=1).send(email())


def test_without_provider_settings_messages_go_to_the_local_outbox(env, tmp_path):
    channels = build(Settings.from_env(env))
    assert isinstance(channels["email"], OutboxChannel) and isinstance(channels["sms"], OutboxChannel)
    channels["sms"].send(sms())
    [written] = read_outbox(tmp_path / "outbox")
    assert written["to"] == PARENT_PHONE and written["channel"] == "sms"


def test_with_provider_settings_real_channels_are_built(provider_env):
    channels = build(Settings.from_env(provider_env))
    assert isinstance(channels["email"], SmtpChannel) and isinstance(channels["sms"], TwilioChannel)


def test_a_single_email_outside_a_batch_closes_its_connection(smtp_server):
    inbox, url = smtp_server
    channel = SmtpChannel(url, "status@example.org")
    channel.send(email())
    assert len(inbox.envelopes) == 1
    assert channel._connection is None
