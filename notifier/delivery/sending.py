"""The sending side of a drain: send each claimed row's message under the channel's rate limit, and record the
outcome within milliseconds.

Temporary failures go back to `pending` with exponential backoff and jitter; permanent ones mark the contact
(opted out for Twilio 21610/30004, invalid otherwise) and fail the row, which is never retried.
"""

from __future__ import annotations

import logging
import queue
import random
import threading
import time
from collections.abc import Callable
from dataclasses import dataclass
from datetime import datetime, timedelta
from typing import Protocol

from sqlalchemy import bindparam, select, update
from sqlalchemy.orm import Session, sessionmaker

from notifier.config import Settings
from notifier.db import utcnow
from notifier.delivery.channels import SMS, Channel, Message
from notifier.delivery.outbox import OutboxRow, RowStatus
from notifier.errors import PermanentDeliveryError, TemporaryDeliveryError
from notifier.masking import mask
from notifier.subscribers.contacts import mark_invalid, mark_opted_out

log = logging.getLogger(__name__)
OPT_OUT_CODES = {21610, 30004}


@dataclass(frozen=True)
class Job:
    """One claimed row, ready to send."""

    row_id: int
    channel: str
    address: str
    message: Message
    attempts: int
    claim: str | None
    claimed_at: datetime | None


class Composer(Protocol):
    """Turns claimed rows into messages; supplied by the notices wing (delivery never decides what a row says)."""

    def build(self, ids: list[int]) -> tuple[list[Job], list[int]]:
        """Jobs for the rows `ids`, and the ids of rows whose contact may no longer receive anything."""


ComposerFactory = Callable[[sessionmaker[Session], Settings], Composer]


def backoff(attempts: int, base: float, cap: float = 3600.0) -> timedelta:
    """Exponential backoff with jitter: about base·2^(attempts-1) seconds, between half and 1.5 times that."""
    seconds = min(cap, base * (2 ** max(attempts - 1, 0)))
    return timedelta(seconds=seconds * random.uniform(0.5, 1.5))  # noqa: S311 - jitter, not cryptography


def limits(settings: Settings, channel: str) -> tuple[int, float]:
    """(concurrency, messages per second) for `channel`, from settings."""
    if channel == SMS:
        return settings.sms_concurrency, settings.sms_per_second
    return settings.email_concurrency, settings.email_per_second


class RateLimiter:
    """At most `rate` sends per second across every thread of this process (a simple schedule of slots)."""

    def __init__(self, rate: float) -> None:
        self.interval = 1.0 / rate
        self.next_slot = time.monotonic()
        self.lock = threading.Lock()

    def wait(self) -> None:
        with self.lock:
            now = time.monotonic()
            slot = max(now, self.next_slot)
            self.next_slot = slot + self.interval
        if slot > now:
            time.sleep(slot - now)


class Progress:
    """Logs a long send's progress every ten seconds, so an operator watching the clock's log sees it move."""

    def __init__(self, channel: str, stats) -> None:
        self.channel, self.stats = channel, stats
        self.started = self.last = time.monotonic()

    def tick(self) -> None:
        now = time.monotonic()
        if now - self.last >= 10:
            self.last = now
            sent = self.stats.sent.get(self.channel, 0)
            log.info("%s: %d sent so far (%.0f/s), %d retrying, %d failed", self.channel, sent,
                     sent / max(now - self.started, 0.001), self.stats.retrying.get(self.channel, 0),
                     self.stats.failed.get(self.channel, 0))


def sender(sessions: sessionmaker[Session], settings: Settings, channel: Channel, jobs, limiter: RateLimiter,
           token: str, stats, progress: Progress, recorder: Recorder) -> None:
    """A sending thread: take jobs until a None arrives; one provider session (SMTP connection) throughout."""
    with channel.session():
        while (job := jobs.get()) is not None:
            limiter.wait()
            try:
                receipt = channel.send(job.message)
            except PermanentDeliveryError as error:
                record_permanent(sessions, job, token, error)
                stats.add("failed", job.channel)
            except (TemporaryDeliveryError, OSError) as error:
                kind = record_temporary(sessions, settings, job, token, error)
                stats.add(kind, job.channel)
            else:
                recorder.sent(job.row_id, token, receipt.provider_id)
                stats.add("sent", job.channel)
            progress.tick()


