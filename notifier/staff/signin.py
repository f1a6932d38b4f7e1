"""Signing staff in with an emailed single-use link: no passwords to forget, leak or share at 5 a.m.

A link is good once, for 15 minutes. Only a SHA-256 of its token is stored, so a copy of the database cannot be
used to sign in. Requests are limited per IP (too many: refused). Emails are limited per address, silently: no new
link while one sent in the last `EMAIL_SPACING_SECONDS` is unused, the page saying the same either way. Requests
from many IPs can then neither lock the owner out (a link sent minutes ago is in their inbox, still good) nor flood
their inbox. The answer never says whether an address has an account, nor hints at it by its time: the email is
queued in the outbox (`delivery.express`), never sent while the visitor waits. Every refusal is logged, address
masked.
"""

from __future__ import annotations

import hashlib
import logging
import secrets
from collections.abc import Callable
from datetime import datetime, timedelta
from enum import StrEnum

from sqlalchemy import select, update
from sqlalchemy.orm import Session

from notifier.config import Settings
from notifier.db import rowcount
from notifier.delivery import express
from notifier.delivery.channels import EMAIL, Message
from notifier.masking import mask_email
from notifier.notices import templates
from notifier.staff import accounts, models
from notifier.staff.models import SigninToken
from notifier.subscribers import ratelimit

log = logging.getLogger(__name__)

LINK_LIFETIME = timedelta(minutes=15)
# Enough for a busy office behind one address (several staff, a few retries each), too few for guessing.
LIMIT_PER_IP = (20, 3600)
# While a link sent this recently is unused, no new one: well inside a link's lifetime, so the owner has a live one.
EMAIL_SPACING_SECONDS = 180


class Outcome(StrEnum):
    """What became of a sign-in request. The page shows SENT, HELD and NO_ACCOUNT the same way, on purpose."""

    SENT = "sent"
    HELD = "held"  # a link went to this address moments ago: no new email (it is in the inbox, still good)
    NO_ACCOUNT = "no_account"
    LIMITED = "limited"
    INVALID = "invalid"


def _hash(token: str) -> str:
    return hashlib.sha256(token.encode()).hexdigest()


def issue(session: Session, member: models.StaffMember, now: datetime) -> str:
    """A new single-use token for `member` (only its hash is stored); valid for `LINK_LIFETIME`."""
    token = secrets.token_urlsafe(32)
    session.add(SigninToken(staff_id=member.id, token_hash=_hash(token), created_at=now,
                            expires_at=now + LINK_LIFETIME))
    session.flush()
    return token


def redeem(session: Session, token: str, now: datetime, ip: str = "") -> models.StaffMember | None:
    """The account a valid, unused, unexpired token belongs to, marking it used; None (and a log line) otherwise."""
    row = session.scalars(select(SigninToken).where(SigninToken.token_hash == _hash(token))).first()
    if row is None:
        log.warning("staff sign-in refused: unknown link, from %s", ip or "?")
        return None
    if row.used_at is not None or row.expires_at <= now:
        reason = "link already used" if row.used_at is not None else "link expired"
        log.warning("staff sign-in refused: %s (token %s), from %s", reason, row.id, ip or "?")
        return None
    # Conditional UPDATE: of two requests racing with the same link, exactly one wins.
    claimed = session.execute(
        update(SigninToken).where(SigninToken.id == row.id, SigninToken.used_at.is_(None)).values(used_at=now)
    )
    if rowcount(claimed) != 1:
        log.warning("staff sign-in refused: link already used (token %s), from %s", row.id, ip or "?")
        return None
    return session.get(models.StaffMember, row.staff_id)


def request_link(session: Session, settings: Settings, email: str, ip: str, language: str, now: datetime,
                 link_for: Callable[[str], str]) -> tuple[Outcome, list[int]]:
    """Rate-limit per IP, then queue a sign-in link if `email` has an account and none went to it moments ago.

    Returns the outcome and the outbox rows queued (for `express.send_soon` once `session` is committed).
    `link_for(token)` builds the absolute URL. Only the per-IP limit refuses (LIMITED); the per-address one only
    holds the email back (HELD), so nobody can lock an address's owner out by asking for it from many IPs.
    """
    try:
        address = accounts.normalise_email(email)
    except accounts.StaffError:
        log.warning("staff sign-in refused: not an email address, from %s", ip)
        return Outcome.INVALID, []
    if not ratelimit.allow(session, f"staff-signin-ip:{ip}", *LIMIT_PER_IP, now):
        log.warning("staff sign-in refused: too many requests from %s (for %s)", ip, mask_email(address))
        return Outcome.LIMITED, []
    member = accounts.find(session, address)
    if member is None:
        log.warning("staff sign-in refused: no account for %s (from %s)", mask_email(address), ip)
        return Outcome.NO_ACCOUNT, []
    if _unused_link_sent_since(session, member, now - timedelta(seconds=EMAIL_SPACING_SECONDS)):
        log.warning("staff sign-in link to %s not sent: one was sent moments ago (request from %s)",
                    mask_email(address), ip)
        return Outcome.HELD, []
    token = issue(session, member, now)
    row = _queue(session, settings, member.email, link_for(token), language,
                 reference=f"staff-signin-{_hash(token)[:16]}")
    log.info("staff sign-in link queued for %s (from %s)", mask_email(member.email), ip)
    return Outcome.SENT, [row]


def _unused_link_sent_since(session: Session, member: models.StaffMember, since: datetime) -> bool:
    """True when a link went to `member` after `since` and is still unused (so it is in their inbox, good)."""
    return session.scalar(
        select(SigninToken.id).where(SigninToken.staff_id == member.id, SigninToken.used_at.is_(None),
                                     SigninToken.created_at > since).limit(1)
    ) is not None


def _queue(session: Session, settings: Settings, to: str, link: str, language: str, reference: str) -> int:
    """The sign-in email, put in the outbox first in line; its row id."""
    minutes = int(LINK_LIFETIME.total_seconds() // 60)
    context = {"link": link, "minutes": minutes, "base_url": settings.base_url, "sender": settings.sender}
    message = Message(
        channel=EMAIL, to=to, reference=reference, language=language,
        subject=templates.gettext(language, "Your sign-in link for the school status console"),
        text=templates.render("email/staff_signin.txt", language, **context),
        html=templates.render("email/staff_signin.html", language, **context),
    )
    # A failed send is logged by the sender (masked); alerting on it tells the operator staff cannot sign in.
    return express.enqueue(session, message, None)
