"""How far a publish has got: counted from the outbox per channel, after a real (partial) drain, and printed by
`python -m notifier status`."""

from __future__ import annotations

from datetime import timedelta

from notifier.clock import cycle_steps
from notifier.db import utcnow
from notifier.delivery import progress
from notifier.delivery.drain import drain
from notifier.notices import compose
from notifier.status import cycle
from tests.conftest import NOW

LATER = NOW + timedelta(minutes=1)


def _publish_closure(sessions, settings, boards, subscribe, families: int = 3) -> None:
    """`families` families (email and text) following TDSB, then TDSB closes: rows planned, nothing sent yet."""
    for _ in range(families):
        subscribe()
    cycle.run(
        sessions, str(settings.boards_file), now=NOW, after_record=cycle_steps(settings, deliver=False), follow=True
    )
    boards.update("tdsb", status="closed")
    cycle.run(
        sessions, str(settings.boards_file), now=LATER, after_record=cycle_steps(settings, deliver=False), follow=True
    )


def _drain_emails_only(sessions, settings) -> None:
    drain(sessions, settings, compose.MessageBuilder, now=LATER, only=("email",))


def test_progress_counts_what_the_drain_sent_and_what_remains_per_channel(sessions, settings, boards, subscribe):
    _publish_closure(sessions, settings, boards, subscribe)
    _drain_emails_only(sessions, settings)
    now = utcnow()
    with sessions() as session:
        found = progress.latest(session, settings, now, "tdsb")
    assert found.board_id == "tdsb" and not found.done
    email, sms = found.channels
    assert (email.channel, email.sent, email.remaining, email.failed) == ("email", 3, 0, 0)
    assert email.expected_end is None and email.measured and email.rate == 3 / 60
    assert (sms.channel, sms.sent, sms.remaining, sms.failed) == ("sms", 0, 3, 0)
    assert not sms.measured and sms.rate == settings.sms_per_second
    assert sms.expected_end == now + timedelta(seconds=3 / settings.sms_per_second)


def test_another_boards_publish_is_not_counted(sessions, settings, boards, subscribe):
    _publish_closure(sessions, settings, boards, subscribe)
    with sessions() as session:
        assert progress.latest(session, settings, utcnow(), "peel") is None
        assert progress.latest(session, settings, utcnow()).board_id == "tdsb"


def test_the_time_to_reach_everyone_follows_the_configured_rate(settings):
    estimate = progress.estimates(settings, {"sms": 250_000, "email": 0})
    assert estimate["sms"].seconds == 250_000 / settings.sms_per_second
    assert progress.minutes_and_hours(2500) == (0, 42)  # 250,000 texts at 100/s
    assert progress.minutes_and_hours(3601) == (1, 1)


def test_status_prints_the_latest_publish_per_channel(runner, sessions, settings, boards, subscribe):
    _publish_closure(sessions, settings, boards, subscribe)
    _drain_emails_only(sessions, settings)
    output = runner.invoke("status").output
    assert "latest publish: tdsb at " in output
    lines = {line.split()[0]: line.split() for line in output.splitlines() if line.split()}
    assert lines["email"][-5:] == ["3", "0", "0", "0.1/s", "done"]
    assert lines["sms"][1:5] == ["0", "3", "0", "1.0/s*"]
    assert "* nothing sent in the last minute: the configured rate" in output


def test_a_publish_reads_as_still_planning_until_a_planning_pass_past_it_has_ended(sessions, settings, boards,
                                                                                    subscribe):
    for _ in range(2):
        subscribe()
    cycle.run(sessions, str(settings.boards_file), now=NOW, after_record=cycle_steps(settings, deliver=False),
              follow=True)
    boards.update("tdsb", status="closed")
    cycle.run(sessions, str(settings.boards_file), now=LATER, follow=True)  # recorded, not yet planned
    with sessions() as session:
        assert progress.latest(session, settings, utcnow(), "tdsb").planning
    cycle.run(sessions, str(settings.boards_file), now=LATER, after_record=cycle_steps(settings, deliver=False),
              follow=True)
    with sessions() as session:
        assert not progress.latest(session, settings, utcnow(), "tdsb").planning


def test_a_configured_rate_in_segments_becomes_texts_per_second_for_the_expected_end():
    from datetime import UTC, datetime, timedelta

    now = datetime(2026, 11, 27, 12, 0, tzinfo=UTC)
    texts = progress.ChannelProgress("sms", 0, 100, 0, 10.0, False, now + timedelta(seconds=10))
    measured = progress.ChannelProgress("email", 5, 100, 0, 4.0, True, now + timedelta(seconds=25))
    found = progress.PublishProgress("tdsb", now, (1,), (texts, measured))
    shown = progress.in_units(found, now, {"sms": 2.0, "email": 3.0}).channels
    assert (shown[0].rate, shown[0].expected_end) == (5.0, now + timedelta(seconds=20))
    assert shown[1] == measured  # a measured rate is already in messages
