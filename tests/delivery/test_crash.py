"""A `tick` killed with SIGKILL in the middle of a send, then run again, leaves every parent with one message."""

from __future__ import annotations

import os
import signal
import subprocess
import sys
import time
from collections import Counter

from notifier.config import ROOT
from notifier.status import cycle
from tests.conftest import make_subscriber

SUBSCRIBERS = 2000


def _tick(env: dict[str, str]) -> subprocess.Popen:
    return subprocess.Popen([sys.executable, "-m", "notifier", "tick"], cwd=ROOT, env={**os.environ, **env},
                            stdout=subprocess.DEVNULL, stderr=subprocess.PIPE)


def test_a_tick_killed_mid_send_then_rerun_sends_each_parent_exactly_one_message(
    sessions, fast_env, fast_settings, boards, smtp_server, twilio_server
):
    inbox, _ = smtp_server
    cycle.run(sessions, str(fast_settings.boards_file), follow=True)
    with sessions() as session, session.begin():
        people = [make_subscriber(session) for _ in range(SUBSCRIBERS)]
        phones = {c.address for p in people for c in p.contacts if c.channel == "sms"}
        emails = {c.address for p in people for c in p.contacts if c.channel == "email"}
    boards.update("tdsb", status="closed")
    twilio_server.delay = 0.01

    first = _tick(fast_env)
    deadline = time.monotonic() + 60
    while len(twilio_server.messages) < 200 and time.monotonic() < deadline and first.poll() is None:
        time.sleep(0.05)
    first.send_signal(signal.SIGKILL)
    first.wait(timeout=10)
    assert first.returncode == -signal.SIGKILL
    assert 0 < len(twilio_server.messages) < SUBSCRIBERS, "the kill must land in the middle of the send"

    twilio_server.delay = 0
    second = _tick(fast_env)
    _, errors = second.communicate(timeout=300)
    assert second.returncode == 0, errors.decode()[-2000:]

    texts = Counter(m["to"] for m in twilio_server.messages)
    assert set(texts) == phones and set(texts.values()) == {1}
    ids_per_recipient: dict[str, set[str]] = {}
    for message in inbox.messages():
        ids_per_recipient.setdefault(message["To"], set()).add(message["Message-ID"])
    assert set(ids_per_recipient) == emails
    assert {len(ids) for ids in ids_per_recipient.values()} == {1}


def test_two_worker_processes_draining_one_outbox_at_once_send_nothing_twice(
    sessions, fast_env, fast_settings, boards, twilio_server, redis_url
):
    from sqlalchemy import select

    from notifier.clock import cycle_steps
    from notifier.delivery.outbox import OutboxRow

    cycle.run(sessions, str(fast_settings.boards_file), follow=True)
    with sessions() as session, session.begin():
        people = [make_subscriber(session, email=None) for _ in range(1200)]
        phones = {c.address for p in people for c in p.contacts}
    boards.update("tdsb", status="closed")
    cycle.run(sessions, str(fast_settings.boards_file), follow=True,
              after_record=cycle_steps(fast_settings, deliver=False))
    twilio_server.delay = 0.01  # each worker claims a second's worth at a time: both must get a share

    env = {**os.environ, **fast_env, "NOTIFIER_REDIS_URL": redis_url}  # without Redis the second is refused
    workers = [subprocess.Popen([sys.executable, "-m", "notifier", "worker", "--once"], cwd=ROOT, env=env,
                                stdout=subprocess.DEVNULL, stderr=subprocess.PIPE)
               for _ in range(2)]
    for worker in workers:
        _, errors = worker.communicate(timeout=300)
        assert worker.returncode == 0, errors.decode()[-2000:]

    texts = Counter(m["to"] for m in twilio_server.messages)
    assert set(texts) == phones and set(texts.values()) == {1}
    with sessions() as session:
        claimers = set(session.scalars(select(OutboxRow.claim)))  # each process start has its own
    assert len(claimers) == 2, "both processes must have taken a share of the rows"
