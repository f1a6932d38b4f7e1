"""Planning digests: turn new change events into outbox rows, one per contact, set-wise in the database.

Contacts whose family follows a board that changed are taken in id ranges of `batch_size` (the first range small,
so the first texts leave while the rest is planned). Within a range, contacts that share what decides their digest
(the events they have not seen, which panels of the changed boards they follow, "now in effect" or not) form one
profile; the database groups them (one GROUP BY), Python decides each profile's digest once, and one
`INSERT … SELECT` writes the range's rows, urgent first. The contacts' `seen_event_id` moves past the events in the
same transaction, so a crash or a second run never plans the same events twice; memory holds profiles, not contacts.

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
from collections.abc import Callable, Iterable
from dataclasses import dataclass
from datetime import datetime

from sqlalchemy import Boolean, Integer, String, Text, and_, case, exists, func, insert, literal, null, select, update
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
            upper = _range_end(session, boards, newest, last_id, size)
            size = batch_size
            if upper is None:
                break
            created = result.created
            _plan_range(session, settings, events, boards, newest, now, last_id, upper, result)
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
        _set_cursor(session, max(newest, _cursor(session)))
    if result.contacts:
        took = time.monotonic() - started
        log.info("planned %d digest(s) for %d contact(s) in %.1f s, %.0f contacts/s (events up to %d; %d merged or "
                 "cancelled)", result.created, result.contacts, took, result.contacts / max(took, 1e-3), newest,
                 result.cancelled)
    return result


def _newer_news(sessions: sessionmaker[Session], newest: int, newer: Callable[[], bool] | None) -> bool:
    if newer is not None and newer():
        return True
    with sessions() as session:
        return latest_event_id(session) > newest


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


def _waiting(boards: list[str], newest: int):
    """Contacts still to plan: active, behind the newest event, in a family following a board that changed."""
    follows_changed = exists().where(Follow.subscriber_id == Contact.subscriber_id, Follow.board_id.in_(boards))
    return and_(Contact.status == ContactStatus.ACTIVE.value, Contact.seen_event_id < newest, follows_changed)


def _range_end(session: Session, boards: list[str], newest: int, after_id: int, size: int) -> int | None:
    """The id of the `size`-th contact still to plan after `after_id` (or of the last one); None when none is left."""
    ids = select(Contact.id).where(Contact.id > after_id, _waiting(boards, newest)).order_by(Contact.id)
    upper = session.scalar(ids.offset(size - 1).limit(1))
    if upper is None:
        upper = session.scalar(select(func.max(Contact.id)).where(Contact.id > after_id, _waiting(boards, newest)))
    return upper


def _plan_range(session: Session, settings: Settings, events: dict[int, Event], boards: list[str], newest: int,
                now: datetime, after_id: int, upper: int, result: PlanResult) -> None:
    """Plan the contacts with ids in (after_id, upper]: set-wise where it can, one by one where it must."""
    key = f"events-{newest}"
    # The families of the range, as a range too: follows and subscribers are then read by their index, never
    # scanned whole (family ids grow with contact ids, so the range is narrow; a wide one is only slower).
    families = session.execute(select(func.min(Contact.subscriber_id), func.max(Contact.subscriber_id))
                               .where(Contact.id > after_id, Contact.id <= upper)).one()
    masks = _follow_masks(boards, after_id, upper, families)
    mask_columns = [masks.c[name] for name in masks.c.keys() if name != "subscriber_id"]
    # Contacts with an older digest still pending are merged one by one. Looked up first, by the outbox's
    # (contact_id, digest_key) index: a NOT EXISTS here is planned badly while the outbox grows under the planner.
    merging = list(session.scalars(
        select(OutboxRow.contact_id).where(OutboxRow.contact_id > after_id, OutboxRow.contact_id <= upper,
                                           OutboxRow.status == RowStatus.PENDING.value, OutboxRow.payload.is_(None),
                                           OutboxRow.digest_key != key)))
    profile_columns = [Contact.seen_event_id, Subscriber.notify_on_effect, *mask_columns]

    def in_range(*columns):
        return (select(*columns).select_from(Contact)
                .join(Subscriber, Subscriber.id == Contact.subscriber_id)
                .join(masks, masks.c.subscriber_id == Contact.subscriber_id)
                .where(Subscriber.id.between(*families), Contact.id > after_id, Contact.id <= upper,
                       Contact.status == ContactStatus.ACTIVE.value, Contact.seen_event_id < newest,
                       Contact.id.not_in(merging)))

    found = session.execute(in_range(*profile_columns, Contact.channel, Contact.frequency, func.count())
                            .group_by(*profile_columns, Contact.channel, Contact.frequency)).all()
    if 0 < len(found) <= MAX_PROFILES:
        _insert_profiles(session, settings, events, boards, newest, now, key, found, profile_columns, in_range,
                         result)
    _plan_one_by_one(session, settings, events, boards, newest, now, after_id, upper, result)


def _insert_profiles(session: Session, settings: Settings, events: dict[int, Event], boards: list[str], newest: int,
                     now: datetime, key: str, found: list, profile_columns: list, in_range, result: PlanResult) -> None:
    """Decide each profile's digest once, then write the range's rows and move its contacts on, set-wise."""
    known, stored_of, urgent_of, due_of = [], [], [], []
    decided: dict[tuple, tuple[str, bool]] = {}
    for *profile, channel, frequency, count in found:
        seen, notify, *mask_values = profile
        same = and_(*(column == literal(value) for column, value in zip(profile_columns, profile, strict=True)))
        if tuple(profile) not in decided:
            follows = _unmask(boards, [int(value or 0) for value in mask_values])
            chosen, urgent = select_for([e for i, e in sorted(events.items()) if i > seen], follows, bool(notify))
            decided[tuple(profile)] = (",".join(str(e.id) for e in chosen), urgent)
            known.append((same, literal(1, Integer())))
            if chosen:
                stored_of.append((same, literal(decided[tuple(profile)][0], Text())))
                urgent_of.append((same, literal(urgent, Boolean())))
        stored, urgent = decided[tuple(profile)]
        result.contacts += count
        if stored:
            result.created += count  # what the INSERT writes (psycopg reports no row count for INSERT … SELECT)
            due = quiet_hours.due_at(settings, channel, frequency, urgent, now)
            due_of.append((and_(same, Contact.channel == channel, Contact.frequency == frequency),
                           literal(due, UtcDateTime())))
    if stored_of:
        planned = in_range(
            Contact.id.label("contact_id"), Contact.channel.label("channel"),
            case(*stored_of, else_=null()).label("event_ids"), case(*urgent_of, else_=False).label("urgent"),
            case(*due_of, else_=null()).label("due_at"),
        ).subquery()
        columns = {"contact_id": planned.c.contact_id, "channel": planned.c.channel,
                   "digest_key": literal(key, String()), "event_ids": planned.c.event_ids,
                   "urgent": planned.c.urgent, "attempts": literal(0, Integer()),
                   "status": literal(RowStatus.PENDING.value, String()), "created_at": literal(now, UtcDateTime()),
                   "due_at": planned.c.due_at, "priority": literal(Priority.DIGEST, Integer())}
        session.execute(insert(OutboxRow.__table__).from_select(
            list(columns), select(*columns.values()).where(planned.c.event_ids.is_not(None))
            .order_by(planned.c.urgent.desc(), planned.c.contact_id)))
    settled = in_range(Contact.id).where(case(*known, else_=null()).is_not(None))
    session.execute(update(Contact).where(Contact.id.in_(settled)).values(seen_event_id=newest)
                    .execution_options(synchronize_session=False))


def _plan_one_by_one(session: Session, settings: Settings, events: dict[int, Event], boards: list[str], newest: int,
                     now: datetime, after_id: int, upper: int, result: PlanResult) -> None:
    """The range's contacts the set-wise statements did not settle: those with a pending digest to merge, and any
    whose profile changed under them. A row the set-wise insert wrote for one of them is merged like any other."""
    batch = list(session.execute(_contact_columns().where(Contact.id > after_id, Contact.id <= upper,
                                                          _waiting(boards, newest)).order_by(Contact.id)))
    if batch:
        _plan_batch(session, settings, batch, events, boards, newest, now, result, key=f"events-{newest}-m")


def _follow_masks(boards: list[str], after_id: int, upper: int, families: tuple[int, int]):
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
    pairs = []
    for index, board in enumerate(boards):
        mask = masks[index // BOARDS_PER_MASK] >> (2 * (index % BOARDS_PER_MASK))
        pairs.extend((board, panel) for bit, panel in ((1, "elementary"), (2, "secondary")) if mask & bit)
    return follows_of(pairs)


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
