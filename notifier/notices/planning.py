"""Planning digests: turn new change events into outbox rows, one per contact, streaming contacts in batches.

Only contacts whose family follows a board that changed are read, `batch_size` at a time by id (keyset), so memory
does not grow with the number of subscribers. In each batch's transaction the contact's `seen_event_id` moves past
the events and its row is inserted, so a crash or a second run never plans the same events twice. A contact's
unsent pending digest is merged into the new one (cancelled and replaced), so an undone change sends nothing.

`replan` does the same for a few contacts at once, when the composer finds at send time that a row no longer says
something true (a correction was recorded after it was planned): the stale row's events are merged like a pending
digest's, so whoever never received the old news hears nothing, or only the net change.
"""

from __future__ import annotations

import logging
import time
from collections.abc import Iterable
from dataclasses import dataclass
from datetime import datetime

from sqlalchemy import Boolean, Integer, String, Text, exists, insert, literal, select, update
from sqlalchemy.orm import Session, sessionmaker

from notifier.config import Settings
from notifier.db import UtcDateTime, hold_lock
from notifier.delivery.outbox import ClockState, OutboxRow, Priority, RowStatus, event_ids
from notifier.notices import quiet_hours
from notifier.notices.digests import Event, Follows, follows_of, select_for
from notifier.status.history import ChangeEvent, latest_event_id
from notifier.subscribers.models import Contact, ContactStatus, Follow, Subscriber

log = logging.getLogger(__name__)

CURSOR = "planned_through"
FIRST_BATCH = 100  # a small first batch, committed at once: the first texts leave while the rest is planned


@dataclass
class PlanResult:
    """How many rows a planning pass created and cancelled, and how many contacts it looked at."""

    contacts: int = 0
    created: int = 0
    cancelled: int = 0


def plan(sessions: sessionmaker[Session], settings: Settings, now: datetime, batch_size: int = 1000) -> PlanResult:
    """Plan digests for every change event recorded since the last pass."""
    result = PlanResult()
    started = time.monotonic()
    with sessions() as session, session.begin():
        hold_lock(session, "plan")
        cursor = _cursor(session)
        newest = latest_event_id(session)
        if newest <= cursor:
            return result
        rows = session.scalars(select(ChangeEvent).where(ChangeEvent.id > cursor, ChangeEvent.id <= newest))
        events = {row.id: Event.from_row(row) for row in rows}
    boards = sorted({e.board_id for e in events.values()})  # silent edits too: seen_event_id moves past them
    last_id, size = 0, min(FIRST_BATCH, batch_size)
    while boards:
        with sessions() as session, session.begin():
            hold_lock(session, "plan")
            batch = _contacts(session, boards, newest, last_id, size)
            size = batch_size
            if not batch:
                break
            last_id = batch[-1].id
            _plan_batch(session, settings, batch, events, boards, newest, now, result)
    with sessions() as session, session.begin():
        hold_lock(session, "plan")
        _set_cursor(session, max(newest, _cursor(session)))
    if result.contacts:
        took = time.monotonic() - started
        log.info("planned %d digest(s) for %d contact(s) in %.1f s, %.0f contacts/s (events up to %d; %d merged or "
                 "cancelled)", result.created, result.contacts, took, result.contacts / max(took, 1e-3), newest,
                 result.cancelled)
    return result


def replan(session: Session, settings: Settings, superseded: dict[int, list[int]], key: str,
           now: datetime) -> PlanResult:
    """Plan again now for the contacts of superseded rows (contact id -> the events those rows covered).

    Their events are merged with the contact's pending digest and every event recorded since their last planning,
    and the contacts move past the newest event, so the running planning pass leaves them alone. The caller holds
    `hold_lock(session, "plan")`; `key` makes the new rows' digest keys unique.
    """
    result = PlanResult()
    newest = latest_event_id(session)
    batch = list(session.execute(_contact_columns().where(Contact.id.in_(superseded),
                                                           Contact.status == ContactStatus.ACTIVE.value)))
    if not batch:
        return result
    followed = select(Follow.board_id).where(Follow.subscriber_id.in_({c.subscriber_id for c in batch}))
    since = min(c.seen_event_id for c in batch)
    rows = session.scalars(select(ChangeEvent).where(ChangeEvent.id > since, ChangeEvent.id <= newest,
                                                     ChangeEvent.board_id.in_(followed)))
    events = {row.id: Event.from_row(row) for row in rows}
    _load_missing(session, events, (i for found in superseded.values() for i in found))
    boards = sorted({e.board_id for e in events.values()})
    _plan_batch(session, settings, batch, events, boards, newest, now, result, superseded, key)
    return result


