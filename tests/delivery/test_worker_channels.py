"""`python -m notifier worker --channels push,email`: a sending process of its own for some channels only, which
claims nothing of the others; an unknown name is refused before anything starts."""

from __future__ import annotations

from datetime import timedelta

import pytest

from notifier.clock import cycle_steps, sending_loop
from notifier.config import Settings
from notifier.status import cycle
from notifier.subscribers import push
from tests.conftest import NOW, outbox_rows
from tests.support.waiting import wait_for

LATER = NOW + timedelta(minutes=1)


@pytest.fixture
def push_runner(runner, push_env, monkeypatch):
    """The in-process command runner, with Web Push on (the loopback push service)."""
    for key, value in push_env.items():
        monkeypatch.setenv(key, value)
    return runner


def _closure_planned(sessions, boards, push_env, push_service, subscribe) -> None:
    """A family by email and text and a browser by push, all following TDSB, then TDSB closes: rows planned, none
    sent."""
    settings = Settings.from_env(push_env)
    cycle.run(sessions, str(settings.boards_file), now=NOW, after_record=cycle_steps(settings), follow=True)
    subscribe()
    request = push.parse({"subscription": push_service.browser().subscription, "language": "en",
                          "boards": {"tdsb": ["elementary", "secondary"]}}, {"tdsb"}, (push_service.origin,))
    with sessions() as session, session.begin():
        push.store(session, request, source="/boards/tdsb 127.0.0.1")
    boards.update("tdsb", status="closed")
    cycle.run(sessions, str(settings.boards_file), now=LATER, after_record=cycle_steps(settings), follow=True)


def test_an_unknown_channel_is_refused_naming_it_and_the_valid_ones(runner):
    result = runner.invoke("worker", "--once", "--channels", "push,fax")
    assert result.exit_code == 2
    assert "unknown channel 'fax'" in result.output
    assert "valid channels: email, sms, webhook, push" in result.output


def test_a_push_worker_sends_the_due_push_rows_and_leaves_email_and_texts_pending(
        push_runner, sessions, boards, push_env, push_service, subscribe):
    _closure_planned(sessions, boards, push_env, push_service, subscribe)
    assert {row.channel for row in outbox_rows(sessions)} == {"email", "sms", "push"}

    result = push_runner.invoke("worker", "--once", "--channels", "push")

    assert result.exit_code == 0, result.output
    assert len(push_service.delivered) == 1
    statuses = {(row.channel, row.status) for row in outbox_rows(sessions)}
    assert statuses == {("push", "sent"), ("email", "pending"), ("sms", "pending")}


def test_the_sending_loop_of_a_push_worker_runs_only_the_push_pipeline(
        sessions, boards, push_env, push_service, subscribe):
    _closure_planned(sessions, boards, push_env, push_service, subscribe)
    loop = sending_loop(Settings.from_env(push_env), sessions, "worker", ("push",))
    loop.start()
    try:
        assert wait_for(lambda: push_service.delivered, 20)
    finally:
        loop.stop()
    assert [pipeline.name for pipeline in loop.pipelines] == ["push"]
    assert {(row.channel, row.status) for row in outbox_rows(sessions) if row.channel != "push"} == {
        ("email", "pending"), ("sms", "pending")}
