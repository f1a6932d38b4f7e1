"""The clock: one scheduler with explicit misfire/coalesce/max_instances, a daily summary job in Toronto time,
and a wake-up flag that the staff console sets and the clock picks up within seconds."""

from __future__ import annotations

from datetime import datetime

from sqlalchemy import func, select

from notifier.clock import Clock, build_scheduler, request_wakeup
from notifier.status.history import Cycle


def cycles(sessions) -> int:
    with sessions() as session:
        return session.scalar(select(func.count()).select_from(Cycle))


def test_a_wakeup_request_runs_a_cycle_at_the_next_poll(sessions, fast_settings):
    clock = Clock(fast_settings, sessions)
    clock.poll_wakeup()
    assert cycles(sessions) == 0
    request_wakeup(sessions)
    clock.poll_wakeup()
    assert cycles(sessions) == 1
    clock.poll_wakeup()
    assert cycles(sessions) == 1


def test_the_scheduler_jobs_coalesce_and_never_overlap(sessions, fast_settings):
    scheduler = build_scheduler(fast_settings, Clock(fast_settings, sessions))
    jobs = {job.id: job for job in scheduler.get_jobs()}
    assert set(jobs) == {"cycle", "daily-digest", "wakeup", "purge-unconfirmed"}
    for job in jobs.values():
        assert job.coalesce is True and job.max_instances == 1 and job.misfire_grace_time >= 10
    assert jobs["cycle"].trigger.interval.total_seconds() == 60


def test_the_daily_summary_runs_at_0630_toronto_time_across_dst(sessions, fast_settings):
    scheduler = build_scheduler(fast_settings, Clock(fast_settings, sessions))
    trigger = next(job.trigger for job in scheduler.get_jobs() if job.id == "daily-digest")
    before_dst_ends = datetime.fromisoformat("2026-10-31T12:00:00-04:00")
    assert trigger.get_next_fire_time(None, before_dst_ends).isoformat() == "2026-11-01T06:30:00-05:00"
    evening = datetime.fromisoformat("2026-11-23T20:00:00-05:00")
    assert trigger.get_next_fire_time(None, evening).isoformat() == "2026-11-24T06:30:00-05:00"


def test_tick_exits_zero_after_a_good_cycle(runner):
    result = runner.invoke("tick")
    assert result.exit_code == 0 and ": ok" in result.output


def test_the_clock_deletes_sign_ups_left_unconfirmed_for_a_week(sessions, fast_settings):
    from datetime import timedelta

    from notifier.db import utcnow
    from notifier.subscribers.models import Contact
    from tests.conftest import make_subscriber

    with sessions() as session, session.begin():
        stale = make_subscriber(session, status="pending", phone=None)
        stale.contacts[0].created_at = utcnow() - timedelta(days=8)
        fresh = make_subscriber(session, status="pending", phone=None)
        fresh_id = fresh.contacts[0].id
    Clock(fast_settings, sessions).purge_unconfirmed()
    with sessions() as session:
        assert [c.id for c in session.scalars(select(Contact))] == [fresh_id]
