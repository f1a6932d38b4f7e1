"""Several sending processes (`python -m notifier worker`) on one outbox: one cap shared through Redis, push-back
slowing them all, and a second sender refused when there is no Redis to share the cap."""

from __future__ import annotations

import bisect
import os
import signal
import subprocess
import sys
from collections import Counter

import pytest
from sqlalchemy import select

from notifier.config import ROOT
from notifier.delivery.senders import SenderRow
from notifier.status import cycle
from tests.conftest import make_subscriber, make_withdrawal
from tests.fakes.twilio_messages import busiest_second_weighted, segments
from tests.support.waiting import StampPrecision, wait_for

CAP = 20


def _worker(env: dict[str, str], *args: str) -> subprocess.Popen:
    return subprocess.Popen([sys.executable, "-m", "notifier", "worker", *args], cwd=ROOT, env={**os.environ, **env},
                            stdout=subprocess.DEVNULL, stderr=subprocess.PIPE, text=True)


def _planned(sessions, settings, boards, count: int, language: str = "en", **board) -> set[str]:
    cycle.run(sessions, str(settings.boards_file), follow=True)
    with sessions() as session, session.begin():
        people = [make_subscriber(session, email=None, language=language) for _ in range(count)]
        phones = {c.address for p in people for c in p.contacts}
    boards.update("tdsb", status="closed", **board)
    from notifier.clock import tick

    tick(settings, sessions, deliver=False)
    return phones


def _stop(workers: list[subprocess.Popen]) -> str:
    errors = ""
    for worker in workers:
        worker.send_signal(signal.SIGTERM)
    for worker in workers:
        errors += worker.communicate(timeout=60)[1]
    return errors


@pytest.mark.faults
def test_three_workers_hold_one_cap_together_and_nearly_reach_it(
    sessions, fast_env, boards, twilio_server, redis_url
):
    from notifier.config import Settings

    env = {**fast_env, "NOTIFIER_REDIS_URL": redis_url, "NOTIFIER_SMS_PER_SECOND": str(CAP),
           "NOTIFIER_SMS_CONCURRENCY": "4"}
    phones = _planned(sessions, Settings.from_env(env), boards, 300)
    workers = [_worker(env) for _ in range(3)]
    try:
        with StampPrecision() as precision:
            wait_for(lambda: len(twilio_server.messages) >= len(phones), 60)
    finally:
        errors = _stop(workers)
    assert Counter(m["to"] for m in twilio_server.messages) == Counter(phones), errors[-2000:]
    times = sorted(m["_created"].timestamp() for m in twilio_server.messages)
    busiest = max(bisect.bisect_left(times, t + 1.0) - i for i, t in enumerate(times))
    mean = (len(times) - 1) / (times[-1] - times[0])
    assert mean >= CAP * 0.9, mean
    # The in-test server stamps arrivals in this process's threads: when they woke late, stamps bunch.
    if precision.worst > 0.03 or os.getloadavg()[0] > (os.cpu_count() or 1):
        pytest.xfail(f"arrivals stamped up to {precision.worst * 1000:.0f} ms late (load {os.getloadavg()[0]:.1f}): "
                     f"busiest second {busiest} not judged; bench/fanout.py measures it on a quiet machine")
    start = max(range(len(times)), key=lambda i: bisect.bisect_left(times, times[i] + 1.0) - i)
    # +1: scheduling jitter of a test machine; on failure, the busiest second's arrivals in ms
    assert busiest <= CAP * 1.05 + 1, [round((t - times[start]) * 1000) for t in times[start:start + busiest]]


