"""A correction overtakes the old news: whether a digest still says something true is decided as it is about to
leave, against the newest recorded changes, so once a correction is recorded no stale message leaves; whoever got
the old news gets the correction once, and whoever did not gets nothing."""

from __future__ import annotations

from datetime import timedelta

from sqlalchemy import update

from notifier.delivery.claims import claim
from notifier.delivery.drain import drain
from notifier.delivery.outbox import OutboxRow, Priority
from notifier.delivery.sending import release
from notifier.notices.compose import MessageBuilder
from notifier.status import cycle
from tests.conftest import NOW, outbox_rows

LATER = NOW + timedelta(minutes=1)


def _record_only(sessions, settings, now) -> None:
    """Record what changed in boards.yaml without planning anything (the clock's planning has not reached anyone)."""
    assert cycle.run(sessions, str(settings.boards_file), now=now, follow=True).ok


def _statuses(sessions) -> list[tuple[str, str]]:
    return [(row.channel, row.status) for row in outbox_rows(sessions)]


def _closure_planned(run, boards) -> None:
    """TDSB closes and the clock plans everyone's message, sending none yet."""
    boards.update("tdsb", status="closed")
    run(LATER, deliver=False)


def _reopened_with_the_closure_in_flight(run, sessions, subscribe, boards, settings=None) -> list[int]:
    """One parent's closure text is claimed by a sender (not sent yet) when TDSB reopens, and the clock plans
    "open again" in case it leaves (or, given `settings`, only records the reopening); returns the claimed ids."""
    run()
    subscribe(email=None)
    _closure_planned(run, boards)
    with sessions() as session, session.begin():
        claimed = claim(session, "sms", LATER + timedelta(hours=1), 10, "another-sender")
    boards.update("tdsb", status="open")
    if settings is None:
        run(LATER + timedelta(minutes=1), deliver=False)
    else:
        _record_only(sessions, settings, LATER + timedelta(minutes=1))
    return claimed


def _send(sessions, settings, channel: str) -> None:
    """What one channel's sender does next: send every due row of that channel."""
    drain(sessions, settings, MessageBuilder, LATER + timedelta(hours=1), only=(channel,))


def test_a_stale_closure_is_not_sent_once_the_reopening_is_recorded(
    run, sessions, subscribe, boards, fast_settings, smtp_server, twilio_server
):
    run()
    subscribe(phone=None)  # hears by email: sent before the correction
    subscribe(email=None)
    subscribe(email=None)
    _closure_planned(run, boards)
    _send(sessions, fast_settings, "email")
    assert len(smtp_server[0].messages()) == 1
    boards.update("tdsb", status="open")
    _record_only(sessions, fast_settings, LATER + timedelta(minutes=1))
    _send(sessions, fast_settings, "sms")
    assert twilio_server.messages == []
    assert sorted(_statuses(sessions)) == [("email", "sent"), ("sms", "superseded"), ("sms", "superseded")]


def test_who_got_the_closure_gets_the_correction_once_and_the_others_nothing(
    run, sessions, subscribe, boards, fast_settings, smtp_server, twilio_server
):
    run()
    _, email, _ = subscribe(phone=None)
    subscribe(email=None)
    _closure_planned(run, boards)
    _send(sessions, fast_settings, "email")
    boards.update("tdsb", status="open")
    _record_only(sessions, fast_settings, LATER + timedelta(minutes=1))
    _send(sessions, fast_settings, "sms")
    run(LATER + timedelta(minutes=2))
    run(LATER + timedelta(minutes=3))
    mails = smtp_server[0].messages()
    assert [m["To"] for m in mails] == [email, email]
    assert "closed" in mails[0].get_body(("plain",)).get_content().lower()
    assert "open" in mails[1].get_body(("plain",)).get_content().lower()
    assert twilio_server.messages == []


def test_a_row_claimed_while_planning_passed_its_contact_is_merged_with_the_new_one(
    run, sessions, subscribe, boards, fast_settings, twilio_server
):
    claimed = _reopened_with_the_closure_in_flight(run, sessions, subscribe, boards)
    assert sorted(row.status for row in outbox_rows(sessions)) == ["pending", "sending"]
    jobs, gone = MessageBuilder(sessions, fast_settings).build(claimed)
    assert jobs == [] and gone == []
    assert sorted(row.status for row in outbox_rows(sessions)) == ["superseded", "superseded"]
    run(LATER + timedelta(minutes=2))
    assert twilio_server.messages == []


