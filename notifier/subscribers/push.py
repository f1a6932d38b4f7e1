"""Web Push subscriptions: one browser on one device, following boards in a language, as a contact like any other.

A subscription is a `Contact` on the "push" channel (so digests, priorities, the outbox and consent work for it as
for email and texts) plus a `PushSubscription` row holding what the browser gave: the endpoint (a capability URL:
whoever holds it can post to that browser, so it is never logged and the contact's address is only its keyed
hash) and the two keys the payload is encrypted to (RFC 8291: `p256dh`, a P-256 point, and `auth`, 16 bytes).

The browser's permission prompt is the confirmation: a stored subscription is active at once, with consent "given"
and "confirmed" recorded. Posting the same endpoint again replaces its boards and language; deleting it opts the
contact out and forgets the keys, so nothing is sent to it afterwards. Validation stores nothing when any field is
wrong and names the field (`subscription.keys.p256dh`, `boards.tdsb`, …).
"""

from __future__ import annotations

import base64
import binascii
import hashlib
from collections.abc import Iterable, Mapping
from dataclasses import dataclass
from datetime import datetime, timedelta
from typing import Any

from sqlalchemy import ForeignKey, Integer, String, Text, delete, select
from sqlalchemy.orm import Mapped, Session, mapped_column

from notifier.db import Base, UtcDateTime, utcnow
from notifier.i18n import LANGUAGES
from notifier.status.boards import Panel
from notifier.subscribers import consent, push_endpoints
from notifier.subscribers.contacts import activate, find_contact, mark_opted_out
from notifier.subscribers.models import Contact, ContactStatus, Subscriber
from notifier.subscribers.push_endpoints import EndpointError
from notifier.subscribers.signup import set_follows

PUSH = "push"
PANELS = tuple(p.value for p in Panel)
EXPIRE_DAYS = 270  # Safari and Chrome let an unused subscription lapse; one unused this long is dropped


class PushSubscriptionError(Exception):
    """The request cannot be accepted; `field` names what is wrong (the JSON path), `reason` says how."""

    def __init__(self, field: str, reason: str) -> None:
        self.field, self.reason = field, reason
        super().__init__(f"{field}: {reason}")


class PushSubscription(Base):
    """What one browser gave when it subscribed: where to post, and the keys to encrypt to."""

    __tablename__ = "push_subscriptions"
    __table_args__ = {"sqlite_autoincrement": True}

    id: Mapped[int] = mapped_column(Integer, primary_key=True)
    contact_id: Mapped[int] = mapped_column(ForeignKey("contacts.id", ondelete="CASCADE"), unique=True)
    endpoint_hash: Mapped[str] = mapped_column(String(64), unique=True)  # plain SHA-256: finds it by endpoint
    endpoint: Mapped[str] = mapped_column(Text)
    p256dh: Mapped[str] = mapped_column(String(128))  # base64url, as the browser gave it
    auth: Mapped[str] = mapped_column(String(64))
    created_at: Mapped[datetime] = mapped_column(UtcDateTime, default=utcnow)
    updated_at: Mapped[datetime] = mapped_column(UtcDateTime, default=utcnow)


@dataclass(frozen=True)
class PushRequest:
    """A valid subscription request: the browser's subscription, the (board, panel) pairs, the language."""

    endpoint: str
    p256dh: str
    auth: str
    follows: list[tuple[str, str]]
    language: str


def b64decode(value: str) -> bytes:
    """base64url with or without padding (browsers give it without)."""
    return base64.urlsafe_b64decode(value + "=" * (-len(value) % 4))


def parse(body: Any, boards: Iterable[str], allowed: Iterable[str]) -> PushRequest:
    """A `PushRequest` from the posted JSON, or `PushSubscriptionError` naming the first wrong field."""
    if not isinstance(body, dict):
        raise PushSubscriptionError("body", "expected a JSON object")
    subscription = body.get("subscription")
    if not isinstance(subscription, dict):
        raise PushSubscriptionError("subscription", "expected an object with endpoint and keys")
    endpoint = subscription.get("endpoint")
    try:
        push_endpoints.check(endpoint, allowed)
    except EndpointError as error:
        raise PushSubscriptionError("subscription.endpoint", str(error)) from None
    keys = subscription.get("keys")
    if not isinstance(keys, dict):
        raise PushSubscriptionError("subscription.keys", "expected an object with p256dh and auth")
    p256dh = _key(keys, "p256dh", 65)
    if not _on_curve(b64decode(p256dh)):
        raise PushSubscriptionError("subscription.keys.p256dh", "not a P-256 public key")
    auth = _key(keys, "auth", 16)
    follows = parse_boards(body.get("boards"), set(boards))
    language = body.get("language", "en")
    if language not in LANGUAGES:
        raise PushSubscriptionError("language", f"expected one of {', '.join(LANGUAGES)}")
    return PushRequest(str(endpoint), p256dh, auth, follows, language)  # a str: checked above


