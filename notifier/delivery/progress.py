"""How far a publish has got, channel by channel, and how long a fan-out takes at the configured rates.

Staff who publish a closure want to know when the last parent will have it; operators want the same at the
terminal. Both read it from the outbox itself, counted set-wise (one GROUP BY channel, status over the rows that
cover the publish's change events), so the numbers are the ones the senders work from, whichever process sends.

A board's latest publish is the newest group of its change events that parents are told about (one cycle records
them together); `publishes` says which rows went out for it (merged and superseded rows are left out, since a
newer row carries their events). The rate is what was actually sent over the last minute; before the
first message goes (or while a channel is paused) the configured rate is used, and said so.
"""

from __future__ import annotations

import math
from dataclasses import dataclass, replace
from datetime import datetime, timedelta
from decimal import Decimal

from sqlalchemy import and_, case, func, select
from sqlalchemy.orm import Session

from notifier.config import Settings
from notifier.delivery import publishes
from notifier.delivery.outbox import PLANNED_THROUGH, ClockState, OutboxRow, RowStatus

CHANNELS = ("email", "sms")
WINDOW = timedelta(seconds=60)  # the rate is measured over this much of the recent past


def configured_rate(settings: Settings, channel: str) -> float:
    """Messages per second the senders are allowed on `channel` (NOTIFIER_SMS_PER_SECOND, in segments, …_EMAIL_…,
    …_PUSH_…)."""
    if channel == "push":
        return settings.push_per_second
    return settings.sms_per_second if channel == "sms" else settings.email_per_second


def seconds_to_send(count: int, rate: float) -> float:
    """How long `count` messages take at `rate` per second."""
    return count / rate if count and rate > 0 else 0.0


def minutes_and_hours(seconds: float) -> tuple[int, int]:
    """(hours, minutes) of a duration rounded up to the next whole minute, for "about 1 h 05 min"."""
    minutes = math.ceil(seconds / 60) if seconds > 0 else 0
    return divmod(minutes, 60)


@dataclass(frozen=True)
class Estimate:
    """Recipients on one channel and the time to reach them all at the configured rate; for texts, the segments
    they take (the rate is in segments) and, with NOTIFIER_SMS_PRICE, what they cost."""

    channel: str
    count: int
    rate: float
    seconds: float
    units: int | None = None  # segments, for texts
    cost: Decimal | None = None
    currency: str | None = None


def estimates(settings: Settings, counts: dict[str, int], units: dict[str, int] | None = None) -> dict[str, Estimate]:
    """One `Estimate` per channel for `counts` (channel -> recipients): email and SMS always, push when counted.
    `units` gives a channel's segments when they differ from its messages (texts); the time is the segments'."""
    found = {}
    for channel in dict.fromkeys((*CHANNELS, *counts)):
        count, rate = counts.get(channel, 0), configured_rate(settings, channel)
        spent = (units or {}).get(channel, count)
        cost = currency = None
        if channel == "sms" and settings.sms_price is not None:
            cost, currency = settings.sms_price[0] * spent, settings.sms_price[1]
        found[channel] = Estimate(channel, count, rate, seconds_to_send(spent, rate),
                                  spent if channel == "sms" else None, cost, currency)
    return found


@dataclass(frozen=True)
class ChannelProgress:
    """One channel of a publish: rows sent, still to send (pending or being sent), failed; the rate and the end."""

    channel: str
    sent: int
    remaining: int
    failed: int
    rate: float  # messages per second
    measured: bool  # False: nothing was sent in the last minute, `rate` is the configured one
    expected_end: datetime | None  # None when nothing remains

    @property
    def total(self) -> int:
        return self.sent + self.remaining + self.failed


@dataclass(frozen=True)
class PublishProgress:
    """A board's latest publish parents were told about, and its sending per channel."""

    board_id: str
    published_at: datetime
    event_ids: tuple[int, ...]
    channels: tuple[ChannelProgress, ...]
    planning: bool = False  # the clock has not planned every family's messages for it yet

    @property
    def done(self) -> bool:
        return not self.planning and all(c.remaining == 0 for c in self.channels)


def latest_events(session: Session, board_id: str | None = None) -> tuple[str, datetime, tuple[int, ...]] | None:
    """(board id, when, event ids) of the newest publish parents were told about (of one board, or of any)."""
    found = publishes.latest(session, board_id)
    return None if found is None else (found.board_id, found.published_at, found.event_ids)


def for_events(session: Session, settings: Settings, event_ids: tuple[int, ...],
               now: datetime) -> list[ChannelProgress]:
    """Per channel, the outbox rows covering any of `event_ids`, counted set-wise."""
    recent = func.sum(case((and_(OutboxRow.status == RowStatus.SENT.value, OutboxRow.sent_at >= now - WINDOW), 1),
                           else_=0))
    query = (select(OutboxRow.channel, OutboxRow.status, func.count(), recent)
             .where(publishes.covering(event_ids))
             .group_by(OutboxRow.channel, OutboxRow.status))
    counts: dict[str, dict[str, int]] = {c: {} for c in CHANNELS}
    sent_recently: dict[str, int] = dict.fromkeys(CHANNELS, 0)
    for channel, status, number, latest in session.execute(query):
        counts.setdefault(channel, {})[status] = number
        sent_recently[channel] = sent_recently.get(channel, 0) + int(latest or 0)
    result = []
    for channel in sorted(counts):
        row = counts[channel]
        remaining = row.get(RowStatus.PENDING.value, 0) + row.get(RowStatus.SENDING.value, 0)
        measured = sent_recently[channel] > 0
        rate = sent_recently[channel] / WINDOW.total_seconds() if measured else configured_rate(settings, channel)
        end = now + timedelta(seconds=seconds_to_send(remaining, rate)) if remaining else None
        result.append(ChannelProgress(channel, row.get(RowStatus.SENT.value, 0), remaining,
                                      row.get(RowStatus.FAILED.value, 0), rate, measured, end))
    return result


def in_units(found: PublishProgress, now: datetime, per_message: dict[str, float]) -> PublishProgress:
    """`found` with each channel's configured rate turned into messages per second when a message costs several
    units of it (texts of two segments go at half NOTIFIER_SMS_PER_SECOND), and its expected end moved to match."""
    rows = []
    for row in found.channels:
        units = per_message.get(row.channel, 1.0)
        if not row.measured and units > 1:
            rate = row.rate / units
            end = now + timedelta(seconds=seconds_to_send(row.remaining, rate)) if row.remaining else None
            row = replace(row, rate=rate, expected_end=end)
        rows.append(row)
    return replace(found, channels=tuple(rows))


def latest(session: Session, settings: Settings, now: datetime, board_id: str | None = None) -> PublishProgress | None:
    """The progress of the newest publish (of `board_id`, or of any board), or None when there was none."""
    found = latest_events(session, board_id)
    if found is None:
        return None
    board, published_at, ids = found
    return PublishProgress(board, published_at, ids, tuple(for_events(session, settings, ids, now)),
                           planning=still_planning(session, max(ids)))


def still_planning(session: Session, event_id: int) -> bool:
    """Whether planning has yet to finish a pass past `event_id` (publishing leaves planning to the clock, so right
    after a publish nothing is counted and nothing must read as "all sent")."""
    cursor = session.get(ClockState, PLANNED_THROUGH)
    return cursor is None or cursor.number < event_id

