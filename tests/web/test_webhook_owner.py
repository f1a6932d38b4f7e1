"""/webhooks/owner/<token>: a webhook's owner confirms their address with the emailed link; opening it confirms
nothing (mail scanners follow links), the button does; a link for another address or a changed link does not."""

from __future__ import annotations

import re

import pytest
from sqlalchemy import select

from notifier import links
from notifier.subscribers.webhooks import WebhookEndpoint
from tests.conftest import add_webhook
from tests.web.conftest import visible_text

URL = "http://127.0.0.1:9/hooks/status"


def _confirmed(sessions) -> bool:
    with sessions() as session:
        return session.scalars(select(WebhookEndpoint)).one().owner_confirmed_at is not None


def _path(settings, endpoint, address: str = "it@daycare.example") -> str:
    """The link's path, as the owner's email gives it."""
    return "/webhooks/owner/" + links.webhook_owner_url(settings, endpoint.public_id, address).rsplit("/", 1)[1]


def _csrf(html: str) -> str:
    return re.search(r'name="csrf_token" value="([^"]+)"', html).group(1)


def test_opening_the_link_shows_a_button_and_confirms_nothing(client, sessions, settings):
    endpoint = add_webhook(sessions, URL)
    page = client.get(_path(settings, endpoint))
    assert page.status_code == 200
    assert "Confirm that you look after this webhook" in visible_text(page.get_data(as_text=True))
    assert not _confirmed(sessions)


def test_pressing_confirm_records_the_owners_confirmation(client, sessions, settings):
    endpoint = add_webhook(sessions, URL)
    path = _path(settings, endpoint)
    token = _csrf(client.get(path).get_data(as_text=True))
    answer = client.post(path, data={"csrf_token": token})
    assert answer.status_code == 200
    assert "We will write to you if this webhook stops working" in visible_text(answer.get_data(as_text=True))
    assert _confirmed(sessions)


def test_a_link_made_for_another_address_confirms_nothing(client, sessions, settings):
    endpoint = add_webhook(sessions, URL)
    path = _path(settings, endpoint, "someone@else.example")
    assert client.get(path).status_code == 400
    token = _csrf(client.get(_path(settings, endpoint)).get_data(as_text=True))  # a form of this session
    assert client.post(path, data={"csrf_token": token}).status_code == 400
    assert not _confirmed(sessions)


def test_a_changed_link_does_not_work(client, sessions, settings):
    endpoint = add_webhook(sessions, URL)
    page = client.get(_path(settings, endpoint)[:-3] + "abc")
    assert page.status_code == 400 and "This link does not work" in visible_text(page.get_data(as_text=True))


def test_the_page_speaks_the_webhooks_language(client, sessions, settings):
    endpoint = add_webhook(sessions, URL, language="fr")
    text = visible_text(client.get(_path(settings, endpoint)).get_data(as_text=True))
    assert "Confirmez que vous êtes responsable de ce webhook" in text


@pytest.mark.parametrize("language", ["en", "fr"])
def test_the_owner_pages_and_email_pass_the_w3c_nu_html_checker(client, sessions, settings, vnu, language):
    from notifier.notices.webhooks import owner_confirmation

    endpoint = add_webhook(sessions, URL, language=language)
    path = _path(settings, endpoint)
    asked = client.get(path).get_data(as_text=True)
    documents = {"ask": asked, "done": client.post(path, data={"csrf_token": _csrf(asked)}).get_data(as_text=True),
                 "problem": client.get("/webhooks/owner/not-a-token").get_data(as_text=True),
                 "email": owner_confirmation(settings, endpoint).html}
    assert {name: errors for name, errors in vnu.errors(documents).items() if errors} == {}
