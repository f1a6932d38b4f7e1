"""Announced periods from the console: listed with "Call off" and "Change", called off or changed through the one
publish path (preview, audit, notify parents), and refused when the period is gone, changed, forged or another
board's."""

from __future__ import annotations

import html
import re
from datetime import datetime, timedelta

import pytest

from notifier.db import utcnow
from notifier.formatting import TORONTO
from notifier.staff import periods
from notifier.staff.models import AuditEntry
from notifier.status import document
from notifier.status.boards import Board
from tests.staff.conftest import PEEL_STAFF, csrf_token, make_staff, make_subscriber

WEDNESDAY = datetime.fromisoformat("2026-11-25T23:00-05:00")
THURSDAY = {"from": "2026-11-26T00:01:00-05:00", "until": "2026-11-27T00:01:00-05:00", "status": "closed",
            "panels": ["secondary"]}
MONDAY = {"from": "2026-11-30T00:01:00-05:00", "status": "work-to-rule"}


def board(**fields) -> Board:
    return Board.model_validate({"id": "tdsb", "name": "Toronto District School Board", "status": "open",
                                 "withdrawals": [], **fields})


def strike_day() -> dict:
    """A one-day secondary strike announced for the day after tomorrow, as written in boards.yaml."""
    day = (utcnow().astimezone(TORONTO) + timedelta(days=2)).replace(hour=0, minute=1, second=0, microsecond=0)
    return {"from": day.isoformat(), "until": (day + timedelta(days=1)).isoformat(), "status": "closed",
            "panels": ["secondary"]}


@pytest.fixture
def announced(boards, settings):
    """TDSB with a strike day announced ahead; returns its key."""
    period = strike_day()
    boards.update("tdsb", upcoming=[period])
    return document.load(settings.boards_file).status.by_id()["tdsb"].upcoming[0]


def post(console, path: str, **data):
    page = console.client.get("/staff/boards/tdsb").get_data(as_text=True)
    return console.client.post(path, data={"csrf_token": csrf_token(page), **data})


def buttons(console, board_id: str = "tdsb") -> list[dict[str, str]]:
    """The period forms of the board's page: where each posts, which period, its fingerprint, its button."""
    page = console.client.get(f"/staff/boards/{board_id}").get_data(as_text=True)
    found = []
    for form in re.findall(r'<form class="inline" method="post" action="([^"]+)">(.*?)</form>', page, re.S):
        fields = dict(re.findall(r'name="(period|seen)" value="([^"]*)"', form[1]))
        found.append({"action": form[0], **{k: html.unescape(v) for k, v in fields.items()},
                      "label": re.search(r"<button[^>]*>([^<]+)</button>", form[1]).group(1)})
    return found


# --- the domain: no Flask -------------------------------------------------------------------------------------


def test_calling_off_removes_only_that_period():
    current = board(upcoming=[THURSDAY, MONDAY])
    thursday = current.upcoming[0]
    saved = periods.call_off(current, thursday.key, WEDNESDAY)
    assert [p.status for p in saved.upcoming] == ["work-to-rule"] and saved.status == current.status


def test_a_period_already_started_cannot_be_called_off():
    current = board(upcoming=[THURSDAY])
    with pytest.raises(periods.PeriodError) as refused:
        periods.call_off(current, current.upcoming[0].key, WEDNESDAY + timedelta(hours=2))
    assert refused.value.code == "missing"


def test_a_period_changed_since_it_was_shown_is_refused_as_stale():
    shown = board(upcoming=[THURSDAY])
    seen = periods.fingerprint(shown.upcoming[0])
    now = board(upcoming=[{**THURSDAY, "until": "2026-11-28T00:01:00-05:00"}])
    with pytest.raises(periods.PeriodError) as refused:
        periods.call_off(now, now.upcoming[0].key, WEDNESDAY, seen)
    assert refused.value.code == "stale"


def test_changing_a_period_moves_its_end_and_keeps_the_others():
    current = board(upcoming=[THURSDAY, MONDAY])
    fields = {"from": "2026-11-26T00:01", "until": "2026-11-28T00:01", "status": "closed", "panels": ["secondary"]}
    saved, errors = periods.change(current, current.upcoming[0].key, fields, WEDNESDAY)
    assert errors == {}
    assert saved.upcoming[0].end == datetime.fromisoformat("2026-11-28T00:01-05:00") and len(saved.upcoming) == 2


