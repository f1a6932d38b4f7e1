"""After a crash: rows a dead process left in `sending` are settled before anything is sent again.

A text Twilio already has is recorded as sent (found in its message list), never resent; the rest go back to
`pending`. Emails go back too and are resent with the same Message-ID (at-least-once; mail systems drop the
duplicate).
"""

from __future__ import annotations

import logging
from datetime import datetime, timedelta

from sqlalchemy import select, update
from sqlalchemy.orm import Session, sessionmaker

from notifier.config import Settings
from notifier.db import utcnow
from notifier.delivery.claims import orphaned
from notifier.delivery.outbox import OutboxRow, RowStatus
from notifier.delivery.sending import ComposerFactory
from notifier.errors import PermanentDeliveryError, TemporaryDeliveryError
from notifier.masking import mask

log = logging.getLogger(__name__)


def reconcile(sessions: sessionmaker[Session], settings: Settings, name: str, now: datetime, factory,
              stats, compose: ComposerFactory) -> None:
    """Rows a dead process left in `sending`: texts Twilio already has are recorded as sent; the rest go back."""
    lease = timedelta(seconds=settings.claim_lease_seconds)
    with sessions() as session:
        rows = session.execute(select(OutboxRow.id, OutboxRow.claim, OutboxRow.claimed_at)
                               .where(OutboxRow.status == RowStatus.SENDING.value, OutboxRow.channel == name)).all()
    stale = [row.id for row in rows if orphaned(row.claim, row.claimed_at, utcnow(), lease)]
    if not stale:
        return
    channel = factory(name)
    find_sent = getattr(channel, "find_sent", None)
    jobs, _ = compose(sessions, settings).build(stale)
    found = back = 0
    for job in jobs:
        provider_id = None
        if find_sent is not None:
            since = (job.claimed_at or utcnow()) - timedelta(minutes=2)
            try:
                matches = find_sent(job.address, since, job.message.text)
            except (TemporaryDeliveryError, PermanentDeliveryError) as error:
                log.warning("could not reconcile %s to %s yet: %s", name, mask(job.address), error)
                continue
            provider_id = matches[0].sid if matches else None
        with sessions() as session, session.begin():
            row = update(OutboxRow).where(OutboxRow.id == job.row_id, OutboxRow.claim == job.claim,
                                          OutboxRow.status == RowStatus.SENDING.value)
            if provider_id:
                session.execute(row.values(status=RowStatus.SENT.value, provider_id=provider_id, sent_at=utcnow()))
                found += 1
            else:
                session.execute(row.values(status=RowStatus.PENDING.value, due_at=min(now, utcnow())))
                back += 1
    missing = set(stale) - {job.row_id for job in jobs}
    if missing:  # their contact is gone: send nothing
        with sessions() as session, session.begin():
            session.execute(update(OutboxRow).where(OutboxRow.id.in_(missing))
                            .values(status=RowStatus.CANCELLED.value))
    stats.add("reconciled", name, found + back)
    log.warning("%s: reconciled %d message(s) left in flight: %d already sent (recorded), %d to send again",
                name, found + back, found, back)
