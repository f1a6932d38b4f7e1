"""What went out for one publish: recipients per channel, and sent, delivered and failed over time.

For the staff console's report of any publish of a board (`publishes` says what a publish is and which rows count).
Everything is counted set-wise in two passes over the outbox, whatever the number of rows: one GROUP BY for the
totals and the span, one (with the receipts) for the counts per time bucket, from which the cumulative series are
summed here (at most `MAX_POINTS` buckets per channel, so a few hundred groups at most).

- *Sent*: the provider accepted the message (Twilio took the text; the SMTP server took the email).
- *Delivered*: Twilio's status callback said `delivered` (`delivery_receipts`). Email has no such word: the SMTP
  server's acceptance is all we know, so email has no delivered count (None), never a guess.
- *Failed*: given up by us (the recipient's refusal, the message's, or too many temporary errors), or accepted and
  then reported `failed` or `undelivered` by Twilio.

A row's time is when it was sent (`sent_at`); a failure's when it was last claimed (the attempt that failed; the
row has no time of its own for it) or, for one Twilio reported, the receipt's time.
"""

from __future__ import annotations

import math
from collections import defaultdict
from dataclasses import dataclass
from datetime import datetime, timedelta
from typing import Any

from sqlalchemy import ColumnElement, case, cast, func, select
from sqlalchemy import Integer as SqlInteger
from sqlalchemy.orm import QueryableAttribute, Session

from notifier.delivery import publishes
from notifier.delivery.outbox import DeliveryReceipt, OutboxRow, RowStatus
from notifier.delivery.publishes import Publish

CHANNELS = ("email", "sms", "push")
MAX_POINTS = 60
# Bucket sizes in seconds, smallest first: the first that covers the span in MAX_POINTS buckets is used.
STEPS = (10, 30, 60, 300, 600, 900, 1800, 3600, 7200, 10800, 21600, 43200, 86400)
RECEIPT_FAILED = ("failed", "undelivered")
SENT, FAILED = RowStatus.SENT.value, RowStatus.FAILED.value

Column = ColumnElement[Any] | QueryableAttribute[Any]  # a column or expression, or a mapped class's attribute


@dataclass(frozen=True)
class Point:
    """The cumulative counts of one channel at the end of a time bucket (`delivered` None for email)."""

    at: datetime
    sent: int
    delivered: int | None
    failed: int


@dataclass(frozen=True)
class ChannelReport:
    """One channel of a publish: its recipients, the totals now, and how they grew."""

    channel: str
    recipients: int
    sent: int
    delivered: int | None  # None: the channel tells us nothing beyond "accepted" (email)
    failed: int
    waiting: int  # still pending or being sent
    points: tuple[Point, ...]


@dataclass(frozen=True)
class Report:
    """One publish and what went out for it, per channel; the series run from `start` to `end` in `step`s."""

    publish: Publish
    channels: tuple[ChannelReport, ...]
    start: datetime
    end: datetime
    step: timedelta

    @property
    def recipients(self) -> int:
        return sum(c.recipients for c in self.channels)


def step_for(span: timedelta) -> timedelta:
    """The bucket size that shows `span` in at most MAX_POINTS buckets (a round size when there is one)."""
    seconds = max(span.total_seconds(), 1)
    for step in STEPS:
        if seconds / step <= MAX_POINTS:
            return timedelta(seconds=step)
    return timedelta(days=math.ceil(seconds / 86400 / MAX_POINTS))


def _offset(session: Session, column: Column, start: datetime) -> ColumnElement[Any]:
    """SQL: the seconds from `start` to `column` (PostgreSQL's epoch, SQLite's Julian day)."""
    if session.get_bind().dialect.name == "postgresql":
        return func.extract("epoch", column) - start.timestamp()
    return (func.julianday(column) - 2440587.5) * 86400.0 - start.timestamp()


def _bucket(session: Session, column: Column, start: datetime, step: timedelta) -> ColumnElement[Any]:
    """SQL: the index of the bucket `column` falls in (negative or NULL ones are folded into the first here)."""
    ratio = _offset(session, column, start) / step.total_seconds()
    if session.get_bind().dialect.name == "postgresql":
        return cast(func.floor(ratio), SqlInteger)
    return cast(ratio, SqlInteger)  # truncates; only negatives differ from floor, and those become bucket 0