def test_a_change_of_another_kind_does_not_hold_back_a_true_message(
    run, sessions, subscribe, boards, fast_settings, twilio_server
):
    run()
    subscribe(email=None)
    _closure_planned(run, boards)
    boards.update("tdsb", message={"en": "Talks continue.", "fr": "Les pourparlers se poursuivent."})
    _record_only(sessions, fast_settings, LATER + timedelta(minutes=1))
    _send(sessions, fast_settings, "sms")
    assert len(twilio_server.messages) == 1
    assert "closed" in twilio_server.messages[0]["body"].lower()


def test_a_reconciliation_rebuilds_the_message_as_it_was(run, sessions, subscribe, boards, fast_settings):
    claimed = _reopened_with_the_closure_in_flight(run, sessions, subscribe, boards, fast_settings)
    jobs, _ = MessageBuilder(sessions, fast_settings).build(claimed, supersede=False)
    assert len(jobs) == 1 and "closed" in jobs[0].message.text.lower()
    assert [row.status for row in outbox_rows(sessions)] == ["sending"]


def test_the_correction_of_a_closure_a_parent_heard_is_urgent_and_claimed_before_other_digests(
    run, sessions, subscribe, boards, fast_settings, smtp_server
):
    run()
    subscribe(phone=None)
    _closure_planned(run, boards)
    _send(sessions, fast_settings, "email")
    boards.update("tdsb", status="open")
    run(LATER + timedelta(minutes=1), deliver=False)
    correction = next(row for row in outbox_rows(sessions) if row.status == "pending")
    assert correction.urgent and correction.priority == Priority.ENDING


def test_a_correction_waits_while_the_closure_it_corrects_is_still_being_sent(
    run, sessions, subscribe, boards, fast_settings, twilio_server
):
    _reopened_with_the_closure_in_flight(run, sessions, subscribe, boards)
    with sessions() as session, session.begin():
        correction = claim(session, "sms", LATER + timedelta(hours=1), 10, "test-claim")
    jobs, gone = MessageBuilder(sessions, fast_settings).build(correction)
    assert jobs == [] and gone == []
    assert sorted(row.status for row in outbox_rows(sessions)) == ["pending", "sending"]


def test_a_correction_claimed_when_the_closure_it_corrects_is_overtaken_is_withdrawn_with_it(
    run, sessions, subscribe, boards, fast_settings, twilio_server
):
    closure = _reopened_with_the_closure_in_flight(run, sessions, subscribe, boards)
    with sessions() as session, session.begin():
        correction = claim(session, "sms", LATER + timedelta(hours=1), 10, "third-sender")
    assert MessageBuilder(sessions, fast_settings).build(closure) == ([], [])
    assert MessageBuilder(sessions, fast_settings).build(correction) == ([], [])
    assert sorted(row.status for row in outbox_rows(sessions)) == ["superseded", "superseded"]
    run(LATER + timedelta(minutes=2))
    assert twilio_server.messages == []


def test_a_correction_waits_while_the_closure_it_corrects_waits_for_another_try(
    run, sessions, subscribe, boards, fast_settings, twilio_server
):
    closure = _reopened_with_the_closure_in_flight(run, sessions, subscribe, boards)
    release(sessions, closure, "another-sender")  # handed back, as after a provider's refusal
    with sessions() as session, session.begin():
        correction = claim(session, "sms", LATER + timedelta(hours=1), 1, "test-claim")
    assert MessageBuilder(sessions, fast_settings).build(correction) == ([], [])
    run(LATER + timedelta(minutes=2))
    assert twilio_server.messages == []


def test_a_closure_overtaken_after_its_contact_was_planned_past_the_correction_leaves_nothing_behind(
    run, sessions, subscribe, boards, fast_settings, twilio_server
):
    closure = _reopened_with_the_closure_in_flight(run, sessions, subscribe, boards)
    with sessions() as session, session.begin():  # the contact is past the reopening, with no correction waiting
        session.execute(update(OutboxRow).where(OutboxRow.status == "pending").values(status="cancelled"))
    assert MessageBuilder(sessions, fast_settings).build(closure) == ([], [])
    assert sorted(row.status for row in outbox_rows(sessions)) == ["cancelled", "superseded"]
    run(LATER + timedelta(minutes=2))
    assert twilio_server.messages == []
