"""Planning streams into sending, set-wise: contacts are planned in batches, each committed on its own (the first
rows can be claimed while later contacts are still being planned, the first batch small), with one INSERT ... SELECT
per batch rather than a row of Python values per contact."""

from __future__ import annotations

from datetime import timedelta

from sqlalchemy import event, update

from notifier.delivery.outbox import OutboxRow, Priority
from notifier.notices import planning
from notifier.status import cycle
from notifier.status.history import latest_event_id
from tests.conftest import NOW, make_subscriber, outbox_rows


def _closure_recorded(sessions, settings, boards, families: int) -> None:
    cycle.run(sessions, str(settings.boards_file), now=NOW, follow=True)
    with sessions() as session, session.begin():
        for _ in range(families):
            make_subscriber(session)  # by email and by text
    boards.update("tdsb", status="closed")
    cycle.run(sessions, str(settings.boards_file), now=NOW + timedelta(minutes=1), follow=True)


def test_each_batch_is_committed_with_one_insert_select(engine, sessions, settings, boards):
    _closure_recorded(sessions, settings, boards, 150)  # 300 contacts
    statements: list[str] = []
    commits: list[int] = []

    def executed(conn, cursor, statement, parameters, context, executemany):
        if "INSERT INTO OUTBOX" in statement.upper():
            statements.append(statement)

    def committed(conn):
        commits.append(len(statements))

    event.listen(engine, "before_cursor_execute", executed)
    event.listen(engine, "commit", committed)
    try:
        result = planning.plan(sessions, settings, NOW + timedelta(minutes=1), batch_size=100)
    finally:
        event.remove(engine, "before_cursor_execute", executed)
        event.remove(engine, "commit", committed)
    assert result.contacts == 300 and result.created == 300
    assert len(outbox_rows(sessions)) == 300
    # batches of 100 (the first one small), 100, 100: each writes its email and text digests at once, then commits
    inserting_commits = [n for i, n in enumerate(commits) if n and (i == 0 or n != commits[i - 1])]
    assert inserting_commits[:3] == [1, 2, 3]
    assert all("SELECT" in statement.upper() for statement in statements)


def test_the_first_batch_is_small_so_the_first_texts_leave_early(engine, sessions, settings, boards):
    _closure_recorded(sessions, settings, boards, 100)  # 200 contacts
    rows_seen = []

    def executed(conn, cursor, statement, parameters, context, executemany):
        if "INSERT INTO OUTBOX" in statement.upper():
            rows_seen.append(statement)

    event.listen(engine, "before_cursor_execute", executed)
    try:
        planning.plan(sessions, settings, NOW + timedelta(minutes=1), batch_size=1000)
    finally:
        event.remove(engine, "before_cursor_execute", executed)
    assert len(rows_seen) == 2  # the first FIRST_BATCH (100) contacts, then the other 100
    assert len(outbox_rows(sessions)) == 200 and planning.FIRST_BATCH == 100


def test_urgent_and_quiet_hours_decisions_are_kept_per_group(sessions, settings, boards):
    _closure_recorded(sessions, settings, boards, 3)
    planning.plan(sessions, settings, NOW + timedelta(minutes=1))
    rows = outbox_rows(sessions)
    assert len(rows) == 6
    assert all(row.urgent and row.status == "pending" and row.priority == Priority.DIGEST for row in rows)
    assert {row.digest_key for row in rows} == {rows[0].digest_key}


def test_a_family_following_only_the_other_panel_hears_nothing_and_moves_on(sessions, settings, boards):
    cycle.run(sessions, str(settings.boards_file), now=NOW, follow=True)
    with sessions() as session, session.begin():
        elementary = make_subscriber(session, follows=[("tdsb", "elementary")])
        secondary = make_subscriber(session, follows=[("tdsb", "secondary")])
    boards.update("tdsb", panels={"secondary": "closed"})
    cycle.run(sessions, str(settings.boards_file), now=NOW + timedelta(minutes=1), follow=True)
    planning.plan(sessions, settings, NOW + timedelta(minutes=1))
    told = {row.contact_id for row in outbox_rows(sessions)}
    with sessions() as session:
        assert told == {c.id for c in session.get(type(secondary), secondary.id).contacts}
        mark, newest = planning.watermark(session), latest_event_id(session)
        assert all(mark.seen(c.id, c.seen_event_id) == newest
                   for c in session.get(type(elementary), elementary.id).contacts)


