"""The clock process (`python -m notifier clock`): the only scheduler, in a process of its own.

A scheduler inside web workers would run once per worker and message every parent several times, so the web app
never starts one. Jobs are plain functions; `python -m notifier tick` runs the same cycle once. The clock runs a
cycle every NOTIFIER_CHECK_INTERVAL seconds, once more at NOTIFIER_DAILY_DIGEST_AT for the daily summaries (and the
morning reminders while a disruption lasts), and within about two seconds of `request_wakeup` (the staff console's
"publish": a flag in the database, polled).

A cycle records changes and plans digests, and returns in seconds whatever is queued: it never sends. Sending is
the sending loop's (`delivery.drain.SendingLoop`), which this process runs in threads of its own unless
NOTIFIER_CLOCK_SENDS=0 (then `worker` processes send).

Its log says what happened, not that time passed: a line per cycle that recorded, planned or sent something, and a
heartbeat at most once a minute while nothing happens. APScheduler's own line per job run (every two seconds, for
the wake-up poll) is left out.
"""

from __future__ import annotations

import logging
import threading
import time
from collections.abc import Callable
from datetime import datetime, timedelta
from typing import Any

from sqlalchemy import select
from sqlalchemy.orm import Session, sessionmaker

from notifier.config import Settings
from notifier.db import make_engine, make_sessionmaker, utcnow
from notifier.delivery import health, retention, totals
from notifier.delivery.drain import CHANNELS, DrainStats, SendingLoop, drain
from notifier.delivery.outbox import ClockState, OutboxRow
from notifier.delivery.senders import SenderRefused
from notifier.notices import compose, planning, reminders, webhooks
from notifier.status import cycle, published
from notifier.status.cycle import AfterRecord, CycleResult
from notifier.subscribers import push, signup
from notifier.subscribers.models import Contact, ContactStatus
from notifier.telemetry import metrics

log = logging.getLogger(__name__)

WAKEUP = "wakeup"
POLL_SECONDS = 2
HEARTBEAT_SECONDS = 60


def send_due(settings: Settings, sessions: sessionmaker[Session], now: datetime | None = None,
             kind: str = "drain", channels: tuple[str, ...] = CHANNELS) -> DrainStats:
    """Send every due row of `channels` until none is left, composing each message with the notices wing."""
    return drain(sessions, settings, compose.MessageBuilder, now, only=channels, kind=kind)


def sending_loop(settings: Settings, sessions: sessionmaker[Session], kind: str,
                 channels: tuple[str, ...] = CHANNELS) -> SendingLoop:
    """The continuous sending loop (not started) that the clock's threads and every worker run, for `channels`."""
    return SendingLoop(sessions, settings, compose.MessageBuilder, kind, channels=channels)


def cycle_steps(settings: Settings, deliver: bool = True,
                planned: Callable[[], None] | None = None) -> list[AfterRecord]:
    """What runs after changes are recorded: planning digests, then (on a weekday at the daily-summary time) morning
    reminders, which skip whoever that morning's summary reaches. Never sending (`deliver` is kept for callers);
    `planned` is called as soon as planned rows are committed."""

    def plan(sessions: sessionmaker[Session], result: CycleResult, now: datetime) -> None:
        newer = published.newer_than_now(sessions, settings.boards_file, settings.follow_boards_file)
        if planning.plan(sessions, settings, now, planned=planned, newer=newer).interrupted:
            result.unfinished = True
            return
        reminders.plan(sessions, settings, now)
        webhooks.plan(sessions, settings, now)

    return [plan]


def tick(settings: Settings, sessions: sessionmaker[Session] | None = None, deliver: bool = True,
         planned: Callable[[], None] | None = None) -> CycleResult:
    """Run one cycle (record changes, plan digests), then, if `deliver`, send what is due until nothing is left.

    Sending happens after the cycle, whatever its outcome: an invalid boards.yaml stops new planning only, and
    what was planned before still goes out. When another process is sending and no shared limiter is configured,
    sending is left to it.
    """
    if sessions is None:
        sessions = make_sessionmaker(make_engine(settings.database_url))
    result = cycle.run(sessions, str(settings.boards_file), after_record=cycle_steps(settings, planned=planned),
                       follow=settings.follow_boards_file)
    if deliver:
        try:
            send_due(settings, sessions, kind="tick")
        except SenderRefused as refused:
            log.info("not sending from this tick: %s", refused)
    return result