def build(session: Session, publish: Publish, now: datetime) -> Report:
    """The report of `publish`: a GROUP BY over its rows for the totals and the span, then one over the rows and their
    receipts for the counts per time bucket."""
    # Rows are planned after their events are recorded: older rows are not even tested (see `publishes.CLOCK_SKEW`).
    covering = (OutboxRow.created_at >= publish.published_at - publishes.CLOCK_SKEW) & publishes.covering(
        publish.event_ids)
    totals = session.execute(
        select(OutboxRow.channel, OutboxRow.status, func.count(), func.max(OutboxRow.sent_at),
               func.max(OutboxRow.claimed_at))
        .where(covering).group_by(OutboxRow.channel, OutboxRow.status)).all()
    counts: dict[str, dict[str, int]] = defaultdict(lambda: defaultdict(int))
    last = publish.published_at
    for channel, status, number, sent_at, claimed_at in totals:
        counts[channel]["recipients"] += number
        counts[channel][status] += number
        last = max([last, *(t for t in (sent_at, claimed_at) if t is not None)])
    waiting = any(t[RowStatus.PENDING.value] + t[RowStatus.SENDING.value] for t in counts.values())
    end = max(last, now) if waiting else last
    step = step_for(end - publish.published_at)
    buckets = max(1, math.ceil((end - publish.published_at) / step))
    series, beyond = _series(session, publish, step, buckets, covering)
    if beyond > buckets:  # receipts came after the last send: the span grows, in coarser steps if it must
        factor = math.ceil(beyond / MAX_POINTS)
        step, buckets = step * factor, math.ceil(beyond / factor)
        series = {channel: _coarser(found, factor) for channel, found in series.items()}
    channels = []
    for channel in [c for c in CHANNELS if c in counts] + sorted(set(counts) - set(CHANNELS)):
        tally, found = counts[channel], series.get(channel, {})
        receipts = channel == "sms"
        delivered = sum(n for (what, _), n in found.items() if what == "delivered")
        failed = sum(n for (what, _), n in found.items() if what == "failed")
        channels.append(ChannelReport(
            channel, tally["recipients"], tally[SENT], delivered if receipts else None, failed,
            tally[RowStatus.PENDING.value] + tally[RowStatus.SENDING.value],
            _points(found, publish.published_at, step, buckets, receipts)))
    return Report(publish, tuple(channels), publish.published_at, publish.published_at + buckets * step, step)


def _series(session: Session, publish: Publish, step: timedelta, buckets: int, covering: ColumnElement[bool]
            ) -> tuple[dict[str, dict[tuple[str, int], int]], int]:
    """Per channel, {(what, bucket): count} for what in sent, delivered, failed (not cumulative yet), and how many
    buckets the receipts need (more than `buckets` when one came after the last send)."""
    start = publish.published_at
    # Only texts have receipts: emails skip the lookup (half the rows of a fan-out to both channels).
    joined = OutboxRow.__table__.outerjoin(DeliveryReceipt.__table__, (OutboxRow.channel == "sms") & (
        DeliveryReceipt.provider_id == OutboxRow.provider_id))
    moment = case((OutboxRow.status == SENT, OutboxRow.sent_at),
                  else_=func.coalesce(OutboxRow.claimed_at, OutboxRow.created_at))
    row_bucket = _bucket(session, moment, start, step)
    receipt_bucket = _bucket(session, DeliveryReceipt.updated_at, start, step)
    query = (select(OutboxRow.channel, OutboxRow.status, DeliveryReceipt.status, row_bucket, receipt_bucket,
                    func.count())
             .select_from(joined).where(covering, OutboxRow.status.in_((SENT, FAILED)))
             .group_by(OutboxRow.channel, OutboxRow.status, DeliveryReceipt.status, row_bucket, receipt_bucket))
    found: dict[str, dict[tuple[str, int], int]] = defaultdict(lambda: defaultdict(int))
    needed = buckets
    for channel, status, said, at, said_at, number in session.execute(query):
        index = min(max(int(at or 0), 0), buckets - 1)
        said_index = max(int(said_at or 0), 0)
        if status == FAILED:
            found[channel][("failed", index)] += number
            continue
        found[channel][("sent", index)] += number
        if said == "delivered":
            found[channel][("delivered", said_index)] += number
        elif said in RECEIPT_FAILED:
            found[channel][("failed", said_index)] += number
        if said in ("delivered", *RECEIPT_FAILED):
            needed = max(needed, said_index + 1)
    return found, needed


def _coarser(found: dict[tuple[str, int], int], factor: int) -> dict[tuple[str, int], int]:
    """The same counts in buckets `factor` times as long."""
    merged: dict[tuple[str, int], int] = defaultdict(int)
    for (what, index), number in found.items():
        merged[(what, index // factor)] += number
    return merged


def _points(counts: dict[tuple[str, int], int], start: datetime, step: timedelta, buckets: int,
            receipts: bool) -> tuple[Point, ...]:
    """The cumulative series: zero at `start`, then one point at the end of each bucket."""
    points = [Point(start, 0, 0 if receipts else None, 0)]
    sent = delivered = failed = 0
    for index in range(buckets):
        sent += counts.get(("sent", index), 0)
        delivered += counts.get(("delivered", index), 0)
        failed += counts.get(("failed", index), 0)
        points.append(Point(start + (index + 1) * step, sent, delivered if receipts else None, failed))
    return tuple(points)