def parse_boards(value: Any, known: set[str]) -> list[tuple[str, str]]:
    """(board, panel) pairs from {"board id": ["elementary", "secondary"]}; every board known, every panel real."""
    if not isinstance(value, dict) or not value:
        raise PushSubscriptionError("boards", "expected an object of board id to panels")
    follows: list[tuple[str, str]] = []
    for board_id, panels in value.items():
        if board_id not in known:
            raise PushSubscriptionError(f"boards.{str(board_id)[:40]}", "unknown board")
        if not isinstance(panels, list) or not panels or any(p not in PANELS for p in panels):
            raise PushSubscriptionError(f"boards.{board_id}", f"expected a list of panels: {', '.join(PANELS)}")
        follows.extend((board_id, p) for p in dict.fromkeys(panels))
    return follows


def _key(keys: Mapping[str, Any], name: str, length: int) -> str:
    value = keys.get(name)
    try:
        if not isinstance(value, str) or len(value) > 200 or len(b64decode(value)) != length:
            raise ValueError
    except (ValueError, binascii.Error):
        raise PushSubscriptionError(f"subscription.keys.{name}", f"expected {length} bytes, base64url") from None
    return value


def _on_curve(point: bytes) -> bool:
    from cryptography.hazmat.primitives.asymmetric import ec

    try:
        ec.EllipticCurvePublicKey.from_encoded_point(ec.SECP256R1(), point)
    except ValueError:
        return False
    return True


def endpoint_hash(endpoint: str) -> str:
    """How a subscription is found by its endpoint (a DELETE names it)."""
    return hashlib.sha256(endpoint.encode("utf-8")).hexdigest()


def address_of(session: Session, endpoint: str) -> str:
    """The push contact's address: the endpoint's keyed hash (consent rows hash it again, like any address)."""
    return "wp-" + consent.address_hash(session, endpoint)[:40]


def find(session: Session, address: str) -> PushSubscription | None:
    """The subscription behind a push contact's address (None once it was deleted)."""
    return session.scalars(select(PushSubscription).join(Contact, Contact.id == PushSubscription.contact_id)
                           .where(Contact.channel == PUSH, Contact.address == address)).first()


def store(session: Session, request: PushRequest, source: str, now: datetime | None = None) -> bool:
    """Store or update the subscription, active at once; True when it is new (a new endpoint, or one that had
    been deleted), False when an active one had its boards and language replaced. The caller commits."""
    now = now or utcnow()
    address = address_of(session, request.endpoint)
    row = session.scalars(select(PushSubscription)
                          .where(PushSubscription.endpoint_hash == endpoint_hash(request.endpoint))).first()
    contact = find_contact(session, PUSH, address)
    created = row is None or contact is None or contact.status != ContactStatus.ACTIVE.value
    if contact is None:
        subscriber = Subscriber(created_at=now)
        session.add(subscriber)
        contact = Contact(channel=PUSH, address=address, created_at=now)
        subscriber.contacts.append(contact)
    subscriber = contact.subscriber
    subscriber.language = request.language
    set_follows(subscriber, request.follows)
    if created:
        activate(session, contact, address, now)
        session.flush()
        for action in (consent.GIVEN, consent.CONFIRMED):
            consent.record(session, channel=PUSH, address=address, action=action, method="web-push", source=source,
                           subscriber_id=subscriber.id, language=request.language, now=now)
    session.flush()
    if row is None:
        row = PushSubscription(contact_id=contact.id, endpoint_hash=endpoint_hash(request.endpoint),
                               endpoint=request.endpoint, created_at=now)
        session.add(row)
    row.contact_id, row.p256dh, row.auth, row.updated_at = contact.id, request.p256dh, request.auth, now
    return created


def remove(session: Session, endpoint: str | None, source: str) -> bool:
    """The browser unsubscribed: opt the contact out (consent "withdrawn") and forget the endpoint and keys.
    False when there was no such subscription. The caller commits."""
    if not isinstance(endpoint, str) or not endpoint:
        raise PushSubscriptionError("endpoint", "expected the subscription's endpoint")
    row = session.scalars(select(PushSubscription)
                          .where(PushSubscription.endpoint_hash == endpoint_hash(endpoint))).first()
    if row is None:
        return False
    address = address_of(session, endpoint)
    session.delete(row)
    mark_opted_out(session, PUSH, address, "web-push", source)
    return True


def gone(session: Session, address: str) -> None:
    """The push service says the subscription no longer exists (404/410): forget its endpoint and keys at once.
    The contact itself is marked invalid by the sending code, like any address a provider refuses."""
    session.execute(delete(PushSubscription).where(PushSubscription.contact_id.in_(
        select(Contact.id).where(Contact.channel == PUSH, Contact.address == address))))


def expire(session: Session, used_since: Iterable[int | None], now: datetime | None = None,
           days: int = EXPIRE_DAYS) -> int:
    """Drop subscriptions not renewed for `days` whose contact is not in `used_since` (the contacts sent something
    in that time, which the caller reads from the outbox): browsers expire such subscriptions. Their contacts are
    marked invalid. Returns how many. The caller commits."""
    cutoff = (now or utcnow()) - timedelta(days=days)
    used = set(used_since)
    rows = session.scalars(select(PushSubscription).where(PushSubscription.updated_at < cutoff)).all()
    stale = [r for r in rows if r.contact_id not in used]
    for row in stale:
        contact = session.get(Contact, row.contact_id)
        if contact is not None and contact.status == ContactStatus.ACTIVE.value:
            contact.status, contact.status_changed_at = ContactStatus.INVALID.value, now or utcnow()
        session.delete(row)
    return len(stale)
