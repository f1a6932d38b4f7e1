"""Digests through a real SMTP server and the real twilio SDK: who gets what, once, in their language, on time."""

from __future__ import annotations

from datetime import datetime, timedelta

from sqlalchemy import select

from notifier import db
from notifier.delivery.outbox import OutboxRow
from notifier.notices import planning
from notifier.status import cycle
from notifier.status.history import ChangeEvent
from notifier.subscribers.models import Contact
from tests.conftest import NOW, make_withdrawal, outbox_rows

LATER = NOW + timedelta(minutes=1)


def test_the_first_cycle_sends_nothing(run, subscribe, boards, smtp_server, twilio_server):
    subscribe()
    boards.update("tdsb", status="closed")
    assert run().ok
    assert smtp_server[0].messages() == [] and twilio_server.messages == []


def test_several_changes_in_one_cycle_make_one_digest_per_channel(run, subscribe, boards, smtp_server, twilio_server):
    run()
    _, email, phone = subscribe()
    boards.update("tdsb", status="work-to-rule", withdrawals=[make_withdrawal()],
                  message={"en": "Talks continue.", "fr": "Les pourparlers se poursuivent."})
    assert run(LATER).ok
    mails = smtp_server[0].messages()
    assert [m["To"] for m in mails] == [email]
    assert [m["to"] for m in twilio_server.messages] == [phone]
    text = mails[0].get_body(("plain",)).get_content()
    assert "Schools are open; staff are on work-to-rule." in text
    assert "No buses to secondary schools." in text and "Talks continue." in text


def test_a_second_cycle_sends_nothing_more(run, subscribe, boards, smtp_server, twilio_server):
    run()
    subscribe()
    boards.update("tdsb", status="closed")
    run(LATER)
    run(LATER + timedelta(minutes=1))
    assert len(smtp_server[0].messages()) == 1 and len(twilio_server.messages) == 1


def test_only_followed_boards_are_messaged(run, subscribe, boards, smtp_server, twilio_server):
    run()
    subscribe(follows=[("peel", "elementary"), ("peel", "secondary")])
    boards.update("tdsb", status="closed")
    run(LATER)
    assert smtp_server[0].messages() == [] and twilio_server.messages == []


def test_only_followed_panels_are_messaged(run, subscribe, boards, smtp_server, twilio_server):
    run()
    _, elementary_email, _ = subscribe(follows=[("tdsb", "elementary")], phone=None)
    _, secondary_email, _ = subscribe(follows=[("tdsb", "secondary")], phone=None)
    boards.update("tdsb", panels={"secondary": "closed"})
    run(LATER)
    assert [m["To"] for m in smtp_server[0].messages()] == [secondary_email]
    text = smtp_server[0].messages()[0].get_body(("plain",)).get_content()
    assert "Secondary schools are closed to students." in text


def test_a_withdrawal_for_the_other_panel_only_is_not_sent(run, subscribe, boards, smtp_server, twilio_server):
    run()
    subscribe(follows=[("tdsb", "elementary")])
    boards.update("tdsb", withdrawals=[make_withdrawal(panels=["secondary"])])
    run(LATER)
    assert smtp_server[0].messages() == [] and twilio_server.messages == []


def test_french_subscribers_get_french(run, subscribe, boards, smtp_server, twilio_server):
    run()
    subscribe(language="fr")
    boards.update("tdsb", status="closed")
    run(LATER)
    mail = smtp_server[0].messages()[0]
    assert mail["Subject"] == "Écoles fermées\u00a0: Toronto District School Board"
    assert mail["Content-Language"] == "fr"
    assert "Toutes les écoles sont fermées aux élèves." in mail.get_body(("plain",)).get_content()
    assert '<html lang="fr">' in mail.get_body(("html",)).get_content()
    assert "Toutes les écoles sont fermées aux élèves." in twilio_server.messages[0]["body"]


def test_daily_subscribers_hear_at_the_daily_time_only(run, subscribe, boards, smtp_server, twilio_server):
    run()
    subscribe(frequency="daily")
    boards.update("tdsb", status="work-to-rule")
    run(LATER)
    assert smtp_server[0].messages() == [] and twilio_server.messages == []
    morning = datetime.fromisoformat("2026-11-24T06:30:00-05:00")
    run(morning - timedelta(minutes=1))
    assert smtp_server[0].messages() == []
    run(morning)
    assert len(smtp_server[0].messages()) == 1 and len(twilio_server.messages) == 1


