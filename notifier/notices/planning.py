"""Planning digests: turn new change events into outbox rows, one per contact, set-wise in the database.

Contacts whose family follows a board that changed are taken in id ranges of `batch_size` (the first range small,
so the first texts leave while the rest is planned). Within a range, contacts that share what decides their digest
(the events they have not seen, which panels of the changed boards they follow, "now in effect" or not) form one
profile; the database groups them (one GROUP BY), Python decides each profile's digest once, and one
`INSERT … SELECT` writes the range's rows, urgent first; memory holds profiles, not contacts.

How far each contact is planned is a watermark, not a column rewritten for every contact on every pass (that UPDATE
was a third of planning's time): the pass's cursor covers everyone once the pass ends; while a pass runs (or after
it was cut short) the last contact id it planned is stored with each range, in the range's transaction, so a crash
or a second run never plans the same events twice. A contact's own `seen_event_id` counts where it is higher (set
when it is planned one by one or activated). A pass cut short for newer news leaves its record; the next pass
first writes that record into the contacts it covered, a few ranges at a time, then plans.

A contact with an unsent pending digest is planned one by one instead: that digest is cancelled (a claim-safe
UPDATE) and its events merged into the new one, so an undone change sends nothing. So is any contact the set-wise
statements left behind (its follows changed between them, say).

`replan` does the same for a few contacts at once, when the composer finds at send time that a row no longer says
something true (a correction was recorded after it was planned): the stale row's events are merged like a pending
digest's, so whoever never received the old news hears nothing, or only the net change.
"""

from __future__ import annotations

import logging
import time
from collections.abc import Callable, Iterable, Sequence
from dataclasses import dataclass
from datetime import datetime
from typing import Any, cast

from sqlalchemy import (
    Boolean,
    ColumnElement,
    Integer,
    Row,
    Select,
    String,
    Subquery,
    Text,
    and_,
    case,
    exists,
    func,
    insert,
    literal,
    null,
    select,
    update,
)
from sqlalchemy.orm import Session, sessionmaker

from notifier.config import Settings
from notifier.db import UtcDateTime, hold_lock, insert_new
from notifier.delivery.outbox import PLANNED_THROUGH, ClockState, OutboxRow, Priority, RowStatus, event_ids
from notifier.notices import quiet_hours
from notifier.notices.digests import Event, Follows, Selection, follows_of, select_for
from notifier.status.history import ChangeEvent, latest_event_id
from notifier.subscribers.models import Contact, ContactStatus, Follow, Subscriber

log = logging.getLogger(__name__)

CURSOR = PLANNED_THROUGH
PASS_EVENTS, PASS_CONTACT = "planning_pass_events", "planning_pass_contact"  # the pass under way, or cut short
SETTLE_BATCH = 20_000  # contact ids per transaction when a cut-short pass is written into its contacts
FIRST_BATCH = 100  # a small first batch, committed at once: the first texts leave while the rest is planned
BOARDS_PER_MASK = 31  # two bits per board (elementary, secondary) in each 64-bit follows mask
MAX_PROFILES = 400  # beyond this many distinct profiles in one range, plan it one by one (a CASE that long costs more)


@dataclass
class PlanResult:
    """How many rows a planning pass created and cancelled, and how many contacts it looked at; `interrupted` when
    it stopped early for newer news (its cursor stays, so the next pass plans the rest with the news merged in)."""

    contacts: int = 0
    created: int = 0
    cancelled: int = 0
    interrupted: bool = False


@dataclass(frozen=True)
class Watermark:
    """How far planning has gone: every contact through `cursor`; those with ids up to `pass_contact` through
    `pass_events` (a pass under way or cut short); a contact's own `seen_event_id` where it is higher."""

    cursor: int
    pass_events: int = 0
    pass_contact: int = 0

    def seen(self, contact_id: int, own: int) -> int:
        """The newest event already planned for this contact."""
        floor = max(self.cursor, self.pass_events) if contact_id <= self.pass_contact else self.cursor
        return max(own, floor)

    def column(self) -> ColumnElement[int]:
        """`seen` as an SQL expression, for contacts past any pass record (the ranges a pass plans): the contact's
        own mark where it is above the cursor, else the cursor (portable: SQLite has no GREATEST)."""
        floor = literal(self.cursor, Integer())
        return case((Contact.seen_event_id > floor, Contact.seen_event_id), else_=floor)


