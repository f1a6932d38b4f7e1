"""Every log line of a whole fan-out under faults (web, clock and worker processes; a process killed and started
again; texts failing, timing out and reconciled; status callbacks and inbound texts through the web process) is
free of phone numbers, email addresses, link tokens, the account SID and the auth token (tests/support/pii.py)."""

from __future__ import annotations

import pytest

from tests.conftest import ACCOUNT_SID, AUTH_TOKEN, BASE_URL
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
from tests.support.pii import offending_lines

pytestmark = pytest.mark.faults


def test_no_log_line_of_a_fan_out_with_crashes_and_webhooks_holds_personal_data_or_secrets(
    processes, sessions, env, database_url, boards, boards_file, twilio_server, faulty_smtp, redis_url
):
    require_postgresql(database_url)
    audience = plant(sessions, boards_file, 150)
    twilio_server.faults(0.1, seed=7, kinds=("429", "500", "stall"), stall_seconds=2)
    settings = process_env(env, faulty_smtp.url, twilio_server.url, NOTIFIER_REDIS_URL=redis_url,
                           NOTIFIER_DEBUG="0", WEB_CONCURRENCY="1")
    web = processes.start("web", settings)
    web.wait_http(f"{web.url}/healthz", timeout=60)
    twilio_server.route(BASE_URL, web.url)
    clock, worker = processes.start("clock", settings), processes.start("worker", settings)
    boards.update("tdsb", status="closed")
    progress = lambda: f"{delivered(twilio_server, faulty_smtp)} delivered; {outbox_left(sessions)}"  # noqa: E731

    wait_until(lambda: delivered(twilio_server, faulty_smtp) >= 100, 120, progress)
    worker.kill()
    worker.start()
    wait_until(lambda: delivered(twilio_server, faulty_smtp) >= 200, 120, progress)
    clock.kill()
    clock.start()
    wait_until(settled(sessions, audience), 240, progress)
    assert_each_reached_once(audience, twilio_server, faulty_smtp)
    twilio_server.faults(0)
    parent = sorted(audience.phones)[0]
    assert twilio_server.text(f"{BASE_URL}/twilio/inbound", parent, "AIDE").status == 200
    assert twilio_server.text(f"{BASE_URL}/twilio/inbound", "+16135559911", "hello?").status == 200
    wait_until(lambda: len(twilio_server.messages) == len(audience.phones) + 2, 60, progress)  # both answered
    twilio_server.settle(30)
    assert any(c.status == 204 for c in twilio_server.callbacks), "status callbacks must have reached the web process"

    logs = "\n".join(p.log() for p in processes.started)
    assert "reconciled" in logs and "registered as sender" in logs  # the logs do describe the faults
    assert offending_lines(logs, secrets=[AUTH_TOKEN, ACCOUNT_SID], allowed=["status@example.org"]) == []
