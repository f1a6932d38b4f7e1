"""Property: whatever a hand edit does to boards.yaml, parsing it either succeeds or raises `BoardFileError` whose
every problem names a line of the file; never another exception (which would stop the clock with a traceback)."""

from __future__ import annotations

from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from notifier.config import ROOT
from notifier.errors import BoardFileError
from notifier.status.document import parse

ORIGINAL = (ROOT / "boards.yaml").read_text(encoding="utf-8")
LINES = ORIGINAL.splitlines(keepends=True)
# What a hurried editor types or deletes: YAML punctuation, quotes, tabs, indentation, values of the wrong type.
FRAGMENTS = st.sampled_from([":", "- ", "  ", "\t", "'", '"', "#", "{", "}", "[", "]", "&a", "*a", "!!int ", "|",
                             ">", "?", "%", "@", "`", "\n", "\r\n", "null", "~", "true", "0", "-1", "1e99",
                             "2026-13-45", "closed", "open", "partial", "boards:", "id: tdsb", "status:", "effective:",
                             "\ufeff", "\x00", "é", "💥", "<<: *a"])


@st.composite
def mutated(draw) -> str:
    lines = list(LINES)
    for _ in range(draw(st.integers(1, 4))):
        index = draw(st.integers(0, len(lines) - 1))
        action = draw(st.sampled_from(["delete", "duplicate", "insert", "replace", "truncate", "swap", "indent"]))
        line = lines[index]
        if action == "delete":
            del lines[index]
        elif action == "duplicate":
            lines.insert(index, line)
        elif action == "insert":
            at = draw(st.integers(0, len(line)))
            lines[index] = line[:at] + draw(st.one_of(FRAGMENTS, st.text(max_size=8))) + line[at:]
        elif action == "replace":
            lines[index] = draw(st.one_of(FRAGMENTS, st.text(max_size=20))) + "\n"
        elif action == "truncate":
            lines[index] = line[: draw(st.integers(0, len(line)))] + "\n"
        elif action == "swap":
            other = draw(st.integers(0, len(lines) - 1))
            lines[index], lines[other] = lines[other], line
        else:
            lines[index] = " " * draw(st.integers(1, 3)) + line
        if not lines:
            break
    return "".join(lines)


def _problems_without_a_line(text: str | bytes) -> list[str]:
    """[] when `text` parses, or when it is refused with problems that each name a line of it and say something."""
    length = len(text.splitlines())
    try:
        parse(text)
    except BoardFileError as error:
        if not error.problems:
            return ["refused without naming a problem"]
        return [str(problem) for problem in error.problems
                if not (isinstance(problem.line, int) and 1 <= problem.line <= max(length, 1) + 1 and problem.message)]
    return []


@settings(max_examples=150, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(mutated())
def test_any_hand_edit_of_the_boards_file_parses_or_names_the_line_of_its_problem(text: str) -> None:
    assert _problems_without_a_line(text) == []


@settings(max_examples=100, deadline=None)
@given(st.binary(max_size=300))
def test_any_bytes_parse_or_name_the_line_of_their_problem(data: bytes) -> None:
    assert _problems_without_a_line(data) == []


@settings(max_examples=100, deadline=None)
@given(st.recursive(st.none() | st.booleans() | st.integers() | st.floats(allow_nan=False) | st.text(max_size=10),
                    lambda inner: st.lists(inner, max_size=3) | st.dictionaries(st.text(max_size=8), inner, max_size=3),
                    max_leaves=12))
def test_any_yaml_value_under_boards_parses_or_names_the_line_of_its_problem(value) -> None:
    import io

    from ruamel.yaml import YAML

    out = io.StringIO()
    YAML(typ="safe", pure=True).dump({"boards": value}, out)
    assert _problems_without_a_line(out.getvalue()) == []