def test_a_daily_summary_with_nothing_new_sends_nothing(run, subscribe, smtp_server, twilio_server):
    run()
    subscribe(frequency="daily")
    run(datetime.fromisoformat("2026-11-24T06:30:00-05:00"))
    assert smtp_server[0].messages() == [] and twilio_server.messages == []


def test_a_closure_reaches_daily_subscribers_at_once(run, subscribe, boards, smtp_server, twilio_server):
    run()
    subscribe(frequency="daily")
    boards.update("tdsb", status="closed")
    run(LATER)
    assert len(smtp_server[0].messages()) == 1 and len(twilio_server.messages) == 1


def test_quiet_hours_hold_texts_until_morning(run, subscribe, boards, fast_env, smtp_server, twilio_server):
    from notifier.config import Settings

    settings = Settings.from_env({**fast_env, "NOTIFIER_SMS_QUIET_HOURS": "21:00-07:00"})
    evening = datetime.fromisoformat("2026-11-23T22:00:00-05:00")
    run(evening, settings)
    subscribe()
    boards.update("tdsb", status="work-to-rule")
    run(evening + timedelta(minutes=1), settings)
    assert len(smtp_server[0].messages()) == 1  # email has no quiet hours
    assert twilio_server.messages == []
    run(datetime.fromisoformat("2026-11-24T07:00:00-05:00"), settings)
    assert len(twilio_server.messages) == 1


def test_a_closure_is_texted_during_quiet_hours(run, subscribe, boards, fast_env, twilio_server, smtp_server):
    from notifier.config import Settings

    settings = Settings.from_env({**fast_env, "NOTIFIER_SMS_QUIET_HOURS": "21:00-07:00"})
    night = datetime.fromisoformat("2026-11-23T23:30:00-05:00")
    run(night, settings)
    subscribe()
    boards.update("tdsb", panels={"secondary": "closed"})
    run(night + timedelta(minutes=1), settings)
    assert len(twilio_server.messages) == 1
    assert "Secondary schools are closed to students." in twilio_server.messages[0]["body"]


def test_a_closure_called_off_is_texted_during_quiet_hours_to_who_heard_it(
    run, subscribe, boards, fast_env, twilio_server, smtp_server
):
    from notifier.config import Settings

    settings = Settings.from_env({**fast_env, "NOTIFIER_SMS_QUIET_HOURS": "21:00-07:00"})
    night = datetime.fromisoformat("2026-11-23T23:30:00-05:00")
    run(night, settings)
    subscribe(frequency="daily")
    boards.update("tdsb", status="closed")
    run(night + timedelta(minutes=1), settings)
    boards.update("tdsb", status="open")
    run(night + timedelta(minutes=2), settings)
    assert len(twilio_server.messages) == 2 and len(smtp_server[0].messages()) == 2


def test_a_change_undone_before_it_went_out_sends_nothing(
    run, sessions, subscribe, boards, smtp_server, twilio_server
):
    run()
    subscribe(frequency="daily")
    boards.update("tdsb", status="work-to-rule", withdrawals=[make_withdrawal()])
    run(LATER)
    boards.update("tdsb", status="open", withdrawals=[])
    run(LATER + timedelta(hours=1))
    run(datetime.fromisoformat("2026-11-24T06:30:00-05:00"))
    assert smtp_server[0].messages() == [] and twilio_server.messages == []
    assert {row.status for row in outbox_rows(sessions)} == {"cancelled"}


def test_a_closure_undone_within_one_cycle_window_sends_nothing(run, subscribe, boards, smtp_server, twilio_server):
    run()
    subscribe()
    boards.update("tdsb", status="closed")
    run(LATER, deliver=False)
    boards.update("tdsb", status="open")
    run(LATER + timedelta(minutes=1))
    assert smtp_server[0].messages() == [] and twilio_server.messages == []


def test_later_changes_merge_into_the_unsent_digest(run, sessions, subscribe, boards, smtp_server, twilio_server):
    run()
    subscribe(frequency="daily")
    boards.update("tdsb", status="work-to-rule")
    run(LATER)
    boards.update("tdsb", withdrawals=[make_withdrawal()])
    run(LATER + timedelta(hours=1))
    run(datetime.fromisoformat("2026-11-24T06:30:00-05:00"))
    mails = smtp_server[0].messages()
    assert len(mails) == 1 and len(twilio_server.messages) == 1
    text = mails[0].get_body(("plain",)).get_content()
    assert "Schools are open; staff are on work-to-rule." in text and "No buses" in text


