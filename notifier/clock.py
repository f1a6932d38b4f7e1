"""The clock process (`python -m notifier clock`): the only scheduler, in a process of its own.

A scheduler inside web workers would run once per worker and message every parent several times, so the web app
never starts one. Jobs are plain functions; `python -m notifier tick` runs the same cycle once.
"""

from __future__ import annotations

import logging

from sqlalchemy.orm import Session, sessionmaker

from notifier import cycle
from notifier.config import Settings
from notifier.cycle import AfterRecord, CycleResult
from notifier.db import make_engine, make_sessionmaker

log = logging.getLogger(__name__)


def cycle_steps(settings: Settings) -> list[AfterRecord]:
    """What runs after changes are recorded: planning digests, then draining the outbox."""
    return []


def tick(settings: Settings, sessions: sessionmaker[Session] | None = None) -> CycleResult:
    """Run one whole cycle: record changes from boards.yaml, plan digests, deliver."""
    if sessions is None:
        sessions = make_sessionmaker(make_engine(settings.database_url))
    return cycle.run(sessions, str(settings.boards_file), after_record=cycle_steps(settings))


def main(settings: Settings) -> None:
    """Run the scheduler until stopped (SIGTERM/SIGINT)."""
    from apscheduler.schedulers.blocking import BlockingScheduler

    sessions = make_sessionmaker(make_engine(settings.database_url))
    scheduler = BlockingScheduler(
        timezone="America/Toronto",
        job_defaults={"coalesce": True, "max_instances": 1, "misfire_grace_time": 300},
    )
    scheduler.add_job(tick, "interval", seconds=settings.check_interval, args=(settings, sessions),
                      id="cycle", replace_existing=True, next_run_time=_now())
    log.info("clock started: a cycle every %s s on %s", settings.check_interval, settings.boards_file)
    try:
        scheduler.start()
    except (KeyboardInterrupt, SystemExit):
        log.info("clock stopped")


def _now():
    from notifier.db import utcnow

    return utcnow()
