"""English and French: chosen by a visible toggle, remembered in a cookie, defaulting from Accept-Language."""

from __future__ import annotations

import re

import pytest
from babel.messages.extract import extract_from_file
from babel.messages.pofile import read_po

from notifier.config import ROOT
from notifier.status import document
from tests.web.conftest import RICH_BOARD, visible_text

SITE_TEMPLATES = ["templates/base.html", "templates/_labels.html", "templates/calendar/event.txt",
                  "templates/calendar/name.txt",
                  *sorted(str(p.relative_to(ROOT)) for p in (ROOT / "templates/public").iterdir())]


def test_the_toggle_answers_in_the_chosen_language_at_once_and_remembers_it_in_a_cookie(client):
    response = client.get("/boards/tdsb?lang=fr", headers={"Accept-Language": "en"})
    assert response.status_code == 200 and '<html lang="fr">' in response.get_data(as_text=True)
    assert "lang=fr" in response.headers["Set-Cookie"]
    assert response.headers["Cache-Control"] == "private, no-cache"  # no shared cache keeps or hands out the cookie


def test_a_page_asked_for_in_french_answers_in_french_in_a_browser_that_keeps_no_cookie(app):
    preview = app.test_client(use_cookies=False)  # a mail app's in-app browser, a link preview
    response = preview.get("/boards/tdsb?lang=fr", headers={"Accept-Language": "en"})
    assert response.status_code == 200 and '<html lang="fr">' in response.get_data(as_text=True)


def test_the_cookie_is_not_set_again_when_it_already_holds_the_choice(client):
    client.set_cookie("lang", "fr")
    response = client.get("/boards/tdsb?lang=fr")
    assert response.status_code == 200 and "Set-Cookie" not in response.headers
    assert response.headers["Cache-Control"].startswith("public")


@pytest.mark.parametrize("value", ["de", "", "FR", "fr-CA", "x" * 300])
def test_an_unknown_language_in_the_address_falls_back_to_the_remembered_choice(client, value):
    client.set_cookie("lang", "fr")
    response = client.get("/boards/tdsb", query_string={"lang": value}, headers={"Accept-Language": "en"})
    assert response.status_code == 200 and '<html lang="fr">' in response.get_data(as_text=True)
    assert "Set-Cookie" not in response.headers


def test_an_unknown_language_in_the_address_falls_back_to_accept_language_without_a_choice(client):
    response = client.get("/boards/tdsb?lang=de", headers={"Accept-Language": "fr-CA"})
    assert response.status_code == 200 and '<html lang="fr">' in response.get_data(as_text=True)


@pytest.mark.parametrize("language", ["en", "fr"])
def test_the_board_pages_feed_links_name_the_pages_language(app, language):
    html = app.test_client(use_cookies=False).get(f"/boards/tdsb?lang={language}").get_data(as_text=True)
    feed = f"/boards/tdsb/feed.atom?lang={language}"
    assert f'<link rel="alternate" type="application/atom+xml" href="{feed}"' in html
    assert f'<a href="{feed}">' in html


def test_the_remembered_language_is_used_on_the_next_visit(client):
    client.get("/?lang=fr")
    assert '<html lang="fr">' in client.get("/").get_data(as_text=True)


def test_the_toggle_back_to_english_is_remembered_too(client):
    client.get("/?lang=fr")
    client.get("/?lang=en")
    assert '<html lang="en">' in client.get("/", headers={"Accept-Language": "fr-CA"}).get_data(as_text=True)


def test_the_language_defaults_from_accept_language(client):
    html = client.get("/", headers={"Accept-Language": "fr-CA,fr;q=0.9,en;q=0.5"}).get_data(as_text=True)
    assert '<html lang="fr">' in html and "Les écoles sont-elles ouvertes\u202f?" in html


def test_english_is_the_default_for_other_languages(client):
    assert '<html lang="en">' in client.get("/", headers={"Accept-Language": "de"}).get_data(as_text=True)


def test_the_toggle_is_a_link_in_the_other_language(client):
    html = client.get("/").get_data(as_text=True)
    assert '<a href="?lang=fr" lang="fr" hreflang="fr">Français</a>' in html


def test_a_cookie_with_an_unknown_language_falls_back_to_accept_language(client):
    client.set_cookie("lang", "xx")
    assert '<html lang="fr">' in client.get("/", headers={"Accept-Language": "fr"}).get_data(as_text=True)


def site_msgids() -> list[str | tuple[str, str]]:
    ids = []
    for template in SITE_TEMPLATES:
        for _line, message, _comments, _context in extract_from_file("jinja2", ROOT / template):
            ids.append(message)
    return ids


def test_every_string_of_the_site_templates_has_a_french_translation():
    with (ROOT / "translations/fr/site.po").open("rb") as handle:
        catalogue = read_po(handle, locale="fr_CA")
    missing = [m for m in site_msgids() if not (catalogue.get(m) and all(catalogue.get(m).string))]
    assert missing == []


def test_french_translations_keep_every_placeholder():
    with (ROOT / "translations/fr/site.po").open("rb") as handle:
        catalogue = read_po(handle, locale="fr_CA")
    for message in catalogue:
        if not message.id:
            continue
        source = message.id if isinstance(message.id, str) else message.id[0]
        strings = message.string if isinstance(message.string, tuple) else (message.string,)
        for string in strings:
            assert set(re.findall(r"%\(\w+\)s|%\(\w+\)d", string)) == set(re.findall(r"%\(\w+\)s|%\(\w+\)d", source))


ENGLISH_WORDS = re.compile(
    r"\b(Schools?|Status|Open|Closed|Work-to-rule|Elementary|Secondary|withdrawn|Board|Buses|History|"
    r"Search|Find|Skip|Language|found|Announced|Takes|effect|Last|updated|What|Follow|Data|the|and|are|is|of)\b"
)


BOARD_NAMES = sorted((n for b in document.load(ROOT / "boards.yaml").status.boards for n in (b.name, b.name_fr) if n),
                     key=len, reverse=True)


def french_page_words(html: str) -> str:
    """The visible words of a French page, minus board names and text marked lang="en" (the board's own words)."""
    text = visible_text(re.sub(r'<(\w+)[^>]*\blang="en"[^>]*>.*?</\1>', " ", html, flags=re.S))
    for name in BOARD_NAMES:
        text = text.replace(name, " ")
    return text


@pytest.mark.parametrize("url", ["/", f"/boards/{RICH_BOARD}", "/boards/peel", "/boards/atlantis", "/?q=toronto"])
def test_a_french_page_has_no_english_left_except_board_names(client, job_action, url):
    client.set_cookie("lang", "fr")
    words = french_page_words(client.get(url).get_data(as_text=True))
    assert ENGLISH_WORDS.findall(words) == [], words


def test_a_french_board_page_uses_ontario_french_school_vocabulary(client, job_action):
    client.set_cookie("lang", "fr")
    text = visible_text(client.get(f"/boards/{RICH_BOARD}").get_data(as_text=True))
    assert "Grève du zèle" in text
    assert "Palier secondaire" in text
    assert "Services retirés" in text
    assert "Conseil scolaire public de langue anglaise" in text


def test_a_french_board_shows_its_french_name(client):
    client.set_cookie("lang", "en")
    english = visible_text(client.get("/boards/cepeo").get_data(as_text=True))
    assert "Conseil des écoles publiques de l'Est de l'Ontario" in english
