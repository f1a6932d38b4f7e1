"""A subscription's pages speak its language: the links in its messages name it, and a browser that keeps no
cookies (or never visited the site) still reads the pages behind them in that language."""

from __future__ import annotations

import re

from tests.conftest import BASE_URL
from tests.subscribers.conftest import EMAIL, csrf_token, sign_up


def _emailed_link(inbox, prefix: str) -> str:
    text = inbox.messages()[-1].get_body(("plain",)).get_content()
    return re.search(re.escape(BASE_URL + prefix) + r"\S+", text).group(0).removeprefix(BASE_URL)


def test_a_french_confirmation_link_names_french(client, smtp_server):
    sign_up(client, email=EMAIL, language="fr")
    assert _emailed_link(smtp_server[0], "/confirm/").endswith("?lang=fr")


def test_a_french_confirmation_link_opens_in_french_in_a_browser_with_english_settings(app, smtp_server):
    sign_up(app.test_client(), email=EMAIL, language="fr")
    browser = app.test_client()
    page = browser.get(_emailed_link(smtp_server[0], "/confirm/"), headers={"Accept-Language": "en"},
                       follow_redirects=True)
    assert '<html lang="fr">' in page.get_data(as_text=True)


def test_the_confirmation_page_speaks_the_sign_ups_language_without_cookies(app, smtp_server):
    sign_up(app.test_client(), email=EMAIL, language="fr")
    path = _emailed_link(smtp_server[0], "/confirm/").split("?")[0]
    cookieless = app.test_client(use_cookies=False)
    assert '<html lang="fr">' in cookieless.get(path, headers={"Accept-Language": "en"}).get_data(as_text=True)


def test_confirming_answers_in_the_sign_ups_language(app, smtp_server):
    sign_up(app.test_client(), email=EMAIL, language="fr")
    path = _emailed_link(smtp_server[0], "/confirm/").split("?")[0]
    browser = app.test_client()  # a session for the form's token, but no language chosen on the site
    page = browser.get(path, headers={"Accept-Language": "en"}).get_data(as_text=True)
    confirmed = browser.post(path, data={"csrf_token": csrf_token(page)}, headers={"Accept-Language": "en"})
    assert confirmed.status_code == 200 and '<html lang="fr">' in confirmed.get_data(as_text=True)


def test_the_visitors_own_choice_wins_over_the_sign_ups_language(app, smtp_server):
    sign_up(app.test_client(), email=EMAIL, language="fr")
    browser = app.test_client()
    browser.get("/?lang=en")
    path = _emailed_link(smtp_server[0], "/confirm/").split("?")[0]
    assert '<html lang="en">' in browser.get(path).get_data(as_text=True)
