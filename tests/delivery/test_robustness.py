"""No message can stop delivery: a row that cannot be built or sent fails alone, with the reason, and the rest go
on; an invalid boards.yaml stops new planning only."""

from __future__ import annotations

from datetime import timedelta

from sqlalchemy import select

from notifier import clock
from notifier.db import transaction
from notifier.delivery import express
from notifier.delivery.channels import Message
from notifier.delivery.drain import drain
from notifier.delivery.outbox import OutboxRow
from notifier.notices.compose import MessageBuilder
from tests.conftest import NOW, outbox_rows

LATER = NOW + timedelta(minutes=1)


def _planned(run, boards, subscribe, count: int, **kind) -> None:
    for _ in range(count):
        subscribe(**kind)
    run()
    boards.update("tdsb", status="closed")
    run(LATER, deliver=False)


def test_an_email_that_cannot_be_built_fails_alone_with_the_reason_and_the_rest_go_out(
    run, sessions, subscribe, boards, fast_settings, smtp_server, twilio_server
):
    inbox, _ = smtp_server
    _planned(run, boards, subscribe, 20, phone=None)
    with transaction(sessions) as session:
        bad = express.enqueue(session, Message("email", "parent@example.org", "text", "bad-1",
                                               subject="Closed\nBcc: all@example.org"), None, now=LATER)
    clock.send_due(fast_settings, sessions, now=LATER)
    rows = {row.id: row for row in outbox_rows(sessions)}
    assert rows.pop(bad).status == "failed"
    assert {row.status for row in rows.values()} == {"sent"} and len(inbox.messages()) == 20
    with sessions() as session:
        failed = session.get(OutboxRow, bad)
    assert failed.failure == "message" and "could not be built" in failed.last_error


class _Breaks(MessageBuilder):
    """A composer that raises for one row (as a board name with a control character once did)."""

    broken: set[int] = set()

    def build(self, ids):
        if set(ids) & self.broken:
            raise ValueError("header contains a newline")
        return super().build(ids)


def test_a_row_the_composer_cannot_build_fails_alone_and_hundreds_of_others_go_out(
    run, sessions, subscribe, boards, fast_settings, twilio_server
):
    _planned(run, boards, subscribe, 300, email=None)
    rows = outbox_rows(sessions)
    _Breaks.broken = {rows[7].id}
    drain(sessions, fast_settings, _Breaks, now=LATER)
    statuses = {row.id: row.status for row in outbox_rows(sessions)}
    assert statuses.pop(rows[7].id) == "failed"
    assert set(statuses.values()) == {"sent"} and len(twilio_server.messages) == 299


def test_an_unexpected_exception_in_a_channel_fails_that_row_and_sending_goes_on(
    run, sessions, subscribe, boards, fast_settings, twilio_server
):
    from notifier.delivery.channels import build

    _planned(run, boards, subscribe, 10, email=None)
    first = outbox_rows(sessions)[0].id

    def factory(name):
        channel = build(fast_settings)[name]
        original = channel._send

        def flaky(message):
            if message.reference.startswith(f"digest-{first}."):
                raise KeyError("the SDK broke")
            return original(message)

        channel._send = flaky
        return channel

    drain(sessions, fast_settings, MessageBuilder, now=LATER, factory=factory)
    statuses = {row.id: row.status for row in outbox_rows(sessions)}
    assert statuses.pop(first) == "failed" and set(statuses.values()) == {"sent"}


def test_an_invalid_hand_edit_stops_only_new_planning_and_planned_rows_still_go_out(
    run, sessions, subscribe, boards, fast_settings, twilio_server, boards_file
):
    _planned(run, boards, subscribe, 3, email=None)
    with sessions() as session, session.begin():
        for row in session.scalars(select(OutboxRow)):
            row.due_at = row.due_at - timedelta(days=1)  # due on the real clock, which `tick` uses
    boards_file.write_text(boards_file.read_text() + "\n  - this: is not a board\n", encoding="utf-8")
    result = clock.tick(fast_settings, sessions)
    assert result.outcome == "invalid"
    assert {row.status for row in outbox_rows(sessions)} == {"sent"} and len(twilio_server.messages) == 3
