"""An Atom feed per board and language: valid Atom that any feed reader (and xml.etree) can parse."""

from __future__ import annotations

import xml.etree.ElementTree as ET

import pytest

from tests.web.conftest import ALL_BOARD_IDS, RICH_BOARD

ATOM = "{http://www.w3.org/2005/Atom}"
XML_LANG = "{http://www.w3.org/XML/1998/namespace}lang"


def parse(response) -> ET.Element:
    assert response.status_code == 200
    assert response.mimetype == "application/atom+xml"
    return ET.fromstring(response.data)  # noqa: S314 - our own app's output, parsed to prove it is well-formed


def assert_valid_atom(feed: ET.Element) -> None:
    """The elements RFC 4287 requires: feed id/title/updated/author, and id/title/updated on each entry."""
    assert feed.tag == f"{ATOM}feed"
    for name in ("id", "title", "updated"):
        assert (feed.findtext(f"{ATOM}{name}") or "").strip(), name
    assert feed.find(f"{ATOM}author/{ATOM}name") is not None
    assert feed.find(f"{ATOM}link[@rel='self']") is not None
    entries = feed.findall(f"{ATOM}entry")
    assert entries
    for entry in entries:
        for name in ("id", "title", "updated"):
            assert (entry.findtext(f"{ATOM}{name}") or "").strip(), name
    ids = [e.findtext(f"{ATOM}id") for e in entries]
    assert len(ids) == len(set(ids))


@pytest.mark.parametrize("language", ["en", "fr"])
def test_every_board_has_a_valid_atom_feed(client, language):
    client.set_cookie("lang", language)
    for board_id in ALL_BOARD_IDS:
        feed = parse(client.get(f"/boards/{board_id}/feed.atom"))
        assert_valid_atom(feed)
        assert feed.get(XML_LANG) == language


def test_the_feed_has_an_entry_per_recorded_change(client, runner, boards):
    runner.invoke("tick")
    boards.update("tdsb", status="closed")
    runner.invoke("tick")
    feed = parse(client.get("/boards/tdsb/feed.atom"))
    assert_valid_atom(feed)
    titles = [e.findtext(f"{ATOM}title") for e in feed.findall(f"{ATOM}entry")]
    assert "Board status: Open → Closed" in titles


def test_the_french_feed_speaks_french(client, runner, boards):
    runner.invoke("tick")
    boards.update("tdsb", status="work-to-rule")
    runner.invoke("tick")
    client.set_cookie("lang", "fr")
    feed = parse(client.get("/boards/tdsb/feed.atom"))
    titles = [e.findtext(f"{ATOM}title") for e in feed.findall(f"{ATOM}entry")]
    assert "Statut du conseil\u00a0: Ouvert → Grève du zèle" in titles


def test_the_feed_escapes_the_boards_own_text(client, boards):
    boards.update("tdsb", status="work-to-rule", message={"en": "Buses <late> & trips cancelled"})
    feed = parse(client.get("/boards/tdsb/feed.atom"))
    assert feed.find(f"{ATOM}entry/{ATOM}summary").text == "Buses <late> & trips cancelled"


def test_the_feed_uses_absolute_urls_on_the_public_base_url(client, job_action):
    feed = parse(client.get(f"/boards/{RICH_BOARD}/feed.atom"))
    assert feed.find(f"{ATOM}link[@rel='self']").get("href") == \
        f"https://status.example.org/boards/{RICH_BOARD}/feed.atom?lang=en"
    assert feed.findtext(f"{ATOM}id").startswith("https://status.example.org/")


def test_an_unknown_boards_feed_is_404(client):
    assert client.get("/boards/atlantis/feed.atom").status_code == 404


def test_the_status_entry_keeps_its_id_when_another_board_changes(client, boards):
    def status_entry_id():
        return parse(client.get("/boards/tdsb/feed.atom")).find(f"{ATOM}entry/{ATOM}id").text

    before = status_entry_id()
    boards.update("peel", status="closed")
    assert status_entry_id() == before
    boards.update("tdsb", status="closed")
    assert status_entry_id() != before
