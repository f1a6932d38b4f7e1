"""Claiming due outbox rows so that several processes share one outbox and never send a row twice.

Rows are claimed in batches (PostgreSQL: `FOR UPDATE SKIP LOCKED`; SQLite: one atomic UPDATE, as SQLite has a
single writer) and marked `sending` under a token naming this host and process, so a restarted process can tell
its predecessor's abandoned claims from live ones.
"""

from __future__ import annotations

import os
import secrets
import socket
from datetime import datetime, timedelta

from sqlalchemy import select, update
from sqlalchemy.orm import Session

from notifier.db import utcnow
from notifier.delivery.outbox import OutboxRow, RowStatus


def claim_token() -> str:
    """A token naming this host and process, so a restart can tell its own dead claims from live ones."""
    return f"{socket.gethostname()[:32]}:{os.getpid()}:{secrets.token_hex(4)}"


def claim(session: Session, channel: str, now: datetime, limit: int, token: str) -> list[int]:
    """Mark up to `limit` due pending rows of `channel` as `sending` under `token`; return their ids."""
    due = (
        select(OutboxRow.id)
        .where(OutboxRow.status == RowStatus.PENDING.value, OutboxRow.channel == channel, OutboxRow.due_at <= now)
        .order_by(OutboxRow.urgent.desc(), OutboxRow.id)
        .limit(limit)
    )
    if session.get_bind().dialect.name == "postgresql":
        ids = list(session.scalars(due.with_for_update(skip_locked=True)))
        if not ids:
            return []
        condition = OutboxRow.id.in_(ids)
    else:
        condition = OutboxRow.id.in_(due.scalar_subquery())
    claimed = session.execute(
        update(OutboxRow).where(condition, OutboxRow.status == RowStatus.PENDING.value)
        .values(status=RowStatus.SENDING.value, claim=token, claimed_at=utcnow())
        .returning(OutboxRow.id).execution_options(synchronize_session=False)
    )
    return sorted(claimed.scalars())


def orphaned(token: str | None, claimed_at: datetime | None, now: datetime, lease: timedelta) -> bool:
    """True when a `sending` row's claimer is gone: a dead process on this host, or a lease long expired."""
    if claimed_at is None or token is None or claimed_at < now - lease:
        return True
    host, _, rest = token.partition(":")
    if host != socket.gethostname()[:32]:
        return False
    pid = int(rest.partition(":")[0] or 0)
    if pid == os.getpid():
        return False
    try:
        os.kill(pid, 0)
    except ProcessLookupError:
        return True
    except PermissionError:
        return False
    return False