@pytest.mark.faults
def test_two_workers_pace_french_two_segment_texts_in_segments_within_five_percent_of_the_cap(
    sessions, fast_env, boards, twilio_server, redis_url
):
    """NOTIFIER_SMS_PER_SECOND counts segments, as the provider does: two-segment texts go five a second."""
    from notifier.config import Settings

    cap = 10
    env = {**fast_env, "NOTIFIER_REDIS_URL": redis_url, "NOTIFIER_SMS_PER_SECOND": str(cap)}
    services = [make_withdrawal(category=c) for c in ("transportation", "custodial-cleaning", "child-care")]
    phones = _planned(sessions, Settings.from_env(env), boards, 60, language="fr", withdrawals=services)
    workers = [_worker(env) for _ in range(2)]
    try:
        with StampPrecision() as precision:
            wait_for(lambda: len(twilio_server.messages) >= len(phones), 60)
    finally:
        errors = _stop(workers)
    assert Counter(m["to"] for m in twilio_server.messages) == Counter(phones), errors[-2000:]
    assert {segments(m["body"]) for m in twilio_server.messages} == {2}, twilio_server.messages[0]["body"]
    arrivals = sorted((m["_created"].timestamp(), segments(m["body"])) for m in twilio_server.messages)
    mean = (2 * len(arrivals) - 2) / (arrivals[-1][0] - arrivals[0][0])
    assert cap * 0.9 <= mean <= cap * 1.05, mean  # judged even on a busy machine, which only slows sends
    busiest = busiest_second_weighted(arrivals)
    if precision.worst > 0.03 or os.getloadavg()[0] > (os.cpu_count() or 1):
        pytest.xfail(f"arrivals stamped up to {precision.worst * 1000:.0f} ms late (load {os.getloadavg()[0]:.1f}): "
                     f"busiest second {busiest} segments not judged")
    assert busiest <= cap * 1.05, twilio_server.stats()["per_sender"]


@pytest.mark.faults
def test_push_back_slows_every_worker_and_each_text_still_goes_once(
    sessions, fast_env, boards, twilio_server, redis_url
):
    import redis

    from notifier.config import Settings

    env = {**fast_env, "NOTIFIER_REDIS_URL": redis_url, "NOTIFIER_SMS_PER_SECOND": str(CAP),
           "NOTIFIER_RETRY_BASE_SECONDS": "0.5"}
    phones = sorted(_planned(sessions, Settings.from_env(env), boards, 80))
    for phone in phones[:10]:
        twilio_server.script(phone, (429, 20429))
    workers = [_worker(env) for _ in range(2)]
    try:
        wait_for(lambda: len(twilio_server.messages) >= len(phones), 60)
        factor = redis.Redis.from_url(redis_url).hget("notifier:pace:sms:rate", "factor")
    finally:
        errors = _stop(workers)
    assert Counter(m["to"] for m in twilio_server.messages) == Counter(phones), errors[-2000:]
    assert factor is not None and float(factor) < 1.0
    assert "pushed back" in errors


def test_a_second_sender_without_redis_is_refused_with_a_clear_message(sessions, fast_env, engine):
    first = _worker(fast_env)
    try:
        def registered() -> bool:
            with sessions() as session:
                return session.scalar(select(SenderRow).where(SenderRow.stopped_at.is_(None))) is not None

        wait_for(registered, 30)
        second = _worker(fast_env, "--once")
        _, errors = second.communicate(timeout=60)
        assert second.returncode == 1
        assert "NOTIFIER_REDIS_URL" in errors and "already sending" in errors
    finally:
        _stop([first])
    with sessions() as session:
        assert all(row.stopped_at is not None for row in session.scalars(select(SenderRow)))


def test_a_worker_stops_on_sigint_even_when_it_started_with_sigint_ignored(env, sessions, tmp_path):
    """A script's background job inherits SIGINT as ignored; the worker's own handler still stops it within
    seconds, its registration marked stopped."""
    from tests.support.signals import started_with_sigint_ignored, wait_for_line

    log = tmp_path / "worker.log"
    with log.open("w") as out, started_with_sigint_ignored(["worker"], env, out) as process:
        assert wait_for_line(log, "sending loop started"), log.read_text()
        process.send_signal(signal.SIGINT)
        assert process.wait(timeout=20) == 0, log.read_text()
    with sessions() as session:
        assert [row.stopped_at is not None for row in session.scalars(select(SenderRow))] == [True]
