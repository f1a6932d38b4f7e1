"""`kill -9` of the clock or a worker at random moments, twenty times, during a 5,000-message fan-out while 5 % of
Twilio's answers fail (429, 500, 503, or a timeout after the message was created): everyone reached once, nobody
twice."""

from __future__ import annotations

import random

import pytest

from tests.delivery.fanout import (
    assert_each_reached_once,
    delivered,
    outbox_left,
    plant,
    process_env,
    require_postgresql,
    settled,
    wait_until,
)

pytestmark = pytest.mark.faults

FAMILIES = 2500  # an email and a text each: 5,000 messages
KILLS = 20


def test_twenty_kills_of_clock_and_workers_during_a_fan_out_with_failing_provider_reach_everyone_once(
    processes, sessions, env, database_url, boards, boards_file, twilio_server, faulty_smtp, redis_url
):
    require_postgresql(database_url)
    audience = plant(sessions, boards_file, FAMILIES)
    twilio_server.faults(0.05, seed=13, kinds=("429", "500", "503", "stall"), stall_seconds=2)
    settings = process_env(env, faulty_smtp.url, twilio_server.url, NOTIFIER_REDIS_URL=redis_url,
                           NOTIFIER_CLAIM_LEASE="10")
    running = [processes.start("clock", settings), processes.start("worker", settings),
               processes.start("worker", settings)]
    boards.update("tdsb", status="closed")

    dice = random.Random(2026)  # noqa: S311 - reproducible moments, not secrets
    moments = sorted(dice.randrange(0, 2 * FAMILIES * 9 // 10) for _ in range(KILLS))
    kills = []
    for moment in moments:
        wait_until(lambda m=moment: delivered(twilio_server, faulty_smtp) >= m, 240,
                   lambda: f"{delivered(twilio_server, faulty_smtp)} delivered; {outbox_left(sessions)}\n"
                           f"{processes.logs()}")
        victim = dice.choice(running)
        assert victim.kill() == -9
        kills.append((victim.label, delivered(twilio_server, faulty_smtp)))
        victim.start()
    assert len(kills) == KILLS and {label for label, _ in kills} >= {"clock", "worker"}

    wait_until(settled(sessions, audience), 300, lambda: f"{outbox_left(sessions)}\n{processes.logs()}")
    assert_each_reached_once(audience, twilio_server, faulty_smtp)
    assert "Traceback" not in "".join(p.log() for p in running), processes.logs()
