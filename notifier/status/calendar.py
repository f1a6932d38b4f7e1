"""A board's disruptions as calendar events: the days schools close or work to rule, past, current and ahead.

Parents put strike days in the family calendar next to everything else. Each disruption (a period announced ahead,
one that has ended and is known from the change history, or the state in force now when no period explains it)
becomes one iCalendar (RFC 5545) event. A closure a correction ended minutes after it began (`CORRECTION_WINDOW`)
becomes none, so it leaves the calendars that showed it. Its UID is made of the board id, the start and the panels
only, so a calendar app updates the same event when its end or message changes, and nothing moves when another
period is announced.

What an event says (its summary and description) is words in the reader's language: the caller supplies them
(`describe`), so this module holds no user-facing text and no Flask.
"""

from __future__ import annotations

import hashlib
from collections.abc import Callable, Iterable
from dataclasses import dataclass
from datetime import date, datetime, time, timedelta

from icalendar import Calendar, Event
from sqlalchemy import select
from sqlalchemy.orm import Session

from notifier.formatting import TORONTO
from notifier.status.boards import Bilingual, Board, Panel, Period, Status, Withdrawal
from notifier.status.history import ChangeEvent

PRODID = "-//Ontario school status notifier//calendar//EN"
PERIOD_KINDS = ("period_added", "period_changed", "period_removed")
STATE_KINDS = ("status", "panel_status")
DAY_START = (time(0, 0), time(0, 1))  # boards.yaml writes a day's start as 00:00 or 00:01
# A closure or work-to-rule that lasts less than this was a mistake put right: staff published it, then a publish
# ("open after all") ended it minutes later, and the console cut the period where the correction began. No school
# closes or works to rule for less than half an hour, so such a period is no disruption: it has no event (a calendar
# subscribed to the feed drops the event it showed, whose UID is the same, on its next refresh).
CORRECTION_WINDOW = timedelta(minutes=30)


@dataclass(frozen=True)
class Disruption:
    """Some panels of one board closed or working to rule from `start` until `end` (None: until further notice)."""

    board_id: str
    start: datetime
    end: datetime | None
    status: Status
    panels: tuple[Panel, ...]
    message: Bilingual | None = None
    withdrawals: tuple[Withdrawal, ...] = ()

    @property
    def uid(self) -> str:
        """Stable identity: board, start and panels (not the end, status or words, which may be corrected)."""
        panels = "+".join(sorted(self.panels))
        readable = f"{self.board_id}-{self.start.astimezone(TORONTO):%Y%m%dT%H%M}-{panels}"
        digest = hashlib.sha256(f"{self.board_id}|{self.start.isoformat()}|{panels}".encode()).hexdigest()[:8]
        return f"{readable}-{digest}@notifier"

    def in_force(self, moment: datetime) -> bool:
        return self.start <= moment and (self.end is None or moment < self.end)


def recorded_periods(session: Session, board_id: str) -> list[Period]:
    """The periods the change history knows for a board, as last announced; those called off are left out."""
    rows = session.scalars(
        select(ChangeEvent).where(ChangeEvent.board_id == board_id, ChangeEvent.kind.in_(PERIOD_KINDS))
        .order_by(ChangeEvent.id)
    )
    latest: dict[str, Period | None] = {}
    for row in rows:
        if row.kind == "period_removed":
            latest[row.key or ""] = None
        elif isinstance(row.after, dict):
            try:
                latest[row.key or ""] = Period.model_validate(row.after)
            except ValueError:  # a period recorded by an older model: history still reads, the calendar skips it
                continue
    return [period for period in latest.values() if period is not None]


def state_since(session: Session, board_id: str) -> datetime | None:
    """When the status in force last changed, as recorded (the start of a disruption with no period behind it)."""
    return session.scalar(
        select(ChangeEvent.recorded_at).where(ChangeEvent.board_id == board_id, ChangeEvent.kind.in_(STATE_KINDS))
        .order_by(ChangeEvent.id.desc()).limit(1)
    )