SENT = (
    update(OutboxRow.__table__)
    .where(OutboxRow.__table__.c.id == bindparam("row_id"), OutboxRow.__table__.c.claim == bindparam("token"))
    .values(status=RowStatus.SENT.value, provider_id=bindparam("provider_id"), sent_at=bindparam("at"))
)


class Recorder:
    """Records "sent" within `window` seconds of the provider's answer, many rows per short transaction.

    One commit per message would cost more than the send itself on SQLite (an fsync each, one writer at a time).
    A crash inside the window leaves rows in `sending`, which the next drain reconciles (texts against Twilio's
    list; emails resent with the same Message-ID), so the window costs no correctness.
    """

    def __init__(self, sessions: sessionmaker[Session], window: float = 0.02, batch: int = 200) -> None:
        self.sessions, self.window, self.batch = sessions, window, batch
        self.queue: queue.Queue = queue.Queue()
        self.thread = threading.Thread(target=self._run, name="record-sent", daemon=True)
        self.thread.start()

    def sent(self, row_id: int, token: str | None, provider_id: str) -> None:
        self.queue.put({"row_id": row_id, "token": token, "provider_id": provider_id, "at": utcnow()})

    def close(self) -> None:
        """Record everything still waiting, then stop."""
        self.queue.put(None)
        self.thread.join()

    def _run(self) -> None:
        done = False
        while not done:
            first = self.queue.get()
            if first is None:
                return
            rows, deadline = [first], time.monotonic() + self.window
            while len(rows) < self.batch:
                try:
                    item = self.queue.get(timeout=max(deadline - time.monotonic(), 0))
                except queue.Empty:
                    break
                if item is None:
                    done = True
                    break
                rows.append(item)
            try:
                with self.sessions() as session, session.begin():
                    session.connection().execute(SENT, rows)
            except Exception:  # the rows stay 'sending' and are reconciled by the next drain
                log.exception("could not record %d sent message(s); they will be reconciled", len(rows))


def record_temporary(sessions: sessionmaker[Session], settings: Settings, job: Job, token: str,
                     error: Exception) -> str:
    """Back to pending after a backoff, or failed after `max_attempts`; returns "retrying" or "failed"."""
    attempts = job.attempts + 1
    give_up = attempts >= settings.max_attempts
    values = {"attempts": attempts, "last_error": str(error)[:500],
              "status": RowStatus.FAILED.value if give_up else RowStatus.PENDING.value}
    if not give_up:
        values["due_at"] = utcnow() + backoff(attempts, settings.retry_base_seconds)
    with sessions() as session, session.begin():
        session.execute(update(OutboxRow).where(OutboxRow.id == job.row_id, OutboxRow.claim == token).values(values))
    if give_up:
        log.error("%s to %s failed %d times; giving up: %s", job.channel, mask(job.address), attempts, error)
    return "failed" if give_up else "retrying"


def record_permanent(sessions: sessionmaker[Session], job: Job, token: str, error: PermanentDeliveryError) -> None:
    """Fail the row, mark the contact, and cancel its other unsent digests: never retried."""
    with sessions() as session, session.begin():
        session.execute(update(OutboxRow).where(OutboxRow.id == job.row_id, OutboxRow.claim == token)
                        .values(status=RowStatus.FAILED.value, last_error=str(error)[:500]))
        contact_id = session.scalar(select(OutboxRow.contact_id).where(OutboxRow.id == job.row_id))
        session.execute(update(OutboxRow).where(OutboxRow.contact_id == contact_id,
                                                OutboxRow.status == RowStatus.PENDING.value)
                        .values(status=RowStatus.CANCELLED.value, last_error="contact marked"))
        if job.channel == SMS and _code(error) in OPT_OUT_CODES:
            mark_opted_out(session, job.channel, job.address, "provider", f"twilio {_code(error)}")
        else:
            mark_invalid(session, job.channel, job.address, str(error)[:200])


def _code(error: PermanentDeliveryError) -> int | None:
    try:
        return int(error.code) if error.code is not None else None
    except (TypeError, ValueError):
        return None
