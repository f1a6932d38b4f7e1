"""Draining the outbox: claim due rows, send them, record each outcome at once; never twice, never lost.

Each channel drains in its own thread with its own concurrency and rate. Each send is recorded as `sent` with the
provider's id within 20 ms, in short batched transactions. Rows a dead process left in `sending` are reconciled
first (see `reconcile`).
"""

from __future__ import annotations

import logging
import queue
import threading
import time
from collections.abc import Callable
from dataclasses import dataclass, field
from datetime import datetime

from sqlalchemy import func, select, update
from sqlalchemy.orm import Session, sessionmaker

from notifier.config import Settings
from notifier.db import utcnow
from notifier.delivery import channels as channel_module
from notifier.delivery import sending
from notifier.delivery.channels import Channel
from notifier.delivery.claims import claim, claim_token
from notifier.delivery.outbox import OutboxRow, RowStatus
from notifier.delivery.reconcile import reconcile
from notifier.delivery.sending import Composer, ComposerFactory, Job

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


def drain(
    sessions: sessionmaker[Session],
    settings: Settings,
    compose: ComposerFactory,
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
            _drain_channel(sessions, settings, name, now, factory, token, stats, compose)
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
                   factory: ChannelFactory, token: str, stats: DrainStats, compose: ComposerFactory) -> None:
    try:
        reconcile(sessions, settings, name, now, factory, stats, compose)
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
        builder = compose(sessions, settings)
        try:
            while True:
                with sessions() as session, session.begin():
                    ids = claim(session, name, now, batch, token)
                if not ids:
                    break
                for job in _jobs(sessions, builder, ids, token, stats, name):
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


def _jobs(sessions: sessionmaker[Session], builder: Composer, ids: list[int], token: str, stats: DrainStats,
          channel: str) -> list[Job]:
    """The claimed rows' jobs, cancelling at once the rows of contacts who opted out or became invalid meanwhile."""
    jobs, gone = builder.build(ids)
    if gone:
        with sessions() as session, session.begin():
            session.execute(update(OutboxRow).where(OutboxRow.id.in_(gone), OutboxRow.claim == token)
                            .values(status=RowStatus.CANCELLED.value, last_error="contact no longer active"))
        stats.add("cancelled", channel, len(gone))
    return jobs


def pending_count(session: Session, channel: str) -> int:
    """Rows of `channel` still waiting (for progress lines and `status`)."""
    query = select(func.count()).where(OutboxRow.channel == channel, OutboxRow.status == RowStatus.PENDING.value)
    return session.scalar(query) or 0


def wait_between(seconds: float) -> None:
    """Sleep (a seam so the worker loop reads plainly)."""
    time.sleep(seconds)
