"""While a period is in force or announced, the pages say today's state and what comes, each sentence ending once."""

from __future__ import annotations

import re

from tests.web.conftest import visible_text


def test_a_period_in_force_says_until_when_with_one_full_stop_after_am(client, boards):
    boards.update("tdsb", upcoming=[{"from": "2026-01-05T00:01:00-05:00", "until": "2030-11-25T04:05:00-05:00",
                                     "status": "closed", "panels": ["secondary"]}])
    text = visible_text(client.get("/boards/tdsb").get_data(as_text=True))
    assert "Until Monday, November 25, 2030, 4:05 a.m. " in text
    assert not re.search(r"a\.m\.\.", text)


def test_a_period_in_force_ends_its_french_sentence_with_a_full_stop(client, boards):
    boards.update("tdsb", upcoming=[{"from": "2026-01-05T00:01:00-05:00", "until": "2030-11-25T04:05:00-05:00",
                                     "status": "closed", "panels": ["secondary"]}])
    text = visible_text(client.get("/boards/tdsb?lang=fr", follow_redirects=True).get_data(as_text=True))
    assert "Jusqu’au lundi 25 novembre 2030, 04 h 05." in text.replace("\u00a0", " ")


def test_today_and_what_is_announced_are_both_shown_per_panel(client, boards):
    boards.update("tdsb", upcoming=[{"from": "2030-11-25T00:01:00-05:00", "status": "closed",
                                     "panels": ["secondary"]}])
    for path in ("/", "/boards/tdsb"):
        text = visible_text(client.get(path).get_data(as_text=True))
        board = text[text.index("Toronto District School Board"):]
        assert board.index("Schools are open as usual.") < board.index(
            "From Monday, November 25, 2030, 12:01 a.m.: Secondary schools are closed"), path


def test_an_announced_period_and_its_message_are_two_sentences(client, boards):
    boards.update("tdsb", upcoming=[{"from": "2030-11-25T00:01:00-05:00", "until": "2030-11-26T00:01:00-05:00",
                                     "status": "closed", "panels": ["secondary"],
                                     "message": {"en": "One-day strike: secondary schools are closed on Monday."}}])
    text = visible_text(client.get("/boards/tdsb").get_data(as_text=True))
    assert "Secondary schools are closed. One-day strike: secondary schools are closed on Monday." in text


def test_a_french_announced_period_goes_on_in_lower_case_after_its_colon(client, boards):
    boards.update("tdsb", upcoming=[{"from": "2030-11-25T00:01:00-05:00", "status": "closed",
                                     "panels": ["secondary"]}])
    text = visible_text(client.get("/boards/tdsb?lang=fr", follow_redirects=True).get_data(as_text=True))
    assert "Dès le lundi 25 novembre 2030, 00 h 01 : les écoles secondaires sont fermées" in text.replace("\u00a0", " ")