def watermark(session: Session) -> Watermark:
    """The watermark as stored; read under `hold_lock(session, "plan")` to act on it."""
    return Watermark(_state(session, CURSOR), _state(session, PASS_EVENTS), _state(session, PASS_CONTACT))


def plan(sessions: sessionmaker[Session], settings: Settings, now: datetime, batch_size: int = 10_000,
         planned: Callable[[], None] | None = None, newer: Callable[[], bool] | None = None) -> PlanResult:
    """Plan digests for every change event recorded since the last pass.

    `planned` is called after each committed batch that wrote rows (the clock wakes its sending loop with it, so the
    first texts need not wait for a poll). Between batches the pass stops early when a newer change event was
    recorded, or when `newer()` says a newer status waits to be recorded: a correction saved a minute into a
    quarter-million-contact pass is then recorded and planned at once, and the contacts not yet planned hear only
    the net change (often nothing) instead of the news it corrects."""
    result = PlanResult()
    started = time.monotonic()
    with sessions() as session, session.begin():
        hold_lock(session, "plan")
        mark = watermark(session)
        newest = latest_event_id(session)
        if newest <= mark.cursor:
            return result
        rows = session.scalars(select(ChangeEvent).where(ChangeEvent.id > mark.cursor, ChangeEvent.id <= newest))
        events = {row.id: Event.from_row(row) for row in rows}
    last_id = 0
    if mark.pass_events == newest:
        last_id = mark.pass_contact  # a pass of the same events was cut short by a crash: go on where it stopped
    elif mark.pass_events:
        _settle_pass(sessions, mark, events)
    boards = sorted({e.board_id for e in events.values()})  # silent edits too: the cursor moves past them
    size = min(FIRST_BATCH, batch_size)
    while boards:
        with sessions() as session, session.begin():
            hold_lock(session, "plan")
            found = _next_range(session, boards, newest, last_id, size)
            size = batch_size
            if found is None:
                break
            upper, families = found
            created = result.created
            _plan_range(session, settings, events, boards, newest, now, last_id, upper, families, mark.cursor,
                        result)
            _set_pass(session, newest, upper)
            last_id = upper
        if planned is not None and result.created > created:
            planned()
        if _newer_news(sessions, newest, newer):
            result.interrupted = True
            log.info("planning stopped after %d contact(s): newer news came in; the next pass plans the rest with it",
                     result.contacts)
            return result
    with sessions() as session, session.begin():
        hold_lock(session, "plan")
        _set_state(session, CURSOR, max(newest, _state(session, CURSOR)))
        _set_pass(session, 0, 0)
    if result.contacts:
        took = time.monotonic() - started
        log.info("planned %d digest(s) for %d contact(s) in %.1f s, %.0f contacts/s (events up to %d; %d merged or "
                 "cancelled)", result.created, result.contacts, took, result.contacts / max(took, 1e-3), newest,
                 result.cancelled)
    return result


def _settle_pass(sessions: sessionmaker[Session], mark: Watermark, events: dict[int, Event]) -> None:
    """Write a cut-short pass into the contacts it planned, then forget it: the watermark then holds one pass at
    most. Each transaction is idempotent (only contacts still behind move), so a crash here only repeats work."""
    boards = sorted({e.board_id for i, e in events.items() if i <= mark.pass_events})
    for start in range(0, mark.pass_contact, SETTLE_BATCH) if boards else ():
        with sessions() as session, session.begin():
            hold_lock(session, "plan")
            session.execute(update(Contact).where(Contact.id > start,
                                                  Contact.id <= min(start + SETTLE_BATCH, mark.pass_contact),
                                                  _waiting(boards, mark.pass_events))
                            .values(seen_event_id=mark.pass_events).execution_options(synchronize_session=False))
    with sessions() as session, session.begin():
        hold_lock(session, "plan")
        _set_pass(session, 0, 0)


