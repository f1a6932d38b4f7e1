"""In headless Chromium: the pages pass axe-core (WCAG 2.0 A and AA) in both languages and fit a phone's width."""

from __future__ import annotations

import pytest

from tests.web.conftest import RICH_BOARD

pytestmark = pytest.mark.browser

PAGES = ["/", f"/boards/{RICH_BOARD}", "/boards/peel", "/?q=toronto", "/boards/atlantis"]


def visit(page, url: str, language: str) -> None:
    page.context.add_cookies([{"name": "lang", "value": language, "url": url}])
    page.goto(url)


@pytest.mark.parametrize("language", ["en", "fr"])
@pytest.mark.parametrize("path", ["/", f"/boards/{RICH_BOARD}"])
def test_the_index_and_a_board_in_job_action_pass_axe(page, live_server, axe, job_action, runner, path, language):
    runner.invoke("tick")
    job_action.update(RICH_BOARD, status="closed")
    runner.invoke("tick")  # so the board page also shows its history of changes
    visit(page, live_server + path, language)
    assert page.locator("html").get_attribute("lang") == language
    axe(page)


@pytest.mark.parametrize("language", ["en", "fr"])
def test_the_announced_ahead_search_and_not_found_pages_pass_axe(page, live_server, axe, job_action, language):
    for path in ["/boards/peel", "/?q=toronto", "/boards/atlantis"]:
        visit(page, live_server + path, language)
        assert page.locator("html").get_attribute("lang") == language
        axe(page)


def test_no_page_scrolls_sideways_on_a_phone(page, live_server, job_action):
    for path in PAGES:
        visit(page, live_server + path, "fr")  # French runs longer than English
        overflow = page.evaluate("document.documentElement.scrollWidth - document.documentElement.clientWidth")
        assert overflow <= 0, path
        assert page.viewport_size["width"] == 390


def test_the_skip_link_is_the_first_thing_a_keyboard_reaches_and_leads_to_the_content(page, live_server):
    page.goto(live_server + "/")
    page.keyboard.press("Tab")
    assert page.evaluate("document.activeElement.className") == "skip"
    assert page.locator(".skip").is_visible()
    page.keyboard.press("Enter")
    assert page.url.endswith("#main")


def test_the_filter_works_with_javascript_off(browser, live_server):
    context = browser.new_context(java_script_enabled=False, viewport={"width": 390, "height": 844})
    try:
        page = context.new_page()
        page.goto(live_server + "/")
        page.fill("#q", "Waterloo")
        page.click("form[role=search] button")
        names = page.locator("a.board-name").all_inner_texts()
        assert sorted(names) == ["Waterloo Catholic District School Board", "Waterloo Region District School Board"]
    finally:
        context.close()


def test_the_language_toggle_is_remembered_across_pages(page, live_server):
    page.goto(live_server + "/")
    page.click("text=Français")
    assert page.locator("html").get_attribute("lang") == "fr"
    page.goto(live_server + f"/boards/{RICH_BOARD}")
    assert page.locator("html").get_attribute("lang") == "fr"


@pytest.mark.parametrize("language", ["en", "fr"])
def test_on_a_phone_get_alerts_is_reachable_from_the_top_of_the_home_page(page, live_server, job_action, language):
    visit(page, live_server + "/", language)
    link = page.locator(".get-alerts a")
    box = link.bounding_box()
    assert box is not None and box["y"] + box["height"] <= page.viewport_size["height"]  # no scrolling needed
    link.click()
    assert page.url.endswith("#alerts")
    board = page.locator("#start-board").bounding_box()
    assert 0 <= board["y"] and board["y"] + board["height"] <= page.viewport_size["height"]


def test_every_page_names_the_sites_icon(page, live_server):
    page.goto(live_server + "/")
    icons = page.locator("link[rel=icon]")
    assert icons.count() == 2
    for href in [icons.nth(i).get_attribute("href") for i in range(2)]:
        assert page.request.get(live_server + href).ok
