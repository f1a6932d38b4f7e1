"""SMS segments: GSM-7 160/153, UCS-2 70/67; the digest texts stay within two segments in English and French."""

from __future__ import annotations

import pytest

from notifier.config import ROOT, Settings
from notifier.delivery.channels import segments
from notifier.notices.preview import preview
from notifier.status import document
from notifier.status.boards import Board

SETTINGS = Settings.from_env({"NOTIFIER_SECRET_KEY": "k", "NOTIFIER_BASE_URL": "https://status.example.org"})
BOARDS = document.load(str(ROOT / "boards.yaml")).status.by_id()


@pytest.mark.parametrize(("length", "expected"), [(0, 0), (160, 1), (161, 2), (306, 2), (307, 3)])
def test_gsm7_texts_take_160_then_153_per_segment(length, expected):
    assert segments.count("a" * length) == segments.SegmentCount("GSM-7", length, expected)


@pytest.mark.parametrize(("length", "expected"), [(70, 1), (71, 2), (134, 2), (135, 3)])
def test_one_circumflex_switches_the_whole_text_to_ucs2(length, expected):
    text = "ê" + "a" * (length - 1)
    assert segments.count(text) == segments.SegmentCount("UCS-2", length, expected)


@pytest.mark.parametrize("character", ["ê", "â", "ô", "ç", "’", "«"])
def test_french_characters_outside_gsm7(character):
    assert segments.count(f"fermé {character}").encoding == "UCS-2"


def test_accents_inside_gsm7_stay_gsm7():
    assert segments.count("écoles élémentaires fermées, grève, Ç, à").encoding == "GSM-7"


def test_extension_characters_count_twice():
    assert segments.count("[€]").units == 6


def _closed(board: Board) -> Board:
    return Board.model_validate({**board.model_dump(mode="json"), "status": "closed"})


def _worst(board: Board) -> Board:
    """Secondary closed, buses withdrawn, announced ahead: the longest ordinary digest."""
    return Board.model_validate({
        **board.model_dump(mode="json"), "panels": {"secondary": "closed"}, "effective": "2026-11-23T00:01",
        "withdrawals": [{"category": "transportation", "panels": ["secondary"],
                         "description": {"en": "No buses.", "fr": "Aucun autobus."}}],
    })


def test_a_closure_text_in_english_is_one_gsm7_segment():
    text = preview(BOARDS["tdsb"], _closed(BOARDS["tdsb"]), "en", SETTINGS).sms_text
    assert text == ("Toronto District School Board: All schools are closed to students. "
                    "Details: https://status.example.org/boards/tdsb?lang=en")
    assert segments.count(text) == segments.SegmentCount("GSM-7", 122, 1)


def test_a_closure_text_in_french_is_one_gsm7_segment():
    text = preview(BOARDS["tdsb"], _closed(BOARDS["tdsb"]), "fr", SETTINGS).sms_text
    assert "Toutes les écoles sont fermées aux élèves." in text
    assert text.startswith("Toronto District School Board : ")  # French puts a space before the colon
    assert segments.count(text) == segments.SegmentCount("GSM-7", 131, 1)


@pytest.mark.parametrize("language", ["en", "fr"])
def test_every_boards_longest_ordinary_text_fits_two_segments(language):
    counts = {board_id: preview(board, _worst(board), language, SETTINGS).sms_segments
              for board_id, board in BOARDS.items()}
    assert max(counts.values()) <= 2, {k: v for k, v in counts.items() if v > 2}
