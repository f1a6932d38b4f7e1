"""The status on other sites: a widget page for an iframe and an SVG badge, in English and French, with no script."""

from __future__ import annotations

import xml.etree.ElementTree as ET

import pytest

from tests.web.conftest import RICH_BOARD, visible_text

SVG = "{http://www.w3.org/2000/svg}"


def test_the_widget_shows_the_status_in_words(client, job_action):
    response = client.get(f"/boards/{RICH_BOARD}/embed?lang=en")
    assert response.status_code == 200 and response.mimetype == "text/html"
    text = visible_text(response.get_data(as_text=True))
    assert "Elementary: Work-to-rule" in text and "Secondary: Closed" in text
    assert "Details and alerts" in text


def test_the_widget_may_be_framed_by_any_site_and_runs_no_script(client):
    response = client.get("/boards/tdsb/embed?lang=en")
    policy = response.headers["Content-Security-Policy"]
    assert "frame-ancestors *" in policy and "default-src 'none'" in policy
    assert "<script" not in response.get_data(as_text=True)


def test_the_widget_answers_in_french_when_its_address_asks(client):
    response = client.get("/boards/tdsb/embed?lang=fr")
    html = response.get_data(as_text=True)
    assert response.status_code == 200 and '<html lang="fr">' in html
    assert "Ouvert" in visible_text(html)


def test_the_widget_is_cached(client):
    first = client.get("/boards/tdsb/embed?lang=en")
    assert first.headers["Cache-Control"].startswith("public")
    again = client.get("/boards/tdsb/embed?lang=en", headers={"If-None-Match": first.headers["ETag"]})
    assert again.status_code == 304


def test_the_widget_of_an_unknown_board_is_not_found(client):
    assert client.get("/boards/atlantis/embed").status_code == 404


def badge(client, path: str) -> ET.Element:
    response = client.get(path)
    assert response.status_code == 200
    assert response.headers["Content-Type"] == "image/svg+xml; charset=utf-8"
    return ET.fromstring(response.data)  # noqa: S314 - our own app's output, parsed to prove it is well-formed


def test_the_badge_is_an_image_named_by_its_words(client, job_action):
    svg = badge(client, f"/boards/{RICH_BOARD}/badge.svg?lang=en")
    assert svg.get("role") == "img"
    expected = "Toronto District School Board: Elementary: Work-to-rule · Secondary: Closed"
    assert svg.get("aria-label") == expected
    assert svg.findtext(f"{SVG}title") == expected


def test_the_badge_speaks_french(client, boards):
    boards.update("tdsb", status="closed")
    svg = badge(client, "/boards/tdsb/badge.svg?lang=fr")
    assert svg.get("aria-label") == "Toronto District School Board\u00a0: Fermé"


def test_the_board_page_offers_the_iframe_and_badge_to_copy(client):
    html = client.get("/boards/tdsb").get_data(as_text=True)
    assert "&lt;iframe src=&#34;http" in html or "&lt;iframe src=\"http" in html
    assert "/boards/tdsb/embed?lang=en" in html and "/boards/tdsb/badge.svg?lang=en" in html


@pytest.mark.browser
@pytest.mark.parametrize("language", ["en", "fr"])
def test_the_widget_passes_axe(page, live_server, axe, job_action, language):
    page.goto(f"{live_server}/boards/{RICH_BOARD}/embed?lang={language}")
    assert page.locator("html").get_attribute("lang") == language
    axe(page)


def test_the_widget_is_valid_html_in_both_languages(client, job_action, vnu):
    pages = {language: client.get(f"/boards/{RICH_BOARD}/embed?lang={language}").get_data(as_text=True)
             for language in ("en", "fr")}
    pages["board"] = client.get(f"/boards/{RICH_BOARD}").get_data(as_text=True)
    assert vnu.errors(pages) == {name: [] for name in pages}


@pytest.mark.browser
@pytest.mark.parametrize("language", ["en", "fr"])
def test_the_badge_passes_axe_alone_and_inside_a_page(page, live_server, axe, job_action, language):
    badge_url = f"{live_server}/boards/{RICH_BOARD}/badge.svg?lang={language}"
    page.goto(badge_url)
    assert page.locator("svg").get_attribute("role") == "img"
    axe(page)
    words = page.locator("svg").get_attribute("aria-label")
    page.goto("about:blank")
    page.set_content(f'<!doctype html><html lang="{language}"><head><title>School</title></head><body><main>'
                     f'<h1>School</h1><img src="{badge_url}" alt="{words}"></main></body></html>')
    axe(page)