def _pending(sessions) -> list:
    return [row for row in outbox_rows(sessions) if row.status == "pending"]


def test_a_pass_makes_way_for_a_newer_status_and_the_next_one_plans_the_rest_with_it(sessions, settings, boards):
    _closure_recorded(sessions, settings, boards, 150)  # 300 contacts
    first = planning.plan(sessions, settings, NOW + timedelta(minutes=1), batch_size=100, newer=lambda: True)
    assert first.interrupted and first.contacts == 100 and len(_pending(sessions)) == 100
    boards.update("tdsb", status="open")  # the correction, recorded by the next cycle
    cycle.run(sessions, str(settings.boards_file), now=NOW + timedelta(minutes=2), follow=True)
    second = planning.plan(sessions, settings, NOW + timedelta(minutes=2), batch_size=100)
    assert not second.interrupted and second.contacts == 300
    assert _pending(sessions) == []  # nobody had the closure yet: closed then open again tells nobody anything


def test_a_pass_stops_when_a_change_is_recorded_while_it_runs(sessions, settings, boards):
    _closure_recorded(sessions, settings, boards, 150)

    def staff_publish_meanwhile() -> bool:
        boards.update("tdsb", status="open")
        cycle.run(sessions, str(settings.boards_file), now=NOW + timedelta(minutes=2), follow=True)
        return False

    result = planning.plan(sessions, settings, NOW + timedelta(minutes=1), batch_size=100,
                           newer=staff_publish_meanwhile)
    assert result.interrupted and result.contacts == 100


def test_a_pass_cut_short_goes_on_where_it_stopped_when_no_newer_news_came(sessions, settings, boards):
    _closure_recorded(sessions, settings, boards, 150)  # 300 contacts
    first = planning.plan(sessions, settings, NOW + timedelta(minutes=1), batch_size=100, newer=lambda: True)
    second = planning.plan(sessions, settings, NOW + timedelta(minutes=1), batch_size=100)
    assert (first.contacts, second.contacts) == (100, 200)
    assert len({row.contact_id for row in _pending(sessions)}) == len(_pending(sessions)) == 300


def test_who_heard_the_news_before_a_pass_was_cut_short_hears_only_the_correction(sessions, settings, boards):
    _closure_recorded(sessions, settings, boards, 150)
    planning.plan(sessions, settings, NOW + timedelta(minutes=1), batch_size=100, newer=lambda: True)
    with sessions() as session, session.begin():
        session.execute(update(OutboxRow).values(status="sent"))  # the first 100 had the closure
    boards.update("tdsb", status="open")
    cycle.run(sessions, str(settings.boards_file), now=NOW + timedelta(minutes=2), follow=True)
    planning.plan(sessions, settings, NOW + timedelta(minutes=2), batch_size=100)
    sent = {row.contact_id for row in outbox_rows(sessions) if row.status == "sent"}
    assert len(sent) == 100 and {row.contact_id for row in _pending(sessions)} == sent


def test_a_pass_moves_its_watermark_instead_of_rewriting_every_contact(engine, sessions, settings, boards):
    _closure_recorded(sessions, settings, boards, 150)
    updates: list[str] = []

    def executed(conn, cursor, statement, parameters, context, executemany):
        if statement.lstrip().upper().startswith("UPDATE CONTACTS"):
            updates.append(statement)

    event.listen(engine, "before_cursor_execute", executed)
    try:
        result = planning.plan(sessions, settings, NOW + timedelta(minutes=1), batch_size=100)
    finally:
        event.remove(engine, "before_cursor_execute", executed)
    assert result.contacts == 300 and updates == []
    with sessions() as session:
        mark = planning.watermark(session)
        assert (mark.pass_events, mark.pass_contact) == (0, 0) and mark.cursor == latest_event_id(session)
