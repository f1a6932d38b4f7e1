"""Calendar feeds: a board's disrupted days to subscribe to, and a family's own at a signed address."""

from __future__ import annotations

import logging
import re

import time_machine
from icalendar import Calendar

from notifier import links, masking

WEDNESDAY = {"from": "2030-01-09T00:00", "until": "2030-01-10T00:00", "status": "closed", "panels": ["secondary"]}
ELEMENTARY_FRIDAY = {"from": "2030-01-11T00:00", "until": "2030-01-12T00:00", "status": "closed",
                     "panels": ["elementary"]}


def parse(response) -> Calendar:
    assert response.status_code == 200
    assert response.headers["Content-Type"] == "text/calendar; charset=utf-8"
    return Calendar.from_ical(response.data)


def summaries(calendar: Calendar) -> list[str]:
    return [str(event["SUMMARY"]) for event in calendar.walk("VEVENT")]


def test_a_boards_calendar_lists_a_strike_day_announced_ahead(client, boards):
    boards.update("tdsb", upcoming=[WEDNESDAY])
    calendar = parse(client.get("/boards/tdsb/calendar.ics"))
    assert summaries(calendar) == ["Toronto District School Board: Secondary schools are closed"]


def test_the_calendar_answers_in_french_when_asked_in_its_url(client, boards):
    boards.update("tdsb", upcoming=[WEDNESDAY])
    response = client.get("/boards/tdsb/calendar.ics?lang=fr")
    assert summaries(parse(response)) == ["Toronto District School Board\u00a0: Les écoles secondaires sont "
                                          "fermées"]
    assert "Vary" not in response.headers


def test_the_calendar_is_cacheable_and_answers_304_to_a_repeat(client, boards):
    boards.update("tdsb", upcoming=[WEDNESDAY])
    first = client.get("/boards/tdsb/calendar.ics?lang=en")
    assert "max-age" in first.headers["Cache-Control"] and "public" in first.headers["Cache-Control"]
    again = client.get("/boards/tdsb/calendar.ics?lang=en", headers={"If-None-Match": first.headers["ETag"]})
    assert again.status_code == 304


def test_an_unknown_board_has_no_calendar(client):
    assert client.get("/boards/nowhere/calendar.ics").status_code == 404


def test_the_state_in_force_is_an_event(client, boards):
    boards.update("tdsb", status="closed", effective="2026-11-02T00:01")
    (event,) = parse(client.get("/boards/tdsb/calendar.ics?lang=en")).walk("VEVENT")
    assert str(event["SUMMARY"]) == "Toronto District School Board: Schools closed"


def test_a_strike_day_stays_in_the_calendar_after_it_passed_and_was_tidied_away(client, runner, boards):
    with time_machine.travel("2030-01-07 09:00 -0500"):
        runner.invoke("tick")
        boards.update("tdsb", upcoming=[WEDNESDAY])
        runner.invoke("tick")  # records the announcement
    with time_machine.travel("2030-01-14 09:00 -0500"):
        boards.update("tdsb", upcoming=None)
        runner.invoke("tick")
        calendar = parse(client.get("/boards/tdsb/calendar.ics?lang=en"))
    (event,) = calendar.walk("VEVENT")
    assert str(event.decoded("DTSTART")) == "2030-01-09"


def test_the_board_page_offers_to_add_its_calendar(client):
    html = client.get("/boards/tdsb").get_data(as_text=True)
    assert 'href="webcal://' in html and "/boards/tdsb/calendar.ics?lang=en" in html


def test_a_familys_calendar_has_only_the_panels_it_follows(client, boards, subscribe, settings):
    boards.update("tdsb", upcoming=[WEDNESDAY, ELEMENTARY_FRIDAY])
    subscriber_id, _, _ = subscribe(follows=[("tdsb", "elementary")], language="fr")
    calendar = parse(client.get(links.calendar_url(settings, subscriber_id)))
    assert summaries(calendar) == ["Toronto District School Board\u00a0: Les écoles élémentaires sont "
                                   "fermées"]


def test_a_familys_calendar_is_private(client, subscribe, settings):
    subscriber_id, _, _ = subscribe()
    response = client.get(links.calendar_url(settings, subscriber_id))
    assert response.headers["Cache-Control"].startswith("private")


def test_a_tampered_calendar_link_finds_nothing(client, subscribe, settings):
    subscriber_id, _, _ = subscribe()
    url = links.calendar_url(settings, subscriber_id)
    assert client.get(url.replace("/family.ics", "x/family.ics")).status_code == 404


def test_a_manage_link_does_not_open_a_calendar(client, subscribe, settings):
    subscriber_id, _, _ = subscribe()
    token = links.manage_url(settings, subscriber_id).rsplit("/", 1)[1]
    assert client.get(f"/calendar/{token}/family.ics").status_code == 404


def test_the_manage_page_links_the_familys_calendar(client, subscribe, settings):
    subscriber_id, _, _ = subscribe()
    html = client.get(links.manage_url(settings, subscriber_id)).get_data(as_text=True)
    token = re.search(r'href="webcal://[^"]+/calendar/([^/"]+)/family.ics"', html).group(1)
    assert links.read_calendar(settings, token) == subscriber_id


def test_the_calendar_token_never_reaches_a_log(subscribe, settings, caplog):
    subscriber_id, _, _ = subscribe()
    url = links.calendar_url(settings, subscriber_id)
    token = url.split("/calendar/")[1].split("/")[0]
    assert token not in masking.redact(f'"GET {url} HTTP/1.1" 200')
    record = logging.LogRecord("access", logging.INFO, __file__, 1, "GET %s", (url,), None)
    masking.MaskingFilter().filter(record)
    assert token not in record.getMessage()


def test_a_closure_corrected_seconds_later_leaves_the_boards_calendar(client, runner, boards):
    closed_until_friday = {"from": "2030-01-07T14:54:00", "until": "2030-01-11T00:00", "status": "closed",
                           "panels": ["secondary"]}
    with time_machine.travel("2030-01-07 14:54:00 -0500"):
        runner.invoke("tick")
        boards.update("tdsb", upcoming=[closed_until_friday])
        runner.invoke("tick")
        (event,) = parse(client.get("/boards/tdsb/calendar.ics?lang=en")).walk("VEVENT")
    with time_machine.travel("2030-01-07 14:54:29 -0500"):  # "open after all": the console ends the period here
        boards.update("tdsb", upcoming=[{**closed_until_friday, "until": "2030-01-07T14:54:29"}])
        runner.invoke("tick")
    with time_machine.travel("2030-01-07 15:10 -0500"):
        calendar = parse(client.get("/boards/tdsb/calendar.ics?lang=en"))
    assert str(event["UID"]) not in [str(e["UID"]) for e in calendar.walk("VEVENT")]
    assert summaries(calendar) == []


def test_a_work_to_rule_day_is_named_without_claiming_services_are_withdrawn(client, boards):
    boards.update("tdsb", upcoming=[{**WEDNESDAY, "status": "work-to-rule", "panels": ["elementary", "secondary"]}])
    calendar = parse(client.get("/boards/tdsb/calendar.ics?lang=en"))
    assert summaries(calendar) == ["Toronto District School Board: Schools open under work-to-rule"]
