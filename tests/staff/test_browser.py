"""The whole journey in headless Chromium on a phone-sized screen: sign in → edit → preview → publish, EN and FR,
with axe-core finding no WCAG 2.0 A/AA violation on any page."""

from __future__ import annotations

from pathlib import Path

import pytest

from notifier.status import document
from tests.staff.conftest import TDSB_STAFF, latest_signin_link, make_staff, make_subscriber

pytestmark = pytest.mark.browser

WORDS = {
    "en": {"send": "Email me a sign-in link", "sign_in": "Sign in", "preview": "Preview what parents will receive",
           "publish": "Publish and notify parents", "published": "Published", "status": "Board status",
           "message": "In English", "test": "Send me a test email"},
    "fr": {"send": "M’envoyer un lien de connexion", "sign_in": "Se connecter",
           "preview": "Voir ce que les parents recevront", "publish": "Publier et aviser les parents",
           "published": "Publié", "status": "Statut du conseil", "message": "En français",
           "test": "M’envoyer un courriel d’essai"},
}


def sign_in(page, live_server, settings, axe, language: str) -> None:
    words = WORDS[language]
    page.goto(f"{live_server}/staff/signin?lang={language}")
    axe(page)
    page.get_by_label("Work email address" if language == "en" else "Adresse courriel professionnelle").fill(TDSB_STAFF)
    page.get_by_role("button", name=words["send"]).click()
    axe(page)
    link = latest_signin_link(settings.outbox_dir, TDSB_STAFF).replace(settings.base_url, live_server)
    page.goto(link)
    axe(page)
    page.get_by_role("button", name=words["sign_in"], exact=True).click()
    axe(page)


@pytest.mark.parametrize("language", ["en", "fr"])
def test_sign_in_edit_preview_and_publish_on_a_phone(page, app, live_server, settings, sessions, axe, language):
    from dataclasses import replace
    from decimal import Decimal

    words = WORDS[language]
    make_staff(sessions, TDSB_STAFF, ["tdsb"])
    # The audience table at its widest: texts in segments, and their cost.
    app.extensions["notifier"].settings = replace(app.extensions["notifier"].settings,
                                                  sms_price=(Decimal("0.0083"), "USD"))
    for n in range(3):
        make_subscriber(sessions, "tdsb", f"parent{n}@example.org", language=language, phone=f"+1613555012{n}")
    sign_in(page, live_server, settings, axe, language)
    page.get_by_role("link", name="Toronto District School Board").click()
    axe(page)
    page.get_by_label(words["status"]).select_option("closed")
    page.get_by_label(words["message"], exact=True).fill(
        "Schools are closed today." if language == "en" else "Les écoles sont fermées aujourd’hui.")
    page.get_by_role("button", name=words["preview"]).click()
    axe(page)
    assert page.evaluate("document.documentElement.scrollWidth") <= 390  # the email preview wraps on a phone
    assert page.get_by_text("Coût\u00a0: environ" if language == "fr" else "Cost: about").is_visible()
    page.get_by_role("button", name=words["test"]).click()
    axe(page)
    page.get_by_role("button", name=words["publish"]).click()
    assert page.get_by_role("heading", name=words["published"]).is_visible()
    axe(page)
    assert document.load(settings.boards_file).status.by_id()["tdsb"].status == "closed"
    page.get_by_role("link", name="Qui a modifié ce conseil, et quand" if language == "fr"
                     else "Who changed this board, and when").click()
    axe(page)


def test_a_field_error_page_passes_axe(page, live_server, settings, sessions, axe):
    make_staff(sessions, TDSB_STAFF, ["tdsb"])
    sign_in(page, live_server, settings, axe, "en")
    page.goto(f"{live_server}/staff/boards/tdsb")
    page.get_by_label("Link to the board's announcement, in English").fill("not a link")
    page.get_by_role("button", name=WORDS["en"]["preview"]).click()
    assert page.get_by_text("Enter a full web address").first.is_visible()
    axe(page)


def test_the_edit_form_fits_a_390_pixel_wide_phone(page, live_server, settings, sessions, axe, tmp_path: Path):
    make_staff(sessions, TDSB_STAFF, ["tdsb"])
    sign_in(page, live_server, settings, axe, "fr")
    page.goto(f"{live_server}/staff/boards/tdsb")
    shot = tmp_path / "edit-form-390.png"
    page.screenshot(path=str(shot), full_page=True)
    assert shot.stat().st_size > 10_000
    assert page.evaluate("document.documentElement.scrollWidth") <= 390
    for name in ("status", "effective", "message_en", "w0_category", "notify"):
        box = page.locator(f"#{name}").bounding_box()
        assert box["x"] >= 0 and box["x"] + box["width"] <= 390 and box["height"] >= 24, name


@pytest.mark.parametrize("language", ["en", "fr"])
def test_the_accounts_page_passes_axe(page, live_server, settings, sessions, axe, language):
    from tests.staff.conftest import ADMIN

    make_staff(sessions, ADMIN, [], admin=True)
    page.goto(f"{live_server}/staff/signin?lang={language}")
    page.locator("#email").fill(ADMIN)
    page.get_by_role("button", name=WORDS[language]["send"]).click()
    page.goto(latest_signin_link(settings.outbox_dir, ADMIN).replace(settings.base_url, live_server))
    page.get_by_role("button", name=WORDS[language]["sign_in"], exact=True).click()
    for path in ("/staff/accounts", "/staff/"):
        page.goto(f"{live_server}{path}")
        assert page.locator("html").get_attribute("lang") == language
        axe(page)


