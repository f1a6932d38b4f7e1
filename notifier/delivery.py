"""Draining the outbox: claim due rows, send them, record each outcome at once; never twice, never lost.

Rows are claimed in batches (PostgreSQL: `FOR UPDATE SKIP LOCKED`; SQLite: one atomic UPDATE, as SQLite has a
single writer) and marked `sending` with a claim token naming this host and process. Each send is recorded as
`sent` with the provider's id within 20 ms, in short batched transactions. Rows a dead process left in
`sending` are reconciled first: texts against Twilio's message list (a text found there is recorded, not
resent), emails resent with the same Message-ID (at-least-once; the Message-ID lets mail systems drop the
duplicate).
"""

from __future__ import annotations

import logging
import os
import queue
import secrets
import socket
import threading
import time
from collections.abc import Callable
from dataclasses import dataclass, field
from datetime import datetime, timedelta

from sqlalchemy import select, update
from sqlalchemy.orm import Session, sessionmaker

from notifier import channels as channel_module
from notifier import sending
from notifier.channels import Channel
from notifier.config import Settings
from notifier.db import utcnow
from notifier.outbox import OutboxRow, RowStatus

log = logging.getLogger(__name__)
ChannelFactory = Callable[[str], Channel]


@dataclass
class DrainStats:
    """What one drain did, per channel."""

    sent: dict[str, int] = field(default_factory=dict)
    retrying: dict[str, int] = field(default_factory=dict)
    failed: dict[str, int] = field(default_factory=dict)
    cancelled: dict[str, int] = field(default_factory=dict)
    reconciled: dict[str, int] = field(default_factory=dict)

    def add(self, kind: str, channel: str, number: int = 1) -> None:
        counts = getattr(self, kind)
        counts[channel] = counts.get(channel, 0) + number

    def total(self, kind: str) -> int:
        return sum(getattr(self, kind).values())


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


def drain(
    sessions: sessionmaker[Session],
    settings: Settings,
    now: datetime | None = None,
    factory: ChannelFactory | None = None,
    only: tuple[str, ...] = (channel_module.EMAIL, channel_module.SMS),
) -> DrainStats:
    """Send every due row, each channel in its own thread with its own concurrency and rate; return the counts."""
    now = now or utcnow()
    factory = factory or (lambda name: channel_module.build(settings)[name])
    stats = DrainStats()
    token = claim_token()
    errors: list[BaseException] = []

    def run(name: str) -> None:
        try:
            _drain_channel(sessions, settings, name, now, factory, token, stats)
        except BaseException as error:  # re-raised below, in the caller's thread
            errors.append(error)

    workers = [threading.Thread(target=run, args=(name,), name=f"drain-{name}") for name in only]
    for worker in workers:
        worker.start()
    for worker in workers:
        worker.join()
    if errors:
        raise errors[0]
    if stats.total("sent") or stats.total("failed") or stats.total("retrying"):
        log.info("outbox drained: sent %s, retrying %s, failed %s, cancelled %s, reconciled %s",
                 stats.sent, stats.retrying, stats.failed, stats.cancelled, stats.reconciled)
    return stats


def _drain_channel(sessions: sessionmaker[Session], settings: Settings, name: str, now: datetime,
                   factory: ChannelFactory, token: str, stats: DrainStats) -> None:
    try:
        sending.reconcile(sessions, settings, name, now, factory, stats)
        concurrency, rate = sending.limits(settings, name)
        batch = max(concurrency * 4, min(500, int(rate * 10)))
        jobs: queue.Queue = queue.Queue(maxsize=batch)
        limiter = sending.RateLimiter(rate)
        progress = sending.Progress(name, stats)
        recorder = sending.Recorder(sessions)
        senders = [threading.Thread(target=sending.sender, name=f"send-{name}-{i}",
                                    args=(sessions, settings, factory(name), jobs, limiter, token, stats, progress,
                                          recorder))
                   for i in range(concurrency)]
        for thread in senders:
            thread.start()
        builder = sending.MessageBuilder(sessions, settings)
        try:
            while True:
                with sessions() as session, session.begin():
                    ids = claim(session, name, now, batch, token)
                if not ids:
                    break
                for job in builder.jobs(ids, token, stats, name):
                    jobs.put(job)
                progress.tick()
        finally:
            for _ in senders:
                jobs.put(None)
            for thread in senders:
                thread.join()
            recorder.close()
    except Exception:
        log.exception("draining %s failed; claimed rows stay in 'sending' and are reconciled next time", name)
        raise


def pending_count(session: Session, channel: str) -> int:
    """Rows of `channel` still waiting (for progress lines and `status`)."""
    from sqlalchemy import func

    query = select(func.count()).where(OutboxRow.channel == channel, OutboxRow.status == RowStatus.PENDING.value)
    return session.scalar(query) or 0


def wait_between(seconds: float) -> None:
    """Sleep (a seam so the worker loop reads plainly)."""
    time.sleep(seconds)
