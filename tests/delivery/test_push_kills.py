"""`kill -9` of the clock or a worker at random moments during a fan-out to email, text and Web Push subscribers of
one board: every address and every device reached, each once.

A push service has no list to look a message up in, so a push in flight when its sender died is sent again after
reconciliation, like an email (resent with its Message-ID, which mail systems drop as a duplicate). The copy is the
same notice with the same tag, which the device shows once: here, each device must have received exactly one
distinct notice, and every device one."""

from __future__ import annotations

import json
import random

import pytest

from notifier.subscribers import push
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

FAMILIES = 300  # an email, a text and a browser each: 900 messages
KILLS = 6


def test_kills_of_clock_and_workers_during_a_fan_out_reach_every_address_and_device_once(
    processes, sessions, push_env, database_url, boards, boards_file, twilio_server, faulty_smtp, redis_url,
    push_service
):
    require_postgresql(database_url)
    audience = plant(sessions, boards_file, FAMILIES)
    with sessions() as session, session.begin():
        for _ in range(FAMILIES):
            body = {"subscription": push_service.browser().subscription, "boards": {"tdsb": ["elementary"]}}
            push.store(session, push.parse(body, {"tdsb"}, (push_service.origin,)), source="test")
    settings = process_env(push_env, faulty_smtp.url, twilio_server.url, NOTIFIER_REDIS_URL=redis_url,
                           NOTIFIER_CLAIM_LEASE="10", NOTIFIER_PUSH_PER_SECOND="1000")
    running = [processes.start("clock", settings), processes.start("worker", settings)]
    boards.update("tdsb", status="closed")

    def reached() -> int:
        return delivered(twilio_server, faulty_smtp) + len(push_service.delivered)

    dice = random.Random(2022)  # noqa: S311 - reproducible moments, not secrets
    for moment in sorted(dice.randrange(0, 3 * FAMILIES * 9 // 10) for _ in range(KILLS)):
        wait_until(lambda m=moment: reached() >= m, 240,
                   lambda: f"{reached()} reached; {outbox_left(sessions)}\n{processes.logs()}")
        victim = dice.choice(running)
        assert victim.kill() == -9
        victim.start()

    wait_until(lambda: settled(sessions, audience)() and len({d.browser for d in push_service.delivered}) >= FAMILIES,
               300, lambda: f"{outbox_left(sessions)}\n{processes.logs()}")
    assert_each_reached_once(audience, twilio_server, faulty_smtp)
    notices: dict[str, set[str]] = {}
    for item in list(push_service.delivered):
        notices.setdefault(item.browser, set()).add(json.dumps(item.payload, sort_keys=True))
    assert set(notices) == set(push_service.browsers), "a device was never reached"
    assert all(len(seen) == 1 for seen in notices.values()), "a device got two different notices"
    assert "Traceback" not in "".join(p.log() for p in running), processes.logs()
