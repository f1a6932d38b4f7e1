"""Signing up: check what a parent typed, store it as pending, and confirm it (double opt-in) before anything else.

Nothing here lets one person change another's subscription: an address that is already active is left as it is
(its owner gets their manage link instead), a pending one is never changed (it is only sent its confirmation
again), and an invalid one stays in its family while that family has another active address. The answer never
tells an address's history: a number that once texted STOP is answered like any other (and not texted, nor
stored). Limits count an address however it is spelled (`addresses.limit_key`). Validation reports every problem
at once, as field -> code, and stores nothing when there is any.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass, field
from datetime import datetime, timedelta

from sqlalchemy import delete, select
from sqlalchemy.orm import Session

from notifier.config import Settings
from notifier.errors import NotifierError
from notifier.status.boards import Board, Panel
from notifier.subscribers import consent, ratelimit
from notifier.subscribers.addresses import EMAIL, SMS, ContactError, limit_key, parse_email, parse_phone
from notifier.subscribers.contacts import activate, find_contact
from notifier.subscribers.models import Contact, ContactStatus, Follow, Frequency, Subscriber

LANGUAGES = ("en", "fr")
FREQUENCIES = tuple(f.value for f in Frequency)
PANELS = tuple(p.value for p in Panel)
UNCONFIRMED_DAYS = 7
HOUR, DAY = 3600, 24 * 3600


class SignupError(NotifierError):
    """The form cannot be accepted; `errors` maps a field name to an error code (see templates/subscribe)."""

    def __init__(self, errors: dict[str, str]) -> None:
        self.errors = errors
        super().__init__(", ".join(f"{k}: {v}" for k, v in errors.items()))


@dataclass
class SignupForm:
    """What the parent typed, untrusted. `follows` holds (board id, [panels]) rows; empty rows are ignored."""

    follows: list[tuple[str, list[str]]] = field(default_factory=list)
    email: str = ""
    phone: str = ""
    language: str = "en"
    email_frequency: str = Frequency.IMMEDIATE.value
    sms_frequency: str = Frequency.IMMEDIATE.value
    notify_on_effect: bool = False
    email_reminder: bool = False
    sms_reminder: bool = False


@dataclass
class Signup:
    """A valid sign-up: addresses as (channel, address, frequency) and follows as (board id, panel).

    `withheld` are addresses that must not be written to (a number that texted STOP): neither stored nor sent
    anything, yet answered and rate-limited like the others, so the answer does not tell their history.
    """

    addresses: list[tuple[str, str, str]]
    follows: list[tuple[str, str]]
    language: str
    notify_on_effect: bool
    withheld: list[tuple[str, str, str]] = field(default_factory=list)
    reminders: frozenset[str] = frozenset()  # the channels whose new addresses get morning reminders

    @property
    def channels(self) -> list[str]:
        """Every channel the parent gave, withheld ones included (what the "check your messages" page names)."""
        return sorted({channel for channel, _, _ in self.addresses + self.withheld})


@dataclass
class Stored:
    """What `store` did: contacts now waiting for their confirmation, and contacts that were already active."""

    to_confirm: list[Contact]
    already_active: list[Contact]


def parse_follows(rows: list[tuple[str, list[str]]], boards: Mapping[str, Board], errors: dict[str, str],
                  prefix: str = "board") -> list[tuple[str, str]]:
    """(board, panel) pairs from form rows; fills `errors` for unknown boards, panels, or rows without a panel."""
    follows: list[tuple[str, str]] = []
    for index, (board_id, panels) in enumerate(rows):
        board_id = (board_id or "").strip()
        if not board_id:
            continue
        if board_id not in boards:
            errors[f"{prefix}-{index}"] = "board_unknown"
            continue
        if not panels:
            errors[f"{prefix}-{index}"] = "panel_missing"
        elif any(p not in PANELS for p in panels):
            errors[f"{prefix}-{index}"] = "panel_unknown"
        else:
            follows.extend((board_id, p) for p in panels if (board_id, p) not in follows)
    return follows


def validate(session: Session, form: SignupForm, boards: Mapping[str, Board]) -> Signup:
    """A `Signup` from the form, or `SignupError` naming every field that is wrong."""
    errors: dict[str, str] = {}
    follows = parse_follows(form.follows, boards, errors)
    if not follows and not errors:
        errors["board-0"] = "board_missing"
    addresses: list[tuple[str, str, str]] = []
    withheld: list[tuple[str, str, str]] = []
    if not form.email.strip() and not form.phone.strip():
        errors["channel"] = "channel_missing"
    if form.email.strip():
        try:
            addresses.append((EMAIL, parse_email(form.email), _frequency(form.email_frequency, errors, "email")))
        except ContactError as error:
            errors["email"] = error.code
    if form.phone.strip():
        try:
            phone = parse_phone(form.phone)
            entry = (SMS, phone, _frequency(form.sms_frequency, errors, "phone"))
            (withheld if consent.has_withdrawn(session, SMS, phone) else addresses).append(entry)
        except ContactError as error:
            errors["phone"] = error.code
    if form.language not in LANGUAGES:
        errors["language"] = "language_unknown"
    if errors:
        raise SignupError(errors)
    reminders = frozenset(channel for channel, wanted in ((EMAIL, form.email_reminder), (SMS, form.sms_reminder))
                          if wanted)
    return Signup(addresses, follows, form.language, form.notify_on_effect, withheld=withheld, reminders=reminders)


def _frequency(value: str, errors: dict[str, str], name: str) -> str:
    if value not in FREQUENCIES:
        errors[f"{name}_frequency"] = "frequency_unknown"
    return value


def within_limits(session: Session, settings: Settings, signup: Signup, now: datetime,
                  scope: str = "signup") -> str | None:
    """None when the sign-up may go ahead, else the error code of the limit it hit (per address, SMS cap).

    Withheld addresses count too (answered alike), and each address is counted by its `limit_key`.
    """
    given = signup.addresses + signup.withheld
    for channel, address, _ in given:
        key = f"{scope}:{channel}:{consent.address_hash(session, limit_key(channel, address))[:32]}"
        if not ratelimit.allow(session, key, settings.signup_limit_per_contact, DAY, now):
            return "too_many_for_address"
    if any(channel == SMS for channel, _, _ in given):
        if not ratelimit.allow(session, "confirm-sms:global", settings.confirmation_sms_per_hour, HOUR, now):
            return "sms_busy"
    return None


def store(session: Session, signup: Signup, now: datetime, source: str, method: str = "web") -> Stored:
    """Store the sign-up as pending (consent "given"); active and pending addresses are left untouched (a pending
    one is only sent its confirmation again: a stranger must not rewrite it before its owner confirms).

    An invalid address (refused by its provider) is left in its family, and sent nothing, while that family has
    another active address; in a family we reach no longer, it starts afresh like a new address."""
    subscriber: Subscriber | None = None
    stored = Stored([], [])
    for channel, address, frequency in signup.addresses:
        contact = find_contact(session, channel, address)
        if contact is not None and contact.status == ContactStatus.ACTIVE.value:
            stored.already_active.append(contact)
            continue
        if contact is not None and contact.status == ContactStatus.PENDING.value:
            stored.to_confirm.append(contact)
            continue
        if contact is not None and contact.status == ContactStatus.INVALID.value and _reaches_others(contact):
            continue  # a live family's address: only they may bring it back (nothing sent, the answer is the same)
        if subscriber is None:
            subscriber = Subscriber(created_at=now)
            session.add(subscriber)
            subscriber.language, subscriber.notify_on_effect = signup.language, signup.notify_on_effect
            set_follows(subscriber, signup.follows)
        contact = attach_pending(session, subscriber, contact, (channel, address, frequency), now, method, source)
        contact.morning_reminder = channel in signup.reminders
        stored.to_confirm.append(contact)
    return stored


def _reaches_others(contact: Contact) -> bool:
    """Whether the contact's family still hears from us through another, active, address."""
    return any(other is not contact and other.status == ContactStatus.ACTIVE.value
               for other in contact.subscriber.contacts)


