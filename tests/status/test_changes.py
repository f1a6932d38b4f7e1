"""diff(old, new) turns two versions of a board into the changes a parent would notice, and nothing else."""

from __future__ import annotations

from notifier.status.boards import Board
from notifier.status.changes import Kind, diff


def board(**overrides) -> Board:
    data = {"id": "tdsb", "name": "Toronto District School Board", "status": "open", "withdrawals": []}
    data.update(overrides)
    return Board.model_validate(data)


BUSES = {"category": "transportation", "panels": ["secondary"], "description": {"en": "No buses."}}


def kinds(changes) -> list[str]:
    return [c.kind.value for c in changes]


def test_a_board_seen_for_the_first_time_has_no_changes():
    assert diff(None, board()) == []


def test_an_identical_board_has_no_changes():
    assert diff(board(), board()) == []


def test_fields_parents_do_not_see_are_ignored():
    assert diff(board(), board(updated_at="2026-11-22T10:00", website="https://example.org")) == []


def test_a_board_wide_closure_changes_the_status_and_both_panels():
    changes = diff(board(), board(status="closed"))
    assert kinds(changes) == ["status", "panel_status", "panel_status"]
    assert {c.panel.value for c in changes if c.panel} == {"elementary", "secondary"}


def test_a_closure_is_urgent_and_work_to_rule_is_not():
    assert all(c.urgent for c in diff(board(), board(status="closed")))
    assert not any(c.urgent for c in diff(board(), board(status="work-to-rule")))


def test_the_end_of_a_closure_is_urgent_and_the_end_of_work_to_rule_is_not():
    assert all(c.urgent for c in diff(board(status="closed"), board()))
    assert not any(c.urgent for c in diff(board(status="work-to-rule"), board()))


def test_a_secondary_only_strike_changes_only_the_secondary_panel():
    [change] = diff(board(), board(panels={"secondary": "closed"}))
    assert (change.kind, change.panel.value, change.before, change.after) == (Kind.PANEL_STATUS, "secondary",
                                                                             "open", "closed")
    assert change.urgent


def test_a_withdrawal_added_concerns_only_its_panels():
    [change] = diff(board(), board(withdrawals=[BUSES]))
    assert change.kind is Kind.WITHDRAWAL_ADDED
    assert [p.value for p in change.panels()] == ["secondary"]


def test_a_withdrawal_removed_is_reported_as_removed():
    assert kinds(diff(board(withdrawals=[BUSES]), board())) == ["withdrawal_removed"]


def test_a_withdrawal_whose_description_changes_is_changed_not_added_and_removed():
    edited = {**BUSES, "description": {"en": "No buses until Friday."}}
    assert kinds(diff(board(withdrawals=[BUSES]), board(withdrawals=[edited]))) == ["withdrawal_changed"]


def test_a_new_message_is_reported_but_a_corrected_since_time_alone_is_not_news():
    assert kinds(diff(board(), board(message={"en": "Strike from Monday."}))) == ["message"]
    assert diff(board(), board(effective="2026-11-02T00:01")) == []