def purge_unconfirmed(session: Session, now: datetime) -> int:
    """Delete sign-ups left unconfirmed for 7 days (`signup.purge_unconfirmed`); their confirmations, which go with
    them (the outbox rows cascade), are kept in the sent and failed totals first. Returns how many contacts went."""
    leaving = select(Contact.id).where(Contact.status == ContactStatus.PENDING.value,
                                       Contact.created_at < now - timedelta(days=signup.UNCONFIRMED_DAYS))
    totals.fold(session, OutboxRow.contact_id.in_(leaving))
    return signup.purge_unconfirmed(session, now)


def paused_lines(sessions: sessionmaker[Session]) -> list[str]:
    """One line per paused channel, for `tick` and `status`."""
    with sessions() as session:
        return [pause.line() for pause in health.pauses(session)]


def request_wakeup(sessions: sessionmaker[Session]) -> None:
    """Ask the clock process to run a cycle and drain the outbox within about two seconds."""
    with sessions() as session, session.begin():
        state = session.get(ClockState, WAKEUP, with_for_update=True)
        if state is None:
            session.add(ClockState(name=WAKEUP, number=1, at=utcnow()))
        else:
            state.number, state.at = state.number + 1, utcnow()


def wakeups(sessions: sessionmaker[Session]) -> int:
    """How many wake-ups were ever requested (the clock compares it with the count it last saw)."""
    with sessions() as session:
        state = session.get(ClockState, WAKEUP)
        return state.number if state else 0


class Clock:
    """The clock's jobs, sharing one lock so two cycles of this process never drain side by side."""

    def __init__(self, settings: Settings, sessions: sessionmaker[Session],
                 planned: Callable[[], None] | None = None) -> None:
        self.settings, self.sessions, self.planned = settings, sessions, planned
        self.lock = threading.Lock()
        self.seen_wakeups = wakeups(sessions)
        self.last_said = time.monotonic()  # when the log last showed this clock at work
        self.quiet_cycles = 0

    def cycle(self) -> CycleResult:
        """Record and plan (the sending loop sends)."""
        with self.lock:
            result = tick(self.settings, self.sessions, deliver=False, planned=self.planned)
            while result.unfinished:  # planning stopped for newer news: record it and carry on now
                result = tick(self.settings, self.sessions, deliver=False, planned=self.planned)
        if result.changes or not result.ok:
            self.last_said, self.quiet_cycles = time.monotonic(), 0  # the cycle logged what it did
        else:
            self.quiet_cycles += 1
        return result

    def heartbeat(self, now: float | None = None) -> None:
        """Say the clock is alive, if nothing else did for a minute (at most one line a minute while all is quiet)."""
        now = time.monotonic() if now is None else now
        if now - self.last_said < HEARTBEAT_SECONDS:
            return
        log.info("clock alive: %d cycle(s) in the last %d s, nothing to do", self.quiet_cycles, now - self.last_said)
        self.last_said, self.quiet_cycles = now, 0

    def purge_unconfirmed(self) -> None:
        """Delete sign-ups left unconfirmed for 7 days (they never received anything but their confirmation)."""
        with self.sessions() as session, session.begin():
            removed = purge_unconfirmed(session, utcnow())
        if removed:
            log.info("deleted %d sign-up(s) left unconfirmed for %d days", removed, signup.UNCONFIRMED_DAYS)

    def sweep(self) -> None:
        """Delete settled messages, receipts and history older than NOTIFIER_RETENTION_DAYS (once a night)."""
        swept = retention.sweep(self.sessions, self.settings.retention_days)
        log.info("%s", swept.line(self.settings.retention_days))
    def expire_push(self, now: datetime | None = None) -> None:
        """Drop push subscriptions neither renewed nor sent anything for 270 days (browsers expire them too)."""
        now = now or utcnow()
        since = now - timedelta(days=push.EXPIRE_DAYS)
        with self.sessions() as session, session.begin():
            used = session.scalars(select(OutboxRow.contact_id).distinct().where(
                OutboxRow.channel == push.PUSH, OutboxRow.sent_at >= since, OutboxRow.contact_id.is_not(None)))
            removed = push.expire(session, used, now)
        if removed:
            log.info("dropped %d push subscription(s) unused for %d days", removed, push.EXPIRE_DAYS)

    def poll_wakeup(self) -> None:
        requested = wakeups(self.sessions)
        if requested != self.seen_wakeups:
            self.seen_wakeups = requested
            log.info("wake-up requested: running a cycle now")
            self.cycle()