def attach_pending(session: Session, subscriber: Subscriber, contact: Contact | None,
                   address: tuple[str, str, str], now: datetime, method: str, source: str) -> Contact:
    """Put (channel, address, frequency) under `subscriber` as pending, moving a contact that was not active
    (pending, invalid, or an email that left and comes back) from wherever it was; records consent "given"."""
    channel, text, frequency = address
    if contact is None:
        contact = Contact(channel=channel, address=text)
        subscriber.contacts.append(contact)
    elif contact.subscriber is not subscriber:
        previous = contact.subscriber
        contact.subscriber = subscriber
        session.flush()
        if not previous.contacts:
            session.delete(previous)
    contact.address, contact.frequency = text, frequency
    contact.status, contact.created_at, contact.status_changed_at = ContactStatus.PENDING.value, now, now
    session.flush()
    consent.record(session, channel=channel, address=text, action=consent.GIVEN, method=method, source=source,
                   subscriber_id=subscriber.id, language=subscriber.language, now=now)
    return contact


def set_follows(subscriber: Subscriber, follows: list[tuple[str, str]]) -> None:
    """Make the family follow exactly these (board, panel) pairs, keeping the rows that stay."""
    wanted = set(follows)
    for follow in list(subscriber.follows):
        if (follow.board_id, follow.panel) not in wanted:
            subscriber.follows.remove(follow)
    have = {(f.board_id, f.panel) for f in subscriber.follows}
    subscriber.follows.extend(Follow(board_id=b, panel=p) for b, p in follows if (b, p) not in have)


def confirm(session: Session, contact: Contact, now: datetime, method: str, source: str) -> bool:
    """Confirm a pending contact (double opt-in done): True if it became active now, False if it already was."""
    if contact.status == ContactStatus.ACTIVE.value:
        return False
    activate(session, contact, contact.address, now)
    consent.record(session, channel=contact.channel, address=contact.address, action=consent.CONFIRMED,
                   method=method, source=source, subscriber_id=contact.subscriber_id,
                   language=contact.subscriber.language, now=now)
    return True


def purge_unconfirmed(session: Session, now: datetime, days: int = UNCONFIRMED_DAYS) -> int:
    """Delete sign-ups left unconfirmed for `days` (their consent rows stay); returns how many contacts went."""
    cutoff = now - timedelta(days=days)
    stale = list(session.scalars(
        select(Contact).where(Contact.status == ContactStatus.PENDING.value, Contact.created_at < cutoff)
    ))
    owners = {c.subscriber_id for c in stale}
    for contact in stale:
        session.delete(contact)
    session.flush()
    if owners:
        alive = set(session.scalars(select(Contact.subscriber_id).where(Contact.subscriber_id.in_(owners))))
        if owners - alive:
            session.execute(delete(Subscriber).where(Subscriber.id.in_(owners - alive)))
    return len(stale)
