"""Pages and JSON are rendered once per change of boards.yaml or of the history, and answer conditional requests."""

from __future__ import annotations

import json
from contextlib import contextmanager

import pytest
from flask import template_rendered

from tests.web.conftest import visible_text


@contextmanager
def counting_renders(app):
    rendered: list[str] = []

    def record(sender, template, context, **extra):
        rendered.append(template.name)

    template_rendered.connect(record, app)
    try:
        yield rendered
    finally:
        template_rendered.disconnect(record, app)


@pytest.mark.parametrize("url", ["/", "/boards/tdsb", "/boards/tdsb/feed.atom", "/?q=york"])
def test_a_page_is_rendered_once_for_many_requests(app, client, url):
    with counting_renders(app) as rendered:
        for _ in range(3):
            assert client.get(url).status_code == 200
    assert len(rendered) == 1


def test_json_is_built_once_for_many_requests(app, client):
    pages = app.extensions["notifier"].pages
    client.get("/api/boards")
    before = pages.renders
    for _ in range(3):
        client.get("/api/boards")
    assert pages.renders == before


def test_each_language_is_rendered_once(app, client):
    with counting_renders(app) as rendered:
        for language in ["en", "fr", "en", "fr"]:
            client.get("/", headers={"Accept-Language": language})
    assert len(rendered) == 2


def test_an_edit_of_boards_yaml_renders_the_page_again_once(app, client, boards):
    client.get("/boards/tdsb")
    boards.update("tdsb", status="closed")
    with counting_renders(app) as rendered:
        first = client.get("/boards/tdsb")
        client.get("/boards/tdsb")
    assert len(rendered) == 1
    assert "Schools are closed to students." in visible_text(first.get_data(as_text=True))


def test_json_follows_an_edit_of_boards_yaml(client, boards):
    client.get("/api/boards/tdsb")
    boards.update("tdsb", status="closed")
    assert client.get("/api/boards/tdsb").get_json()["board"]["status"] == "closed"


def test_a_recorded_change_renders_the_page_again(app, client, runner, boards):
    runner.invoke("tick")
    boards.update("tdsb", status="closed")
    client.get("/boards/tdsb")  # renders the new status, before the clock recorded the change
    runner.invoke("tick")
    with counting_renders(app) as rendered:
        html = client.get("/boards/tdsb").get_data(as_text=True)
    assert len(rendered) == 1
    assert "Board status: Open → Closed" in visible_text(html)


def test_a_status_announced_ahead_is_shown_as_current_once_its_time_passes(app, client, boards):
    import time_machine

    boards.update("tdsb", upcoming=[{"from": "2030-01-06T00:01", "status": "closed"}])
    assert "Announced ahead" in visible_text(client.get("/boards/tdsb").get_data(as_text=True))
    with time_machine.travel("2030-01-06 06:00 -0500"):
        text = visible_text(client.get("/boards/tdsb").get_data(as_text=True))
    assert "Announced ahead" not in text and "In effect since: Sunday, January 6, 2030, 12:01 a.m." in text
    assert "Schools are closed to students." in text


def test_a_matching_etag_gets_304_without_a_body(client):
    first = client.get("/boards/tdsb")
    again = client.get("/boards/tdsb", headers={"If-None-Match": first.headers["ETag"]})
    assert again.status_code == 304 and again.data == b""
    assert again.headers["ETag"] == first.headers["ETag"]


def test_a_later_if_modified_since_gets_304(client):
    first = client.get("/api/boards")
    again = client.get("/api/boards", headers={"If-Modified-Since": first.headers["Last-Modified"]})
    assert again.status_code == 304


def test_an_old_etag_gets_the_new_page_after_an_edit(client, boards):
    etag = client.get("/boards/tdsb").headers["ETag"]
    boards.update("tdsb", status="closed")
    response = client.get("/boards/tdsb", headers={"If-None-Match": etag})
    assert response.status_code == 200 and response.headers["ETag"] != etag


def test_an_etag_that_does_not_match_wins_over_if_modified_since(client):
    first = client.get("/")
    headers = {"If-None-Match": '"other"', "If-Modified-Since": first.headers["Last-Modified"]}
    response = client.get("/", headers=headers)
    assert response.status_code == 200


def test_languages_have_different_etags(client):
    english = client.get("/", headers={"Accept-Language": "en"}).headers["ETag"]
    french = client.get("/", headers={"Accept-Language": "fr"}).headers["ETag"]
    assert english != french


@pytest.mark.parametrize("url", ["/", "/boards/tdsb", "/boards/tdsb/feed.atom", "/api/boards", "/api/boards/tdsb"])
def test_responses_let_a_cdn_cache_them_briefly_and_serve_stale_on_error(client, url):
    cache_control = client.get(url).headers["Cache-Control"]
    assert "public" in cache_control and "max-age=30" in cache_control and "stale-if-error" in cache_control


@pytest.mark.parametrize("url", ["/", "/boards/tdsb", "/boards/tdsb/feed.atom"])
def test_pages_in_a_negotiated_language_vary_on_it(client, url):
    vary = client.get(url).headers["Vary"]
    assert "Accept-Language" in vary and "Cookie" in vary


def test_json_does_not_vary_by_language(client):
    assert "Vary" not in client.get("/api/boards").headers


def test_the_json_version_is_the_files_fingerprint(client, boards_file):
    from notifier.status.document import version_of

    body = json.loads(client.get("/api/boards").data)
    assert body["version"] == version_of(boards_file.read_bytes())


def test_odd_searches_never_push_the_board_pages_out_of_the_cache(app, client):
    app.extensions["notifier"].pages.max_pages = 3
    for word in ["a", "b", "c", "d", "e"]:
        assert client.get(f"/?q={word}").status_code == 200
    with counting_renders(app) as rendered:
        for _ in range(2):
            client.get("/boards/tdsb")
            client.get("/")
    assert len(rendered) == 2  # each rendered once, then served from the cache
