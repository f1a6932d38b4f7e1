"""Changing a subscription from its manage link: boards and panels, language, frequency, channels, or leaving.

The signed link is the only key, so what it can do is bounded: it changes this family's settings, stops its own
addresses, and may *add* an address only as pending (that address confirms it, like at sign-up). Another
family's address, pending, active or invalid, is never moved: it is only sent its own confirmation or manage link
again, and the page answers the same in every case.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass, field
from datetime import datetime

from sqlalchemy.orm import Session

from notifier.status.boards import Board
from notifier.subscribers import consent
from notifier.subscribers.addresses import EMAIL, SMS, ContactError, parse_email, parse_phone
from notifier.subscribers.contacts import find_contact, mark_opted_out
from notifier.subscribers.models import Contact, ContactStatus, Subscriber
from notifier.subscribers.signup import (
    FREQUENCIES,
    LANGUAGES,
    Signup,
    SignupError,
    Stored,
    attach_pending,
    parse_follows,
    set_follows,
)


@dataclass
class Changes:
    """What the manage form asks for (untrusted); `frequencies` and `stop` are keyed by contact id."""

    follows: list[tuple[str, list[str]]]
    language: str
    notify_on_effect: bool
    frequencies: dict[int, str] = field(default_factory=dict)
    stop: set[int] = field(default_factory=set)
    new_email: str = ""
    new_phone: str = ""
    new_frequency: str = "immediate"
    reminders: set[int] | None = None  # contacts whose morning-reminder box is ticked (None: the form had none)
    new_reminder: bool = False


def live_contacts(subscriber: Subscriber) -> list[Contact]:
    """The family's addresses that have not left (pending, active or invalid), email first."""
    return sorted((c for c in subscriber.contacts if c.status != ContactStatus.OPTED_OUT.value),
                  key=lambda c: (c.channel != EMAIL, c.id))


def validate(session: Session, subscriber: Subscriber, changes: Changes, boards: Mapping[str, Board]) -> Signup:
    """The follows and new addresses the form asks for, or `SignupError` with every problem."""
    errors: dict[str, str] = {}
    follows = parse_follows(changes.follows, boards, errors)
    if not follows and not errors:
        errors["board-0"] = "board_missing"
    if changes.language not in LANGUAGES:
        errors["language"] = "language_unknown"
    if any(f not in FREQUENCIES for f in [*changes.frequencies.values(), changes.new_frequency]):
        errors["frequency"] = "frequency_unknown"
    addresses: list[tuple[str, str, str]] = []
    withheld: list[tuple[str, str, str]] = []
    for name, raw, parse, channel in (("email", changes.new_email, parse_email, EMAIL),
                                      ("phone", changes.new_phone, parse_phone, SMS)):
        if raw.strip():
            try:
                address = parse(raw)
            except ContactError as error:
                errors[name] = error.code
                continue
            # A number that texted STOP is answered like any other (its history is not told), and not written to.
            withdrawn = channel == SMS and consent.has_withdrawn(session, SMS, address)
            (withheld if withdrawn else addresses).append((channel, address, changes.new_frequency))
    if errors:
        raise SignupError(errors)
    reminders = frozenset((EMAIL, SMS)) if changes.new_reminder else frozenset()
    return Signup(addresses, follows, changes.language, changes.notify_on_effect, withheld=withheld,
                  reminders=reminders)


def apply(session: Session, subscriber: Subscriber, changes: Changes, valid: Signup, now: datetime,
          source: str) -> Stored:
    """Apply validated changes; returns the contacts to send their confirmation (new ones, and another family's
    pending ones) and other families' active contacts (sent their manage link), as `signup.store` does."""
    subscriber.language = valid.language
    subscriber.notify_on_effect = valid.notify_on_effect
    set_follows(subscriber, valid.follows)
    contact: Contact | None
    for contact in live_contacts(subscriber):
        if contact.id in changes.stop:
            mark_opted_out(session, contact.channel, contact.address, "web", source)
            continue
        if contact.id in changes.frequencies:
            contact.frequency = changes.frequencies[contact.id]
        if changes.reminders is not None:
            contact.morning_reminder = contact.id in changes.reminders
    stored = Stored([], [])
    for channel, address, frequency in valid.addresses:
        contact = find_contact(session, channel, address)
        if contact is not None and contact.status != ContactStatus.OPTED_OUT.value:
            if contact.subscriber_id == subscriber.id:
                continue  # already one of ours
            # Another family's address stays theirs, whatever its state: a pending one is only sent its own
            # confirmation again (to join *their* family), an active one its manage link, an invalid one nothing.
            if contact.status == ContactStatus.PENDING.value:
                stored.to_confirm.append(contact)
            elif contact.status == ContactStatus.ACTIVE.value:
                stored.already_active.append(contact)
            continue
        contact = attach_pending(session, subscriber, contact, (channel, address, frequency), now, "web", source)
        contact.morning_reminder = channel in valid.reminders
        stored.to_confirm.append(contact)
    return stored


def leave(session: Session, subscriber: Subscriber, source: str, method: str = "web") -> None:
    """Stop every address of the family (their addresses are erased; consent records stay)."""
    for contact in live_contacts(subscriber):
        mark_opted_out(session, contact.channel, contact.address, method, source)
