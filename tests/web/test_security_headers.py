"""Headers that tell a browser what the site may do: no script but our own files, never inside another site's frame,
no MIME sniffing, no link token leaking to another site through Referer, and HTTPS only once a browser has seen it."""

from __future__ import annotations

import re

import pytest

from tests.conftest import BASE_URL

PAGES = ["/", "/subscribe", "/manage/lost", "/staff/signin", "/tdsb", "/static/site.css", "/api/v1/boards"]


def _policy(response) -> dict[str, str]:
    header = response.headers["Content-Security-Policy"]
    return {d.split()[0]: " ".join(d.split()[1:]) for d in header.split(";") if d.strip()}


@pytest.mark.parametrize("path", PAGES)
def test_every_answer_allows_only_our_own_scripts_and_styles(client, path):
    policy = _policy(client.get(path))
    assert policy["default-src"] == "'self'"
    assert "unsafe-inline" not in " ".join(policy.values()) and "unsafe-eval" not in " ".join(policy.values())
    assert policy["object-src"] == "'none'" and policy["base-uri"] == "'none'"


@pytest.mark.parametrize("path", PAGES)
def test_no_page_can_be_framed_by_another_site(client, path):
    response = client.get(path)
    assert _policy(response)["frame-ancestors"] == "'none'"
    assert response.headers["X-Frame-Options"] == "DENY"


@pytest.mark.parametrize("path", PAGES)
def test_no_answer_is_sniffed_and_no_link_token_leaves_through_referer(client, path):
    response = client.get(path)
    assert response.headers["X-Content-Type-Options"] == "nosniff"
    assert response.headers["Referrer-Policy"] in ("no-referrer", "same-origin")


def test_https_is_remembered_when_the_site_is_served_over_https(client):
    response = client.get("/", base_url=BASE_URL)
    assert BASE_URL.startswith("https://")
    assert "max-age=" in response.headers["Strict-Transport-Security"]


def test_no_https_promise_for_a_site_served_over_http(env):
    from notifier import create_app

    app = create_app({**env, "NOTIFIER_BASE_URL": "http://127.0.0.1:5000", "TESTING": True})
    try:
        response = app.test_client().get("/", base_url="https://127.0.0.1:5000")
        assert "Strict-Transport-Security" not in response.headers
    finally:
        app.extensions["notifier"].engine.dispose()


def test_a_view_marked_embeddable_may_be_framed_by_any_site(env):
    from notifier import create_app
    from notifier.web.security import embeddable

    app = create_app({**env, "TESTING": True})
    app.add_url_rule("/embed-test", "embed_test", embeddable(lambda: "board"))
    try:
        client = app.test_client()
        framed, normal = client.get("/embed-test"), client.get("/")
        assert _policy(framed)["frame-ancestors"] == "*" and "X-Frame-Options" not in framed.headers
        assert _policy(framed)["script-src"] == "'self'"
        assert _policy(normal)["frame-ancestors"] == "'none'"
    finally:
        app.extensions["notifier"].engine.dispose()


@pytest.mark.parametrize("path", ["/", "/subscribe", "/manage/lost", "/staff/signin", "/tdsb"])
def test_pages_carry_no_inline_script_style_or_event_handler(client, path):
    page = client.get(path).get_data(as_text=True)
    assert re.findall(r"<script(?![^>]*\bsrc=)[^>]*>", page) == []
    assert "<style" not in page and re.findall(r"\son[a-z]+\s*=", page) == []
    assert re.findall(r"\sstyle\s*=", page) == []
