"""When a staff edit takes effect: now ends the period in force, a time ahead is announced as a period, and an
edit never moves a time already written."""

from __future__ import annotations

from datetime import datetime, timedelta

import pytest

from notifier.db import utcnow
from notifier.formatting import TORONTO
from notifier.staff.announce import AnnounceError, apply_edit
from notifier.status import document
from notifier.status.boards import Board

WEDNESDAY = datetime.fromisoformat("2026-11-25T12:00-05:00")
STRIKE = {"from": "2026-11-25T00:01", "status": "closed", "panels": ["secondary"]}


def board(**fields) -> Board:
    return Board.model_validate({"id": "tdsb", "name": "Toronto District School Board", "status": "work-to-rule",
                                 "withdrawals": [], **fields})


def test_an_edit_now_ends_the_period_in_force_where_the_edit_begins():
    current = board(upcoming=[STRIKE])
    saved = apply_edit(current, board(status="open"), None, WEDNESDAY)
    assert saved.status == "open" and saved.effective == WEDNESDAY
    assert saved.upcoming[0].end == WEDNESDAY and saved.at(WEDNESDAY).panel_status("secondary") == "open"


def test_an_edit_that_changes_nothing_in_force_keeps_the_entry_as_written():
    current = board(upcoming=[STRIKE])
    assert apply_edit(current, current.at(WEDNESDAY), None, WEDNESDAY) is current


def test_an_edit_ahead_keeps_today_and_announces_only_the_panels_that_change():
    when = WEDNESDAY + timedelta(days=5)
    saved = apply_edit(board(), board(panels={"secondary": "closed"}), when, WEDNESDAY)
    assert saved.status == "work-to-rule" and saved.panels == {}
    [period] = saved.upcoming
    assert (period.start, period.status, list(period.panels)) == (when, "closed", ["secondary"])


def test_an_edit_ahead_that_overlaps_an_announced_period_is_refused():
    current = board(upcoming=[{**STRIKE, "from": "2026-12-01T00:01"}])
    with pytest.raises(AnnounceError):
        apply_edit(current, board(status="closed"), datetime.fromisoformat("2026-12-02T00:01-05:00"), WEDNESDAY)


def test_the_form_never_offers_a_takes_effect_time_gone_by(console, settings, first_cycle):
    console.edit("tdsb", status="work-to-rule")
    assert console.form("tdsb")["effective"] == [""]


def test_a_takes_effect_time_that_does_not_exist_in_toronto_is_refused_on_its_field(console, settings):
    page = console.edit("tdsb", action="preview", status="closed", effective="2027-03-14T02:30")
    assert page.status_code == 400 and 'id="effective-error"' in page.get_data(as_text=True)


def test_an_unrelated_save_never_moves_a_time_written_in_the_fall_back_hour(console, settings, boards, first_cycle):
    boards.update("tdsb", status="work-to-rule", effective="2026-11-01T01:30:00-05:00")
    written = [line for line in settings.boards_file.read_text().splitlines() if "01:30:00-05:00" in line]
    console.edit("tdsb", message_en="Talks continue.")
    saved = document.load(settings.boards_file).status.by_id()["tdsb"]
    assert saved.effective == datetime.fromisoformat("2026-11-01T01:30:00-05:00") and saved.message.en
    assert [line for line in settings.boards_file.read_text().splitlines() if "01:30:00-05:00" in line] == written


def test_announcing_ahead_through_the_console_writes_a_period_and_keeps_today(console, settings, first_cycle):
    when = (utcnow() + timedelta(days=3)).astimezone(TORONTO).replace(second=0, microsecond=0)
    console.edit("tdsb", status="closed", effective=when.strftime("%Y-%m-%dT%H:%M"))
    saved = document.load(settings.boards_file).status.by_id()["tdsb"]
    assert saved.status == "open" and [(p.start, p.status) for p in saved.upcoming] == [(when, "closed")]


def test_an_edit_with_an_end_is_a_period_and_today_comes_back_by_itself():
    start, end = WEDNESDAY + timedelta(days=7), WEDNESDAY + timedelta(days=8)
    saved = apply_edit(board(), board(panels={"secondary": "closed"}), start, WEDNESDAY, until=end)
    [period] = saved.upcoming
    assert (period.start, period.end, period.status) == (start, end, "closed")
    assert saved.at(start + timedelta(hours=1)).panel_status("secondary") == "closed"
    assert saved.at(end + timedelta(hours=1)).panel_status("secondary") == "work-to-rule"


def test_an_edit_now_with_an_end_starts_a_period_now_instead_of_replacing_today():
    end = WEDNESDAY + timedelta(hours=12)
    saved = apply_edit(board(), board(status="closed"), None, WEDNESDAY, until=end)
    assert saved.status == "work-to-rule" and [(p.start, p.end) for p in saved.upcoming] == [(WEDNESDAY, end)]


def test_a_one_day_strike_is_announced_through_the_console_in_one_edit(console, settings, first_cycle):
    start = (utcnow() + timedelta(days=3)).astimezone(TORONTO).replace(second=0, microsecond=0)
    end = start + timedelta(days=1)
    console.edit("tdsb", status="closed", effective=start.strftime("%Y-%m-%dT%H:%M"),
                 until=end.strftime("%Y-%m-%dT%H:%M"))
    saved = document.load(settings.boards_file).status.by_id()["tdsb"]
    assert saved.status == "open" and [(p.start, p.end, p.status) for p in saved.upcoming] == [(start, end, "closed")]


def test_an_end_before_the_start_is_refused_on_its_field_and_nothing_is_saved(console, settings, first_cycle):
    start = (utcnow() + timedelta(days=3)).astimezone(TORONTO).replace(second=0, microsecond=0)
    before = settings.boards_file.read_text()
    page = console.edit("tdsb", action="preview", status="closed", effective=start.strftime("%Y-%m-%dT%H:%M"),
                        until=(start - timedelta(hours=1)).strftime("%Y-%m-%dT%H:%M"))
    html = page.get_data(as_text=True)
    assert page.status_code == 400 and 'id="until-error"' in html and "after the start" in html
    assert settings.boards_file.read_text() == before