def build_scheduler(settings: Settings, clock: Clock) -> Any:  # an APScheduler BlockingScheduler (untyped)
    """The BlockingScheduler and its jobs: the regular cycle, the daily summary, the wake-up poll, the purge, the
    retention sweep."""
    from apscheduler.schedulers.blocking import BlockingScheduler
    from apscheduler.triggers.cron import CronTrigger

    # Explicit on every job: a run delayed by a busy cycle still happens (grace), runs missed while the process was
    # down fold into one (coalesce), and a job never runs beside itself (max_instances).
    defaults = {"coalesce": True, "max_instances": 1, "misfire_grace_time": 300, "replace_existing": True}
    scheduler = BlockingScheduler(timezone="America/Toronto")
    scheduler.add_job(clock.cycle, "interval", seconds=settings.check_interval, id="cycle", next_run_time=utcnow(),
                      **defaults)
    daily = settings.daily_digest_at
    scheduler.add_job(clock.cycle, CronTrigger(hour=daily.hour, minute=daily.minute, timezone="America/Toronto"),
                      id="daily-digest", **defaults)
    scheduler.add_job(clock.poll_wakeup, "interval", seconds=POLL_SECONDS, id="wakeup",
                      **{**defaults, "misfire_grace_time": POLL_SECONDS * 5})
    scheduler.add_job(clock.purge_unconfirmed, CronTrigger(hour=3, minute=15, timezone="America/Toronto"),
                      id="purge-unconfirmed", **defaults)
    scheduler.add_job(clock.sweep, CronTrigger(hour=3, minute=40, timezone="America/Toronto"), id="retention",
                      **defaults)
    scheduler.add_job(clock.expire_push, CronTrigger(hour=3, minute=25, timezone="America/Toronto"),
                      id="expire-push", **defaults)
    scheduler.add_job(clock.heartbeat, "interval", seconds=HEARTBEAT_SECONDS, id="heartbeat", **defaults)
    return scheduler


def quiet_scheduler_log() -> None:
    """Keep APScheduler to warnings and errors: its INFO line for every job run drowned what the clock did."""
    logging.getLogger("apscheduler").setLevel(logging.WARNING)


def main(settings: Settings) -> None:
    """Run the scheduler (and, unless NOTIFIER_CLOCK_SENDS=0, the sending loop) until stopped (SIGTERM/SIGINT)."""
    import signal

    quiet_scheduler_log()
    metrics.serve(settings.metrics_address, "clock")
    sessions = make_sessionmaker(make_engine(settings.database_url))
    loop = sending_loop(settings, sessions, "clock") if settings.clock_sends else None
    clock = Clock(settings, sessions, planned=loop.wake if loop is not None else None)
    scheduler = build_scheduler(settings, clock)
    if loop is not None:
        loop.start_when_possible()  # the scheduler runs either way: planning must not wait for sending
    stopping = threading.Event()

    def stop(*_: object) -> None:
        stopping.set()
        if scheduler.running:
            scheduler.shutdown(wait=False)

    # Handlers of its own for both: a process started in the background of a script inherits SIGINT as ignored, and
    # Python then installs no KeyboardInterrupt for it, so Ctrl-C (or a test's SIGINT) would leave the clock running.
    for number in (signal.SIGINT, signal.SIGTERM):
        signal.signal(number, stop)
    log.info("clock started: a cycle every %s s on %s, daily summaries at %s America/Toronto; %s",
             settings.check_interval, settings.boards_file, settings.daily_digest_at.strftime("%H:%M"),
             "sending here too" if loop else "sending left to worker processes (NOTIFIER_CLOCK_SENDS=0)")
    try:
        if not stopping.is_set():
            scheduler.start()
    except (KeyboardInterrupt, SystemExit):
        pass
    finally:
        if loop is not None:
            loop.stop()
        log.info("clock stopped")