@pytest.mark.parametrize(("fields", "expected"), [
    ({"from": "", "status": "closed", "panels": ["secondary"]}, {"from": "datetime"}),
    ({"from": "2026-11-26T00:01", "until": "2026-11-25T00:01", "status": "closed", "panels": ["secondary"]},
     {"until": "order"}),
    ({"from": "2026-11-26T00:01", "status": "shut", "panels": ["secondary"]}, {"status": "choice"}),
    ({"from": "2026-11-26T00:01", "status": "closed", "panels": []}, {"panels": "panels"}),
    ({"from": "2026-11-29T00:01", "until": "2026-12-01T00:01", "status": "closed", "panels": ["secondary"]},
     {"from": "overlap"}),
    ({"from": "2027-03-14T02:30", "status": "closed", "panels": ["secondary"]}, {"from": "clock_change"}),
])
def test_a_change_that_would_not_be_a_valid_period_names_the_field_and_returns_no_board(fields, expected):
    current = board(upcoming=[THURSDAY, MONDAY])
    saved, errors = periods.change(current, current.upcoming[0].key, fields, WEDNESDAY)
    assert (saved, errors) == (None, expected)


# --- the console --------------------------------------------------------------------------------------------------


def test_the_boards_page_lists_each_announced_period_with_call_off_and_change(console, announced):
    found = buttons(console)
    assert [(b["action"], b["label"]) for b in found] == [("/staff/boards/tdsb/periods/calloff", "Call off"),
                                                         ("/staff/boards/tdsb/periods/change", "Change")]
    assert {b["period"] for b in found} == {announced.key}


def test_calling_off_first_shows_the_exact_words_and_the_counts_and_saves_nothing(console, settings, sessions,
                                                                                   announced, first_cycle):
    make_subscriber(sessions, "tdsb", "parent@example.org", phone="+16135550123")
    before = settings.boards_file.read_bytes()
    [call_off, _] = buttons(console)
    page = post(console, call_off["action"], period=call_off["period"], seen=call_off["seen"])
    text = page.get_data(as_text=True)
    assert page.status_code == 200 and settings.boards_file.read_bytes() == before
    assert 'class="count-email">1<' in text and 'class="count-sms">1<' in text
    assert "Closure called off: secondary schools" in text and "Fermeture annulée" in html.unescape(text)
    assert 'name="notify" value="on" checked' in text


def test_calling_off_publishes_without_the_period_and_audits_it(console, settings, sessions, announced,
                                                                 first_cycle):
    [call_off, _] = buttons(console)
    page = post(console, call_off["action"], period=call_off["period"], seen=call_off["seen"], action="publish",
                notify="on")
    assert page.status_code == 200 and "Published" in page.get_data(as_text=True)
    assert document.load(settings.boards_file).status.by_id()["tdsb"].upcoming == ()
    with sessions() as session:
        [entry] = session.query(AuditEntry).filter_by(board_id="tdsb").all()
    assert (entry.action, entry.summary, entry.notify) == ("edit", "period_removed", True)
    assert entry.changes[0]["before"]["from"] == announced.model_dump(mode="json", by_alias=True)["from"]


def test_a_period_called_off_twice_is_refused_the_second_time_and_nothing_changes(console, settings, announced,
                                                                                 first_cycle):
    [call_off, _] = buttons(console)
    data = {"period": call_off["period"], "seen": call_off["seen"], "action": "publish", "notify": "on"}
    post(console, call_off["action"], **data)
    after_first = settings.boards_file.read_bytes()
    page = post(console, call_off["action"], **data)
    assert page.status_code == 409 and "not announced for this board any more" in page.get_data(as_text=True)
    assert settings.boards_file.read_bytes() == after_first


def test_a_forged_period_id_is_refused_and_nothing_changes(console, settings, announced, first_cycle):
    before = settings.boards_file.read_bytes()
    page = post(console, "/staff/boards/tdsb/periods/calloff", period="2030-01-01T00:01:00-05:00:secondary",
                action="publish", notify="on")
    assert page.status_code == 409 and settings.boards_file.read_bytes() == before


def test_a_period_changed_since_the_page_was_shown_is_refused_as_stale(console, settings, boards, announced,
                                                                       first_cycle):
    [call_off, _] = buttons(console)
    boards.update("tdsb", upcoming=[{**strike_day(), "until": (announced.end + timedelta(days=1)).isoformat()}])
    before = settings.boards_file.read_bytes()
    page = post(console, call_off["action"], period=call_off["period"], seen=call_off["seen"], action="publish")
    assert page.status_code == 409 and "changed since the page was shown" in page.get_data(as_text=True)
    assert settings.boards_file.read_bytes() == before


def test_another_boards_staff_cannot_call_off_its_period(client, settings, sessions, announced, first_cycle):
    from tests.staff.conftest import Console

    make_staff(sessions, PEEL_STAFF, ["peel"])
    peel = Console(client, settings)
    peel.sign_in(PEEL_STAFF)
    before = settings.boards_file.read_bytes()
    page = client.get("/staff/boards/peel").get_data(as_text=True)
    refused = client.post("/staff/boards/tdsb/periods/calloff",
                          data={"csrf_token": csrf_token(page), "period": announced.key, "action": "publish"})
    assert refused.status_code == 403 and settings.boards_file.read_bytes() == before


