"""boards.yaml's own header tells a person editing it by hand what the validator accepts, and where the file stands."""

from __future__ import annotations

import re
from datetime import UTC, datetime

import pytest

from notifier.config import ROOT
from notifier.errors import BoardFileError
from notifier.status import document
from notifier.status.boards import Board, Period

IDENTITY = {"id", "name", "name_fr", "language", "type", "region", "website"}
HEADER = (ROOT / "boards.yaml").read_text(encoding="utf-8").split("\nboards:\n", 1)[0]
NOW = datetime(2026, 11, 27, 12, 0, tzinfo=UTC)


def example() -> str:
    """The header's example board, uncommented, as a whole file."""
    lines = HEADER.split("\n# Example", 1)[1].splitlines()[1:]
    body = [line[1:] for line in lines if line.startswith("#  ")]
    return "boards:\n" + "\n".join(body) + "\n"


def fields_described() -> set[str]:
    """The board fields the header's "Fields you edit" list describes."""
    listing = HEADER.split("# Fields you edit", 1)[1].split("# Text containing", 1)[0]
    return set(re.findall(r"^# {3}([a-z_]+) +\S", listing, re.MULTILINE))


def test_the_headers_example_validates():
    (board,) = document.parse(example(), "example", NOW).boards
    assert board.withdrawals and board.upcoming and board.panels


def test_the_header_describes_every_field_a_board_accepts_that_staff_edit():
    assert fields_described() == set(Board.model_fields) - IDENTITY


def test_the_header_describes_every_field_of_a_period_announced_ahead():
    period_fields = {field.alias or name for name, field in Period.model_fields.items()}
    upcoming = HEADER.split("#   upcoming", 1)[1].split("#   updated_at", 1)[0]
    assert set(re.findall(r"^# {19}([a-z_]+) +\S", upcoming, re.MULTILINE)) == period_fields


def test_the_header_does_not_offer_a_future_effective_which_the_validator_refuses():
    future = example().replace("effective: 2026-11-23T00:01", "effective: 2030-11-23T00:01")
    with pytest.raises(BoardFileError):
        document.parse(future, "example", NOW)
    effective = HEADER.split("#   effective", 1)[1].split("#   message", 1)[0]
    assert "upcoming" in effective and not re.search(r"future time means|announced ahead\"", effective)


def test_the_header_says_the_published_document_not_the_file_is_what_production_reads():
    assert "single source of truth" not in HEADER
    assert "boards import" in HEADER and "database" in HEADER
