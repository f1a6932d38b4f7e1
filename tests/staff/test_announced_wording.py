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