def _newer_news(sessions: sessionmaker[Session], newest: int, newer: Callable[[], bool] | None) -> bool:
    if newer is not None and newer():
        return True
    with sessions() as session:
        return latest_event_id(session) > newest


def replan(session: Session, settings: Settings, superseded: dict[int, list[int]], key: str,
           now: datetime) -> PlanResult:
    """Plan again now for the contacts of superseded rows (contact id -> the events those rows covered).

    Their events are merged with the contact's pending digest and every event recorded since the oldest of them
    (the contact heard none of those: whatever was planned after the superseded rows was planned on the premise
    that they would leave, and is superseded with them), and the contacts move past the newest event, so the
    running planning pass leaves them alone. The caller holds `hold_lock(session, "plan")`; `key` makes the new
    rows' digest keys unique.
    """
    result = PlanResult()
    newest = latest_event_id(session)
    mark = _Unheard(watermark(session), {c: min(found) - 1 for c, found in superseded.items() if found})
    batch = list(session.execute(_contact_columns().where(Contact.id.in_(superseded),
                                                           Contact.status == ContactStatus.ACTIVE.value)))
    if not batch:
        return result
    followed = select(Follow.board_id).where(Follow.subscriber_id.in_({c.subscriber_id for c in batch}))
    since = min(mark.seen(c.id, c.seen_event_id) for c in batch)
    rows = session.scalars(select(ChangeEvent).where(ChangeEvent.id > since, ChangeEvent.id <= newest,
                                                     ChangeEvent.board_id.in_(followed)))
    events = {row.id: Event.from_row(row) for row in rows}
    _load_missing(session, events, (i for found in superseded.values() for i in found))
    boards = sorted({e.board_id for e in events.values()})
    _plan_batch(session, settings, batch, events, boards, newest, now, result, mark, superseded, key)
    return result


@dataclass(frozen=True)
class _Unheard:
    """The watermark, capped for contacts whose rows were superseded: nothing from those rows' oldest event on
    reached them."""

    mark: Watermark
    heard_through: dict[int, int]

    def seen(self, contact_id: int, own: int) -> int:
        return min(self.mark.seen(contact_id, own), self.heard_through.get(contact_id, own))


def _contact_columns() -> Select[int, int, str, str, int, bool]:
    return (select(Contact.id, Contact.subscriber_id, Contact.channel, Contact.frequency, Contact.seen_event_id,
                   Subscriber.notify_on_effect)
            .join(Subscriber, Subscriber.id == Contact.subscriber_id))


def _waiting(boards: list[str], newest: int) -> ColumnElement[bool]:
    """Contacts still to plan: active, behind the newest event, in a family following a board that changed."""
    follows_changed = exists().where(Follow.subscriber_id == Contact.subscriber_id, Follow.board_id.in_(boards))
    return and_(Contact.status == ContactStatus.ACTIVE.value, Contact.seen_event_id < newest, follows_changed)


def _next_range(session: Session, boards: list[str], newest: int, after_id: int,
                size: int) -> tuple[int, tuple[int, int]] | None:
    """The next `size` contacts still to plan after `after_id`: the last one's id, and the lowest and highest family
    id among them (so follows and families are read by an index range); None when none is left."""
    ids = (select(Contact.id, Contact.subscriber_id).where(Contact.id > after_id, _waiting(boards, newest))
           .order_by(Contact.id).limit(size).subquery())
    upper, lowest, highest = session.execute(
        select(func.max(ids.c.id), func.min(ids.c.subscriber_id), func.max(ids.c.subscriber_id))).one()
    return None if upper is None else (upper, (lowest, highest))


