"""Messages a parent is waiting for (a confirmation, a manage link, the reply to a texted keyword, a staff sign-in
link).

They go into the outbox with their words fixed (`payload`) and at the top priority, so they count against the
sender's rate like every text and overtake a running fan-out: a sending process (the clock's sending loop by
default) claims them within a second or two. A web page never waits for them (`send_soon`): it answers at once and
the same for every address, so neither its words nor its answer time tell whether an address is subscribed. When no
sending process runs (a test, a clock that is down), the web process sends them itself, in a background thread,
through the same rate limiter, rather than leave the parent waiting. A command (`invite`) may wait for the outcome
(`deliver`).
"""

from __future__ import annotations

import json
import logging
import threading
import time
from collections.abc import Iterable
from datetime import datetime
from typing import Any, cast

from sqlalchemy import Table, insert, select, update
from sqlalchemy.orm import Session, sessionmaker

from notifier.config import Settings
from notifier.db import rowcount, utcnow
from notifier.delivery import channels as channel_registry
from notifier.delivery import health, pacing, senders
from notifier.delivery.channels import Message
from notifier.delivery.claims import claim
from notifier.delivery.outbox import Failure, OutboxRow, Priority, RowStatus
from notifier.delivery.pacing import Pacer
from notifier.delivery.sending import Job, limits, release, send_one

log = logging.getLogger(__name__)

SENT, OPTED_OUT, INVALID, FAILED = "sent", "opted_out", "invalid", "failed"
WAIT_SECONDS = 15.0  # how long a page waits for a sending process before saying "sent" (the row is durable)


def enqueue(session: Session, message: Message, contact_id: int | None, priority: int = Priority.ACCOUNT,
            now: datetime | None = None) -> int:
    """Store `message` in the outbox, due `now` (the present by default); returns its row id (the caller commits)."""
    row = OutboxRow(**_values(message, contact_id, priority, now or utcnow(), urgent=True))
    session.add(row)
    session.flush()
    return row.id


def enqueue_many(session: Session, messages: Iterable[tuple[Message, int | None]], priority: int,
                 batch: int = 5000) -> list[int]:
    """Store many (message, contact id) pairs in the outbox, due now, with bulk statements; their row ids in order.

    A bulk import's invitations use `Priority.DIGEST`: nobody waits on a page for them, and they must not hold
    back a closure notice that is going out at the same time."""
    table = cast(Table, OutboxRow.__table__)  # a mapped class's table is typed as any FromClause
    statement = insert(table).returning(table.c.id, sort_by_parameter_order=True)
    ids: list[int] = []
    rows: list[dict[str, Any]] = []
    now = utcnow()
    for message, contact_id in messages:
        rows.append({**_values(message, contact_id, priority, now, urgent=False), "created_at": now})
        if len(rows) >= batch:
            ids.extend(session.execute(statement, rows).scalars())
            rows = []
    if rows:
        ids.extend(session.execute(statement, rows).scalars())
    return ids


def _values(message: Message, contact_id: int | None, priority: int, now: datetime, urgent: bool) -> dict[str, Any]:
    """An outbox row's columns for a message whose words are already written, due `now`."""
    return {"contact_id": contact_id, "channel": message.channel, "digest_key": message.reference[:64],
            "event_ids": "", "urgent": urgent, "status": RowStatus.PENDING.value, "due_at": now, "attempts": 0,
            "priority": priority, "payload": json.dumps(_payload(message), ensure_ascii=False)}


def _payload(message: Message) -> dict[str, Any]:
    return {"to": message.to, "text": message.text, "reference": message.reference, "language": message.language,
            "subject": message.subject, "html": message.html, "headers": message.headers}


def jobs(session: Session, ids: Iterable[int]) -> list[Job]:
    """Jobs for claimed rows that carry their own words."""
    rows = session.execute(select(OutboxRow.id, OutboxRow.channel, OutboxRow.payload, OutboxRow.attempts,
                                  OutboxRow.claim, OutboxRow.claimed_at)
                           .where(OutboxRow.id.in_(list(ids)), OutboxRow.payload.is_not(None))).all()
    found = []
    for row_id, channel, payload, attempts, claimed_by, claimed_at in rows:
        data = json.loads(cast(str, payload))  # never None: the query leaves those rows out
        message = Message(channel=channel, to=data["to"], text=data["text"], reference=data["reference"],
                          language=data.get("language") or "en", subject=data.get("subject"),
                          html=data.get("html"), headers=data.get("headers") or {})
        found.append(Job(row_id, channel, data["to"], message, attempts, claimed_by, claimed_at))
    return found


def deliver(sessions: sessionmaker[Session], settings: Settings, ids: list[int],
            wait: float = WAIT_SECONDS) -> dict[int, str]:
    """Get the rows `ids` sent (by a sending process, or here when none runs); each one's outcome."""
    with sessions() as session:
        alive = bool(senders.live(session))
    if not alive:
        _send_here(sessions, settings, ids)
    return _await(sessions, ids, wait)


# This process's background sends (threads, not shared state): `settle` waits for them.
_couriers: set[threading.Thread] = set()
_couriers_lock = threading.Lock()


