"""Morning reminders while a strike lasts: each weekday at the daily-summary time, once, in the family's language,
never on weekends, never after it ends, never on top of that morning's daily summary."""

from __future__ import annotations

from datetime import UTC, date, datetime, timedelta

import pytest
import time_machine

from notifier.clock import send_due
from notifier.formatting import TORONTO
from notifier.notices.reminders import school_day
from tests.conftest import make_withdrawal, outbox_rows

MONDAY = datetime(2026, 11, 23, 12, 0, tzinfo=TORONTO)
STRIKE = {"from": "2026-11-24T00:01", "until": "2026-12-01T00:00", "status": "closed", "panels": ["secondary"],
          "withdrawals": [make_withdrawal(panels=["secondary"])]}


def morning(day: date, at: str = "07:05") -> datetime:
    """A weekday morning just after the summary time (06:30) and the end of SMS quiet hours (07:00), in UTC."""
    hour, minute = map(int, at.split(":"))
    return datetime(day.year, day.month, day.day, hour, minute, tzinfo=TORONTO).astimezone(UTC)


@pytest.fixture
def at(run, sessions, fast_settings):
    """Run a cycle at `moment` with the clock moved there, then send what is due then."""

    def cycle_at(moment: datetime):
        with time_machine.travel(moment, tick=True):
            result = run(moment, deliver=False)
        send_due(fast_settings, sessions, now=moment)
        return result

    return cycle_at


def texts_to(twilio_server, phone: str) -> list[str]:
    return [m["body"] for m in twilio_server.messages if m["to"] == phone]


def strike_announced(at, boards):
    boards.update("tdsb", upcoming=[STRIKE])
    at(MONDAY)


def test_a_reminder_each_weekday_of_the_strike_and_none_after(at, subscribe, boards, smtp_server, twilio_server):
    strike_announced(at, boards)
    _, _, phone = subscribe(email=None, morning_reminder=True)
    days = [date(2026, 11, 24) + timedelta(days=n) for n in range(9)]  # Tuesday to the Wednesday after
    received = {}
    for day in days:
        before = len(texts_to(twilio_server, phone))
        at(morning(day))
        received[day] = texts_to(twilio_server, phone)[before:]
    sent_on = [day for day, texts in received.items() if texts]
    assert sent_on == [date(2026, 11, 24), date(2026, 11, 25), date(2026, 11, 26), date(2026, 11, 27),
                       date(2026, 11, 30)]
    assert received[date(2026, 11, 26)] == [
        "Toronto District School Board. Day 3 of the strike: secondary schools remain closed today; buses do not "
        "run. Details: https://status.example.org/boards/tdsb?lang=en"]
    assert received[date(2026, 11, 30)][0].startswith("Toronto District School Board. Day 5 of the strike:")


def test_no_reminder_twice_the_same_morning(at, sessions, subscribe, boards, smtp_server, twilio_server):
    strike_announced(at, boards)
    _, _, phone = subscribe(email=None, morning_reminder=True)
    for minutes in (0, 5, 60):
        at(morning(date(2026, 11, 25)) + timedelta(minutes=minutes))
    assert len(texts_to(twilio_server, phone)) == 1
    assert [r.digest_key for r in outbox_rows(sessions)].count("reminder-2026-11-25") == 1


def test_nothing_before_the_summary_time_or_late_in_the_day(at, subscribe, boards, smtp_server, twilio_server):
    strike_announced(at, boards)
    _, _, phone = subscribe(email=None, morning_reminder=True)
    at(morning(date(2026, 11, 25), "06:00"))
    at(morning(date(2026, 11, 25), "14:00"))
    assert texts_to(twilio_server, phone) == []


def test_only_who_asked_gets_reminders(at, subscribe, boards, smtp_server, twilio_server):
    strike_announced(at, boards)
    _, _, phone = subscribe(email=None)
    at(morning(date(2026, 11, 25)))
    assert texts_to(twilio_server, phone) == []


def test_nothing_on_a_day_with_nothing_in_effect(at, subscribe, boards, smtp_server, twilio_server):
    at(MONDAY)
    _, _, phone = subscribe(email=None, morning_reminder=True)
    at(morning(date(2026, 11, 25)))
    assert texts_to(twilio_server, phone) == []