def _plan_range(session: Session, settings: Settings, events: dict[int, Event], boards: list[str], newest: int,
                now: datetime, after_id: int, upper: int, families: tuple[int, int], cursor: int,
                result: PlanResult) -> None:
    """Plan the contacts with ids in (after_id, upper]: set-wise where it can, one by one where it must.

    `families` bounds the range's family ids, so follows and subscribers are read by their index, never scanned
    whole (family ids grow with contact ids, so the range is narrow; a wide one is only slower)."""
    key = f"events-{newest}"
    masks = _follow_masks(boards, after_id, upper, families)
    mask_columns = [masks.c[name] for name in masks.c.keys() if name != "subscriber_id"]
    # Contacts with an older digest still pending are merged one by one. Looked up first, by the outbox's
    # (contact_id, digest_key) index: a NOT EXISTS here is planned badly while the outbox grows under the planner.
    merging = list(session.scalars(
        select(OutboxRow.contact_id).where(OutboxRow.contact_id > after_id, OutboxRow.contact_id <= upper,
                                           OutboxRow.status == RowStatus.PENDING.value, OutboxRow.payload.is_(None),
                                           OutboxRow.digest_key != key)))
    # Every contact here is behind the pass's events, so its own mark only counts above the cursor; clamped, the
    # contacts planned in the same passes share one value (and one profile).
    seen = Watermark(cursor).column()
    profile_columns = [seen, Subscriber.notify_on_effect, *mask_columns]

    def in_range(*columns: Any) -> Select[*tuple[Any, ...]]:
        return (select(*columns).select_from(Contact)
                .join(Subscriber, Subscriber.id == Contact.subscriber_id)
                .join(masks, masks.c.subscriber_id == Contact.subscriber_id)
                .where(Subscriber.id.between(*families), Contact.id > after_id, Contact.id <= upper,
                       Contact.status == ContactStatus.ACTIVE.value, Contact.seen_event_id < newest,
                       Contact.id.not_in(merging)))

    found = session.execute(in_range(*profile_columns, Contact.channel, Contact.frequency, func.count())
                            .group_by(*profile_columns, Contact.channel, Contact.frequency)).all()
    if 0 < len(found) <= MAX_PROFILES:
        behind = _insert_profiles(session, settings, events, boards, newest, now, key, found, profile_columns,
                                  in_range, result)
        waiting: ColumnElement[bool] = Contact.id.in_([*merging, *behind])
    else:
        waiting = and_(Contact.id > after_id, Contact.id <= upper)
    _plan_one_by_one(session, settings, events, boards, newest, now, waiting, result)


