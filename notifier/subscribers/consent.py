"""Consent evidence (CASL puts the onus of proof on the sender): when, how and from where consent was given,
confirmed and withdrawn, kept after the contact itself is gone.

Addresses are never stored in consent rows: only a masked form for people and a keyed SHA-256 for matching. The
key lives in the database (`consent_keys`, created on first use) rather than in NOTIFIER_SECRET_KEY, so rotating
the web secret never makes an opted-out number look new and start receiving texts again.
"""

from __future__ import annotations

import functools
import hashlib
import hmac
import secrets
from collections.abc import Callable, Iterable, Iterator
from datetime import datetime
from typing import Any

from sqlalchemy import Integer, String, select
from sqlalchemy.exc import IntegrityError
from sqlalchemy.orm import Mapped, Session, mapped_column

from notifier.db import Base, among, insert_many, utcnow
from notifier.masking import mask
from notifier.subscribers.models import Consent

# The version of the sign-up wording (notice of collection, what the parent agrees to); bump it when that changes.
TEXT_VERSION = "2026-11-v1"

GIVEN, CONFIRMED, WITHDRAWN = "given", "confirmed", "withdrawn"
BATCH = 5000  # rows per bulk statement (and addresses per IN list)


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
            row = session.get_one(ConsentKey, 1, populate_existing=True)
    return bytes.fromhex(row.key)


def address_hash(session: Session, address: str) -> str:
    """The keyed SHA-256 of an address (hex): how consent rows and opted-out contacts are matched."""
    return hasher(session)(address)


def hasher(session: Session) -> Callable[[str], str]:
    """`address_hash` with the key read once: for hashing many addresses (a bulk import)."""
    key = _key(session)

    @functools.lru_cache(maxsize=1 << 17)  # an import hashes each address for its check and for each record
    def hashed(address: str) -> str:
        return hmac.new(key, address.encode("utf-8"), hashlib.sha256).hexdigest()

    return hashed


def _values(hashed: Callable[[str], str], *, channel: str, address: str, action: str, method: str, source: str = "",
            subscriber_id: int | None = None, language: str = "en", note: str = "",
            now: datetime | None = None) -> dict[str, Any]:
    """One consent row's columns: the address kept only as its keyed hash and its masked form."""
    return {"subscriber_id": subscriber_id, "channel": channel, "address_hash": hashed(address),
            "address_masked": mask(address), "action": action, "method": method, "source": source[:128],
            "text_version": TEXT_VERSION, "language": language, "note": note, "at": now or utcnow()}


def record_many(session: Session, entries: Iterable[dict[str, Any]], hashed: Callable[[str], str]) -> int:
    """Add many consent rows at once (bulk statements); each entry has the keyword arguments of `record` (with
    `now`). Returns how many rows were added. The caller commits."""
    rows = [_values(hashed, **entry) for entry in entries]
    insert_many(session, Consent.__table__, rows, BATCH)
    return len(rows)


def withdrawn_among(session: Session, addresses: Iterable[tuple[str, str]],
                    hashed: Callable[[str], str]) -> set[tuple[str, str]]:
    """The (channel, address) pairs whose last word was a withdrawal: `has_withdrawn` for many, set-wise."""
    by_hash: dict[tuple[str, str], tuple[str, str]] = {(c, hashed(a)): (c, a) for c, a in addresses}
    last: dict[tuple[str, str], tuple[datetime, int, str]] = {}
    for condition in among(session, (Consent.address_hash,), sorted({(h,) for _, h in by_hash}), BATCH):
        query = select(Consent.channel, Consent.address_hash, Consent.at, Consent.id, Consent.action).where(condition)
        for channel, digest, at, row_id, action in session.execute(query):
            if (channel, digest) in by_hash and (at, row_id, action) > last.get((channel, digest), (at, -1, "")):
                last[(channel, digest)] = (at, row_id, action)
    return {by_hash[k] for k, (_, _, action) in last.items() if action == WITHDRAWN}


def record(session: Session, *, channel: str, address: str, action: str, method: str, source: str = "",
           subscriber_id: int | None = None, language: str = "en", note: str = "",
           now: datetime | None = None) -> Consent:
    """Add one consent row (given, confirmed or withdrawn) for `address`."""
    row = Consent(**_values(hasher(session), channel=channel, address=address, action=action, method=method,
                            source=source, subscriber_id=subscriber_id, language=language, note=note, now=now))
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
