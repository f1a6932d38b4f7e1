"""Claiming due outbox rows so that several processes share one outbox and never send a row twice.

Rows are claimed in small batches, most pressing first: what a parent waits for (confirmations, manage links,
replies), then urgent digests, then the rest (PostgreSQL: `FOR UPDATE SKIP LOCKED`; SQLite: one atomic UPDATE, as
SQLite has a single writer). They are marked `sending` under the claimer's token: `sender:<id>` for a registered
sending process (see `senders`), so its successor can tell its abandoned claims from live ones at once.

Whether the contact still wants the row is checked here, as it leaves, not when it was planned: a row whose words
were fixed earlier (a morning reminder) for a contact that has since opted out, been marked invalid, or (for a
reminder) turned reminders off, is cancelled when claimed and never sent. Messages a parent waits for (priority
ACCOUNT) are exempt: the reply to STOP goes to a number that just opted out.
"""

from __future__ import annotations

from datetime import datetime, timedelta

from sqlalchemy import and_, or_, select, update
from sqlalchemy.orm import Session

from notifier.db import rowcount, utcnow
from notifier.delivery import senders
from notifier.delivery.outbox import REMINDER_KEY_PREFIX, OutboxRow, Priority, RowStatus
from notifier.subscribers.models import Contact, ContactStatus

UNCERTAIN = "uncertain"  # the claim of a row that may have reached the provider: reconciled before any resend
UNCERTAIN_GRACE = timedelta(seconds=60)  # a slow provider may still be creating it: look only after this long


def claim(session: Session, channel: str, now: datetime, limit: int, token: str,
          ids: list[int] | None = None) -> list[int]:
    """Mark up to `limit` due pending rows of `channel` (or of `ids`) as `sending` under `token`; return their ids."""
    due = (
        select(OutboxRow.id)
        .where(OutboxRow.status == RowStatus.PENDING.value, OutboxRow.channel == channel, OutboxRow.due_at <= now)
        .order_by(OutboxRow.priority, OutboxRow.urgent.desc(), OutboxRow.id)
        .limit(limit)
    )
    if ids is not None:
        due = due.where(OutboxRow.id.in_(ids))
    if session.get_bind().dialect.name == "postgresql":
        found = list(session.scalars(due.with_for_update(skip_locked=True)))
        if not found:
            return []
        condition = OutboxRow.id.in_(found)
    else:
        condition = OutboxRow.id.in_(due.scalar_subquery())
    claimed = session.execute(
        update(OutboxRow).where(condition, OutboxRow.status == RowStatus.PENDING.value)
        .values(status=RowStatus.SENDING.value, claim=token, claimed_at=utcnow())
        .returning(OutboxRow.id).execution_options(synchronize_session=False)
    )
    ids = sorted(claimed.scalars())
    unwanted = set(_unwanted(session, ids)) if ids else set()
    if unwanted:
        session.execute(
            update(OutboxRow).where(OutboxRow.id.in_(unwanted), OutboxRow.claim == token)
            .values(status=RowStatus.CANCELLED.value, payload=None, last_error="contact no longer wants it")
            .execution_options(synchronize_session=False)
        )
    return [i for i in ids if i not in unwanted]


def _unwanted(session: Session, ids: list[int]) -> list[int]:
    """Of the claimed `ids`, the rows whose contact no longer wants them (see the module's docstring)."""
    return list(session.scalars(
        select(OutboxRow.id).join(Contact, Contact.id == OutboxRow.contact_id)
        .where(OutboxRow.id.in_(ids), OutboxRow.priority != Priority.ACCOUNT,
               or_(Contact.status.in_([ContactStatus.OPTED_OUT.value, ContactStatus.INVALID.value]),
                   and_(OutboxRow.digest_key.startswith(REMINDER_KEY_PREFIX), Contact.morning_reminder.is_(False))))
    ))


def orphaned(session: Session, token: str | None, claimed_at: datetime | None, now: datetime,
             lease: timedelta) -> bool:
    """True when a `sending` row's claimer is gone: its registration is gone (stopped, dead, restarted, silent),
    its process is dead on this host, or, as a last resort, its lease ran out. A row left uncertain is settled a
    minute later, once a slow provider has surely created the message if it ever will."""
    if token == UNCERTAIN:
        return claimed_at is None or claimed_at < now - UNCERTAIN_GRACE
    if claimed_at is None or token is None or claimed_at < now - lease:
        return True
    gone = senders.claim_gone(session, token, now)
    if gone is not None:
        return gone
    return senders.other_claim_gone(token)


def hand_back(session: Session, channel: str, token: str, ids: list[int] | None = None) -> int:
    """Turn this process's own `sending` rows of `channel` (or of `ids`) into uncertain ones; how many.

    For a pipeline starting again after its previous run failed (a database outage): every row that run claimed is
    either sent but not recorded (the connection was cut) or never sent, and no thread of this process will ever
    settle it, yet its claim is this live process's, which reconciliation leaves alone. Uncertain, it is looked up
    at the provider before anything is sent again (the original claim time is kept, to look far enough back).
    Also for single rows whose outcome could not be written (`ids`).
    """
    mine = update(OutboxRow).where(OutboxRow.status == RowStatus.SENDING.value, OutboxRow.channel == channel,
                                   OutboxRow.claim == token)
    if ids is not None:
        mine = mine.where(OutboxRow.id.in_(ids))
    handed = session.execute(mine.values(claim=UNCERTAIN).execution_options(synchronize_session=False))
    return rowcount(handed) or 0
