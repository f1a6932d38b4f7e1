"""Sending one claimed row and recording what happened, whoever's fault a failure is.

`send_one` never raises for a message's sake: a sent row is recorded within milliseconds (`Recorder`), a
temporary failure goes back to `pending` with exponential backoff and jitter (push-back also slows the shared
rate), an uncertain one stays in `sending` for reconciliation before any resend, a recipient's refusal marks the
contact and fails the row, a message's own problem fails that row alone, and an account refusal pauses the channel
and puts the row back untouched.
"""

from __future__ import annotations

import logging
import math
import queue
import random
import threading
import time
from collections.abc import Callable
from dataclasses import dataclass
from datetime import datetime, timedelta
from typing import Any, Literal, Protocol, cast

from sqlalchemy import Table, bindparam, select, update
from sqlalchemy.orm import Session, sessionmaker

from notifier.config import Settings
from notifier.db import utcnow
from notifier.delivery import health
from notifier.delivery.channels import PUSH, SMS, WEBHOOK, Channel, Message
from notifier.delivery.claims import UNCERTAIN
from notifier.delivery.outbox import Failure, OutboxRow, RowStatus
from notifier.errors import (
    AccountError,
    DeliveryError,
    RecipientError,
    TemporaryDeliveryError,
    UncertainDeliveryError,
)
from notifier.masking import mask
from notifier.subscribers.contacts import mark_invalid, mark_opted_out

log = logging.getLogger(__name__)
OPT_OUT_CODES = {21610, 30004}

SENT, RETRYING, FAILED, PAUSED, UNSURE = "sent", "retrying", "failed", "paused", "uncertain"


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

    def build(self, ids: list[int], supersede: bool = True) -> tuple[list[Job], list[int]]:
        """Jobs for the rows `ids`, and the ids of rows whose contact may no longer receive anything; rows it
        leaves out (overtaken by a later change, unless `supersede` is False) it has settled itself."""


ComposerFactory = Callable[[sessionmaker[Session], Settings], Composer]


class Records(Protocol):
    """Where `send_one` records a row as sent: a `Recorder` (batched), or at once (express)."""

    def sent(self, row_id: int, token: str | None, provider_id: str) -> None: ...


def backoff(attempts: int, base: float, cap: float = 3600.0) -> timedelta:
    """Exponential backoff with jitter: about base·2^(attempts-1) seconds, between half and 1.5 times that."""
    seconds = min(cap, base * (2 ** max(attempts - 1, 0)))
    return timedelta(seconds=seconds * random.uniform(0.5, 1.5))  # noqa: S311 - jitter, not cryptography


ANSWER_SECONDS = 0.2  # the provider's answer time (and the outcome's recording) the default texting threads cover
PUSH_SECONDS = 0.1  # a push service's answer, with the encryption, which default push threads cover
EMAIL_SECONDS = 0.08  # an email's building and SMTP exchange on a kept connection, which default email threads cover


def limits(settings: Settings, channel: str) -> tuple[int, float]:
    """(concurrency, messages per second) for `channel`, from settings. Unless NOTIFIER_SMS_CONCURRENCY says
    otherwise, a process keeps enough texts in flight to reach the cap alone: a thread waits for the provider's
    answer before its next text, so four threads at a loopback's 40 ms each stay under 100 a second. Email threads
    likewise (each holds one SMTP connection): two up to 25 emails a second, four at 50, at most 8."""
    if channel == SMS:
        rate = settings.sms_per_second
        return settings.sms_concurrency or _enough(rate, ANSWER_SECONDS, 4, 64), rate
    if channel == PUSH:  # push services answer in tens of milliseconds and impose no sender cap of their own
        rate = settings.push_per_second
        return settings.push_concurrency or _enough(rate, PUSH_SECONDS, 2, 32), rate
    if channel == WEBHOOK:  # one request at a time per process: no endpoint is hammered by parallel requests
        return 1, settings.webhook_per_second
    rate = settings.email_per_second
    return settings.email_concurrency or _enough(rate, EMAIL_SECONDS, 2, 8), rate


def _enough(rate: float, seconds: float, least: int, most: int) -> int:
    """Threads that keep `rate` messages a second going when each takes `seconds`, within [least, most]."""
    return min(most, max(least, math.ceil(rate * seconds)))