def _insert_profiles(session: Session, settings: Settings, events: dict[int, Event], boards: list[str], newest: int,
                     now: datetime, key: str, found: Sequence[Row[*tuple[Any, ...]]], profile_columns: list[Any],
                     in_range: Callable[..., Select[*tuple[Any, ...]]],
                     result: PlanResult) -> list[int]:
    """Decide each profile's digest once and write the range's rows set-wise; return the contacts whose profile
    is none of those found (their family changed its follows since the GROUP BY, say): they go one by one."""
    known, stored_of, urgent_of, priority_of, due_of = [], [], [], [], []
    decided: dict[tuple[Any, ...], tuple[str, bool]] = {}
    for *profile, channel, frequency, count in found:
        seen, notify, *mask_values = profile
        same = and_(*(column == literal(value) for column, value in zip(profile_columns, profile, strict=True)))
        if tuple(profile) not in decided:
            follows = _unmask(boards, [int(value or 0) for value in mask_values])
            chosen = select_for([e for i, e in sorted(events.items()) if i > seen], follows, bool(notify))
            decided[tuple(profile)] = (",".join(str(e.id) for e in chosen.events), chosen.urgent)
            known.append((same, literal(1, Integer())))
            if chosen.events:
                stored_of.append((same, literal(decided[tuple(profile)][0], Text())))
                urgent_of.append((same, literal(chosen.urgent, Boolean())))
                priority_of.append((same, literal(_priority(chosen), Integer())))
        stored, urgent = decided[tuple(profile)]
        result.contacts += count
        if stored:
            result.created += count  # what the INSERT writes (psycopg reports no row count for INSERT … SELECT)
            due = quiet_hours.due_at(settings, channel, frequency, urgent, now)
            due_of.append((and_(same, Contact.channel == channel, Contact.frequency == frequency),
                           literal(due, UtcDateTime())))
    behind = case(*known, else_=null()).is_(None)
    if not stored_of:
        return list(session.scalars(in_range(Contact.id).where(behind)))
    rows_query = in_range(
        Contact.id.label("contact_id"), Contact.channel.label("channel"),
        case(*stored_of, else_=null()).label("event_ids"), case(*urgent_of, else_=False).label("urgent"),
        case(*due_of, else_=null()).label("due_at"), case(*priority_of, else_=Priority.DIGEST).label("priority"),
        behind.label("behind"),
    )
    postgres = session.get_bind().dialect.name == "postgresql"
    planned = rows_query.cte("planned") if postgres else rows_query.subquery("planned")
    columns = {"contact_id": planned.c.contact_id, "channel": planned.c.channel,
               "digest_key": literal(key, String()), "event_ids": planned.c.event_ids,
               "urgent": planned.c.urgent, "attempts": literal(0, Integer()),
               "status": literal(RowStatus.PENDING.value, String()), "created_at": literal(now, UtcDateTime()),
               "due_at": planned.c.due_at, "priority": planned.c.priority}
    # A row already written for the same events and contact (a pass repeated by hand, say) is left as it was.
    writing = insert_new(session, OutboxRow.__table__).from_select(
        list(columns), select(*columns.values()).where(planned.c.event_ids.is_not(None))
        .order_by(planned.c.urgent.desc(), planned.c.contact_id))
    left = select(planned.c.contact_id).where(planned.c.behind)
    if postgres:  # one statement: the range is read once, and the rows written and those left behind agree
        return list(session.scalars(left.add_cte(writing.cte("written"))))
    session.execute(writing)
    return list(session.scalars(left))


def _plan_one_by_one(session: Session, settings: Settings, events: dict[int, Event], boards: list[str], newest: int,
                     now: datetime, which: ColumnElement[bool], result: PlanResult) -> None:
    """The contacts the set-wise statements did not settle: those with a pending digest to merge, and any whose
    profile changed under them. A row the set-wise insert wrote for one of them is merged like any other. Their own
    `seen_event_id` moves, so the watermark's next pass leaves them alone."""
    batch = list(session.execute(_contact_columns().where(which, _waiting(boards, newest)).order_by(Contact.id)))
    if batch:
        _plan_batch(session, settings, batch, events, boards, newest, now, result, Watermark(0),
                    key=f"events-{newest}-m")


def _follow_masks(boards: list[str], after_id: int, upper: int, families: tuple[int, int]) -> Subquery:
    """Per family in the id range, which panels of the changed boards it follows: two bits per board, in as many
    64-bit sums as the boards need (a family follows each board and panel at most once, so a sum is a bit-or)."""
    panel_bits = case({"elementary": 1, "secondary": 2}, value=Follow.panel, else_=0)
    sums = []
    for start in range(0, len(boards), BOARDS_PER_MASK):
        chunk = boards[start:start + BOARDS_PER_MASK]
        board_bits = case({board: 1 << (2 * i) for i, board in enumerate(chunk)}, value=Follow.board_id, else_=0)
        sums.append(func.sum(board_bits * panel_bits).label(f"mask{start // BOARDS_PER_MASK}"))
    in_range = select(Contact.subscriber_id).where(Contact.id > after_id, Contact.id <= upper)
    return (select(Follow.subscriber_id, *sums)
            .where(Follow.subscriber_id.between(*families), Follow.board_id.in_(boards),
                   Follow.subscriber_id.in_(in_range))
            .group_by(Follow.subscriber_id).subquery("follow_masks"))


