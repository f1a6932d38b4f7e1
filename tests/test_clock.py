"""The clock: one scheduler with explicit misfire/coalesce/max_instances, a daily summary job in Toronto time,
a wake-up flag that the staff console sets and the clock picks up within seconds, and a log that says what happened
(a heartbeat at most once a minute while nothing does)."""

from __future__ import annotations

from datetime import datetime

from sqlalchemy import func, select

from notifier.clock import Clock, build_scheduler, request_wakeup
from notifier.status.history import Cycle
from tests.support.signals import started_with_sigint_ignored, wait_for_line


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
    assert set(jobs) == {"cycle", "daily-digest", "wakeup", "purge-unconfirmed", "retention", "expire-push",
                         "heartbeat"}
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


def test_a_quiet_clock_says_it_is_alive_at_most_once_a_minute(sessions, fast_settings, caplog):
    import time

    clock = Clock(fast_settings, sessions)
    caplog.set_level("INFO", logger="notifier.clock")
    start = time.monotonic()
    clock.heartbeat(start + 30)
    clock.heartbeat(start + 61)
    clock.heartbeat(start + 62)
    assert [r.getMessage().split(":")[0] for r in caplog.records] == ["clock alive"]


def test_a_cycle_that_finds_nothing_logs_nothing(sessions, fast_settings, caplog):
    clock = Clock(fast_settings, sessions)
    clock.cycle()  # the first cycle records the state of every board, and tells nobody: no change either
    caplog.clear()
    caplog.set_level("INFO")
    clock.cycle()
    assert [r.getMessage() for r in caplog.records if r.levelname != "DEBUG"] == []
    assert clock.quiet_cycles == 2


def test_a_cycle_that_records_a_change_logs_it_and_puts_off_the_heartbeat(sessions, fast_settings, boards, caplog):
    import time

    clock = Clock(fast_settings, sessions)
    clock.cycle()
    boards.update("tdsb", status="closed")
    caplog.set_level("INFO")
    clock.cycle()
    assert any("change(s)" in r.getMessage() for r in caplog.records)
    caplog.clear()
    clock.heartbeat(time.monotonic() + 30)
    assert caplog.records == []


def test_the_clock_process_logs_no_line_per_job_run(env, tmp_path):
    """The real process for a few seconds, with a cycle every second and the wake-up poll every two: only the start
    (and its sending loop) and the first cycle (which records every board) are worth a line; APScheduler's per-run
    lines are gone."""
    import signal
    import time

    log = tmp_path / "clock.log"
    environment = {**env, "NOTIFIER_CHECK_INTERVAL": "1", "NOTIFIER_DEBUG": "0"}
    with log.open("w") as out, started_with_sigint_ignored(["clock"], environment, out) as process:
        wait_for_line(log, "clock started")
        time.sleep(6)  # six cycles and three wake-up polls
        process.send_signal(signal.SIGINT)
        process.wait(timeout=20)
    lines = log.read_text().splitlines()
    # (A cycle slower than its one-second interval may still be reported as skipped: a warning worth reading.)
    assert not [line for line in lines if "INFO apscheduler" in line], lines
    assert any("clock started" in line for line in lines)
    said = [line for line in lines if " INFO " in line]  # start, its sending loop's registration, the first cycle
    assert len(said) <= 5, said


def test_the_clock_stops_on_sigint_even_when_it_started_with_sigint_ignored(env, sessions, tmp_path):
    """A script's background job inherits SIGINT as ignored; the clock's own handler still stops it within seconds,
    its sending registration given back."""
    import signal

    from notifier.delivery.senders import SenderRow

    log = tmp_path / "clock.log"
    with log.open("w") as out, started_with_sigint_ignored(["clock"], env, out) as process:
        assert wait_for_line(log, "sending loop started"), log.read_text()
        process.send_signal(signal.SIGINT)
        assert process.wait(timeout=20) == 0, log.read_text()
    assert "clock stopped" in log.read_text()
    with sessions() as session:
        assert [row.stopped_at is not None for row in session.scalars(select(SenderRow))] == [True]


def test_a_cycle_records_and_plans_and_returns_without_sending(sessions, fast_settings, boards, twilio_server):
    import time

    from notifier.status import cycle
    from tests.conftest import make_subscriber, outbox_rows

    cycle.run(sessions, str(fast_settings.boards_file), follow=True)
    with sessions() as session, session.begin():
        for _ in range(300):
            make_subscriber(session, email=None)
    boards.update("tdsb", status="closed")
    twilio_server.delay = 0.5  # a sender this slow would hold a sending cycle for minutes
    started = time.monotonic()
    result = Clock(fast_settings, sessions).cycle()
    assert result.ok and time.monotonic() - started < 30
    assert twilio_server.messages == [] and len(outbox_rows(sessions)) == 300


def test_the_clock_process_sends_through_its_own_sending_loop(sessions, fast_env, fast_settings, boards,
                                                              twilio_server, tmp_path):
    import signal
    import time

    from notifier.status import cycle
    from tests.conftest import make_subscriber

    cycle.run(sessions, str(fast_settings.boards_file), follow=True)
    with sessions() as session, session.begin():
        phones = {c.address for _ in range(5) for c in make_subscriber(session, email=None).contacts}
    boards.update("tdsb", status="closed")
    log = tmp_path / "clock.log"
    with log.open("w") as out, started_with_sigint_ignored(["clock"], fast_env, out) as process:
        deadline = time.monotonic() + 60
        while len(twilio_server.messages) < len(phones) and time.monotonic() < deadline:
            time.sleep(0.2)
        process.send_signal(signal.SIGTERM)
        process.wait(timeout=60)
    errors = log.read_text()
    assert {m["to"] for m in twilio_server.messages} == phones, errors[-2000:]
    assert "clock stopped" in errors
