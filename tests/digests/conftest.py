"""Fixtures for digests and delivery: subscribers made directly with the tables, settings that send through the
loopback SMTP and Twilio-shaped servers as fast as they answer, and a cycle runner with a chosen time.
"""

from __future__ import annotations

import itertools
from datetime import UTC, datetime

import pytest
from sqlalchemy import select

from notifier import cycle
from notifier.clock import cycle_steps
from notifier.config import Settings
from notifier.history import latest_event_id
from notifier.outbox import OutboxRow
from notifier.subscriptions import Contact, Follow, Subscriber

NOW = datetime(2026, 11, 23, 17, 0, tzinfo=UTC)  # Monday 12:00 in Toronto: outside quiet hours
BOTH = ("elementary", "secondary")
_numbers = itertools.count(100)


def phone() -> str:
    """A fresh fictional Canadian mobile number (555-01XX)."""
    return f"+1613555{next(_numbers) % 10000:04d}"


def make_subscriber(session, **overrides) -> Subscriber:
    """A confirmed family following TDSB's both panels by email and SMS; override any part.

    Keys: language, notify_on_effect, email (None for no email), phone (None for no SMS), frequency (both contacts),
    email_frequency, sms_frequency, status, follows [(board, panel)], seen_event_id (default: the newest event).
    """
    number = next(_numbers)
    options = {
        "language": "en", "notify_on_effect": False, "email": f"parent{number}@example.org", "phone": phone(),
        "frequency": "immediate", "status": "active", "follows": [("tdsb", p) for p in BOTH],
        "seen_event_id": None,
    }
    options.update(overrides)
    seen = latest_event_id(session) if options["seen_event_id"] is None else options["seen_event_id"]
    subscriber = Subscriber(language=options["language"], notify_on_effect=options["notify_on_effect"])
    for channel, address in (("email", options["email"]), ("sms", options["phone"])):
        if address:
            frequency = options.get(f"{channel}_frequency") or options["frequency"]
            subscriber.contacts.append(Contact(channel=channel, address=address, status=options["status"],
                                               frequency=frequency, seen_event_id=seen))
    for board_id, panel in options["follows"]:
        subscriber.follows.append(Follow(board_id=board_id, panel=panel))
    session.add(subscriber)
    session.flush()
    return subscriber


@pytest.fixture
def subscribe(sessions):
    """Create a subscriber in its own transaction: `subscribe(**overrides)` returns (subscriber_id, email, phone)."""

    def create(**overrides):
        with sessions() as session, session.begin():
            subscriber = make_subscriber(session, **overrides)
            addresses = {c.channel: c.address for c in subscriber.contacts}
            return subscriber.id, addresses.get("email"), addresses.get("sms")

    return create


@pytest.fixture
def fast_env(provider_env) -> dict[str, str]:
    """Provider settings without the production rate limits (a long code's 1 text per second)."""
    return {**provider_env, "NOTIFIER_SMS_PER_SECOND": "1000", "NOTIFIER_EMAIL_PER_SECOND": "1000",
            "NOTIFIER_RETRY_BASE_SECONDS": "1"}


@pytest.fixture
def fast_settings(fast_env) -> Settings:
    return Settings.from_env(fast_env)


@pytest.fixture
def run(sessions, fast_settings):
    """Run one whole cycle (record, plan, deliver) at `now`: `run(now=NOW, settings=None, deliver=True)`."""

    def run_cycle(now: datetime = NOW, settings: Settings | None = None, deliver: bool = True):
        chosen = settings or fast_settings
        return cycle.run(sessions, str(chosen.boards_file), now=now, after_record=cycle_steps(chosen, deliver))

    return run_cycle


def outbox_rows(sessions) -> list[OutboxRow]:
    with sessions() as session:
        return list(session.scalars(select(OutboxRow).order_by(OutboxRow.id)))
