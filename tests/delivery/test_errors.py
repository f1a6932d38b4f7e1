"""Every provider refusal says whose fault it is, tested with the codes that belong to each class (real `twilio`
SDK against the Twilio-shaped server; real SMTP server on loopback)."""

from __future__ import annotations

import pytest

from notifier.delivery.channels import Message
from notifier.delivery.channels.email import SmtpChannel
from notifier.delivery.channels.sms import TwilioChannel
from notifier.errors import (
    AccountError,
    MessageError,
    RecipientError,
    TemporaryDeliveryError,
    UncertainDeliveryError,
)
from tests.conftest import ACCOUNT_SID, AUTH_TOKEN, SERVICE_NUMBER

PHONE = "+16135550123"
EMAIL = "parent@example.org"


def sms() -> Message:
    return Message(channel="sms", to=PHONE, text="TDSB: schools closed Monday.", reference="digest-1")


def email(**overrides) -> Message:
    fields = {"channel": "email", "to": EMAIL, "text": "Plain", "subject": "Closed", "reference": "digest-1"}
    return Message(**{**fields, **overrides})


@pytest.fixture
def twilio(twilio_server) -> TwilioChannel:
    return TwilioChannel(ACCOUNT_SID, AUTH_TOKEN, from_number=SERVICE_NUMBER, api_base_url=twilio_server.url,
                         timeout=5)


@pytest.mark.parametrize("status, code", [
    (401, 20003),  # authentication
    (400, 21606),  # From is not an SMS-capable number of this account
    (400, 21212),  # invalid From
    (400, 21608),  # trial account: To not verified
    (400, 30002),  # account suspended
    (404, 20404),  # no such account: the Messages URL is not found
    (403, None),
])
def test_account_and_configuration_refusals_are_the_accounts_fault(twilio, twilio_server, status, code):
    twilio_server.always(PHONE, status, code)
    with pytest.raises(AccountError):
        twilio.send(sms())


def test_a_wrong_auth_token_is_the_accounts_fault_not_the_recipients(twilio, twilio_server):
    twilio_server.auth_token = "rotated-token"
    with pytest.raises(AccountError) as caught:
        twilio.send(sms())
    assert caught.value.code == 20003


@pytest.mark.parametrize("code", [21211, 21614, 21612, 21610, 21408])
def test_recipient_refusals_are_the_recipients_fault_with_their_code(twilio, twilio_server, code):
    twilio_server.always(PHONE, 400, code)
    with pytest.raises(RecipientError) as caught:
        twilio.send(sms())
    assert caught.value.code == code


@pytest.mark.parametrize("status, code", [(429, 20429), (429, None), (400, 30001), (400, 21611)])
def test_provider_push_back_is_temporary_and_slows_down(twilio, twilio_server, status, code):
    twilio_server.always(PHONE, status, code)
    with pytest.raises(TemporaryDeliveryError) as caught:
        twilio.send(sms())
    assert caught.value.pushback


@pytest.mark.parametrize("status, code", [(500, None), (503, None), (400, 29999)])
def test_server_errors_and_unknown_codes_are_temporary_and_blame_nobody(twilio, twilio_server, status, code):
    twilio_server.always(PHONE, status, code)
    with pytest.raises(TemporaryDeliveryError) as caught:
        twilio.send(sms())
    assert not isinstance(caught.value, RecipientError | AccountError) and not caught.value.pushback


@pytest.mark.parametrize("code", [21617, 30007])
def test_a_refused_message_body_fails_that_message_alone(twilio, twilio_server, code):
    twilio_server.always(PHONE, 400, code)
    with pytest.raises(MessageError):
        twilio.send(sms())


def test_a_read_timeout_is_uncertain_the_text_may_be_at_twilio(twilio_server):
    channel = TwilioChannel(ACCOUNT_SID, AUTH_TOKEN, from_number=SERVICE_NUMBER, api_base_url=twilio_server.url,
                            timeout=0.3)
    twilio_server.delay = 1.0
    with pytest.raises(UncertainDeliveryError):
        channel.send(sms())


def test_a_refused_connection_is_temporary_and_certain():
    channel = TwilioChannel(ACCOUNT_SID, AUTH_TOKEN, from_number=SERVICE_NUMBER, api_base_url="http://127.0.0.1:9",
                            timeout=1)
    with pytest.raises(TemporaryDeliveryError) as caught:
        channel.send(sms())
    assert not isinstance(caught.value, UncertainDeliveryError)


@pytest.mark.parametrize("reply, fault", [
    ("550 5.1.1 No such user", RecipientError),
    ("553 5.1.3 Mailbox name not allowed", RecipientError),
    ("551 5.1.6 User not local", RecipientError),
    ("550 5.7.1 Relaying denied", AccountError),
    ("554 5.7.1 Relay access denied", AccountError),
    ("530 5.7.0 Authentication required", AccountError),
    ("451 4.3.0 Try again later", TemporaryDeliveryError),
    ("452 4.2.2 Mailbox full", TemporaryDeliveryError),
])
def test_smtp_refusals_of_a_recipient_say_whose_fault_they_are(smtp_server, reply, fault):
    inbox, url = smtp_server
    inbox.refusals[EMAIL] = reply
    with pytest.raises(fault) as caught:
        SmtpChannel(url, "status@example.org").send(email())
    assert type(caught.value) is fault


@pytest.mark.parametrize("code", [421, 451])
def test_smtp_421_and_451_push_back(smtp_server, code):
    inbox, url = smtp_server
    inbox.refusals[EMAIL] = f"{code} 4.7.0 Slow down"
    with pytest.raises(TemporaryDeliveryError) as caught:
        SmtpChannel(url, "status@example.org").send(email())
    assert caught.value.pushback


def test_an_smtp_server_refusing_our_sender_is_the_accounts_fault(smtp_server):
    inbox, url = smtp_server

    async def refuse_sender(server, session, envelope, address, options):
        return "550 5.7.1 Sender address rejected: not owned by user"

    inbox.handle_MAIL = refuse_sender
    with pytest.raises(AccountError):
        SmtpChannel(url, "status@example.org").send(email())


def test_an_email_that_cannot_be_built_fails_alone(smtp_server):
    _, url = smtp_server
    with pytest.raises(MessageError):
        SmtpChannel(url, "status@example.org").send(email(subject="Closed\nBcc: everyone@example.org"))
