"""When a digest is due: at once, after SMS quiet hours, or at the daily summary time — all in Toronto time.

Closures ignore both quiet hours and daily summaries: a parent whose school closes tomorrow hears it tonight.
Times are computed from an injected `now`, so tests never wait for the clock.
"""

from __future__ import annotations

from datetime import UTC, datetime, time, timedelta

from notifier.config import Settings
from notifier.formatting import TORONTO


def in_quiet_hours(quiet: tuple[time, time] | None, now: datetime) -> bool:
    """True when `now` (any zone) falls inside the quiet window, which may span midnight (21:00-07:00)."""
    if quiet is None:
        return False
    start, end = quiet
    local = now.astimezone(TORONTO).time()
    if start == end:
        return False
    if start < end:
        return start <= local < end
    return local >= start or local < end


def quiet_hours_end(quiet: tuple[time, time], now: datetime) -> datetime:
    """The next moment quiet hours end after `now` (DST-safe: built from the local date)."""
    return next_local_time(quiet[1], now)


def next_local_time(at: time, now: datetime) -> datetime:
    """The next time the Toronto wall clock shows `at`, strictly after `now`, in UTC."""
    local = now.astimezone(TORONTO)
    candidate = datetime.combine(local.date(), at, tzinfo=TORONTO)
    if candidate <= local:
        candidate = datetime.combine(local.date() + timedelta(days=1), at, tzinfo=TORONTO)
    return candidate.astimezone(UTC)


def due_at(settings: Settings, channel: str, frequency: str, urgent: bool, now: datetime) -> datetime:
    """When a digest should go out: urgent now; daily at the summary time; texts not during quiet hours."""
    if urgent:
        return now
    due = next_local_time(settings.daily_digest_at, now) if frequency == "daily" else now
    if channel == "sms" and in_quiet_hours(settings.sms_quiet_hours, due):
        due = quiet_hours_end(settings.sms_quiet_hours, due)  # type: ignore[arg-type]
    return due