@pytest.mark.parametrize("language", ["en", "fr"])
def test_the_sending_progress_page_is_a_table_with_headers_and_passes_axe(page, live_server, settings, sessions, axe,
                                                                          first_cycle,
                                                                          language):
    from notifier.delivery.drain import drain
    from notifier.notices import compose
    from tests.staff.conftest import make_subscriber

    make_staff(sessions, TDSB_STAFF, ["tdsb"])
    make_subscriber(sessions, "tdsb", "parent@example.org", phone="+16135550123")
    sign_in(page, live_server, settings, axe, language)
    page.goto(f"{live_server}/staff/boards/tdsb")
    page.get_by_label(WORDS[language]["status"]).select_option("closed")
    page.get_by_role("button", name=WORDS[language]["preview"]).click()
    page.get_by_role("button", name=WORDS[language]["publish"]).click()
    drain(sessions, settings, compose.MessageBuilder)  # all sent: the page no longer reloads itself under axe
    page.get_by_role("link", name="Suivre l’envoi" if language == "fr" else "Follow the sending").click()
    assert page.locator("html").get_attribute("lang") == language
    assert page.locator("thead th[scope=col]").count() == 6 and page.locator("tbody th[scope=row]").count() == 2
    axe(page)


@pytest.mark.parametrize("language", ["en", "fr"])
def test_calling_off_an_announced_strike_day_on_a_phone(page, live_server, settings, sessions, boards, axe,
                                                        language):
    from datetime import timedelta

    from notifier.db import utcnow
    from notifier.formatting import TORONTO

    day = (utcnow().astimezone(TORONTO) + timedelta(days=2)).replace(hour=0, minute=1, second=0, microsecond=0)
    boards.update("tdsb", upcoming=[{"from": day.isoformat(), "until": (day + timedelta(days=1)).isoformat(),
                                     "status": "closed", "panels": ["secondary"]}])
    make_staff(sessions, TDSB_STAFF, ["tdsb"])
    sign_in(page, live_server, settings, axe, language)
    page.goto(f"{live_server}/staff/boards/tdsb")
    axe(page)
    call_off = "Annuler" if language == "fr" else "Call off"
    page.get_by_role("button", name=call_off, exact=False).first.click()
    axe(page)
    assert page.evaluate("document.documentElement.scrollWidth") <= 390
    page.get_by_role("button", name="Annuler cette période" if language == "fr" else "Call off this period").click()
    assert page.get_by_role("heading", name=WORDS[language]["published"]).is_visible()
    axe(page)
    assert document.load(settings.boards_file).status.by_id()["tdsb"].upcoming == ()


# Each word of the report's column and row headers that the browser split over two lines, and the on-screen size of
# each chart label (its font size times the SVG's scale).
BROKEN_WORDS = """() => {
  const broken = [];
  for (const cell of document.querySelectorAll("table th")) {
    const walker = document.createTreeWalker(cell, NodeFilter.SHOW_TEXT);
    for (let node = walker.nextNode(); node; node = walker.nextNode()) {
      for (const match of node.data.matchAll(/\\S+/g)) {
        const range = document.createRange();
        range.setStart(node, match.index);
        range.setEnd(node, match.index + match[0].length);
        const lines = new Set([...range.getClientRects()].filter(r => r.width > 0).map(r => Math.round(r.top)));
        if (lines.size > 1) broken.push(match[0]);
      }
    }
  }
  return broken;
}"""
LABEL_SIZES = """() => [...document.querySelectorAll("svg.chart text")].map(
  t => [t.textContent, parseFloat(getComputedStyle(t).fontSize) * t.getScreenCTM().a])"""


def test_the_french_publish_report_reads_on_a_390_pixel_phone(page, live_server, settings, sessions, axe,
                                                            first_cycle):
    from notifier.db import utcnow
    from notifier.delivery.drain import drain
    from notifier.notices import compose, planning
    from tests.staff.conftest import make_subscriber

    make_staff(sessions, TDSB_STAFF, ["tdsb"])
    make_subscriber(sessions, "tdsb", "parent@example.org", phone="+16135550123")
    sign_in(page, live_server, settings, axe, "fr")
    page.goto(f"{live_server}/staff/boards/tdsb")
    page.get_by_label(WORDS["fr"]["status"]).select_option("closed")
    page.get_by_role("button", name=WORDS["fr"]["preview"]).click()
    page.get_by_role("button", name=WORDS["fr"]["publish"]).click()
    planning.plan(sessions, settings, utcnow())  # what the clock, woken by the publish, does next
    drain(sessions, settings, compose.MessageBuilder)
    page.goto(f"{live_server}/staff/boards/tdsb/publishes?lang=fr")
    with page.expect_navigation(wait_until="load"):  # its stylesheets too: measured before them, all is wrong
        page.locator("table.publishes tbody a").first.click()
    assert page.locator("svg.chart").count() == 2
    assert page.evaluate(BROKEN_WORDS) == []
    small = [(text, round(size, 1)) for text, size in page.evaluate(LABEL_SIZES) if size < 12]
    assert small == [], small
    wide = page.evaluate("""() => [...document.querySelectorAll('table, th, td, svg')].filter(
      e => e.getBoundingClientRect().right > 390).map(e => e.outerHTML.slice(0, 80))""")
    assert page.evaluate("document.documentElement.scrollWidth") <= 390, wide
    axe(page)
