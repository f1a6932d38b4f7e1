"""boards.yaml is edited by people: every mistake is reported as PATH:LINE: message, and nothing half-applies."""

from __future__ import annotations

from pathlib import Path

import pytest

from notifier.config import ROOT
from notifier.errors import BoardFileError
from notifier.status import document

VALID_BOARD = """\
boards:
  - id: tdsb
    name: Toronto District School Board
    status: open
    withdrawals: []
"""


def problems_in(text: str) -> list[str]:
    with pytest.raises(BoardFileError) as caught:
        document.parse(text, "boards.yaml")
    return [str(p) for p in caught.value.problems]


def test_the_shipped_file_lists_all_72_ontario_boards():
    status = document.load(ROOT / "boards.yaml").status
    kinds = [(b.language.value, b.type.value) for b in status.boards]
    assert len(status.boards) == 72
    assert kinds.count(("en", "public")) == 31
    assert kinds.count(("en", "catholic")) == 29
    assert kinds.count(("fr", "public")) == 4
    assert kinds.count(("fr", "catholic")) == 8
    assert all(b.status.value == "open" for b in status.boards)


def test_the_example_in_the_files_header_is_itself_valid():
    header = (ROOT / "boards.yaml").read_text().split("\nboards:\n")[0]
    example = header.split("#  - id: exampledsb")[1]
    text = "boards:\n  - id: exampledsb" + "\n".join(line[1:] for line in example.splitlines()) + "\n"
    assert document.parse(text).boards[0].panel_status("secondary").value == "closed"


def test_a_valid_file_parses():
    assert document.parse(VALID_BOARD).boards[0].id == "tdsb"


def test_yaml_syntax_error_names_its_line():
    assert problems_in(VALID_BOARD + "    name: a: b\n")[0].startswith("boards.yaml:6: YAML syntax")


def test_unknown_status_lists_the_allowed_ones():
    [problem] = problems_in(VALID_BOARD.replace("status: open", "status: strike"))
    assert problem == "boards.yaml:4: boards.0.status: unknown status 'strike'; allowed: open, work-to-rule, closed"


def test_status_off_is_text_not_false_and_is_refused_as_a_status():
    [problem] = problems_in(VALID_BOARD.replace("status: open", "status: off"))
    assert "unknown status 'off'" in problem


def test_unknown_field_names_the_field_and_its_line():
    [problem] = problems_in(VALID_BOARD + "    colour: red\n")
    assert problem == "boards.yaml:6: boards.0.colour: unknown field 'colour'"


def test_duplicate_id_points_at_the_second_board():
    [problem] = problems_in(VALID_BOARD + VALID_BOARD.removeprefix("boards:\n"))
    assert problem.startswith("boards.yaml:6: boards.1.id: duplicate id 'tdsb'")


def test_bad_date_time_is_reported_on_its_line():
    [problem] = problems_in(VALID_BOARD + "    effective: 2026-13-45T09:00\n")
    assert problem.startswith("boards.yaml:6: boards.0.effective:")
    assert "not a date-time" in problem


def test_a_date_without_a_time_is_refused():
    [problem] = problems_in(VALID_BOARD + "    effective: 2026-11-23\n")
    assert "no time of day" in problem


def test_a_time_without_offset_is_toronto_time():
    status = document.parse(VALID_BOARD + "    effective: 2026-11-23T00:01\n")
    assert status.boards[0].effective.isoformat() == "2026-11-23T00:01:00-05:00"


def test_unknown_panel_in_panels_is_reported():
    [problem] = problems_in(VALID_BOARD + "    panels:\n      middle: closed\n")
    assert problem == "boards.yaml:7: boards.0.panels.middle: unknown panel 'middle'; allowed: elementary, secondary"


def test_unknown_panel_in_a_withdrawal_is_reported():
    text = VALID_BOARD.replace("withdrawals: []", "withdrawals:\n      - category: transportation\n"
                               "        panels: [junior]\n        description: {en: No buses.}")
    [problem] = problems_in(text)
    assert problem.startswith("boards.yaml:7: boards.0.withdrawals.0.panels.0: unknown panel 'junior'")


def test_unknown_withdrawal_category_lists_the_vocabulary():
    text = VALID_BOARD.replace("withdrawals: []", "withdrawals:\n      - category: buses\n"
                               "        description: {en: No buses.}")
    [problem] = problems_in(text)
    assert problem.startswith("boards.yaml:6: boards.0.withdrawals.0.category: unknown withdrawal category 'buses'")
    assert "transportation" in problem


def test_missing_required_field_points_at_its_board():
    [problem] = problems_in(VALID_BOARD.replace("    status: open\n", ""))
    assert problem == "boards.yaml:2: boards.0.status: missing required field 'status'"


def test_every_problem_is_reported_not_just_the_first():
    text = VALID_BOARD.replace("status: open", "status: shut") + "    colour: red\n"
    assert len(problems_in(text)) == 2


def test_check_command_exits_zero_for_the_shipped_file(runner):
    result = runner.invoke("check", str(ROOT / "boards.yaml"))
    assert result.exit_code == 0
    assert "72 boards" in result.output


def test_check_command_prints_path_line_message_and_fails(runner, tmp_path: Path):
    broken = tmp_path / "boards.yaml"
    broken.write_text(VALID_BOARD.replace("status: open", "status: shut"))
    result = runner.invoke("check", str(broken))
    assert result.exit_code == 1
    assert f"{broken}:4: boards.0.status: unknown status 'shut'" in result.output


def test_save_refuses_an_invalid_text_and_leaves_the_file_as_it_was(tmp_path: Path):
    path = tmp_path / "boards.yaml"
    path.write_text(VALID_BOARD)
    with pytest.raises(BoardFileError):
        document.save(path, VALID_BOARD.replace("open", "shut"))
    assert path.read_text() == VALID_BOARD
    assert list(tmp_path.iterdir()) == [path]


@pytest.mark.parametrize("mode", [0o644, 0o664, 0o600])
def test_save_keeps_the_files_permissions(tmp_path: Path, mode: int):
    path = tmp_path / "boards.yaml"
    path.write_text(VALID_BOARD)
    path.chmod(mode)
    document.save(path, VALID_BOARD.replace("status: open", "status: closed"))
    assert path.stat().st_mode & 0o7777 == mode
    assert "closed" in path.read_text()


def test_save_keeps_the_files_owner(tmp_path: Path):
    import os

    path = tmp_path / "boards.yaml"
    path.write_text(VALID_BOARD)
    if os.geteuid() == 0:  # root can give the file away, as an operator's deploy user might own it
        os.chown(path, 1000, 1000)
    before = path.stat()
    document.save(path, VALID_BOARD.replace("status: open", "status: closed"))
    assert (path.stat().st_uid, path.stat().st_gid) == (before.st_uid, before.st_gid)


def test_a_value_tagged_as_a_number_that_is_not_one_names_its_line():
    with pytest.raises(BoardFileError) as raised:
        document.parse("boards:\n  - id: tdsb\n    name: !!int updated_at\n")
    assert [(p.line, p.message.startswith("YAML value:")) for p in raised.value.problems] == [(3, True)]
