"""Outages in the middle of a fan-out, across real clock and worker processes: the database connection cut, the
mail relay down for longer than several retry intervals, Twilio answering too slowly. The processes recover by
themselves (never restarted here) and every parent gets exactly one message per contact."""

from __future__ import annotations

import time

import pytest
from sqlalchemy.engine import make_url

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


def _progress(sessions, twilio_server, smtp, processes):
    return lambda: f"{delivered(twilio_server, smtp)} delivered; {outbox_left(sessions)}\n{processes.logs()}"


def test_database_connections_cut_mid_fan_out_recover_without_a_restart_nothing_lost_or_doubled(
    processes, sessions, env, database_url, boards, boards_file, twilio_server, faulty_smtp, redis_url, tcp_proxy
):
    require_postgresql(database_url)
    audience = plant(sessions, boards_file, 500)
    url = make_url(database_url)
    proxy = tcp_proxy(url.host or "127.0.0.1", url.port or 5432)
    through_proxy = url.set(host="127.0.0.1", port=proxy.port).render_as_string(hide_password=False)
    settings = process_env({**env, "NOTIFIER_DATABASE_URL": through_proxy}, faulty_smtp.url, twilio_server.url,
                           NOTIFIER_REDIS_URL=redis_url)
    twilio_server.delay = 0.01  # long enough a fan-out for the cuts to land in the middle
    running = [processes.start("clock", settings), processes.start("worker", settings)]
    pids = [p.pid for p in running]
    boards.update("tdsb", status="closed")
    progress = _progress(sessions, twilio_server, faulty_smtp, processes)

    for moment, refuse in ((150, 0), (400, 3), (700, 0)):
        wait_until(lambda m=moment: delivered(twilio_server, faulty_smtp) >= m, 180, progress)
        assert proxy.cut() > 0
        if refuse:
            proxy.refuse(refuse)  # and no new connection for a while: a failover
    wait_until(settled(sessions, audience), 240, progress)

    assert_each_reached_once(audience, twilio_server, faulty_smtp)
    assert [p.pid for p in running] == pids and all(p.running for p in running), processes.logs()


def test_a_mail_relay_down_for_a_minute_then_back_sends_each_email_once(
    processes, sessions, env, database_url, boards, boards_file, twilio_server, faulty_smtp
):
    require_postgresql(database_url)
    audience = plant(sessions, boards_file, 100)
    settings = process_env(env, faulty_smtp.url, twilio_server.url, NOTIFIER_RETRY_BASE_SECONDS="0.5")
    faulty_smtp.down()
    clock = processes.start("clock", settings)
    boards.update("tdsb", status="closed")
    progress = _progress(sessions, twilio_server, faulty_smtp, processes)

    wait_until(lambda: len(twilio_server.messages) == len(audience.phones), 120, progress)
    time.sleep(60)  # down for a minute: retries at about 0.5, 1, 2, 4, 8, 16 and 32 s all meet a closed port
    assert not faulty_smtp.received and clock.running
    faulty_smtp.up()
    wait_until(settled(sessions, audience), 240, progress)

    assert_each_reached_once(audience, twilio_server, faulty_smtp)


def test_twilio_answering_too_slowly_ends_in_exactly_one_text_each(
    processes, sessions, env, database_url, boards, boards_file, twilio_server, faulty_smtp
):
    require_postgresql(database_url)
    audience = plant(sessions, boards_file, 60)
    stalled = sorted(audience.phones)[:10]
    for phone in stalled:  # Twilio creates these, but answers after the client gave up
        twilio_server.accept_then_stall(phone, 3)
    twilio_server.delay = 2  # and every other answer comes too late: those are never created
    settings = process_env(env, faulty_smtp.url, twilio_server.url, TWILIO_TIMEOUT="1")
    processes.start("clock", settings)
    boards.update("tdsb", status="closed")
    progress = _progress(sessions, twilio_server, faulty_smtp, processes)

    wait_until(lambda: len(faulty_smtp.received) == len(audience.emails), 120, progress)
    time.sleep(5)  # several rounds of timeouts
    twilio_server.delay = 0
    wait_until(settled(sessions, audience), 240, progress)

    assert_each_reached_once(audience, twilio_server, faulty_smtp)
    assert {m["to"] for m in twilio_server.messages} >= set(stalled)