def send_soon(sessions: sessionmaker[Session], settings: Settings, ids: list[int]) -> None:
    """Leave the rows `ids` to be sent without waiting: by a sending process if one runs, else by a background
    thread of this process. No SMTP or Twilio I/O happens in the caller, and the same work is done whether `ids`
    is empty or not (the caller's answer time tells nothing)."""
    with sessions() as session:
        alive = bool(senders.live(session))
    if alive or not ids:
        return
    thread = threading.Thread(target=_send_in_background, args=(sessions, settings, list(ids)), name="express",
                              daemon=True)
    with _couriers_lock:
        _couriers.add(thread)
    thread.start()


def _send_in_background(sessions: sessionmaker[Session], settings: Settings, ids: list[int]) -> None:
    try:
        _send_here(sessions, settings, ids)
    except Exception:  # the rows stay in the outbox: a sending process (or reconciliation) takes them later
        log.exception("express: background send of outbox rows %s failed", ids)
    finally:
        with _couriers_lock:
            _couriers.discard(threading.current_thread())


def settle(timeout: float = 30.0) -> None:
    """Wait up to `timeout` seconds for this process's background sends to finish (tests; a process stopping)."""
    deadline = time.monotonic() + timeout
    while True:
        with _couriers_lock:
            running = list(_couriers)
        if not running or time.monotonic() > deadline:
            return
        for thread in running:
            thread.join(max(0.0, deadline - time.monotonic()))


def _send_here(sessions: sessionmaker[Session], settings: Settings, ids: list[int]) -> None:
    token = senders.web_claim()
    with sessions() as session:
        paused = {p.channel for p in health.pauses(session)}
        by_channel = dict(session.execute(select(OutboxRow.id, OutboxRow.channel).where(OutboxRow.id.in_(ids))).all())
    built = channel_registry.build(settings)
    for name in sorted(set(by_channel.values()) - paused):
        mine = [i for i, channel in by_channel.items() if channel == name]
        with sessions() as session, session.begin():
            claimed = claim(session, name, utcnow(), len(mine), token, ids=mine)
        with sessions() as session:
            found = jobs(session, claimed)
        pacer = _pacer(settings, name)
        with built[name].session():
            for job in found:
                # Not in time: left pending, for a sending process to take.
                if not pacer.acquire(weight=built[name].units(job.message), timeout=WAIT_SECONDS):
                    release(sessions, [job.row_id], token)
                    continue
                send_one(sessions, settings, built[name], job, token, _Direct(sessions), pacer.pushback)


def _pacer(settings: Settings, channel: str) -> Pacer:
    return pacing.shared(channel, limits(settings, channel)[1], settings.redis_url)


class _Direct:
    """Records "sent" at once (one or two messages: no batching needed)."""

    def __init__(self, sessions: sessionmaker[Session]) -> None:
        self.sessions = sessions

    def sent(self, row_id: int, token: str | None, provider_id: str) -> None:
        with self.sessions() as session, session.begin():
            session.execute(update(OutboxRow).where(OutboxRow.id == row_id, OutboxRow.claim == token)
                            .values(status=RowStatus.SENT.value, provider_id=provider_id, sent_at=utcnow(),
                                    payload=None))


def _await(sessions: sessionmaker[Session], ids: list[int], wait: float) -> dict[int, str]:
    deadline = time.monotonic() + wait
    outcomes: dict[int, str] = {}
    while True:
        with sessions() as session:
            paused = {p.channel for p in health.pauses(session)}
            rows = session.execute(select(OutboxRow.id, OutboxRow.channel, OutboxRow.status, OutboxRow.failure,
                                          OutboxRow.attempts).where(OutboxRow.id.in_(ids))).all()
        for row_id, channel, status, failure, attempts in rows:
            if row_id in outcomes:
                continue
            outcome = _outcome(status, failure)
            if outcome is None and status == RowStatus.PENDING.value and (attempts or channel in paused):
                outcome = _give_up(sessions, row_id)  # the parent is asked to try again: no second copy later
            if outcome is not None:
                outcomes[row_id] = outcome
        missing = [i for i in ids if i not in outcomes and i not in {r[0] for r in rows}]
        outcomes.update(dict.fromkeys(missing, FAILED))
        if len(outcomes) == len(ids) or time.monotonic() > deadline:
            break
        time.sleep(0.1)
    # Still queued when the page stops waiting: it will go out; the parent is told to look for it.
    return {i: outcomes.get(i, SENT) for i in ids}


def _outcome(status: str, failure: str | None) -> str | None:
    if status == RowStatus.SENT.value:
        return SENT
    if status == RowStatus.FAILED.value:
        return {Failure.OPTED_OUT.value: OPTED_OUT, Failure.INVALID.value: INVALID}.get(failure or "", FAILED)
    if status == RowStatus.CANCELLED.value:
        return FAILED
    return None


def _give_up(sessions: sessionmaker[Session], row_id: int) -> str | None:
    with sessions() as session, session.begin():
        done = session.execute(update(OutboxRow).where(OutboxRow.id == row_id,
                                                       OutboxRow.status == RowStatus.PENDING.value)
                               .values(status=RowStatus.CANCELLED.value, payload=None,
                                       last_error="the parent was asked to try again"))
    return FAILED if rowcount(done) else None