def max_attempts(settings: Settings, channel: str) -> int:
    """Attempts before a temporary failure is given up: webhooks keep trying for about a day (backoff reaches an
    hour), after which their endpoint is disabled; texts and emails stop at NOTIFIER_MAX_ATTEMPTS."""
    return max(settings.max_attempts, WEBHOOK_ATTEMPTS) if channel == WEBHOOK else settings.max_attempts


WEBHOOK_ATTEMPTS = 32


def send_one(sessions: sessionmaker[Session], settings: Settings, channel: Channel, job: Job, token: str,
             recorder: Records, pushback: Callable[[], None] = lambda: None) -> str:
    """Send `job` and record the outcome; returns sent, retrying, failed, paused or uncertain. Never raises for
    the message's sake (a database failure while recording leaves the row to reconciliation)."""
    try:
        receipt = channel.send(job.message)
    except AccountError as error:
        health.pause(sessions, job.channel, str(error), error.code)
        release(sessions, [job.row_id], token)
        return PAUSED
    except RecipientError as error:
        record_recipient(sessions, job, token, error)
        return FAILED
    except UncertainDeliveryError as error:
        record_uncertain(sessions, job, token, error)
        return UNSURE
    except TemporaryDeliveryError as error:
        if error.pushback:
            pushback()
        return record_temporary(sessions, settings, job, token, error)
    except DeliveryError as error:  # MessageError, and any other permanent refusal of this message alone
        record_failed(sessions, job, token, Failure.MESSAGE, str(error))
        return FAILED
    except Exception as error:  # a channel bug must not stop the others: this row fails, with the reason
        log.exception("%s to %s: unexpected failure", job.channel, mask(job.address))
        record_failed(sessions, job, token, Failure.MESSAGE, f"{type(error).__name__}: {error}")
        return FAILED
    recorder.sent(job.row_id, token, receipt.provider_id)
    return SENT


SENT_ROW = (
    update(cast(Table, OutboxRow.__table__))  # a mapped class's table is typed as any FromClause
    .where(OutboxRow.__table__.c.id == bindparam("row_id"), OutboxRow.__table__.c.claim == bindparam("token"))
    .values(status=RowStatus.SENT.value, provider_id=bindparam("provider_id"), sent_at=bindparam("at"),
            payload=None)
)


class Recorder:
    """Records "sent" within `window` seconds of the provider's answer, many rows per short transaction.

    One commit per message would cost more than the send itself on SQLite (an fsync each, one writer at a time).
    A crash inside the window leaves rows in `sending`, which the next drain reconciles (texts against Twilio's
    list; emails resent with the same Message-ID), so the window costs no correctness.
    """

    RETRY = 1.0

    def __init__(self, sessions: sessionmaker[Session], window: float = 0.02, batch: int = 200) -> None:
        self.sessions, self.window, self.batch = sessions, window, batch
        self.queue: queue.Queue[dict[str, Any] | None] = queue.Queue()
        self.thread = threading.Thread(target=self._run, name="record-sent", daemon=True)
        self.thread.start()

    def sent(self, row_id: int, token: str | None, provider_id: str) -> None:
        self.queue.put({"row_id": row_id, "token": token, "provider_id": provider_id, "at": utcnow()})

    def close(self) -> None:
        """Record everything still waiting, then stop."""
        self.queue.put(None)
        self.thread.join()

    def _run(self) -> None:
        unrecorded: list[dict[str, Any]] = []  # sent, but the database was unreachable: tried again every RETRY seconds
        done = False
        while not done:
            try:
                first: dict[str, Any] | Literal[False] | None = self.queue.get(
                    timeout=self.RETRY if unrecorded else None)
            except queue.Empty:
                first = False  # nothing new: only the unrecorded to try again
            rows: list[dict[str, Any]] = []
            if first is None:
                done = True
            elif first is not False:
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
            batch = unrecorded + rows
            if not batch:
                continue
            try:
                with self.sessions() as session, session.begin():
                    session.connection().execute(SENT_ROW, batch)
            except Exception:
                if not unrecorded:
                    log.exception("could not record %d sent message(s); trying again every %s s", len(batch),
                                  self.RETRY)
                unrecorded = batch
            else:
                if unrecorded:
                    log.warning("recorded %d sent message(s) once the database answered again", len(batch))
                unrecorded = []
        if unrecorded:  # they stay 'sending': handed back and reconciled when sending starts again
            log.error("could not record %d sent message(s); they will be reconciled", len(unrecorded))


