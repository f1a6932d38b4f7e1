"""A correction during a fan-out, with the real processes (a clock that sends, and one worker, sharing one rate
through Redis): once the correction is recorded, no more stale texts leave than were already in flight; whoever got
the closure gets the correction once, and nobody else gets anything."""

from __future__ import annotations

from collections import defaultdict

import pytest
from sqlalchemy import select

from notifier.status import cycle
from notifier.status.history import ChangeEvent
from tests.conftest import make_subscriber
from tests.support.waiting import quiet, wait_for

FOLLOWERS = 600
RATE = 10
IN_FLIGHT = 2 * (2 * 4) + 4  # per process, queued jobs (2 per sender thread) plus those being sent; two processes


@pytest.mark.faults
def test_a_correction_during_a_fan_out_stops_the_stale_texts_at_once(
    sessions, settings, fast_env, boards, twilio_server, redis_url, processes
):
    env = {**fast_env, "NOTIFIER_REDIS_URL": redis_url, "NOTIFIER_SMS_PER_SECOND": str(RATE),
           "NOTIFIER_CHECK_INTERVAL": "1"}
    cycle.run(sessions, str(settings.boards_file), follow=True)
    with sessions() as session, session.begin():
        for _ in range(FOLLOWERS):
            make_subscriber(session, email=None)
    processes.start("clock", env).wait_for_log(r"clock started")
    processes.start("worker", env)
    boards.update("tdsb", status="closed")
    assert wait_for(lambda: len(twilio_server.messages) >= 30, 120)
    boards.update("tdsb", status="open")

    def correction():
        with sessions() as session:
            newest = session.scalar(select(ChangeEvent).order_by(ChangeEvent.id.desc()).limit(1))
        return newest if newest.after == "open" else None

    assert wait_for(lambda: correction() is not None, 30)
    recorded_at = correction().recorded_at.timestamp()
    assert wait_for(quiet(lambda: len(twilio_server.messages)), 120)  # nothing new for three seconds
    by_phone: dict[str, list[dict]] = defaultdict(list)
    for message in sorted(twilio_server.messages, key=lambda m: m["_created"]):
        by_phone[message["to"]].append(message)
    stale = [texts[0] for texts in by_phone.values() if texts[0]["_created"].timestamp() > recorded_at]
    print(f"stale texts after the correction: {len(stale)}; closures sent: {len(by_phone)}")
    assert len(stale) <= IN_FLIGHT, len(stale)
    assert all(len(texts) == 2 for texts in by_phone.values()), {p: len(t) for p, t in by_phone.items()}
    assert all("closed" in texts[0]["body"].lower() for texts in by_phone.values())  # never the reopening alone
    assert all("open" in texts[1]["body"].lower() for texts in by_phone.values())
    assert len(by_phone) < FOLLOWERS / 2  # the others heard nothing
