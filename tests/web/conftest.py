"""Fixtures for the public site: an app that notices edits at once, a board in the middle of job action, and
helpers to read pages the way a parent (or a feed reader) does."""

from __future__ import annotations

import json
import re
from datetime import datetime, timedelta
from html import unescape

import pytest

from notifier.config import ROOT
from notifier.formatting import TORONTO
from tests.conftest import make_withdrawal

ALL_BOARD_IDS = re.findall(r"^  - id: (\S+)$", (ROOT / "boards.yaml").read_text(encoding="utf-8"), re.MULTILINE)
OPENAPI = json.loads((ROOT / "docs" / "openapi.json").read_text(encoding="utf-8"))


@pytest.fixture
def app(app):
    """The shared app, looking at boards.yaml and the history on every request (tests edit within a second)."""
    services = app.extensions["notifier"]
    services.boards.check_every = 0
    services.pages.check_every = 0
    return app


def in_a_week() -> str:
    return (datetime.now(TORONTO) + timedelta(days=7)).replace(hour=0, minute=1, second=0, microsecond=0) \
        .strftime("%Y-%m-%dT%H:%M")


RICH_BOARD = "tdsb"


@pytest.fixture
def job_action(boards):
    """TDSB in work-to-rule with secondary closed, buses and cleaning withdrawn; Peel open, a strike announced ahead."""
    boards.update(
        RICH_BOARD, status="work-to-rule", panels={"secondary": "closed"}, effective="2026-11-02T00:01",
        message={"en": "Secondary schools are closed during the strike. Elementary schools are open.",
                 "fr": "Les écoles secondaires sont fermées pendant la grève. Les écoles élémentaires sont ouvertes."},
        announcement={"en": "https://www.tdsb.on.ca/strike", "fr": "https://www.tdsb.on.ca/greve"},
        withdrawals=[
            make_withdrawal(panels=["secondary"]),
            make_withdrawal(category="custodial-cleaning",
                            description={"en": "Hallways and gyms are cleaned less often.",
                                         "fr": "Les couloirs et gymnases sont moins nettoyés."},
                            advice={"en": "Send a full water bottle with your child.",
                                    "fr": "Donnez une gourde pleine à votre enfant."}),
        ],
        updated_at="2026-11-01T18:30",
    )
    boards.update("peel", upcoming=[{"from": in_a_week(), "status": "closed", "withdrawals": [make_withdrawal()]}])
    return boards


def visible_text(html: str) -> str:
    """The words a reader sees (tags, scripts and styles removed, entities decoded, spaces collapsed)."""
    html = re.sub(r"<(script|style)\b.*?</\1>", " ", html, flags=re.S)
    return " ".join(unescape(re.sub(r"<[^>]+>", " ", html)).split())


def board_names_in(html: str) -> list[str]:
    """Board names in page order, as linked from the index."""
    return [unescape(n) for n in re.findall(r'<a class="board-name" href="[^"]+">([^<]+)</a>', html)]


def board_ids_in(html: str) -> list[str]:
    return re.findall(r'<a class="board-name" href="/boards/([^"]+)">', html)
