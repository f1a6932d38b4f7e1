"""Channel health: a channel whose account or configuration the provider refuses is paused, for every process.

A pause is a row in the database (so every process sees it): nothing of that channel is claimed, every row stays
pending, and `tick`, `status` and /healthz say so. While paused, one sender at a time probes every
PROBE_SECONDS with one real send of the oldest due row; when it goes through, the channel resumes by itself. An
operator can resume at once (`python -m notifier channels resume sms`).
"""

from __future__ import annotations

import logging
from dataclasses import dataclass
from datetime import datetime, timedelta

from sqlalchemy import String, Text, select, update
from sqlalchemy.exc import IntegrityError
from sqlalchemy.orm import Mapped, Session, mapped_column, sessionmaker

from notifier.db import Base, UtcDateTime, rowcount, utcnow

log = logging.getLogger(__name__)

PROBE_SECONDS = 30.0


class ChannelHealth(Base):
    """One channel's state: paused (since when, why) or not."""

    __tablename__ = "channel_health"

    channel: Mapped[str] = mapped_column(String(8), primary_key=True)
    paused_at: Mapped[datetime | None] = mapped_column(UtcDateTime, nullable=True)
    reason: Mapped[str | None] = mapped_column(Text, nullable=True)
    code: Mapped[str | None] = mapped_column(String(16), nullable=True)
    probed_at: Mapped[datetime | None] = mapped_column(UtcDateTime, nullable=True)
    resumed_at: Mapped[datetime | None] = mapped_column(UtcDateTime, nullable=True)


@dataclass(frozen=True)
class Pause:
    """A paused channel, as `tick`, `status` and /healthz report it."""

    channel: str
    since: datetime
    reason: str
    code: str | None

    def line(self) -> str:
        """One line for an operator."""
        return (f"{self.channel.upper()} PAUSED since {self.since:%Y-%m-%d %H:%M:%S} UTC: {self.reason} "
                f"(nothing is sent on this channel and every message waits; fix the setting, and it resumes by "
                f"itself within {PROBE_SECONDS:.0f} s, or run `python -m notifier channels resume {self.channel}`)")


def pauses(session: Session) -> list[Pause]:
    """Every paused channel, oldest pause first."""
    rows = session.scalars(select(ChannelHealth).where(ChannelHealth.paused_at.is_not(None))
                           .order_by(ChannelHealth.paused_at)).all()
    return [Pause(r.channel, r.paused_at, r.reason or "", r.code) for r in rows if r.paused_at is not None]


def pause(sessions: sessionmaker[Session], channel: str, reason: str, code: str | int | None) -> None:
    """Pause `channel` (keeping the first pause's time when it is already paused)."""
    now = utcnow()
    for attempt in (1, 2):  # two processes may insert the first row at once: the loser updates
        try:
            with sessions() as session, session.begin():
                row = session.get(ChannelHealth, channel, with_for_update=True)
                if row is None:
                    row = ChannelHealth(channel=channel)
                    session.add(row)
                newly = row.paused_at is None
                if newly:
                    row.paused_at, row.probed_at = now, now
                row.reason, row.code = reason[:500], None if code is None else str(code)[:16]
            if newly:
                log.error("%s channel PAUSED: %s; every message waits until it is fixed", channel, reason)
            return
        except IntegrityError:
            if attempt == 2:
                raise


def resume(sessions: sessionmaker[Session], channel: str, why: str) -> bool:
    """Lift the pause of `channel`; True when it was paused."""
    with sessions() as session, session.begin():
        done = session.execute(update(ChannelHealth).where(ChannelHealth.channel == channel,
                                                           ChannelHealth.paused_at.is_not(None))
                               .values(paused_at=None, resumed_at=utcnow()))
    if rowcount(done):
        log.warning("%s channel resumed (%s)", channel, why)
    return bool(rowcount(done))


def take_probe(sessions: sessionmaker[Session], channel: str, every: float = PROBE_SECONDS) -> bool:
    """True for exactly one caller per `every` seconds while `channel` is paused: that caller probes."""
    now = utcnow()
    with sessions() as session, session.begin():
        done = session.execute(update(ChannelHealth).where(
            ChannelHealth.channel == channel, ChannelHealth.paused_at.is_not(None),
            ChannelHealth.probed_at < now - timedelta(seconds=every)).values(probed_at=now))
    return bool(rowcount(done))


def paused_channels(sessions: sessionmaker[Session]) -> set[str]:
    """The names of the paused channels (what a sender reads every second or two)."""
    with sessions() as session:
        return set(session.scalars(select(ChannelHealth.channel).where(ChannelHealth.paused_at.is_not(None))))
