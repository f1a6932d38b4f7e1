"""In headless Chromium, with push on: the service worker registers at the site's root, the control appears, and
the page with it passes axe (EN and FR) and the W3C Nu HTML checker."""

from __future__ import annotations

import threading

import pytest

from tests.conftest import free_port

pytestmark = pytest.mark.browser


@pytest.fixture
def push_app(push_env):
    from notifier import create_app

    app = create_app({**push_env, "TESTING": True})
    yield app
    app.extensions["notifier"].engine.dispose()


@pytest.fixture
def push_site(push_app):
    from werkzeug.serving import make_server

    server = make_server("127.0.0.1", free_port(), push_app, threaded=True)
    threading.Thread(target=server.serve_forever, daemon=True).start()
    yield f"http://127.0.0.1:{server.server_port}"
    server.shutdown()


def visit(page, url: str, language: str = "en") -> None:
    page.context.add_cookies([{"name": "lang", "value": language, "url": url}])
    page.goto(url)


def test_the_service_worker_registers_with_the_whole_site_as_its_scope(page, push_site):
    visit(page, push_site + "/boards/tdsb")
    scope = page.evaluate("""async () => {
        const registration = await navigator.serviceWorker.register('/sw.js', {scope: '/'});
        await navigator.serviceWorker.ready;
        return [registration.scope, registration.active.scriptURL];
    }""")
    assert scope == [push_site + "/", push_site + "/sw.js"]


def test_the_control_appears_where_the_browser_has_push(page, push_site):
    visit(page, push_site + "/boards/tdsb")
    page.wait_for_selector("#push", state="visible")
    assert page.locator('[data-push="subscribe"]').is_visible()
    assert not page.locator('[data-push="ios"]').is_visible()


def test_the_manifest_parses_in_the_browser(page, push_site):
    visit(page, push_site + "/boards/tdsb")
    manifest = page.evaluate("""async () => {
        const link = document.querySelector('link[rel=manifest]');
        return (await fetch(link.href)).json();
    }""")
    assert manifest["display"] == "standalone"


@pytest.mark.parametrize("language", ["en", "fr"])
def test_the_board_page_with_the_control_passes_axe(page, push_site, axe, language):
    visit(page, push_site + "/boards/tdsb", language)
    page.wait_for_selector("#push", state="visible")
    assert page.locator("html").get_attribute("lang") == language
    axe(page)


def test_the_pages_with_the_control_pass_the_nu_checker(push_app, vnu, subscribe):
    from notifier import links

    client = push_app.test_client()
    settings = push_app.extensions["notifier"].settings
    manage = links.manage_url(settings, subscribe()[0]).removeprefix(settings.base_url)
    pages = {f"{path} {language}": client.get(f"{path}?lang={language}", follow_redirects=True).get_data(as_text=True)
             for language in ("en", "fr") for path in ("/boards/tdsb", manage)}
    assert all('id="push"' in html for html in pages.values())
    found = vnu.errors(pages)
    assert not any(found.values()), found
