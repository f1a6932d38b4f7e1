"""A whole fan-out across real processes, for the fault-injection tests: subscribers planted, boards.yaml edited,
clock and workers started from the Procfile against the fake Twilio and the fake SMTP server, and the reckoning of
who got what (texts counted at the fake Twilio, emails by distinct Message-ID at the fake SMTP server)."""

from __future__ import annotations

import time
from collections import Counter
from collections.abc import Callable
from dataclasses import dataclass

import pytest
from sqlalchemy import func, select
from sqlalchemy.engine import make_url

from notifier.delivery.outbox import OutboxRow
from notifier.status import cycle
from tests.conftest import ACCOUNT_SID, AUTH_TOKEN, SERVICE_NUMBER, make_subscriber


@dataclass
class Audience:
    phones: set[str]
    emails: set[str]


def require_postgresql(database_url: str) -> None:
    if make_url(database_url).get_backend_name() != "postgresql":
        pytest.skip("needs PostgreSQL: set NOTIFIER_DATABASE_URL=postgresql://…")


def plant(sessions, boards_file, families: int, chunk: int = 500) -> Audience:
    """Record the file as it is (the baseline), then `families` parents following TDSB by email and SMS."""
    cycle.run(sessions, str(boards_file), follow=True)
    phones, emails = set(), set()
    for start in range(0, families, chunk):
        with sessions() as session, session.begin():
            for _ in range(min(chunk, families - start)):
                person = make_subscriber(session)
                phones |= {c.address for c in person.contacts if c.channel == "sms"}
                emails |= {c.address for c in person.contacts if c.channel == "email"}
    return Audience(phones, emails)


def process_env(env: dict[str, str], smtp_url: str, twilio_url: str, **extra: str) -> dict[str, str]:
    """Settings for clock and worker processes: fast rates and retries, short provider timeouts."""
    return {
        **env,
        "NOTIFIER_SMTP_URL": smtp_url,
        "NOTIFIER_MAIL_FROM": "School status <status@example.org>",
        "TWILIO_ACCOUNT_SID": ACCOUNT_SID,
        "TWILIO_AUTH_TOKEN": AUTH_TOKEN,
        "TWILIO_FROM_NUMBER": SERVICE_NUMBER,
        "TWILIO_API_BASE_URL": twilio_url,
        "TWILIO_TIMEOUT": "1",
        "NOTIFIER_SMS_PER_SECOND": "1000",
        "NOTIFIER_EMAIL_PER_SECOND": "1000",
        "NOTIFIER_RETRY_BASE_SECONDS": "0.5",
        "NOTIFIER_CHECK_INTERVAL": "1",
        **extra,
    }


def texts(twilio_server) -> Counter:
    return Counter(m["to"] for m in list(twilio_server.messages))


def emails(smtp) -> dict[str, set[str]]:
    """Recipient -> the distinct Message-IDs received (a resend with the same Message-ID is one email)."""
    seen: dict[str, set[str]] = {}
    for received in list(smtp.received):
        for recipient in received.rcpt_tos:
            seen.setdefault(recipient, set()).add(received.message_id)
    return seen


def delivered(twilio_server, smtp) -> int:
    return len(texts(twilio_server)) + len(emails(smtp))


def outbox_left(sessions) -> dict[str, int]:
    """Rows per status, for what is still to settle."""
    with sessions() as session:
        return dict(session.execute(select(OutboxRow.status, func.count()).group_by(OutboxRow.status)).all())


def wait_until(condition: Callable[[], bool], seconds: float, what: Callable[[], str]) -> None:
    deadline = time.monotonic() + seconds
    while not condition():
        if time.monotonic() > deadline:
            raise TimeoutError(f"not done in {seconds} s: {what()}")
        time.sleep(0.5)


def settled(sessions, audience: Audience) -> Callable[[], bool]:
    """True once every planned row is sent (none pending, in flight or failed) and as many as the audience."""

    def check() -> bool:
        left = outbox_left(sessions)
        return set(left) == {"sent"} and left["sent"] >= len(audience.phones) + len(audience.emails)

    return check


def assert_each_reached_once(audience: Audience, twilio_server, smtp) -> None:
    counted = texts(twilio_server)
    doubled = {to: n for to, n in counted.items() if n > 1}
    assert not doubled, f"{len(doubled)} number(s) texted more than once"
    assert set(counted) == audience.phones, f"{len(audience.phones - set(counted))} number(s) never texted"
    mailed = emails(smtp)
    doubled = {to: ids for to, ids in mailed.items() if len(ids) > 1}
    assert not doubled, f"{len(doubled)} address(es) sent more than one email"
    assert set(mailed) == audience.emails, f"{len(audience.emails - set(mailed))} address(es) never emailed"
