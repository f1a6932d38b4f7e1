"""Consent evidence (CASL puts the onus of proof on the sender): when, how and from where consent was given,
confirmed and withdrawn, kept after the contact itself is gone.

Addresses are never stored in consent rows: only a masked form for people and a keyed SHA-256 for matching. The
key lives in the database (`consent_keys`, created on first use) rather than in NOTIFIER_SECRET_KEY, so rotating
the web secret never makes an opted-out number look new and start receiving texts again.
"""

from __future__ import annotations

import hashlib
import hmac
import secrets
from collections.abc import Iterator
from datetime import datetime

from sqlalchemy import Integer, String, select
from sqlalchemy.exc import IntegrityError
from sqlalchemy.orm import Mapped, Session, mapped_column

from notifier.db import Base, utcnow
from notifier.masking import mask
from notifier.subscribers.models import Consent

# The version of the sign-up wording (notice of collection, what the parent agrees to); bump it when that changes.
TEXT_VERSION = "2026-11-v1"

GIVEN, CONFIRMED, WITHDRAWN = "given", "confirmed", "withdrawn"


class ConsentKey(Base):
    """The one key used to hash addresses in consent records (one row, id 1)."""

    __tablename__ = "consent_keys"

    id: Mapped[int] = mapped_column(Integer, primary_key=True)
    key: Mapped[str] = mapped_column(String(64))


def _key(session: Session) -> bytes:
    row = session.get(ConsentKey, 1)
    if row is None:
        try:
            with session.begin_nested():
                row = ConsentKey(id=1, key=secrets.token_hex(32))
                session.add(row)
        except IntegrityError:  # another process created it first
            row = session.get(ConsentKey, 1, populate_existing=True)
    return bytes.fromhex(row.key)


def address_hash(session: Session, address: str) -> str:
    """The keyed SHA-256 of an address (hex): how consent rows and opted-out contacts are matched."""
    return hmac.new(_key(session), address.encode("utf-8"), hashlib.sha256).hexdigest()


def record(session: Session, *, channel: str, address: str, action: str, method: str, source: str = "",
           subscriber_id: int | None = None, language: str = "en", note: str = "",
           now: datetime | None = None) -> Consent:
    """Add one consent row (given, confirmed or withdrawn) for `address`."""
    row = Consent(
        subscriber_id=subscriber_id, channel=channel, address_hash=address_hash(session, address),
        address_masked=mask(address), action=action, method=method, source=source[:128],
        text_version=TEXT_VERSION, language=language, note=note, at=now or utcnow(),
    )
    session.add(row)
    return row


def latest(session: Session, channel: str, address: str) -> Consent | None:
    """The newest consent row for this address on this channel, if any."""
    query = (
        select(Consent)
        .where(Consent.channel == channel, Consent.address_hash == address_hash(session, address))
        .order_by(Consent.at.desc(), Consent.id.desc())
        .limit(1)
    )
    return session.scalars(query).first()


def has_withdrawn(session: Session, channel: str, address: str) -> bool:
    """True when the last word from this address was a withdrawal (STOP, unsubscribe, provider opt-out)."""
    last = latest(session, channel, address)
    return last is not None and last.action == WITHDRAWN


def export_rows(session: Session) -> Iterator[dict[str, str]]:
    """Every consent row, oldest first, as strings for a CSV (no address: masked form and keyed hash only)."""
    for row in session.scalars(select(Consent).order_by(Consent.at, Consent.id)):
        yield {
            "at": row.at.isoformat(), "action": row.action, "method": row.method, "channel": row.channel,
            "address_masked": row.address_masked, "address_hash": row.address_hash, "source": row.source,
            "text_version": row.text_version, "language": row.language, "note": row.note,
            "subscriber_id": "" if row.subscriber_id is None else str(row.subscriber_id),
        }
