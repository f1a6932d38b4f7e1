"""The staff list names what is announced: the status and the schools it will have, and when, in one sentence."""

from __future__ import annotations

import re

from tests.web.conftest import visible_text


def test_the_list_names_the_status_announced_not_the_one_in_force(console, boards):
    boards.update("tdsb", status="work-to-rule",
                  upcoming=[{"from": "2027-11-22T04:05:00-05:00", "status": "closed", "panels": ["secondary"]}])
    text = visible_text(console.client.get("/staff/").get_data(as_text=True))
    assert "Announced: From Monday, November 22, 2027, 4:05 a.m.: Secondary schools are closed" in text
    assert "Upcoming: Work-to-rule" not in text


def test_a_time_ending_in_am_never_doubles_the_full_stop(console, boards):
    boards.update("tdsb", status="work-to-rule",
                  upcoming=[{"from": "2027-11-22T04:05:00-05:00", "status": "closed"}])
    text = visible_text(console.client.get("/staff/").get_data(as_text=True))
    assert "a.m.: Schools are closed to students." in text and not re.search(r"\.\.(?!\.)", text)


def test_the_form_shows_the_boards_current_message_and_the_announced_periods_own(console, boards):
    boards.update("tdsb", message={"en": "Correction: secondary schools are open."},
                  upcoming=[{"from": "2027-11-25T00:01:00-05:00", "until": "2027-11-26T00:01:00-05:00",
                             "status": "closed", "panels": ["secondary"],
                             "message": {"en": "One-day strike: secondary schools are closed on Thursday."}}])
    text = visible_text(console.client.get("/staff/boards/tdsb").get_data(as_text=True))
    assert ("Secondary schools are closed. Its own message: One-day strike: secondary schools are closed on "
            "Thursday.") in text
    assert "The board's current message: Correction: secondary schools are open." in text
    assert "it becomes the announced period's own message" in text


def test_the_form_says_when_an_announced_period_has_no_message_of_its_own(console, boards):
    boards.update("tdsb", upcoming=[{"from": "2027-11-25T00:01:00-05:00", "status": "closed"}])
    text = visible_text(console.client.get("/staff/boards/tdsb?lang=fr", follow_redirects=True)
                        .get_data(as_text=True)).replace("\u00a0", " ")
    assert "Pas de message propre : le message du conseil scolaire reste en vigueur." in text
    assert "Message actuel du conseil scolaire : aucun" in text


def test_the_french_list_puts_a_no_break_space_before_the_colon_of_a_panel(console, boards):
    boards.update("tdsb", status="work-to-rule", panels={"secondary": "closed"})
    page = console.client.get("/staff/?lang=fr", follow_redirects=True).get_data(as_text=True)
    assert "Palier secondaire\u00a0: Fermé" in page
