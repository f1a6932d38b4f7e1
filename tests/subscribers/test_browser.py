"""The whole journey in headless Chromium on a phone-sized screen, in English and in French: subscribe from a
board page, confirm from the email (read from the real SMTP server), manage, unsubscribe; axe-core on every page."""

from __future__ import annotations

import re

import pytest
from sqlalchemy import select

from notifier import links
from notifier.delivery import express
from notifier.subscribers.models import Contact, Follow
from tests.subscribers.conftest import EMAIL, link_in

pytestmark = pytest.mark.browser

WORDS = {
    "en": {"board": "tdsb", "start": "Sign up for alerts", "form": "Get school status alerts",
           "manage_heading": "Your school status alerts", "email": "Email address (optional)",
           "subscribe": "Subscribe", "sent": "Check your messages", "confirm": "Confirm",
           "confirm_heading": "Confirm your alerts", "on": "Your alerts are on",
           "manage": "Change your settings or stop alerts", "secondary": "Secondary (Grades 9 to 12)",
           "save": "Save changes", "saved": "Your changes are saved.", "unsubscribe": "Unsubscribe from alerts",
           "gone": "You are unsubscribed"},
    "fr": {"board": "cepeo", "start": "M’abonner aux alertes", "form": "Recevoir les alertes sur le statut des écoles",
           "manage_heading": "Vos alertes sur le statut des écoles", "email": "Adresse courriel (facultatif)",
           "subscribe": "M’abonner", "sent": "Vérifiez vos messages", "confirm": "Confirmer",
           "confirm_heading": "Confirmez vos alertes",
           "on": "Vos alertes sont activées", "manage": "Modifier vos choix ou arrêter les alertes",
           "secondary": "Secondaire (de la 9e à la 12e année)", "save": "Enregistrer les changements",
           "saved": "Vos changements sont enregistrés.", "unsubscribe": "Me désabonner des alertes",
           "gone": "Vous êtes désabonné"},
}


def _check(page, axe, language: str, heading: str) -> None:
    assert page.locator("html").get_attribute("lang") == language
    assert heading in page.locator("h1").inner_text()
    axe(page)


@pytest.mark.parametrize("language", ["en", "fr"])
def test_subscribe_confirm_manage_unsubscribe(page, live_server, axe, smtp_server, sessions, settings, language):
    words = WORDS[language]
    page.context.add_cookies([{"name": "lang", "value": language, "url": live_server}])
    page.goto(f"{live_server}/boards/{words['board']}")
    axe(page)

    page.get_by_role("button", name=words["start"]).click()
    _check(page, axe, language, words["form"])
    page.get_by_label(words["email"]).fill(EMAIL)
    page.get_by_role("button", name=words["subscribe"], exact=True).click()
    _check(page, axe, language, words["sent"])

    express.settle()  # the page answered at once; the confirmation leaves in the background
    [message] = smtp_server[0].messages()
    assert message["Content-Language"] == language
    page.goto(live_server + link_in(message, "/confirm/"))
    _check(page, axe, language, words["confirm_heading"])
    page.get_by_role("button", name=words["confirm"], exact=True).click()
    _check(page, axe, language, words["on"])

    manage = page.get_by_role("link", name=words["manage"]).get_attribute("href")
    page.goto(live_server + manage.removeprefix(settings.base_url))
    _check(page, axe, language, words["manage_heading"])
    page.get_by_role("group", name=re.compile(".")).first.get_by_label(words["secondary"]).check()
    page.get_by_role("button", name=words["save"]).click()
    assert words["saved"] in page.locator("main").inner_text()
    axe(page)
    with sessions() as session:
        assert sorted(f.panel for f in session.scalars(select(Follow))) == ["elementary", "secondary"]
        contact_id = session.scalars(select(Contact.id)).one()

    page.goto(live_server + links.unsubscribe_url(settings, contact_id).removeprefix(settings.base_url))
    _check(page, axe, language, words["unsubscribe"])
    page.get_by_role("button", name=words["unsubscribe"]).click()
    _check(page, axe, language, words["gone"])
    with sessions() as session:
        assert session.scalars(select(Contact.status)).one() == "opted_out"


@pytest.mark.parametrize("language", ["en", "fr"])
def test_the_form_with_errors_and_the_lost_link_page_pass_axe(page, live_server, axe, language):
    page.context.add_cookies([{"name": "lang", "value": language, "url": live_server}])
    page.goto(f"{live_server}/subscribe")
    page.locator("#email").fill("parent@")
    page.locator("#phone").fill("+1 876 555 0123")
    page.locator("form.form-box button[type=submit]").click()
    assert page.locator("#email").get_attribute("aria-invalid") == "true"
    assert page.locator(".error").count() >= 3
    axe(page)
    page.goto(f"{live_server}/manage")
    axe(page)


@pytest.fixture
def debug_server(env):
    """The app in debug mode with no provider (as `make run`), served on loopback: texts land in /dev/outbox."""
    import threading

    from werkzeug.serving import make_server

    from notifier import create_app
    from tests.conftest import free_port

    app = create_app({**env, "NOTIFIER_DEBUG": "1", "TESTING": True})
    server = make_server("127.0.0.1", free_port(), app, threaded=True)
    threading.Thread(target=server.serve_forever, daemon=True).start()
    yield f"http://127.0.0.1:{server.server_port}"
    server.shutdown()
    app.extensions["notifier"].engine.dispose()


@pytest.mark.parametrize("language", ["en", "fr"])
def test_a_text_sign_up_can_be_tried_locally_by_answering_in_the_outbox(page, debug_server, axe, sessions, language):
    from tests.subscribers.conftest import PHONE

    page.context.add_cookies([{"name": "lang", "value": language, "url": debug_server}])
    page.goto(f"{debug_server}/subscribe?board=tdsb")
    page.locator("#phone").fill(PHONE)
    page.locator("form.form-box button[type=submit]").click()
    assert "spam" not in page.locator("main").inner_text().lower()
    axe(page)
    express.settle()  # the page answered at once; the confirmation leaves in the background
    page.get_by_role("link", name="/dev/outbox").click()
    assert page.locator("h1").inner_text() == "Outbox"
    axe(page)
    page.locator("form.reply").first.get_by_role("button", name="OUI", exact=True).click()
    assert page.locator("#exchange-heading").inner_text() == "Your reply"
    axe(page)
    with sessions() as session:
        assert session.scalars(select(Contact.status)).one() == "active"
    page.locator("form.reply").first.get_by_label("Your reply").fill("AIDE")
    page.locator("form.reply").first.get_by_label("Your reply").press("Enter")  # Enter sends the words typed
    assert "AIDE" in page.locator("[role=status]").inner_text()
