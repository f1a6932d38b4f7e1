"""The retention sweep deletes settled messages, receipts, change events and cycles older than
NOTIFIER_RETENTION_DAYS and nothing else: pending messages stay whatever their age, and the sent and failed totals
never go down."""

from __future__ import annotations

from datetime import timedelta

from sqlalchemy import func, select

from notifier.clock import Clock, purge_unconfirmed
from notifier.db import utcnow
from notifier.delivery import retention, totals
from notifier.delivery.outbox import DeliveryReceipt, OutboxRow
from notifier.status.history import ChangeEvent, Cycle
from notifier.subscribers.models import InboundText
from tests.conftest import make_subscriber

DAYS = 400


def _row(session, contact_id: int, status: str, age_days: float, key: str, **fields) -> OutboxRow:
    at = utcnow() - timedelta(days=age_days)
    row = OutboxRow(contact_id=contact_id, channel="email", digest_key=key, event_ids="", status=status, due_at=at,
                    created_at=at, sent_at=at if status == "sent" else None, **fields)
    session.add(row)
    return row


def _contact_id(sessions) -> int:
    with sessions() as session, session.begin():
        return make_subscriber(session, phone=None).contacts[0].id


def _statuses(sessions) -> list[tuple[str, str]]:
    with sessions() as session:
        return sorted(tuple(row) for row in session.execute(select(OutboxRow.digest_key, OutboxRow.status)))


def test_the_sweep_deletes_settled_messages_older_than_the_setting_and_keeps_the_rest(sessions):
    contact = _contact_id(sessions)
    with sessions() as session, session.begin():
        _row(session, contact, "sent", DAYS + 1, "old-sent")
        _row(session, contact, "failed", DAYS + 1, "old-failed", failure="invalid")
        _row(session, contact, "cancelled", DAYS + 1, "old-cancelled")
        _row(session, contact, "superseded", DAYS + 1, "old-superseded")
        _row(session, contact, "sent", DAYS - 1, "recent-sent")
        _row(session, contact, "pending", DAYS + 30, "old-pending")
        _row(session, contact, "sending", DAYS + 30, "old-sending")
    swept = retention.sweep(sessions, DAYS)
    assert swept.counts["outbox rows"] == 4
    assert _statuses(sessions) == [("old-pending", "pending"), ("old-sending", "sending"), ("recent-sent", "sent")]


def test_the_sweep_works_in_small_batches(sessions):
    contact = _contact_id(sessions)
    with sessions() as session, session.begin():
        for number in range(7):
            _row(session, contact, "sent", DAYS + 1, f"old-{number}")
    assert retention.sweep(sessions, DAYS, batch=2).counts["outbox rows"] == 7
    assert _statuses(sessions) == []


def test_sent_and_failed_totals_never_go_down_when_rows_are_swept(sessions):
    contact = _contact_id(sessions)
    with sessions() as session, session.begin():
        _row(session, contact, "sent", DAYS + 1, "old-sent")
        _row(session, contact, "failed", DAYS + 1, "old-failed", failure="opted_out")
        _row(session, contact, "sent", 1, "new-sent")
    with sessions() as session:
        before = totals.as_dict(totals.settled(session))
    retention.sweep(sessions, DAYS)
    with sessions() as session:
        assert totals.as_dict(totals.settled(session)) == before == {"email/failed/opted_out": 1, "email/sent/": 2}


def test_the_sweep_deletes_old_receipts_and_keeps_every_inbound_text_id(sessions):
    old, recent = utcnow() - timedelta(days=DAYS + 1), utcnow() - timedelta(days=DAYS - 1)
    with sessions() as session, session.begin():
        session.add_all([DeliveryReceipt(provider_id="SMold", status="delivered", updated_at=old),
                         DeliveryReceipt(provider_id="SMnew", status="delivered", updated_at=recent),
                         InboundText(sid="SMinold", received_at=old), InboundText(sid="SMinnew", received_at=recent)])
    retention.sweep(sessions, DAYS)
    with sessions() as session:
        assert list(session.scalars(select(DeliveryReceipt.provider_id))) == ["SMnew"]
        assert sorted(session.scalars(select(InboundText.sid))) == ["SMinnew", "SMinold"]  # a replay is known


def test_the_sweep_deletes_old_change_events_and_cycles_but_keeps_the_newest_cycle(sessions):
    old, recent = utcnow() - timedelta(days=DAYS + 1), utcnow() - timedelta(days=DAYS - 1)
    with sessions() as session, session.begin():
        old_cycle, kept_cycle = Cycle(started_at=old, outcome="ok"), Cycle(started_at=old, outcome="ok")
        session.add_all([old_cycle, kept_cycle])
        session.flush()
        session.add_all([ChangeEvent(cycle_id=old_cycle.id, board_id="tdsb", kind="status", recorded_at=old),
                         ChangeEvent(cycle_id=kept_cycle.id, board_id="tdsb", kind="status", recorded_at=recent)])
        newest_old = Cycle(started_at=old, outcome="ok")
        session.add(newest_old)
        session.flush()
        ids = old_cycle.id, kept_cycle.id, newest_old.id
    swept = retention.sweep(sessions, DAYS)
    assert swept.counts["change events"] == 1 and swept.counts["cycles"] == 1
    with sessions() as session:
        assert list(session.scalars(select(ChangeEvent.recorded_at))) and \
            sorted(session.scalars(select(Cycle.id))) == [ids[1], ids[2]]


def test_an_old_change_event_stays_while_a_waiting_message_names_it(sessions):
    contact = _contact_id(sessions)
    with sessions() as session, session.begin():
        events = [ChangeEvent(board_id="tdsb", kind="status", recorded_at=utcnow() - timedelta(days=DAYS + 2))
                  for _ in range(3)]
        session.add_all(events)
        session.flush()
        _row(session, contact, "pending", DAYS + 1, "waiting").event_ids = f"{events[1].id},{events[2].id}"
    assert retention.sweep(sessions, DAYS).counts["change events"] == 1
    with sessions() as session:
        assert sorted(session.scalars(select(ChangeEvent.id))) == [events[1].id, events[2].id]


def test_the_clock_sweeps_with_its_setting(sessions, fast_settings):
    contact = _contact_id(sessions)
    with sessions() as session, session.begin():
        _row(session, contact, "sent", DAYS + 1, "old")
    Clock(fast_settings, sessions).sweep()
    assert _statuses(sessions) == []


def test_the_retention_sweep_command_reports_what_it_deleted(runner, sessions):
    contact = _contact_id(sessions)
    with sessions() as session, session.begin():
        _row(session, contact, "sent", DAYS + 1, "old")
    result = runner.invoke("retention", "sweep")
    assert result.exit_code == 0 and "deleted 1 outbox rows" in result.output


def test_purging_unconfirmed_sign_ups_keeps_their_confirmations_in_the_totals(sessions):
    with sessions() as session, session.begin():
        stale = make_subscriber(session, status="pending", phone=None).contacts[0]
        stale.created_at = utcnow() - timedelta(days=8)
        session.flush()
        _row(session, stale.id, "sent", 8, "confirmation", priority=0)
    with sessions() as session, session.begin():
        assert purge_unconfirmed(session, utcnow()) == 1
    with sessions() as session:
        assert session.scalar(select(func.count()).select_from(OutboxRow)) == 0
        assert totals.as_dict(totals.settled(session)) == {"email/sent/": 1}