def _settle(sessions: sessionmaker[Session], row_id: int, token: str, values: dict[str, Any]) -> None:
    with sessions() as session, session.begin():
        session.execute(update(OutboxRow).where(OutboxRow.id == row_id, OutboxRow.claim == token).values(values))


def record_temporary(sessions: sessionmaker[Session], settings: Settings, job: Job, token: str,
                     error: Exception) -> str:
    """Back to pending after a backoff, or failed after `max_attempts`; returns "retrying" or "failed"."""
    attempts = job.attempts + 1
    give_up = attempts >= max_attempts(settings, job.channel)
    values = {"attempts": attempts, "last_error": str(error)[:500],
              "status": RowStatus.FAILED.value if give_up else RowStatus.PENDING.value}
    if give_up:
        values.update(failure=Failure.TEMPORARY.value, payload=None)
    else:
        wait = backoff(attempts, settings.retry_base_seconds)
        asked = getattr(error, "retry_after", None)  # never sooner than the provider's Retry-After
        values["due_at"] = utcnow() + max(wait, timedelta(seconds=asked or 0))
    _settle(sessions, job.row_id, token, values)
    if give_up:
        log.error("%s to %s failed %d times; giving up: %s", job.channel, mask(job.address), attempts, error,
                  extra={"outbox_id": job.row_id})
    return FAILED if give_up else RETRYING


def record_uncertain(sessions: sessionmaker[Session], job: Job, token: str, error: Exception) -> None:
    """The provider may have the message: leave the row in `sending` under a claim no process owns, so the next
    reconciliation looks it up before anything is sent again."""
    _settle(sessions, job.row_id, token, {"claim": UNCERTAIN, "claimed_at": utcnow(), "attempts": job.attempts + 1,
                                          "last_error": str(error)[:500]})


def record_failed(sessions: sessionmaker[Session], job: Job, token: str, failure: Failure, reason: str) -> None:
    """Fail this row alone, with the reason (the contact is not marked)."""
    log.warning("%s to %s failed for good (%s): %s", job.channel, mask(job.address), failure.value, reason[:200],
                extra={"outbox_id": job.row_id})
    _settle(sessions, job.row_id, token, {"status": RowStatus.FAILED.value, "last_error": reason[:500],
                                          "failure": failure.value, "payload": None})


def record_recipient(sessions: sessionmaker[Session], job: Job, token: str, error: RecipientError) -> None:
    """Fail the row, mark the contact (opted out for 21610/30004, invalid otherwise), cancel its other unsent rows."""
    opted_out = job.channel == SMS and _code(error) in OPT_OUT_CODES
    failure = Failure.OPTED_OUT if opted_out else Failure.INVALID
    with sessions() as session, session.begin():
        session.execute(update(OutboxRow).where(OutboxRow.id == job.row_id, OutboxRow.claim == token)
                        .values(status=RowStatus.FAILED.value, last_error=str(error)[:500], failure=failure.value,
                                payload=None))
        contact_id = session.scalar(select(OutboxRow.contact_id).where(OutboxRow.id == job.row_id))
        if contact_id is not None:
            session.execute(update(OutboxRow).where(OutboxRow.contact_id == contact_id,
                                                    OutboxRow.status == RowStatus.PENDING.value)
                            .values(status=RowStatus.CANCELLED.value, last_error="contact marked", payload=None))
        if opted_out:
            mark_opted_out(session, job.channel, job.address, "provider", f"twilio {_code(error)}")
        else:
            mark_invalid(session, job.channel, job.address, str(error)[:200])


def release(sessions: sessionmaker[Session], ids: list[int], token: str) -> None:
    """Give claimed rows back untouched (the channel paused, or the process is stopping)."""
    if not ids:
        return
    with sessions() as session, session.begin():
        session.execute(update(OutboxRow).where(OutboxRow.id.in_(ids), OutboxRow.claim == token,
                                                OutboxRow.status == RowStatus.SENDING.value)
                        .values(status=RowStatus.PENDING.value))


def _code(error: DeliveryError) -> int | None:
    try:
        return int(error.code) if error.code is not None else None
    except (TypeError, ValueError):
        return None