def test_an_invalid_boards_file_sends_nothing_and_keeps_the_good_state(
    run, subscribe, boards, boards_file, smtp_server, twilio_server
):
    run()
    subscribe()
    good = boards_file.read_text()
    boards.update("tdsb", status="closed")
    boards_file.write_text(boards_file.read_text().replace("status: open", "status: shut", 1))
    result = run(LATER)
    assert result.outcome == "invalid" and ":" in result.problems[0]
    assert smtp_server[0].messages() == [] and twilio_server.messages == []
    boards_file.write_text(good)
    boards.update("tdsb", status="closed")
    assert run(LATER + timedelta(minutes=1)).ok
    assert len(smtp_server[0].messages()) == 1


def test_edits_published_without_notifying_parents_are_never_sent(
    run, sessions, subscribe, boards, boards_file, fast_settings, smtp_server, twilio_server
):
    from notifier.status import document

    run()
    subscribe()
    boards.update("tdsb", message={"en": "A typo fixed.", "fr": "Une coquille corrigée."})
    snapshot = document.load(str(boards_file))
    with sessions() as session, session.begin():
        db.hold_lock(session, "cycle")
        cycle.record(session, snapshot.status, snapshot.version, None, LATER, notify=False)
    run(LATER + timedelta(minutes=1))
    assert smtp_server[0].messages() == [] and twilio_server.messages == []
    with sessions() as session:
        newest = session.scalar(select(ChangeEvent.id).order_by(ChangeEvent.id.desc()).limit(1))
        mark = planning.watermark(session)
        assert {mark.seen(c.id, c.seen_event_id) for c in session.scalars(select(Contact))} == {newest}


def test_now_in_effect_goes_only_to_parents_who_asked(run, subscribe, boards, smtp_server, twilio_server):
    run()
    _, asked, _ = subscribe(notify_on_effect=True, phone=None)
    subscribe(phone=None)
    boards.update("tdsb", upcoming=[{"from": "2026-11-24T00:01:00-05:00", "status": "work-to-rule"}])
    run(LATER)
    assert len(smtp_server[0].messages()) == 2
    assert ("From Tuesday, November 24, 2026, 12:01\u202fa.m.: Schools are open; staff are on work-to-rule."
            in smtp_server[0].messages()[0].get_body(("plain",)).get_content())
    run(datetime.fromisoformat("2026-11-24T00:02:00-05:00"))
    later = smtp_server[0].messages()[2:]
    assert [m["To"] for m in later] == [asked]
    body = later[0].get_body(("plain",)).get_content()
    assert "Now in effect, as announced:" in body and "Schools are open; staff are on work-to-rule." in body


def test_planning_twice_creates_no_second_row(run, sessions, subscribe, boards, fast_settings):
    run()
    subscribe()
    boards.update("tdsb", status="closed")
    run(LATER, deliver=False)
    with sessions() as session, session.begin():
        session.execute(OutboxRow.__table__.update().values(status="pending"))
        from notifier.delivery.outbox import ClockState

        session.execute(ClockState.__table__.update().values(number=0))
    planning.plan(sessions, fast_settings, LATER)
    assert len(outbox_rows(sessions)) == 2


def test_email_carries_one_click_unsubscribe_and_a_stable_message_id(run, subscribe, boards, smtp_server):
    run()
    subscribe(phone=None)
    boards.update("tdsb", status="closed")
    run(LATER)
    mail = smtp_server[0].messages()[0]
    assert mail["List-Unsubscribe"].startswith("<https://status.example.org/")
    assert mail["List-Unsubscribe-Post"] == "List-Unsubscribe=One-Click"
    assert mail["Message-ID"].startswith("<digest-") and mail["Message-ID"].endswith("@example.org>")
    assert mail.get_content_type() == "multipart/alternative"
    text = mail.get_body(("plain",)).get_content()
    assert mail["List-Unsubscribe"].strip("<>") in text and "https://status.example.org/manage/" in text


def test_texts_are_sent_with_a_validity_period_and_a_board_link(run, subscribe, boards, twilio_server):
    run()
    subscribe(email=None)
    boards.update("tdsb", status="closed")
    run(LATER)
    form = twilio_server.messages[0]["_form"]
    assert form["ValidityPeriod"] == "7200"
    assert form["Body"].endswith("https://status.example.org/boards/tdsb?lang=en")