def test_a_post_without_its_csrf_token_is_refused(console, settings, announced):
    before = settings.boards_file.read_bytes()
    refused = console.client.post("/staff/boards/tdsb/periods/calloff",
                                  data={"period": announced.key, "action": "publish"})
    assert refused.status_code == 400 and settings.boards_file.read_bytes() == before


def test_change_shows_the_period_in_a_form(console, announced):
    [_, change] = buttons(console)
    text = post(console, change["action"], period=change["period"], seen=change["seen"]).get_data(as_text=True)
    assert f'name="from" value="{announced.start.strftime("%Y-%m-%dT%H:%M")}"' in text
    assert 'value="secondary" checked' in text


def test_a_change_with_an_end_before_its_start_names_the_field_and_saves_nothing(console, settings, announced):
    [_, change] = buttons(console)
    before = settings.boards_file.read_bytes()
    start = announced.start.strftime("%Y-%m-%dT%H:%M")
    page = post(console, change["action"], period=change["period"], seen=change["seen"], action="publish",
                **{"from": start, "until": (announced.start - timedelta(hours=1)).strftime("%Y-%m-%dT%H:%M")},
                status="closed", panels="secondary")
    assert page.status_code == 400 and 'id="until-error"' in page.get_data(as_text=True)
    assert settings.boards_file.read_bytes() == before


def test_a_change_previews_then_publishes_the_moved_end(console, settings, sessions, announced, first_cycle):
    [_, change] = buttons(console)
    fields = {"period": change["period"], "seen": change["seen"], "status": "closed", "panels": "secondary",
              "from": announced.start.strftime("%Y-%m-%dT%H:%M"),
              "until": (announced.end + timedelta(days=1)).strftime("%Y-%m-%dT%H:%M")}
    preview = post(console, change["action"], action="preview", **fields)
    assert preview.status_code == 200 and "Publish the change" in preview.get_data(as_text=True)
    published = post(console, change["action"], action="publish", notify="on", **fields)
    assert published.status_code == 200
    [period] = document.load(settings.boards_file).status.by_id()["tdsb"].upcoming
    assert period.end == announced.end + timedelta(days=1)
    with sessions() as session:
        [entry] = session.query(AuditEntry).filter_by(board_id="tdsb").all()
    assert entry.summary == "period_changed"


def test_a_change_that_starts_in_the_past_is_refused_on_its_start():
    current = board(upcoming=[THURSDAY])
    fields = {"from": "2026-11-25T08:00", "status": "closed", "panels": ["secondary"]}
    assert periods.change(current, current.upcoming[0].key, fields, WEDNESDAY) == (None, {"from": "past"})


@pytest.mark.parametrize("language", ["en", "fr"])
def test_the_period_pages_pass_the_w3c_nu_html_checker(console, settings, sessions, announced, first_cycle, vnu,
                                                       language):
    console.client.set_cookie("lang", language)
    [call_off, change] = buttons(console)
    named = {"period": change["period"], "seen": change["seen"]}
    fields = {**named, "status": "closed", "panels": "secondary", "from": announced.start.strftime("%Y-%m-%dT%H:%M")}
    pages = {
        "board with periods": console.client.get("/staff/boards/tdsb").get_data(as_text=True),
        "call off preview": post(console, call_off["action"], **named).get_data(as_text=True),
        "change form": post(console, change["action"], **named).get_data(as_text=True),
        "change with errors": post(console, change["action"], action="preview", **{**fields, "from": ""}),
        "change preview": post(console, change["action"], action="preview", **fields).get_data(as_text=True),
        "refused": post(console, call_off["action"], period="forged").get_data(as_text=True),
    }
    pages["change with errors"] = pages["change with errors"].get_data(as_text=True)
    found = vnu.errors(pages)
    assert {name: errors for name, errors in found.items() if errors} == {}


def test_a_message_too_long_is_refused_on_its_field_and_saves_nothing(console, settings, announced):
    [_, change] = buttons(console)
    before = settings.boards_file.read_bytes()
    page = post(console, change["action"], period=change["period"], seen=change["seen"], action="publish",
                status="closed", panels="secondary", message_en="x" * 1001,
                **{"from": announced.start.strftime("%Y-%m-%dT%H:%M")})
    assert page.status_code == 400 and 'id="message_en-error"' in page.get_data(as_text=True)
    assert settings.boards_file.read_bytes() == before
