"""The embedded default, with real processes: the clock alone records, plans and sends (no worker, no Redis, the
suite's database: SQLite in its first run). The first text of a closure leaves within seconds, the cap holds, a
correction overtakes the fan-out, a confirmation asked for during it arrives within seconds, and push-back slows
the rate, with every text sent once."""

from __future__ import annotations

import bisect
import os
import time
from collections import Counter, defaultdict

import pytest
from sqlalchemy import select

from notifier.status import cycle
from notifier.status.history import ChangeEvent, Cycle
from tests.conftest import make_subscriber
from tests.support.waiting import StampPrecision, quiet, wait_for

IN_FLIGHT = 2 * 4 + 4  # one process: queued jobs (2 per sender thread) plus those being sent


def _followers(sessions, settings, count: int) -> set[str]:
    cycle.run(sessions, str(settings.boards_file), follow=True)
    with sessions() as session, session.begin():
        people = [make_subscriber(session, email=None) for _ in range(count)]
        return {c.address for p in people for c in p.contacts}


def _clock(processes, fast_env, rate: int, **extra: str):
    env = {**fast_env, "NOTIFIER_SMS_PER_SECOND": str(rate), "NOTIFIER_CHECK_INTERVAL": "1", **extra}
    env.pop("NOTIFIER_REDIS_URL", None)
    clock = processes.start("clock", env)
    clock.wait_for_log(r"clock started")
    return clock


def _fan_out_under_way(sessions, settings, fast_env, boards, twilio_server, processes, rate: int) -> None:
    """300 followers, the clock alone at `rate` texts/s, a closure, and the first 20 texts arrived."""
    _followers(sessions, settings, 300)
    _clock(processes, fast_env, rate)
    boards.update("tdsb", status="closed")
    assert wait_for(lambda: len(twilio_server.messages) >= 20, 60)


def _busiest_second(times: list[float]) -> int:
    return max(bisect.bisect_left(times, t + 1.0) - i for i, t in enumerate(times))


def _overloaded() -> bool:
    return os.getloadavg()[0] > (os.cpu_count() or 1)


def test_the_first_text_of_a_large_board_leaves_within_seconds_and_the_cap_holds(
    sessions, settings, fast_env, boards, twilio_server, processes
):
    phones = _followers(sessions, settings, 2000)
    _clock(processes, fast_env, 50)
    boards.update("tdsb", status="closed")
    with StampPrecision() as precision:
        assert wait_for(lambda: len(twilio_server.messages) >= 150, 60)
    with sessions() as session:
        closure = next(e for e in session.scalars(select(ChangeEvent).order_by(ChangeEvent.id)) if e.after == "closed")
        started = session.get(Cycle, closure.cycle_id).started_at.timestamp()
    times = sorted(m["_created"].timestamp() for m in twilio_server.messages)
    sent_to = Counter(m["to"] for m in twilio_server.messages)
    assert set(sent_to) <= phones and max(sent_to.values()) == 1
    assert times[0] - started <= 5.0, times[0] - started
    if _overloaded() or precision.worst > 0.03:  # the in-test server's stamps bunch when its threads wake late
        pytest.xfail(f"arrivals stamped up to {precision.worst * 1000:.0f} ms late (load {os.getloadavg()[0]:.1f}): "
                     "busiest second not judged")
    assert _busiest_second(times) <= 50 * 1.05 + 1


def test_a_correction_overtakes_the_fan_out_of_the_clock_alone(
    sessions, settings, fast_env, boards, twilio_server, processes
):
    _fan_out_under_way(sessions, settings, fast_env, boards, twilio_server, processes, 10)
    boards.update("tdsb", status="open")

    def correction() -> ChangeEvent | None:
        with sessions() as session:
            newest = session.scalar(select(ChangeEvent).order_by(ChangeEvent.id.desc()).limit(1))
        return newest if newest.after == "open" else None

    assert wait_for(lambda: correction() is not None, 30)
    recorded_at = correction().recorded_at.timestamp()
    assert wait_for(quiet(lambda: len(twilio_server.messages)), 120)
    by_phone: dict[str, list[dict]] = defaultdict(list)
    for message in sorted(twilio_server.messages, key=lambda m: m["_created"]):
        by_phone[message["to"]].append(message)
    stale = [texts[0] for texts in by_phone.values() if texts[0]["_created"].timestamp() > recorded_at]
    assert len(stale) <= IN_FLIGHT, len(stale)
    assert all(len(texts) == 2 and "open" in texts[1]["body"].lower() for texts in by_phone.values())
    assert len(by_phone) < 150  # the others heard nothing


def test_a_confirmation_asked_for_during_the_clocks_fan_out_arrives_within_seconds(
    sessions, settings, fast_env, boards, twilio_server, processes
):
    from notifier import create_app
    from tests.subscribers.conftest import sign_up

    _fan_out_under_way(sessions, settings, fast_env, boards, twilio_server, processes, 20)
    app = create_app({**fast_env, "NOTIFIER_SMS_PER_SECOND": "20", "TESTING": True})
    try:
        asked = time.monotonic()
        response = sign_up(app.test_client(), phone="+16135550177")
        waited = time.monotonic() - asked
    finally:
        app.extensions["notifier"].engine.dispose()
    assert response.status_code == 200 and waited < 1, waited  # queued, not waited for: the page answers at once
    # The clock's sending loop takes it, first in line.
    assert wait_for(lambda: "+16135550177" in [m["to"] for m in twilio_server.messages], 5 - waited)
    recipients = [m["to"] for m in twilio_server.messages]
    assert recipients.index("+16135550177") < 200  # it overtook most of the fan-out


def test_push_back_slows_the_clock_and_every_text_still_goes_once(
    sessions, settings, fast_env, boards, twilio_server, processes
):
    phones = sorted(_followers(sessions, settings, 60))
    for phone in phones[:10]:
        twilio_server.script(phone, (429, 20429))
    clock = _clock(processes, fast_env, 20, NOTIFIER_RETRY_BASE_SECONDS="0.5")
    boards.update("tdsb", status="closed")
    clock.wait_for_log(r"pushed back", timeout=60)
    assert wait_for(lambda: len({m["to"] for m in twilio_server.messages}) >= len(phones), 90)
    assert Counter(m["to"] for m in twilio_server.messages) == Counter(phones)
