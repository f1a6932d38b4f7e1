"""After a crash: rows a gone process left in `sending` are settled before anything is sent again.

A text Twilio already has (queued, sent or delivered: found in its list of messages to that number created since
shortly before the claim, with the same body) is recorded as sent, never resent; the rest go back to `pending`.
Emails go back too and are resent with the same Message-ID (at-least-once; mail systems drop the duplicate). A
row left "uncertain" (the request may have reached the provider) is settled the same way.
"""

from __future__ import annotations

import logging
from collections.abc import Callable
from datetime import datetime, timedelta
from typing import Protocol

from sqlalchemy import select, update
from sqlalchemy.orm import Session, sessionmaker

from notifier.config import Settings
from notifier.db import utcnow
from notifier.delivery import express
from notifier.delivery.channels import Channel
from notifier.delivery.claims import orphaned
from notifier.delivery.outbox import OutboxRow, RowStatus
from notifier.delivery.sending import ComposerFactory, Job
from notifier.errors import DeliveryError
from notifier.masking import mask

log = logging.getLogger(__name__)
MARGIN = timedelta(minutes=2)  # clocks differ: look a little before the claim


ChannelFactory = Callable[[str], Channel]


class Counts(Protocol):
    """Where a drain counts what it did, per kind and channel (`DrainStats`)."""

    def add(self, kind: str, channel: str, number: int = 1) -> None: ...


def reconcile(sessions: sessionmaker[Session], settings: Settings, name: str, now: datetime, factory: ChannelFactory,
              stats: Counts, compose: ComposerFactory) -> None:
    """Rows a gone process left in `sending`: texts Twilio already has are recorded as sent; the rest go back."""
    lease = timedelta(seconds=settings.claim_lease_seconds)
    with sessions() as session:
        rows = session.execute(select(OutboxRow.id, OutboxRow.claim, OutboxRow.claimed_at)
                               .where(OutboxRow.status == RowStatus.SENDING.value, OutboxRow.channel == name)).all()
        checked = utcnow()
        stale = [row.id for row in rows if orphaned(session, row.claim, row.claimed_at, checked, lease)]
        seen_claims = {row.id: row.claimed_at for row in rows}
        if not stale:
            return
        jobs: list[Job] = express.jobs(session, stale)
    rest = [i for i in stale if i not in {job.row_id for job in jobs}]
    if rest:
        jobs += compose(sessions, settings).build(rest, supersede=False)[0]
    channel = factory(name)
    find_sent = getattr(channel, "find_sent", None)
    found = back = 0
    for job in jobs:
        provider_id = None
        if find_sent is not None:
            try:
                matches = find_sent(job.address, (job.claimed_at or utcnow()) - MARGIN, job.message.text)
            except DeliveryError as error:
                log.warning("could not reconcile %s to %s yet: %s", name, mask(job.address), error)
                continue
            provider_id = matches[-1].sid if matches else None  # the oldest match: the first send
        with sessions() as session, session.begin():
            row = update(OutboxRow).where(OutboxRow.id == job.row_id, OutboxRow.claim == job.claim,
                                          OutboxRow.status == RowStatus.SENDING.value)
            if seen_claims.get(job.row_id) is not None:  # a live sender renewed its claim meanwhile: still its own
                row = row.where(OutboxRow.claimed_at <= seen_claims[job.row_id])
            if provider_id:
                session.execute(row.values(status=RowStatus.SENT.value, provider_id=provider_id, sent_at=utcnow(),
                                           payload=None))
                found += 1
            else:
                session.execute(row.values(status=RowStatus.PENDING.value, due_at=min(now, utcnow())))
                back += 1
    missing = set(stale) - {job.row_id for job in jobs}
    if missing:  # their contact is gone: send nothing
        with sessions() as session, session.begin():
            session.execute(update(OutboxRow).where(OutboxRow.id.in_(missing), OutboxRow.status == "sending")
                            .values(status=RowStatus.CANCELLED.value, payload=None))
    stats.add("reconciled", name, found + back)
    log.warning("%s: reconciled %d message(s) left in flight: %d already sent (recorded), %d to send again",
                name, found + back, found, back)
