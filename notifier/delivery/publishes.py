"""What "a publish" is, and which outbox rows went out for it: shared by the live progress and the report.

A publish is a group of one board's change events that parents are told about (`notify`), recorded together by one
cycle; an event recorded outside a cycle is a publish of its own. It is named by its first event's id, which never
changes and is never reused. The rows that went out for it are the outbox rows covering any of its events (a row
names them in `event_ids`, "12,13,17"), except those that never carried the news themselves: a row merged into a
newer digest is cancelled, and one overtaken by a correction is superseded, and in both cases a newer row carries its
events (or the news netted out); counting them would count a family twice.
"""

from __future__ import annotations

from dataclasses import dataclass
from datetime import datetime, timedelta

from sqlalchemy import ColumnElement, Select, false, func, literal, or_, select
from sqlalchemy.orm import Session

from notifier.delivery import outbox
from notifier.delivery.outbox import OutboxRow, RowStatus
from notifier.status.history import ChangeEvent, Cycle

# The rows that count for a publish: sent, on their way, or given up. Never cancelled or superseded ones.
PARENTS_CHANNELS = ("email", "sms", "push")
COUNTED = (RowStatus.PENDING.value, RowStatus.SENDING.value, RowStatus.SENT.value, RowStatus.FAILED.value)
CLOCK_SKEW = timedelta(hours=1)  # how far the clocks of the processes that record and that plan may disagree
LARGEST_ID = 2**31 - 1  # ids are 32-bit integers on PostgreSQL: anything larger names nothing


@dataclass(frozen=True)
class Publish:
    """One publish of one board: its id (its first event's), when it was recorded, its events, the document
    version the cycle read (None outside a cycle)."""

    board_id: str
    id: int
    published_at: datetime
    event_ids: tuple[int, ...]
    version: str | None = None


def as_announced(events: list[ChangeEvent]) -> bool:
    """True when time alone made these changes (an announced period started or ended): nobody published them then,
    so nobody is credited with them, though the cycle read a version a person published."""
    return bool(events) and all(event.scheduled for event in events)


def covering(event_ids: tuple[int, ...]) -> ColumnElement[bool]:
    """SQL: the outbox row is a parent's message (organisations' webhooks are not counted), covers one of
    `event_ids` and counts (see `COUNTED`)."""
    padded = literal(",") + OutboxRow.event_ids + literal(",")
    covers = or_(*(padded.like(f"%,{int(e)},%") for e in event_ids)) if event_ids else false()
    return covers & OutboxRow.status.in_(COUNTED) & OutboxRow.channel.in_(PARENTS_CHANNELS)


def _group() -> ColumnElement[int]:
    """The key that groups events into publishes: the cycle, or the event alone (negated: never a cycle's id)."""
    return func.coalesce(ChangeEvent.cycle_id, -ChangeEvent.id)


def _told(board_id: str | None) -> Select[ChangeEvent]:
    query = select(ChangeEvent).where(ChangeEvent.notify.is_(True))
    return query if board_id is None else query.where(ChangeEvent.board_id == board_id)


def _publish(session: Session, first: ChangeEvent) -> Publish:
    """The whole publish `first` belongs to."""
    if first.cycle_id is None:
        return Publish(first.board_id, first.id, first.recorded_at, (first.id,))
    events = session.execute(select(ChangeEvent.id, ChangeEvent.recorded_at).where(
        ChangeEvent.board_id == first.board_id, ChangeEvent.cycle_id == first.cycle_id,
        ChangeEvent.notify.is_(True)).order_by(ChangeEvent.id)).all()
    version = session.scalar(select(Cycle.file_version).where(Cycle.id == first.cycle_id))
    return Publish(first.board_id, events[0].id, events[0].recorded_at, tuple(e.id for e in events), version)


def latest(session: Session, board_id: str | None = None) -> Publish | None:
    """The newest publish parents were told about (of one board, or of any)."""
    newest = session.scalars(_told(board_id).order_by(ChangeEvent.id.desc()).limit(1)).first()
    return None if newest is None else _publish(session, newest)


def find(session: Session, board_id: str, publish_id: int) -> Publish | None:
    """The publish of `board_id` named `publish_id`, or None when no publish of that board has that name."""
    if not 0 < publish_id <= LARGEST_ID:
        return None
    event = session.scalars(_told(board_id).where(ChangeEvent.id == publish_id)).first()
    if event is None:
        return None
    found = _publish(session, event)
    return found if found.id == publish_id else None  # a later event of a publish is not a name for it


def of_board(session: Session, board_id: str, limit: int = 50) -> list[tuple[Publish, list[ChangeEvent]]]:
    """The board's newest `limit` publishes, newest first, each with its events (what changed)."""
    firsts = list(session.scalars(select(func.min(ChangeEvent.id)).where(
        ChangeEvent.board_id == board_id, ChangeEvent.notify.is_(True)).group_by(_group())
        .order_by(func.min(ChangeEvent.id).desc()).limit(limit)))
    if not firsts:
        return []
    events = list(session.scalars(_told(board_id).where(ChangeEvent.id >= min(firsts)).order_by(ChangeEvent.id)))
    cycles = {e.cycle_id for e in events if e.cycle_id is not None}
    versions = dict(session.execute(select(Cycle.id, Cycle.file_version).where(Cycle.id.in_(cycles))).all())
    groups: dict[int, list[ChangeEvent]] = {}
    first_of: dict[object, int] = {}
    for event in events:
        key = event.cycle_id if event.cycle_id is not None else -event.id
        first_of.setdefault(key, event.id)
        groups.setdefault(first_of[key], []).append(event)
    found = []
    for first in sorted(firsts, reverse=True):
        members = groups.get(first, [])
        if members:
            found.append((Publish(board_id, first, members[0].recorded_at, tuple(e.id for e in members),
                                  versions.get(members[0].cycle_id or 0)), members))  # no cycle: no version
    return found


def recipients(session: Session, publishes: list[Publish]) -> dict[int, dict[str, int]]:
    """Per publish id, the rows that went out for it per channel, in one pass over the outbox.

    Rows are grouped by their `event_ids` text (one group per distinct digest, a handful per publish), and each group
    is given to the publishes it covers here: testing each row against every listed publish's events in SQL costs a
    LIKE per event per row (12 s for 30 publishes over 300,000 rows on SQLite). A row is never planned before its
    events are recorded, so rows created before the oldest listed publish (less an hour for clock skew between
    processes) are not read.
    """
    if not publishes:
        return {}
    owner = {event: publish.id for publish in publishes for event in publish.event_ids}
    since = min(publish.published_at for publish in publishes) - CLOCK_SKEW
    query = (select(OutboxRow.channel, OutboxRow.event_ids, func.count())
             .where(OutboxRow.status.in_(COUNTED), OutboxRow.created_at >= since)
             .group_by(OutboxRow.channel, OutboxRow.event_ids))
    counts: dict[int, dict[str, int]] = {publish.id: {} for publish in publishes}
    for channel, covered, number in session.execute(query):
        for publish_id in {owner[e] for e in outbox.event_ids(covered) if e in owner}:
            counts[publish_id][channel] = counts[publish_id].get(channel, 0) + number
    return counts


def events(session: Session, publish: Publish) -> list[ChangeEvent]:
    """The change events of `publish`, in the order they were recorded."""
    return list(session.scalars(select(ChangeEvent).where(ChangeEvent.id.in_(publish.event_ids))
                                .order_by(ChangeEvent.id)))
