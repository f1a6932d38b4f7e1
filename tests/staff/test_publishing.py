"""Publishing goes through the clock's own cycle: "notify parents" on reaches the outbox like a file edit does;
off records the change in the history and sends nothing; the preview is exactly what parents then receive."""

from __future__ import annotations

import html
import re
from datetime import timedelta

from notifier import clock
from notifier.db import utcnow
from notifier.delivery.channels.local import read_outbox
from notifier.delivery.outbox import OutboxRow
from notifier.formatting import TORONTO
from notifier.status import cycle, document
from notifier.status.history import ChangeEvent, Cycle
from tests.staff.conftest import TDSB_STAFF, make_subscriber

PARENT = "parent@example.org"
PHONE = "+16135550123"


def sent_to(settings, address: str) -> list[dict]:
    return [m for m in read_outbox(settings.outbox_dir) if m["to"] == address]


def without_personal_links(text: str) -> list[str]:
    """The text minus the lines carrying one contact's own manage/unsubscribe links."""
    return [line for line in text.splitlines() if "/manage/" not in line and "/unsubscribe/" not in line]


def test_notify_on_records_the_change_and_wakes_the_clock_which_plans(console, settings, sessions, first_cycle):
    make_subscriber(sessions, "tdsb", PARENT)
    console.edit("tdsb", status="closed")
    with sessions() as session:
        rows = session.query(OutboxRow).filter(~OutboxRow.digest_key.startswith("staff-signin-")).count()
        cycles = session.query(Cycle).count()
        events = session.query(ChangeEvent).filter(ChangeEvent.notify.is_(True)).count()
    assert rows == 0 and cycles == 2 and events >= 1  # recorded in the request, planned by the clock
    assert clock.wakeups(sessions) == 1
    clock.Clock(settings, sessions).cycle()  # what the woken clock runs
    with sessions() as session:
        digests = session.query(OutboxRow).filter(~OutboxRow.digest_key.startswith("staff-signin-"))
        assert [row.status for row in digests] == ["pending"]
    assert sent_to(settings, PARENT) == []  # the web process never sends: the clock does


def test_publishing_for_a_board_with_many_followers_returns_before_anyone_is_planned(console, settings, sessions,
                                                                                      first_cycle):
    from notifier.status.history import latest_event_id
    from notifier.subscribers.models import Contact, Follow, Subscriber

    with sessions() as session, session.begin():
        seen = latest_event_id(session)
        for number in range(2000):
            subscriber = Subscriber(language="en")
            subscriber.contacts.append(Contact(channel="email", address=f"p{number}@example.org", status="active",
                                               frequency="immediate", seen_event_id=seen))
            subscriber.follows += [Follow(board_id="tdsb", panel="elementary"),
                                   Follow(board_id="tdsb", panel="secondary")]
            session.add(subscriber)
    console.edit("tdsb", status="closed")
    with sessions() as session:
        assert session.query(OutboxRow).filter(~OutboxRow.digest_key.startswith("staff-signin-")).count() == 0
    clock.Clock(settings, sessions).cycle()
    with sessions() as session:
        assert session.query(OutboxRow).filter(~OutboxRow.digest_key.startswith("staff-signin-")).count() == 2000


def test_notify_on_reaches_parents_when_the_clock_drains(console, settings, sessions, first_cycle):
    make_subscriber(sessions, "tdsb", PARENT)
    console.edit("tdsb", status="closed")
    clock.tick(settings, sessions)  # what the woken clock runs
    [email] = sent_to(settings, PARENT)
    assert "Toronto District School Board" in email["subject"]


def test_a_save_reaches_the_outbox_through_the_same_code_as_a_file_edit(console, settings, sessions, boards,
                                                                          first_cycle):
    make_subscriber(sessions, "tdsb", "tdsb-parent@example.org")
    make_subscriber(sessions, "peel", "peel-parent@example.org")
    console.edit("tdsb", status="closed")  # through the console
    boards.update("peel", status="closed")  # by hand, in the file
    clock.tick(settings, sessions)
    [by_console] = sent_to(settings, "tdsb-parent@example.org")
    [by_hand] = sent_to(settings, "peel-parent@example.org")
    tdsb, peel = "Toronto District School Board", "Peel District School Board"

    def same(text: str) -> list[str]:
        return without_personal_links(text.replace(tdsb, "BOARD").replace(peel, "BOARD").replace("/tdsb", "/ID")
                                      .replace("/peel", "/ID"))

    assert same(by_console["text"]) == same(by_hand["text"])
    assert by_console["subject"].replace(tdsb, "BOARD") == by_hand["subject"].replace(peel, "BOARD")


def test_notify_off_sends_nothing(console, settings, sessions, first_cycle):
    make_subscriber(sessions, "tdsb", PARENT, phone=PHONE)
    console.edit("tdsb", message_en="Schools are open (typo fixed).", notify=None)
    clock.tick(settings, sessions)
    clock.tick(settings, sessions)
    assert sent_to(settings, PARENT) == [] and sent_to(settings, PHONE) == []
    with sessions() as session:
        assert session.query(OutboxRow).filter(~OutboxRow.digest_key.startswith("staff-signin-")).count() == 0