def _unmask(boards: list[str], masks: list[int]) -> Follows:
    """The follows a set of masks stands for (the inverse of `_follow_masks`)."""
    pairs: list[tuple[str, str]] = []
    for index, board in enumerate(boards):
        mask = masks[index // BOARDS_PER_MASK] >> (2 * (index % BOARDS_PER_MASK))
        pairs.extend((board, panel) for bit, panel in ((1, "elementary"), (2, "secondary")) if mask & bit)
    return follows_of(pairs)


def _plan_batch(session: Session, settings: Settings, batch: list[Any], events: dict[int, Event], boards: list[str],
                newest: int, now: datetime, result: PlanResult, mark: Watermark | _Unheard,
                merged_in: dict[int, list[int]] | None = None, key: str | None = None) -> None:
    """Plan a few contacts one by one (`events` holds at least those after `mark`), merging their pending digests."""
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
        merged.setdefault(cast(int, contact_id), []).extend(event_ids(stored))  # one of `ids`, never None
        result.cancelled += 1
    _load_missing(session, events, (i for found in merged.values() for i in found))
    decided: dict[tuple[Any, ...], Selection] = {}
    groups: dict[tuple[str, bool, int, str, str], list[int]] = {}  # (events, urgent, priority, channel, frequency)
    for contact in batch:
        follows: Follows = follows_of(pairs.get(contact.subscriber_id, ()))
        seen = mark.seen(contact.id, contact.seen_event_id)
        candidates = sorted({*merged.get(contact.id, ()), *(i for i in events if i > seen)})
        profile = (tuple(sorted(follows.items())), contact.notify_on_effect, tuple(candidates))
        if profile not in decided:
            decided[profile] = select_for([events[i] for i in candidates], follows, contact.notify_on_effect)
        chosen = decided[profile]
        result.contacts += 1
        if not chosen.events:
            continue
        stored = ",".join(str(e.id) for e in chosen.events)
        key_of = (stored, chosen.urgent, _priority(chosen), contact.channel, contact.frequency)
        groups.setdefault(key_of, []).append(contact.id)
    # Set-wise: one INSERT ... SELECT per distinct digest in the batch (usually one or two), urgent ones first.
    for (stored, urgent, priority, channel, frequency), members in sorted(groups.items(), key=lambda g: not g[0][1]):
        due = quiet_hours.due_at(settings, channel, frequency, urgent, now)
        columns = {"contact_id": Contact.id, "channel": Contact.channel,
                   "digest_key": literal(key or f"events-{newest}", String()), "event_ids": literal(stored, Text()),
                   "urgent": literal(urgent, Boolean()), "attempts": literal(0, Integer()),
                   "status": literal(RowStatus.PENDING.value, String()), "created_at": literal(now, UtcDateTime()),
                   "due_at": literal(due, UtcDateTime()), "priority": literal(priority, Integer())}
        session.execute(insert(OutboxRow).from_select(
            list(columns), select(*columns.values()).where(Contact.id.in_(members))))
        result.created += len(members)
    session.execute(update(Contact).where(Contact.id.in_(ids)).values(seen_event_id=newest))


def _priority(chosen: Selection) -> int:
    """Where a digest goes in the claiming order: the end of a closure before the rest."""
    return Priority.ENDING if chosen.ends_closure else Priority.DIGEST


def _load_missing(session: Session, events: dict[int, Event], wanted: Iterable[int]) -> None:
    missing = set(wanted) - events.keys()
    if missing:
        for row in session.scalars(select(ChangeEvent).where(ChangeEvent.id.in_(missing))):
            events[row.id] = Event.from_row(row)


def _state(session: Session, name: str) -> int:
    state = session.get(ClockState, name)
    return state.number if state else 0


def _set_pass(session: Session, events: int, contact: int) -> None:
    """Record the pass under way (its newest event, its last planned contact id); 0, 0 when there is none."""
    _set_state(session, PASS_EVENTS, events)
    _set_state(session, PASS_CONTACT, contact)


def _set_state(session: Session, name: str, value: int) -> None:
    state = session.get(ClockState, name)
    if state is None:
        session.add(ClockState(name=name, number=value))
    elif state.number != value:
        state.number = value
