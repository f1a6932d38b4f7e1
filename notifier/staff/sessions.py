"""Staff sessions kept on the server: the browser's cookie holds only a random id, looked up on every request.

A session lasts `staff_session_minutes` from sign-in, whatever the cookie says. Signing out deletes it, and removing
an account deletes all of its sessions, so a copied cookie stops working at once and can never belong to another
account. Only a SHA-256 of the id is stored, so a copy of the database cannot be used to take over a session.
"""

from __future__ import annotations

import hashlib
import secrets
from datetime import datetime, timedelta

from sqlalchemy import delete, select
from sqlalchemy.orm import Session

from notifier.staff.models import StaffMember, StaffSession


def _hash(token: str) -> str:
    return hashlib.sha256(token.encode()).hexdigest()


def start(session: Session, member: StaffMember, now: datetime, lifetime: timedelta, ip: str = "") -> str:
    """A new session for `member` until `now + lifetime`; returns the random id for the cookie (never stored)."""
    session.execute(delete(StaffSession).where(StaffSession.expires_at <= now))
    token = secrets.token_urlsafe(32)
    session.add(StaffSession(token_hash=_hash(token), staff_id=member.id, created_at=now, expires_at=now + lifetime,
                             ip=ip[:64]))
    session.flush()
    return token


def member_of(session: Session, token: str, now: datetime) -> StaffMember | None:
    """The account of a live session, or None when the id is unknown, signed out, expired or its account gone."""
    if not token:
        return None
    row = session.scalars(select(StaffSession).where(StaffSession.token_hash == _hash(token))).first()
    if row is None or row.expires_at <= now:
        return None
    return session.get(StaffMember, row.staff_id)


def end(session: Session, token: str) -> None:
    """Sign this session out (nothing happens when it is already gone)."""
    if token:
        session.execute(delete(StaffSession).where(StaffSession.token_hash == _hash(token)))


def end_all(session: Session, staff_id: int) -> None:
    """Sign every session of an account out (the account is being removed)."""
    session.execute(delete(StaffSession).where(StaffSession.staff_id == staff_id))
