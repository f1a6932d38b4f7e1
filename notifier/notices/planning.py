"""Planning digests: turn new change events into outbox rows, one per contact, streaming contacts in batches.

Only contacts whose family follows a board that changed are read, `batch_size` at a time by id (keyset), so memory
does not grow with the number of subscribers. In each batch's transaction the contact's `seen_event_id` moves past
the events and its row is inserted, so a crash or a second run never plans the same events twice. A contact's
unsent pending digest is merged into the new one (cancelled and replaced), so an undone change sends nothing.
"""

from __future__ import annotations

import logging
from collections.abc import Iterable
from dataclasses import dataclass
from datetime import datetime

from sqlalchemy import exists, insert, select, update
from sqlalchemy.orm import Session, sessionmaker

from notifier.config import Settings
from notifier.db import hold_lock
from notifier.delivery.outbox import ClockState, OutboxRow, RowStatus, event_ids
from notifier.notices import quiet_hours
from notifier.notices.digests import Event, Follows, follows_of, select_for
from notifier.status.history import ChangeEvent, latest_event_id
from notifier.subscribers.models import Contact, ContactStatus, Follow, Subscriber

log = logging.getLogger(__name__)

CURSOR = "planned_through"


@dataclass
class PlanResult:
    """How many rows a planning pass created and cancelled, and how many contacts it looked at."""

    contacts: int = 0
    created: int = 0
    cancelled: int = 0


def plan(sessions: sessionmaker[Session], settings: Settings, now: datetime, batch_size: int = 1000) -> PlanResult:
    """Plan digests for every change event recorded since the last pass."""
    result = PlanResult()
    with sessions() as session, session.begin():
        hold_lock(session, "plan")
        cursor = _cursor(session)
        newest = latest_event_id(session)
        if newest <= cursor:
            return result
        rows = session.scalars(select(ChangeEvent).where(ChangeEvent.id > cursor, ChangeEvent.id <= newest))
        events = {row.id: Event.from_row(row) for row in rows}
    boards = sorted({e.board_id for e in events.values()})  # silent edits too: seen_event_id moves past them
    last_id = 0
    while boards:
        with sessions() as session, session.begin():
            hold_lock(session, "plan")
            batch = _contacts(session, boards, newest, last_id, batch_size)
            if not batch:
                break
            last_id = batch[-1].id
            _plan_batch(session, settings, batch, events, boards, newest, now, result)
    with sessions() as session, session.begin():
        hold_lock(session, "plan")
        _set_cursor(session, max(newest, _cursor(session)))
    if result.contacts:
        log.info("planned %d digest(s) for %d contact(s) (events up to %d; %d merged or cancelled)",
                 result.created, result.contacts, newest, result.cancelled)
    return result


def _contacts(session: Session, boards: list[str], newest: int, after_id: int, limit: int) -> list:
    follows_changed = exists().where(Follow.subscriber_id == Contact.subscriber_id, Follow.board_id.in_(boards))
    query = (
        select(Contact.id, Contact.subscriber_id, Contact.channel, Contact.frequency, Contact.seen_event_id,
               Subscriber.notify_on_effect)
        .join(Subscriber, Subscriber.id == Contact.subscriber_id)
        .where(Contact.status == ContactStatus.ACTIVE.value, Contact.seen_event_id < newest, Contact.id > after_id,
               follows_changed)
        .order_by(Contact.id)
        .limit(limit)
    )
    return list(session.execute(query))


def _plan_batch(session: Session, settings: Settings, batch: list, events: dict[int, Event], boards: list[str],
                newest: int, now: datetime, result: PlanResult) -> None:
    ids = [c.id for c in batch]
    follow_rows = session.execute(
        select(Follow.subscriber_id, Follow.board_id, Follow.panel)
        .where(Follow.subscriber_id.in_({c.subscriber_id for c in batch}), Follow.board_id.in_(boards))
    )
    pairs: dict[int, list[tuple[str, str]]] = {}
    for subscriber_id, board_id, panel in follow_rows:
        pairs.setdefault(subscriber_id, []).append((board_id, panel))
    # Unsent digests are merged into the new one: the claim-safe UPDATE only takes rows still pending.
    merged: dict[int, list[int]] = {}
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
    new_rows = []
    for contact in batch:
        follows: Follows = follows_of(pairs.get(contact.subscriber_id, ()))
        candidates = sorted({*merged.get(contact.id, ()), *(i for i in events if i > contact.seen_event_id)})
        key = (tuple(sorted(follows.items())), contact.notify_on_effect, tuple(candidates))
        if key not in decided:
            decided[key] = select_for([events[i] for i in candidates], follows, contact.notify_on_effect)
        chosen, urgent = decided[key]
        result.contacts += 1
        if not chosen:
            continue
        new_rows.append({
            "contact_id": contact.id, "channel": contact.channel, "digest_key": f"events-{newest}",
            "event_ids": ",".join(str(e.id) for e in chosen), "urgent": urgent, "attempts": 0,
            "status": RowStatus.PENDING.value, "created_at": now,
            "due_at": quiet_hours.due_at(settings, contact.channel, contact.frequency, urgent, now),
        })
    if new_rows:
        session.execute(insert(OutboxRow), new_rows)
        result.created += len(new_rows)
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