def _contact_columns():
    return (select(Contact.id, Contact.subscriber_id, Contact.channel, Contact.frequency, Contact.seen_event_id,
                   Subscriber.notify_on_effect)
            .join(Subscriber, Subscriber.id == Contact.subscriber_id))


def _contacts(session: Session, boards: list[str], newest: int, after_id: int, limit: int) -> list:
    follows_changed = exists().where(Follow.subscriber_id == Contact.subscriber_id, Follow.board_id.in_(boards))
    query = (
        _contact_columns()
        .where(Contact.status == ContactStatus.ACTIVE.value, Contact.seen_event_id < newest, Contact.id > after_id,
               follows_changed)
        .order_by(Contact.id)
        .limit(limit)
    )
    return list(session.execute(query))


def _plan_batch(session: Session, settings: Settings, batch: list, events: dict[int, Event], boards: list[str],
                newest: int, now: datetime, result: PlanResult, merged_in: dict[int, list[int]] | None = None,
                key: str | None = None) -> None:
    ids = [c.id for c in batch]
    follow_rows = session.execute(
        select(Follow.subscriber_id, Follow.board_id, Follow.panel)
        .where(Follow.subscriber_id.in_({c.subscriber_id for c in batch}), Follow.board_id.in_(boards))
    )
    pairs: dict[int, list[tuple[str, str]]] = {}
    for subscriber_id, board_id, panel in follow_rows:
        pairs.setdefault(subscriber_id, []).append((board_id, panel))
    # Unsent digests are merged into the new one: the claim-safe UPDATE only takes rows still pending.
    merged: dict[int, list[int]] = {contact_id: list(found) for contact_id, found in (merged_in or {}).items()}
    cancelled = session.execute(
        update(OutboxRow).where(OutboxRow.contact_id.in_(ids), OutboxRow.status == RowStatus.PENDING.value,
                                OutboxRow.payload.is_(None))  # a confirmation or a reply is no digest
        .values(status=RowStatus.CANCELLED.value).returning(OutboxRow.contact_id, OutboxRow.event_ids)
    )
    for contact_id, stored in cancelled:
        merged.setdefault(contact_id, []).extend(event_ids(stored))
        result.cancelled += 1
    _load_missing(session, events, (i for found in merged.values() for i in found))
    decided: dict[tuple, tuple[list[Event], bool]] = {}
    groups: dict[tuple[str, bool, str, str], list[int]] = {}  # (events, urgent, channel, frequency) -> contacts
    for contact in batch:
        follows: Follows = follows_of(pairs.get(contact.subscriber_id, ()))
        candidates = sorted({*merged.get(contact.id, ()), *(i for i in events if i > contact.seen_event_id)})
        profile = (tuple(sorted(follows.items())), contact.notify_on_effect, tuple(candidates))
        if profile not in decided:
            decided[profile] = select_for([events[i] for i in candidates], follows, contact.notify_on_effect)
        chosen, urgent = decided[profile]
        result.contacts += 1
        if not chosen:
            continue
        stored = ",".join(str(e.id) for e in chosen)
        groups.setdefault((stored, urgent, contact.channel, contact.frequency), []).append(contact.id)
    # Set-wise: one INSERT ... SELECT per distinct digest in the batch (usually one or two), urgent ones first.
    for (stored, urgent, channel, frequency), members in sorted(groups.items(), key=lambda g: not g[0][1]):
        due = quiet_hours.due_at(settings, channel, frequency, urgent, now)
        columns = {"contact_id": Contact.id, "channel": Contact.channel,
                   "digest_key": literal(key or f"events-{newest}", String()), "event_ids": literal(stored, Text()),
                   "urgent": literal(urgent, Boolean()), "attempts": literal(0, Integer()),
                   "status": literal(RowStatus.PENDING.value, String()), "created_at": literal(now, UtcDateTime()),
                   "due_at": literal(due, UtcDateTime()), "priority": literal(Priority.DIGEST, Integer())}
        session.execute(insert(OutboxRow).from_select(
            list(columns), select(*columns.values()).where(Contact.id.in_(members))))
        result.created += len(members)
    session.execute(update(Contact).where(Contact.id.in_(ids)).values(seen_event_id=newest))


def _load_missing(session: Session, events: dict[int, Event], wanted: Iterable[int]) -> None:
    missing = set(wanted) - events.keys()
    if missing:
        for row in session.scalars(select(ChangeEvent).where(ChangeEvent.id.in_(missing))):
            events[row.id] = Event.from_row(row)


def _cursor(session: Session) -> int:
    state = session.get(ClockState, CURSOR)
    return state.number if state else 0


def _set_cursor(session: Session, value: int) -> None:
    state = session.get(ClockState, CURSOR)
    if state is None:
        session.add(ClockState(name=CURSOR, number=value))
    else:
        state.number = value
