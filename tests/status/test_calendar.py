"""A board's disruptions as calendar events: which days, with identities that never move, valid iCalendar."""

from __future__ import annotations

from datetime import date, datetime

from icalendar import Calendar

from notifier.formatting import TORONTO
from notifier.status.boards import Board, Period
from notifier.status.calendar import CORRECTION_WINDOW, disruptions, to_ical

NOW = datetime(2026, 11, 23, 12, 0, tzinfo=TORONTO)  # a Monday
WEDNESDAY = {"from": "2026-11-25T00:00", "until": "2026-11-26T00:00", "status": "closed", "panels": ["secondary"]}
FROM_MONDAY = {"from": "2026-11-30T00:01", "status": "work-to-rule"}


def board(**fields) -> Board:
    data = {"id": "tdsb", "name": "Toronto DSB", "status": "open", "withdrawals": []}
    data.update(fields)
    return Board.model_validate(data)


def describe(event):
    return f"{event.status} {'+'.join(event.panels)}", "words", "https://example.org/boards/tdsb"


def events_of(found, now=NOW):
    calendar = Calendar.from_ical(to_ical(found, describe, "TDSB", now, now))
    return {str(e["UID"]): e for e in calendar.walk("VEVENT")}


def test_an_open_board_with_nothing_announced_has_no_events():
    assert disruptions(board(), NOW) == []


def test_a_strike_day_ahead_is_a_whole_day_event():
    found = disruptions(board(upcoming=[WEDNESDAY]), NOW)
    (event,) = events_of(found).values()
    assert event.decoded("DTSTART") == date(2026, 11, 25)
    assert event.decoded("DTEND") == date(2026, 11, 26)
    assert str(event["SUMMARY"]) == "closed secondary"


def test_uids_stay_the_same_when_another_period_is_announced_or_an_end_moves():
    before = {d.uid for d in disruptions(board(upcoming=[WEDNESDAY]), NOW)}
    moved = {**WEDNESDAY, "until": "2026-11-27T00:00"}
    after = {d.uid for d in disruptions(board(upcoming=[moved, FROM_MONDAY]), NOW)}
    assert before < after
    assert len(after) == 2


def test_uids_differ_by_panels():
    elementary = {**WEDNESDAY, "panels": ["elementary"]}
    assert disruptions(board(upcoming=[WEDNESDAY]), NOW)[0].uid != disruptions(board(upcoming=[elementary]), NOW)[0].uid


def test_a_period_until_further_notice_runs_to_the_end_of_today_once_started():
    found = disruptions(board(upcoming=[FROM_MONDAY]), datetime(2026, 12, 2, 9, tzinfo=TORONTO))
    (event,) = events_of(found, datetime(2026, 12, 2, 9, tzinfo=TORONTO)).values()
    assert event.decoded("DTSTART") == date(2026, 11, 30)
    assert event.decoded("DTEND") == date(2026, 12, 3)


def test_times_that_are_not_whole_days_carry_the_toronto_zone():
    found = disruptions(board(upcoming=[{"from": "2026-11-25T12:00", "until": "2026-11-25T15:30",
                                         "status": "closed"}]), NOW)
    text = to_ical(found, describe, "TDSB", NOW, NOW).decode()
    assert "DTSTART;TZID=America/Toronto:20261125T120000" in text
    assert "BEGIN:VTIMEZONE" in text and "TZID:America/Toronto" in text


def test_the_state_in_force_without_a_period_is_an_event_from_its_effective_moment():
    found = disruptions(board(status="closed", effective="2026-11-20T00:01"), NOW)
    (event,) = found
    assert event.start == datetime(2026, 11, 20, 0, 1, tzinfo=TORONTO)
    assert event.end is None


def test_each_panel_status_is_its_own_event():
    found = disruptions(board(status="work-to-rule", panels={"secondary": "closed"}, effective="2026-11-20T00:01"),
                        NOW)
    assert {(d.status.value, d.panels) for d in found} == {("closed", ("secondary",)),
                                                           ("work-to-rule", ("elementary",))}


def test_a_past_period_tidied_out_of_the_file_still_shows_from_the_history():
    tuesday = Period.model_validate({"from": "2026-11-17T00:00", "until": "2026-11-18T00:00", "status": "closed"})
    assert [d.start for d in disruptions(board(), NOW, recorded=[tuesday])] == [tuesday.start]


def test_a_recorded_period_not_yet_over_is_not_guessed():
    later = Period.model_validate(WEDNESDAY)
    assert disruptions(board(), NOW, recorded=[later]) == []


def test_the_calendar_is_valid_icalendar_with_the_required_properties():
    found = disruptions(board(upcoming=[WEDNESDAY, FROM_MONDAY]), NOW)
    calendar = Calendar.from_ical(to_ical(found, describe, "TDSB", NOW, NOW))
    assert calendar["VERSION"] == "2.0" and calendar["PRODID"]
    for event in calendar.walk("VEVENT"):
        for name in ("UID", "DTSTAMP", "DTSTART", "DTEND", "SUMMARY"):
            assert name in event


def test_a_closure_ended_by_a_correction_minutes_after_it_began_leaves_the_calendar():
    # "closed from now until Friday" published at 14:54:00, then "open" at 14:54:29: the console cut the period there.
    corrected = {"from": "2026-11-23T14:54:00", "until": "2026-11-23T14:54:29", "status": "closed",
                 "panels": ["secondary"]}
    assert disruptions(board(upcoming=[corrected]), datetime(2026, 11, 23, 15, 0, tzinfo=TORONTO)) == []
    assert disruptions(board(upcoming=[corrected]), NOW) == []  # nor is it shown before it would have begun


def test_a_closure_that_lasted_the_correction_window_stays_in_the_calendar():
    half_hour = {"from": "2026-11-23T14:00", "until": "2026-11-23T14:30", "status": "closed"}
    (event,) = disruptions(board(upcoming=[half_hour]), datetime(2026, 11, 23, 15, 0, tzinfo=TORONTO))
    assert event.end - event.start == CORRECTION_WINDOW


def test_a_corrected_period_known_only_from_the_history_is_left_out_too():
    corrected = Period.model_validate({"from": "2026-11-17T09:00", "until": "2026-11-17T09:05", "status": "closed"})
    assert disruptions(board(), NOW, recorded=[corrected]) == []
