"""Periods announced ahead: what is in force at a moment, what is still ahead, what is past, and what changed."""

from __future__ import annotations

from datetime import datetime

import pytest

from notifier.errors import BoardFileError
from notifier.status import document
from notifier.status.boards import Board
from notifier.status.changes import diff

TUESDAY = datetime.fromisoformat("2026-11-24T12:00-05:00")
WEDNESDAY = datetime.fromisoformat("2026-11-25T12:00-05:00")
THURSDAY = datetime.fromisoformat("2026-11-26T12:00-05:00")
STRIKE_DAY = {"from": "2026-11-25T00:01", "until": "2026-11-26T00:01", "status": "closed", "panels": ["secondary"]}


def board(**fields) -> Board:
    return Board.model_validate({"id": "tdsb", "name": "Toronto District School Board", "status": "work-to-rule",
                                 "withdrawals": [], **fields})


def problems_in(text: str) -> list[str]:
    with pytest.raises(BoardFileError) as caught:
        document.parse(text, now=TUESDAY)
    return [str(problem) for problem in caught.value.problems]


BOARD_YAML = """boards:
  - id: tdsb
    name: Toronto District School Board
    status: open
    withdrawals: []
"""


def test_a_period_in_force_changes_only_its_panels():
    during = board(upcoming=[STRIKE_DAY]).at(WEDNESDAY)
    assert during.panel_status("secondary") == "closed" and during.panel_status("elementary") == "work-to-rule"
    assert during.effective == datetime.fromisoformat("2026-11-25T00:01-05:00")


def test_before_and_after_a_period_the_board_is_as_written():
    announced = board(upcoming=[STRIKE_DAY])
    assert announced.at(TUESDAY).panel_status("secondary") == "work-to-rule"
    assert announced.at(THURSDAY).panel_status("secondary") == "work-to-rule"


def test_a_period_is_ahead_then_in_force_then_past():
    announced = board(upcoming=[STRIKE_DAY])
    assert [len(announced.ahead(t)) for t in (TUESDAY, WEDNESDAY, THURSDAY)] == [1, 0, 0]
    assert announced.period_at(WEDNESDAY) is not None and announced.period_at(THURSDAY) is None
    assert len(announced.past(THURSDAY)) == 1


def test_a_period_with_its_own_withdrawals_and_message_replaces_the_boards_while_it_lasts():
    buses = {"category": "transportation", "description": {"en": "No buses."}}
    during = board(upcoming=[{**STRIKE_DAY, "message": {"en": "Strike day."}, "withdrawals": [buses]}]).at(WEDNESDAY)
    assert during.message.en == "Strike day." and [w.category for w in during.withdrawals] == ["transportation"]


def test_a_period_announced_changed_or_called_off_is_a_change():
    before, after = board(), board(upcoming=[STRIKE_DAY])
    assert [c.kind for c in diff(before, after, TUESDAY)] == ["period_added"]
    moved = board(upcoming=[{**STRIKE_DAY, "until": "2026-11-27T00:01"}])
    assert [c.kind for c in diff(after, moved, TUESDAY)] == ["period_changed"]
    assert [c.kind for c in diff(after, before, TUESDAY)] == ["period_removed"]


def test_a_closure_announced_ahead_is_urgent_and_a_work_to_rule_is_not():
    [closure] = diff(board(), board(upcoming=[STRIKE_DAY]), TUESDAY)
    [slowdown] = diff(board(), board(upcoming=[{**STRIKE_DAY, "status": "work-to-rule"}]), TUESDAY)
    assert closure.urgent and not slowdown.urgent


def test_ending_a_period_in_force_is_a_change_of_what_is_in_force_not_a_call_off():
    changes = diff(board(upcoming=[STRIKE_DAY]), board(), WEDNESDAY)
    assert [(c.kind, c.panel, c.after) for c in changes] == [("panel_status", "secondary", "work-to-rule")]


def test_overlapping_periods_are_reported_with_the_line_of_the_later_one():
    [problem] = problems_in(BOARD_YAML + """    upcoming:
      - {from: 2026-12-02T00:01, until: 2026-12-04T00:01, status: closed}
      - {from: 2026-12-03T00:01, status: work-to-rule, panels: [secondary]}
""")
    assert problem.startswith("boards.yaml:8: boards.0.upcoming.1.from: this period overlaps")


def test_periods_on_different_panels_may_overlap():
    parsed = document.parse(BOARD_YAML + """    upcoming:
      - {from: 2026-12-02T00:01, status: closed, panels: [secondary]}
      - {from: 2026-12-02T00:01, status: work-to-rule, panels: [elementary]}
""", now=TUESDAY)
    [board] = parsed.boards
    assert [(p.status, [panel.value for panel in p.panels]) for p in board.upcoming] == [
        ("closed", ["secondary"]), ("work-to-rule", ["elementary"])]


def test_a_period_that_ends_before_it_starts_is_reported():
    [problem] = problems_in(BOARD_YAML + "    upcoming:\n      - {from: 2026-12-02T00:01, until: 2026-12-01T00:01, "
                                         "status: closed}\n")
    assert "boards.0.upcoming.0.until: must be after from" in problem


def test_a_time_that_does_not_exist_in_toronto_is_refused_with_its_line():
    [problem] = problems_in(BOARD_YAML + "    upcoming:\n      - {from: 2027-03-14T02:30, status: closed}\n")
    assert problem.startswith("boards.yaml:7:") and "does not exist in Toronto" in problem


def test_a_time_that_happens_twice_needs_its_offset():
    [problem] = problems_in(BOARD_YAML + "    effective: 2026-11-01T01:30\n")
    assert "happens twice" in problem and "2026-11-01T01:30-05:00" in problem
    document.parse(BOARD_YAML + "    effective: 2026-11-01T01:30-05:00\n", now=TUESDAY)


def test_an_effective_time_still_ahead_is_refused_with_the_way_to_announce_ahead():
    [problem] = problems_in(BOARD_YAML + "    effective: 2026-11-30T00:01\n")
    assert problem.startswith("boards.yaml:6: boards.0.effective:") and "upcoming:" in problem


def test_a_text_that_was_valid_later_is_still_refused_when_read_at_a_time_before_its_effective_time():
    text = BOARD_YAML + "    effective: 2026-11-30T00:01\n"
    document.parse(text, now=datetime.fromisoformat("2026-12-01T12:00-05:00"))
    [problem] = problems_in(text)
    assert problem.startswith("boards.yaml:6: boards.0.effective:")


def test_a_text_read_again_is_not_validated_again():
    text = BOARD_YAML + "    effective: 2026-11-23T00:01\n"
    assert document.parse(text, now=TUESDAY) is document.parse(text, "elsewhere.yaml", now=WEDNESDAY)


def test_a_board_status_contradicting_both_panels_is_refused_with_a_suggestion():
    [problem] = problems_in(BOARD_YAML.replace("status: open", "status: work-to-rule\n"
                                               "    panels: {elementary: closed, secondary: closed}"))
    assert problem.startswith("boards.yaml:4: boards.0.status:") and "write status: closed without panels" in problem


def test_a_board_name_with_a_line_break_or_a_control_character_is_refused():
    assert "one line" in problems_in(BOARD_YAML.replace("name: Toronto District School Board",
                                                        'name: "Toronto\\nDistrict"'))[0]
    assert "control character" in problems_in(BOARD_YAML.replace("name: Toronto District School Board",
                                                                 'name: "Toronto\\u0007"'))[0]