def test_notify_off_keeps_the_change_in_the_history(console, settings, sessions, first_cycle):
    console.edit("tdsb", message_en="Schools are open (typo fixed).", notify=None)
    with sessions() as session:
        [event] = session.query(ChangeEvent).filter_by(board_id="tdsb").all()
    assert (event.kind, event.notify) == ("message", False)


def test_notify_off_does_not_silence_a_hand_edit_of_another_board(console, settings, sessions, boards, first_cycle):
    make_subscriber(sessions, "peel", PARENT)
    boards.update("peel", status="closed")
    console.edit("tdsb", message_en="Typo fixed.", notify=None)
    clock.tick(settings, sessions)
    assert len(sent_to(settings, PARENT)) == 1


def test_notify_off_does_not_silence_an_earlier_hand_edit_of_the_same_board(console, settings, sessions, boards,
                                                                           first_cycle):
    make_subscriber(sessions, "tdsb", PARENT)
    boards.update("tdsb", status="closed")  # by hand; the clock has not seen it yet
    fields = console.form("tdsb")  # the staff member reloads and fixes a typo without notifying
    fields["message_en"] = ["Schools are closed."]
    del fields["notify"]
    console.send("tdsb", fields)
    clock.tick(settings, sessions)
    assert len(sent_to(settings, PARENT)) == 1


def preview_texts(page: str) -> dict[tuple[str, str], str]:
    found = re.findall(r'<pre lang="(\w+)" class="(email|sms)-text" data-language="\w+">(.*?)</pre>', page, re.S)
    return {(kind, lang): html.unescape(text) for lang, kind, text in found}


def test_the_preview_shows_the_same_text_that_is_later_sent(console, settings, sessions, first_cycle):
    make_subscriber(sessions, "tdsb", PARENT, phone=PHONE)
    make_subscriber(sessions, "tdsb", "parent-fr@example.org", language="fr", phone="+16135550124")
    changes = dict(status="work-to-rule", panel_secondary="closed", w0_category="transportation",
                   w0_panels=["secondary"], w0_description_en="No buses to secondary schools.",
                   w0_description_fr="Aucun autobus vers les écoles secondaires.")
    preview = preview_texts(console.edit("tdsb", action="preview", **changes).get_data(as_text=True))
    console.edit("tdsb", **changes)
    clock.tick(settings, sessions)
    [email_en], [email_fr] = sent_to(settings, PARENT), sent_to(settings, "parent-fr@example.org")
    [sms_en], [sms_fr] = sent_to(settings, PHONE), sent_to(settings, "+16135550124")
    assert without_personal_links(email_en["text"]) == without_personal_links(preview[("email", "en")])
    assert without_personal_links(email_fr["text"]) == without_personal_links(preview[("email", "fr")])
    assert sms_en["text"] == preview[("sms", "en")] and sms_fr["text"] == preview[("sms", "fr")]


def test_the_preview_counts_who_gets_it_now_and_in_the_daily_summary(console, sessions, first_cycle):
    make_subscriber(sessions, "tdsb", "now@example.org")
    make_subscriber(sessions, "tdsb", "daily@example.org", frequency="daily")
    page = console.edit("tdsb", action="preview", message_en="Talks continue.").get_data(as_text=True)
    email_row = re.search(r"<th scope=\"row\">Email</th><td[^>]*>(\d+)</td><td>(\d+)</td>", page)
    assert email_row.groups() == ("1", "1")


def test_send_me_a_test_emails_the_preview_only_to_the_signed_in_staff_member(console, settings, sessions,
                                                                              first_cycle):
    make_subscriber(sessions, "tdsb", PARENT)
    page = console.edit("tdsb", action="test", status="closed").get_data(as_text=True)
    assert "A test email was sent to comms@tdsb.example.org only." in page
    [test] = [m for m in read_outbox(settings.outbox_dir) if m["subject"] and m["subject"].startswith("[Test]")]
    assert test["to"] == TDSB_STAFF and "closed" in test["text"].lower()
    assert sent_to(settings, PARENT) == []


def test_a_preview_saves_nothing(console, settings):
    before = settings.boards_file.read_bytes()
    console.edit("tdsb", action="preview", status="closed")
    assert settings.boards_file.read_bytes() == before


def test_a_future_effective_time_is_announced_ahead_and_takes_effect_by_itself(console, settings, sessions,
                                                                              first_cycle):
    when = (utcnow() + timedelta(days=2)).astimezone(TORONTO)
    console.edit("tdsb", status="work-to-rule", effective=when.strftime("%Y-%m-%dT%H:%M"))
    assert "Announced:" in console.client.get("/staff/").get_data(as_text=True)
    assert "Announced ahead" in console.client.get("/staff/boards/tdsb").get_data(as_text=True)
    assert document.load(settings.boards_file).status.by_id()["tdsb"].status == "open"  # today's state stays
    cycle.run(sessions, str(settings.boards_file), follow=True, now=utcnow() + timedelta(days=2, minutes=1))
    with sessions() as session:
        latest = session.query(ChangeEvent).filter_by(board_id="tdsb").order_by(ChangeEvent.id.desc()).first()
    assert (latest.kind, latest.after, latest.scheduled) == ("panel_status", "work-to-rule", True)
