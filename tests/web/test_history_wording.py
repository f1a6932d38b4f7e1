"""After a change announced ahead takes effect by itself, the board's history and its Atom feed name the status that
actually took effect (closed, when schools closed), for the schools concerned, marked "as announced"."""

from __future__ import annotations

from datetime import timedelta

import pytest

from tests.conftest import NOW
from tests.web.conftest import visible_text
from tests.web.test_feeds import ATOM, parse

EXPECTED = {"en": "Elementary: Work-to-rule → Closed (as announced)",
            "fr": "Palier élémentaire\u00a0: Grève du zèle → Fermé (comme annoncé)"}


@pytest.fixture
def took_effect(run, boards):
    """TDSB in work-to-rule, elementary schools announced closed two minutes ahead; the clock runs past that."""
    boards.update("tdsb", status="work-to-rule")
    run(NOW, deliver=False)
    boards.update("tdsb", upcoming=[{"from": (NOW + timedelta(minutes=2)).isoformat(), "status": "closed",
                                     "panels": ["elementary"]}])
    run(NOW + timedelta(seconds=5), deliver=False)
    run(NOW + timedelta(minutes=3), deliver=False)


@pytest.mark.parametrize("language", ["en", "fr"])
def test_the_feed_names_the_status_that_took_effect(app, took_effect, language):
    reader = app.test_client(use_cookies=False)
    feed = parse(reader.get(f"/boards/tdsb/feed.atom?lang={language}"))
    titles = [entry.findtext(f"{ATOM}title") for entry in feed.findall(f"{ATOM}entry")]
    assert EXPECTED[language] in titles
    assert not [t for t in titles if "Work-to-rule (as announced)" in t or t.endswith("→ Work-to-rule (as announced)")]


def test_the_board_history_names_the_status_that_took_effect(client, took_effect):
    text = visible_text(client.get("/boards/tdsb").get_data(as_text=True))
    history = text[text.index("History of changes"):]
    assert EXPECTED["en"] in history