def disruptions(board: Board, now: datetime, recorded: Iterable[Period] = (),
                since: datetime | None = None) -> list[Disruption]:
    """Every disruption of `board` worth a calendar entry as seen at `now`, in order of start.

    `recorded` are periods known from the history: those no longer in boards.yaml appear once they have ended (a
    strike day staff tidied away is still a day the children stayed home). A period a correction took back within
    minutes (`corrected`) is none. The state in force, when not open and not
    explained by a period, starts at the board's `effective` moment, else at `since`, else today.
    """
    periods = {period.key: period for period in board.upcoming}
    for period in recorded:
        if period.key not in periods and period.end is not None and period.end <= now:
            periods[period.key] = period
    found = [_from_period(board, period) for period in periods.values()
             if period.status is not Status.OPEN and not corrected(period)]
    if board.period_at(now) is None:
        start = board.effective or since or datetime.combine(now.astimezone(TORONTO).date(), time(), TORONTO)
        for status in (Status.CLOSED, Status.WORK_TO_RULE):
            panels = tuple(panel for panel in Panel if board.panel_status(panel) is status)
            if panels:
                found.append(Disruption(board.id, start, None, status, panels, board.message, board.withdrawals))
    return sorted(found, key=lambda d: (d.start, sorted(d.panels)))


def corrected(period: Period) -> bool:
    """True for a period ended less than `CORRECTION_WINDOW` after it began: a correction took it back."""
    return period.end is not None and period.end - period.start < CORRECTION_WINDOW


def _from_period(board: Board, period: Period) -> Disruption:
    withdrawals = board.withdrawals if period.withdrawals is None else period.withdrawals
    return Disruption(board.id, period.start, period.end, period.status, period.panels,
                      period.message or board.message, withdrawals)


Describe = Callable[[Disruption], tuple[str, str, str]]  # (summary, description, url)


def to_ical(found: Iterable[Disruption], describe: Describe, name: str, now: datetime, stamp: datetime) -> bytes:
    """An RFC 5545 calendar of `found`: all-day events for whole days, else times in America/Toronto (with its
    VTIMEZONE). An event with no end lasts until the end of today: the feed is fetched again and grows with it."""
    calendar = Calendar()
    calendar.add("prodid", PRODID)
    calendar.add("version", "2.0")
    calendar.add("calscale", "GREGORIAN")
    calendar.add("method", "PUBLISH")
    calendar.add("x-wr-calname", name)
    calendar.add("x-wr-timezone", "America/Toronto")
    calendar.add("refresh-interval", timedelta(hours=1), parameters={"VALUE": "DURATION"})
    calendar.add("x-published-ttl", "PT1H")
    today = now.astimezone(TORONTO).date()
    for disruption in found:
        summary, description, url = describe(disruption)
        event = Event()
        event.add("uid", disruption.uid)
        event.add("dtstamp", stamp)
        event.add("summary", summary)
        if description:
            event.add("description", description)
        if url:
            event.add("url", url)
        event.add("transp", "TRANSPARENT")  # a strike day does not make the parent busy
        event.add("categories", [disruption.status.value])
        start, end = _span(disruption, today)
        event.add("dtstart", start)
        event.add("dtend", end)
        calendar.add_component(event)
    calendar.add_missing_timezones()
    ical: bytes = calendar.to_ical()
    return ical


def _span(disruption: Disruption, today: date) -> tuple[date, date] | tuple[datetime, datetime]:
    """Whole days (an all-day event, DTEND exclusive) when the period starts and ends at midnight, else times."""
    start = disruption.start.astimezone(TORONTO)
    end = disruption.end.astimezone(TORONTO) if disruption.end else None
    whole_start = start.time().replace(second=0, microsecond=0) in DAY_START
    if end is None:
        last = max(today, start.date()) + timedelta(days=1)
        if whole_start:
            return start.date(), last
        return start, datetime.combine(last, time(), TORONTO)
    if whole_start and end.time() in (time(0, 0), time(0, 1)):
        return start.date(), max(end.date(), start.date() + timedelta(days=1))
    if whole_start and end.time() >= time(23, 59):
        return start.date(), end.date() + timedelta(days=1)
    return start, end
