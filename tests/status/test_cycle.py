"""A cycle records what changed in boards.yaml since the last one: never on the first run, never from a broken file."""

from __future__ import annotations

from datetime import UTC, datetime, timedelta

from sqlalchemy import select

from notifier import db
from notifier.status import cycle
from notifier.status.history import BoardState, ChangeEvent, Cycle

NOW = datetime(2026, 11, 22, 12, 0, tzinfo=UTC)


def events(sessions) -> list[ChangeEvent]:
    with sessions() as session:
        return list(session.scalars(select(ChangeEvent).order_by(ChangeEvent.id)))


def test_the_first_cycle_records_the_state_and_no_changes(sessions, boards_file):
    result = cycle.run(sessions, str(boards_file), follow=True, now=NOW)
    assert result.ok and result.changes == []
    with sessions() as session:
        assert len(session.scalars(select(BoardState)).all()) == 72


def test_a_status_change_is_recorded_once(sessions, boards, boards_file):
    cycle.run(sessions, str(boards_file), follow=True, now=NOW)
    boards.update("tdsb", status="closed")
    first = cycle.run(sessions, str(boards_file), follow=True, now=NOW + timedelta(minutes=1))
    second = cycle.run(sessions, str(boards_file), follow=True, now=NOW + timedelta(minutes=2))
    assert [c.kind.value for c in first.changes] == ["status", "panel_status", "panel_status"]
    assert second.changes == []
    assert len(events(sessions)) == 3


def test_comments_and_whitespace_record_nothing(sessions, boards_file):
    cycle.run(sessions, str(boards_file), follow=True, now=NOW)
    boards_file.write_text("# a new comment\n" + boards_file.read_text().replace("boards:\n", "boards:\n\n", 1))
    assert cycle.run(sessions, str(boards_file), follow=True, now=NOW + timedelta(minutes=1)).changes == []


def test_an_invalid_file_records_nothing_and_the_next_valid_one_is_compared_with_the_last_good(
    sessions, boards, boards_file
):
    cycle.run(sessions, str(boards_file), follow=True, now=NOW)
    good = boards_file.read_text()
    boards_file.write_text(good.replace("status: open", "status: shut", 1))
    broken = cycle.run(sessions, str(boards_file), follow=True, now=NOW + timedelta(minutes=1))
    assert broken.outcome == "invalid"
    assert broken.problems[0].startswith(f"{boards_file}:")
    boards_file.write_text(good)
    boards.update("peel", status="work-to-rule")
    recovered = cycle.run(sessions, str(boards_file), follow=True, now=NOW + timedelta(minutes=2))
    assert {c.board_id for c in recovered.changes} == {"peel"}


def test_each_cycle_is_recorded_with_its_outcome(sessions, boards_file):
    cycle.run(sessions, str(boards_file), follow=True, now=NOW)
    with sessions() as session:
        [recorded] = session.scalars(select(Cycle)).all()
    assert recorded.outcome == "ok" and recorded.finished_at is not None


def test_a_period_announced_ahead_is_recorded_now_and_again_as_scheduled_when_it_starts_and_ends(
    sessions, boards, boards_file
):
    cycle.run(sessions, str(boards_file), follow=True, now=NOW)
    boards.update("tdsb", upcoming=[{"from": "2026-11-24T00:01", "until": "2026-11-25T00:01", "status": "closed",
                                     "panels": ["secondary"]}])
    announced = cycle.run(sessions, str(boards_file), follow=True, now=NOW)
    assert [(c.kind.value, c.scheduled) for c in announced.changes] == [("period_added", False)]

    def at(when: str):
        return cycle.run(sessions, str(boards_file), follow=True, now=datetime.fromisoformat(when)).changes

    assert at("2026-11-24T00:00-05:00") == []
    started = at("2026-11-24T00:02-05:00")
    assert [(c.kind.value, c.panel, c.after, c.scheduled) for c in started] == [
        ("panel_status", "secondary", "closed", True)]
    assert at("2026-11-24T00:03-05:00") == []
    ended = at("2026-11-25T00:02-05:00")
    assert [(c.kind.value, c.panel, c.after, c.scheduled) for c in ended] == [
        ("panel_status", "secondary", "open", True)]


def test_a_silent_record_keeps_history_but_marks_it_not_to_send(sessions, boards, boards_file):
    from notifier.status import document

    cycle.run(sessions, str(boards_file), follow=True, now=NOW)
    boards.update("tdsb", status="work-to-rule")
    snapshot = document.load(boards_file)
    with sessions() as session, session.begin():
        db.hold_lock(session, "cycle")
        cycle.record(session, snapshot.status, snapshot.version, None, NOW, notify=False)
    assert events(sessions) and not any(e.notify for e in events(sessions))
    assert cycle.run(sessions, str(boards_file), follow=True, now=NOW + timedelta(minutes=1)).changes == []


def test_tick_command_exits_zero_on_success_and_one_on_an_invalid_file(runner, boards_file):
    assert runner.invoke("tick").exit_code == 0
    boards_file.write_text(boards_file.read_text().replace("status: open", "status: shut", 1))
    result = runner.invoke("tick")
    assert result.exit_code == 1
    assert "unknown status 'shut'" in result.output
