"""The fake SMTP server records what smtplib sends and fails the ways relays fail: down, refusing a recipient,
pushing back a whole session, demanding authentication."""

from __future__ import annotations

import smtplib
import subprocess
import sys
from email.message import EmailMessage

import pytest

from tests.fakes.smtp_server import FakeSmtp, SmtpControl
from tests.support.processes import ROOT


@pytest.fixture
def fake():
    fake = FakeSmtp().start()
    yield fake
    fake.stop()


def mail(to: str = "parent@example.org", message_id: str = "<digest-1.contact-1@example.org>") -> EmailMessage:
    message = EmailMessage()
    message["From"] = "status@example.org"
    message["To"] = to
    message["Subject"] = "Écoles fermées"
    message["Message-ID"] = message_id
    message.set_content("Closed.")
    return message


def send(fake: FakeSmtp, *messages: EmailMessage, login: tuple[str, str] | None = None) -> None:
    with smtplib.SMTP(fake.host, fake.port, timeout=5) as client:
        if login:
            client.login(*login)
        for message in messages:
            client.send_message(message)


def test_messages_are_recorded_with_envelope_and_message_id(fake):
    send(fake, mail())
    [received] = fake.received
    assert received.rcpt_tos == ["parent@example.org"]
    assert received.message_id == "<digest-1.contact-1@example.org>"
    assert fake.messages()[0]["Subject"] == "Écoles fermées"


def test_stats_count_recipients_distinct_ids_and_duplicates(fake):
    send(fake, mail(), mail(), mail(to="other@example.org", message_id="<digest-1.contact-2@example.org>"))
    stats = fake.stats()
    assert stats["per_recipient"] == {"parent@example.org": 2, "other@example.org": 1}
    assert stats["message_ids"] == 2
    assert stats["duplicates"] == [
        {"recipient": "parent@example.org", "message_id": "<digest-1.contact-1@example.org>", "count": 2}]


def test_a_down_server_refuses_connections_and_accepts_again_when_up(fake):
    fake.down()
    with pytest.raises(ConnectionRefusedError):
        send(fake, mail())
    fake.up()
    send(fake, mail())
    assert len(fake.received) == 1


@pytest.mark.parametrize("code", [550, 551, 452])
def test_a_refused_recipient_gets_its_code_and_others_still_get_mail(fake, code):
    fake.refuse("gone@example.org", code)
    with pytest.raises(smtplib.SMTPRecipientsRefused) as refused:
        send(fake, mail(to="gone@example.org"))
    assert refused.value.recipients["gone@example.org"][0] == code
    send(fake, mail())
    assert [r.rcpt_tos for r in fake.received] == [["parent@example.org"]]


def test_421_on_connect_pushes_every_session_back_until_cleared(fake):
    fake.answer("connect", 421)
    with pytest.raises(smtplib.SMTPConnectError) as refused:
        send(fake, mail())
    assert refused.value.smtp_code == 421
    fake.answer("connect", None)
    send(fake, mail())
    assert len(fake.received) == 1


def test_421_on_mail_closes_the_session(fake):
    fake.answer("mail", 421)
    with pytest.raises((smtplib.SMTPSenderRefused, smtplib.SMTPServerDisconnected)) as refused:
        send(fake, mail())
    assert getattr(refused.value, "smtp_code", 421) == 421
    assert fake.received == []


def test_451_on_rcpt_refuses_every_recipient_temporarily(fake):
    fake.answer("rcpt", 451)
    with pytest.raises(smtplib.SMTPRecipientsRefused) as refused:
        send(fake, mail())
    assert refused.value.recipients["parent@example.org"][0] == 451


def test_when_auth_is_required_mail_without_it_gets_530(fake):
    fake.require_auth("relay", "right")
    with pytest.raises(smtplib.SMTPSenderRefused) as refused:
        send(fake, mail())
    assert refused.value.smtp_code == 530


def test_a_wrong_password_gets_535_and_the_right_one_sends(fake):
    fake.require_auth("relay", "right")
    with pytest.raises(smtplib.SMTPAuthenticationError) as refused:
        send(fake, mail(), login=("relay", "wrong"))
    assert refused.value.smtp_code == 535
    send(fake, mail(), login=("relay", "right"))
    assert len(fake.received) == 1


def test_the_standalone_server_is_driven_through_its_control_port():
    process = subprocess.Popen([sys.executable, "-m", "tests.fakes.smtp_server"], cwd=ROOT,
                               stdout=subprocess.PIPE, text=True)
    try:
        host, _, port = process.stdout.readline().split()[-1].rpartition(":")
        control = SmtpControl(process.stdout.readline().split()[-1])
        fake = FakeSmtp(port=int(port), host=host)  # only to reuse send(): not started
        send(fake, mail())
        control.refuse("gone@example.org", 550)
        with pytest.raises(smtplib.SMTPRecipientsRefused):
            send(fake, mail(to="gone@example.org"))
        control.down()
        with pytest.raises(ConnectionRefusedError):
            send(fake, mail())
        control.up()
        send(fake, mail())
        assert control.stats()["per_recipient"] == {"parent@example.org": 2}
        assert [m["subject"] for m in control.messages()] == ["Écoles fermées"] * 2
    finally:
        process.terminate()
        process.wait(timeout=10)
    assert process.returncode == 0
