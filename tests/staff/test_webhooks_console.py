"""The console's webhook page: a board's staff list, add (the secret shown once) and remove its webhooks; staff of
another board get nothing; the page is valid HTML and accessible, in English and French."""

from __future__ import annotations

import re

import pytest
from sqlalchemy import select

from notifier.subscribers.webhooks import WebhookEndpoint
from tests.conftest import add_webhook
from tests.staff.conftest import ADMIN, PEEL_STAFF, Console, csrf_token, make_staff

PAGE = "/staff/boards/tdsb/webhooks"
URL = "http://127.0.0.1:9/hooks/status"


def add(console: Console, path: str = PAGE, **fields):
    token = csrf_token(console.client.get(path).get_data(as_text=True))
    data = {"csrf_token": token, "action": "add", "url": URL, "format": "json", "language": "en", **fields}
    return console.client.post(path, data=data)


def test_staff_add_a_webhook_and_see_its_secret_once(console, sessions):
    response = add(console, format="slack", panels=["secondary"], owner="it@daycare.example")
    page = response.get_data(as_text=True)
    assert response.status_code == 200 and response.headers["Cache-Control"] == "no-store"
    with sessions() as session:
        endpoint = session.scalars(select(WebhookEndpoint)).one()
    assert endpoint.secret in page
    assert (endpoint.board_id, endpoint.format, endpoint.panels) == ("tdsb", "slack", "secondary")
    assert endpoint.added_by == "comms@tdsb.example.org"
    assert "We emailed it@daycare.example a link to confirm that they look after this webhook" in page
    again = console.client.get(PAGE).get_data(as_text=True)
    assert endpoint.secret not in again and "whsec_" not in again
    assert endpoint.public_id in again and "/hooks/status" not in again  # the URL's path is masked


def test_staff_remove_a_webhook(console, sessions):
    endpoint = add_webhook(sessions, URL)
    token = csrf_token(console.client.get(PAGE).get_data(as_text=True))
    response = console.client.post(PAGE, data={"csrf_token": token, "action": "remove",
                                               "endpoint": endpoint.public_id})
    assert response.status_code == 200
    with sessions() as session:
        assert session.scalars(select(WebhookEndpoint)).all() == []


def test_a_bad_url_is_refused_with_a_message(console, sessions):
    response = add(console, url="ftp://example.org/x")
    assert response.status_code == 400 and 'role="alert"' in response.get_data(as_text=True)
    with sessions() as session:
        assert session.scalars(select(WebhookEndpoint)).all() == []


def test_adding_needs_a_csrf_token(console, sessions):
    response = console.client.post(PAGE, data={"action": "add", "url": URL})
    assert response.status_code == 400
    with sessions() as session:
        assert session.scalars(select(WebhookEndpoint)).all() == []


def test_staff_of_another_board_cannot_see_add_or_remove_its_webhooks(console, sessions, settings):
    endpoint = add_webhook(sessions, URL, board_id="peel")
    assert console.client.get("/staff/boards/peel/webhooks").status_code == 403
    token = csrf_token(console.client.get(PAGE).get_data(as_text=True))
    assert console.client.post("/staff/boards/peel/webhooks", data={
        "csrf_token": token, "action": "add", "url": URL}).status_code == 403
    assert console.client.post("/staff/boards/peel/webhooks", data={
        "csrf_token": token, "action": "remove", "endpoint": endpoint.public_id}).status_code == 403
    # Nor through their own board's page, naming the other board's endpoint.
    response = console.client.post(PAGE, data={"csrf_token": token, "action": "remove",
                                               "endpoint": endpoint.public_id})
    assert response.status_code == 400
    with sessions() as session:
        assert session.scalars(select(WebhookEndpoint.public_id)).all() == [endpoint.public_id]
    assert endpoint.public_id not in console.client.get(PAGE).get_data(as_text=True)


def test_signed_out_visitors_are_sent_to_sign_in(client):
    response = client.get(PAGE)
    assert response.status_code == 302 and "/staff/signin" in response.headers["Location"]


def test_an_administrator_may_manage_any_boards_webhooks(client, settings, sessions):
    make_staff(sessions, ADMIN, [], admin=True)
    admin = Console(client, settings)
    admin.sign_in(ADMIN)
    assert add(admin, "/staff/boards/peel/webhooks").status_code == 200
    make_staff(sessions, PEEL_STAFF, ["peel"])


def test_the_french_page_speaks_french(console):
    console.client.set_cookie("lang", "fr")
    page = console.client.get(PAGE).get_data(as_text=True)
    assert "Ajouter un webhook" in page and "Add a webhook" not in page


@pytest.mark.parametrize("language", ["en", "fr"])
def test_the_webhook_pages_and_the_owners_email_pass_the_w3c_nu_html_checker(console, sessions, settings, vnu,
                                                                             language):
    from notifier.notices.webhooks import disabled_notice

    console.client.set_cookie("lang", language)
    documents = {"empty": console.client.get(PAGE).get_data(as_text=True),
                 "added": add(console, owner="it@daycare.example").get_data(as_text=True),
                 "refused": add(console, url="nothing").get_data(as_text=True),
                 "listed": console.client.get(PAGE).get_data(as_text=True)}
    endpoint = add_webhook(sessions, URL, language=language)
    endpoint.disabled_reason = "127.0.0.1:9 answered HTTP 410"
    documents["owner email"] = disabled_notice(settings, endpoint).html
    assert re.search(r"whsec_\S+", documents["added"])
    assert {name: errors for name, errors in vnu.errors(documents).items() if errors} == {}


@pytest.mark.browser
@pytest.mark.parametrize("language", ["en", "fr"])
def test_the_webhook_page_passes_axe(page, live_server, settings, sessions, axe, language):
    from tests.staff.conftest import TDSB_STAFF, latest_signin_link

    make_staff(sessions, TDSB_STAFF, ["tdsb"])
    add_webhook(sessions, URL)
    page.goto(f"{live_server}/staff/signin?lang={language}")
    page.locator("#email").fill(TDSB_STAFF)
    page.locator("form button[type=submit]").last.click()
    page.goto(latest_signin_link(settings.outbox_dir, TDSB_STAFF).replace(settings.base_url, live_server))
    page.locator("main form button[type=submit]").first.click()
    page.goto(f"{live_server}{PAGE}")
    assert page.locator("html").get_attribute("lang") == language
    axe(page)
    page.locator("#url").fill("http://127.0.0.1:9/x")
    page.locator("#owner").fill("it@daycare.example")
    page.locator("fieldset .actions button").click()
    assert page.locator("code").inner_text().startswith("whsec_")
    axe(page)


def test_one_webhook_too_many_is_refused_with_a_message_in_french(console, sessions):
    for _ in range(5):
        add_webhook(sessions, URL)
    console.client.set_cookie("lang", "fr")
    response = add(console)
    page = response.get_data(as_text=True)
    assert response.status_code == 400
    assert "ce conseil scolaire a déjà 5 webhooks, le maximum permis" in page
    with sessions() as session:
        assert len(session.scalars(select(WebhookEndpoint)).all()) == 5