def test_only_the_panels_followed(at, subscribe, boards, smtp_server, twilio_server):
    strike_announced(at, boards)
    _, _, phone = subscribe(email=None, morning_reminder=True, follows=[("tdsb", "elementary")])
    at(morning(date(2026, 11, 25)))
    assert texts_to(twilio_server, phone) == []


def test_a_french_reminder_in_plain_characters(at, subscribe, boards, smtp_server, twilio_server):
    strike_announced(at, boards)
    _, _, phone = subscribe(email=None, morning_reminder=True, language="fr")
    at(morning(date(2026, 11, 24)))
    (text,) = texts_to(twilio_server, phone)
    assert text.startswith("Toronto District School Board. Jour 1 de la grève : les écoles secondaires restent "
                           "fermées aujourd'hui ; pas d'autobus.")
    assert "\u00a0" not in text and "\u202f" not in text


def test_an_email_reminder_can_be_left_in_one_click(at, subscribe, boards, smtp_server, twilio_server):
    strike_announced(at, boards)
    _, email, _ = subscribe(phone=None, morning_reminder=True)
    at(morning(date(2026, 11, 24)))
    (mail,) = [m for m in smtp_server[0].messages() if m["To"] == email]
    assert mail["Subject"].strip() == "Day 1 of the strike: secondary schools remain closed today; buses do not run."
    assert mail["List-Unsubscribe-Post"] == "List-Unsubscribe=One-Click"
    assert "/manage/" in mail.get_body(("plain",)).get_content()


def test_no_reminder_on_top_of_that_mornings_daily_summary(at, subscribe, boards, smtp_server, twilio_server):
    strike_announced(at, boards)
    _, email, _ = subscribe(phone=None, morning_reminder=True, frequency="daily")
    evening = datetime(2026, 11, 24, 19, 0, tzinfo=TORONTO)
    boards.update("tdsb", message={"en": "Talks resume Thursday.", "fr": "Les pourparlers reprennent jeudi."})
    at(evening)  # recorded: a daily summary goes out at 06:30 on Wednesday
    at(morning(date(2026, 11, 25), "06:31"))
    mails = [m for m in smtp_server[0].messages() if m["To"] == email]
    assert len(mails) == 1 and "Talks resume Thursday." in mails[0].get_body(("plain",)).get_content()
    at(morning(date(2026, 11, 26)))  # Thursday: nothing changed overnight, the reminder comes
    mails = [m for m in smtp_server[0].messages() if m["To"] == email]
    assert len(mails) == 2 and mails[1]["Subject"].strip().startswith("Day 3 of the strike")


def test_school_days_count_weekdays_only():
    assert school_day(date(2026, 11, 27), date(2026, 11, 30)) == 2  # Friday, then Monday
    assert school_day(date(2026, 11, 28), date(2026, 11, 28)) == 1


def test_a_work_to_rule_with_no_service_listed_is_named_without_claiming_any(at, subscribe, boards, smtp_server,
                                                                            twilio_server):
    boards.update("tdsb", upcoming=[{"from": "2026-11-24T00:01", "status": "work-to-rule"}])
    at(MONDAY)
    _, _, phone = subscribe(email=None, morning_reminder=True)
    at(morning(date(2026, 11, 25)))
    assert texts_to(twilio_server, phone) == [
        "Toronto District School Board. Day 2 of work-to-rule: schools are open today. "
        "Details: https://status.example.org/boards/tdsb?lang=en"]


def test_a_reminder_planned_before_the_parent_turned_reminders_off_is_not_sent(at, run, sessions, subscribe, boards,
                                                                                smtp_server, twilio_server):
    from notifier.db import transaction
    from notifier.subscribers.models import Contact

    strike_announced(at, boards)
    _, _, phone = subscribe(email=None, morning_reminder=True)
    with time_machine.travel(morning(date(2026, 11, 25)), tick=True):
        run(morning(date(2026, 11, 25)), deliver=False)  # planned, not yet sent
    assert [r.digest_key for r in outbox_rows(sessions)][-1] == "reminder-2026-11-25"
    with transaction(sessions) as session:
        session.query(Contact).filter(Contact.address == phone).one().morning_reminder = False
    at(morning(date(2026, 11, 25), "07:10"))
    assert texts_to(twilio_server, phone) == []
    assert outbox_rows(sessions)[-1].status == "cancelled"
