"""Web Push over HTTP: the key, subscribing and unsubscribing with the page's token, the worker and the manifest."""

from __future__ import annotations

import re

import pytest
from sqlalchemy import select

from notifier.subscribers.models import Consent, Contact, Follow, Subscriber
from notifier.subscribers.push import PushSubscription

API = "/api/push/subscriptions"


@pytest.fixture
def push_app(push_env):
    from notifier import create_app

    app = create_app({**push_env, "TESTING": True})
    yield app
    app.extensions["notifier"].engine.dispose()


@pytest.fixture
def push_client(push_app):
    return push_app.test_client()


def token_of(client, path: str = "/boards/tdsb") -> str:
    page = client.get(path).get_data(as_text=True)
    return re.search(r'<meta name="csrf-token" content="([^"]+)"', page).group(1)


def post(client, body, token: str | None = None, method: str = "post"):
    headers = {"X-CSRFToken": token if token is not None else token_of(client)}
    return getattr(client, method)(API, json=body, headers=headers)


def body_for(browser, boards=None, language="fr") -> dict:
    return {"subscription": browser.subscription, "boards": boards or {"tdsb": ["elementary", "secondary"]},
            "language": language}


def test_the_key_is_the_uncompressed_p256_point_in_base64url_without_padding(push_client):
    from tests.fakes.push_service import unb64

    answer = push_client.get("/api/push/key")
    assert answer.status_code == 200
    key = answer.get_json()["public_key"]
    assert "=" not in key and len(unb64(key)) == 65 and unb64(key)[0] == 4


def test_without_a_key_there_is_no_key_and_no_control(client):
    assert client.get("/api/push/key").status_code == 404
    page = client.get("/boards/tdsb").get_data(as_text=True)
    assert 'id="push"' not in page and "push.js" not in page


def test_the_board_page_offers_the_control_hidden_until_the_script_finds_push(push_client):
    page = push_client.get("/boards/tdsb").get_data(as_text=True)
    assert re.search(r'<section class="push" id="push"[^>]*hidden', page)
    assert "Get alerts on this device" in page and "Add to Home Screen" in page
    assert '<link rel="manifest" href="/manifest.webmanifest">' in page


def test_a_new_subscription_is_stored_active_with_its_boards_language_and_consent(push_client, push_service, sessions):
    browser = push_service.browser()
    answer = post(push_client, body_for(browser, {"tdsb": ["secondary"]}))
    assert answer.status_code == 201
    with sessions() as session:
        (row,) = session.scalars(select(PushSubscription)).all()
        contact = session.get(Contact, row.contact_id)
        assert row.endpoint == browser.endpoint and row.p256dh == browser.p256dh
        assert contact.channel == "push" and contact.status == "active"
        assert browser.id not in contact.address  # the address is the endpoint's keyed hash
        assert contact.subscriber.language == "fr"
        assert [(f.board_id, f.panel) for f in contact.subscriber.follows] == [("tdsb", "secondary")]
        actions = [c.action for c in session.scalars(select(Consent).where(Consent.channel == "push"))]
        assert actions == ["given", "confirmed"]


def test_the_same_endpoint_again_replaces_boards_and_language_and_answers_200(push_client, push_service, sessions):
    browser = push_service.browser()
    assert post(push_client, body_for(browser)).status_code == 201
    again = post(push_client, body_for(browser, {"tcdsb": ["elementary"]}, language="en"))
    assert again.status_code == 200
    with sessions() as session:
        assert session.scalar(select(Subscriber.language)) == "en"
        assert [(f.board_id, f.panel) for f in session.scalars(select(Follow))] == [("tcdsb", "elementary")]
        assert len(session.scalars(select(PushSubscription)).all()) == 1


@pytest.mark.parametrize(("change", "field"), [
    (lambda b: b.pop("subscription"), "subscription"),
    (lambda b: b["subscription"].update(endpoint="https://evil.example/push/1"), "subscription.endpoint"),
    (lambda b: b["subscription"].update(endpoint="http://169.254.169.254/latest"), "subscription.endpoint"),
    (lambda b: b["subscription"]["keys"].update(p256dh="AAAA"), "subscription.keys.p256dh"),
    (lambda b: b["subscription"]["keys"].update(auth="c2hvcnQ"), "subscription.keys.auth"),
    (lambda b: b.update(boards={"nosuchboard": ["elementary"]}), "boards.nosuchboard"),
    (lambda b: b.update(boards={"tdsb": ["kindergarten"]}), "boards.tdsb"),
    (lambda b: b.update(boards={}), "boards"),
    (lambda b: b.update(language="de"), "language"),
])
def test_a_bad_field_is_refused_with_400_naming_it_and_nothing_is_stored(push_client, push_service, sessions,
                                                                          change, field):
    body = body_for(push_service.browser())
    change(body)
    answer = post(push_client, body)
    assert answer.status_code == 400
    assert answer.get_json()["error"].startswith(f"{field}:")
    with sessions() as session:
        assert session.scalars(select(PushSubscription)).all() == []
        assert session.scalars(select(Contact)).all() == []


def test_a_body_that_is_not_json_is_refused(push_client):
    answer = push_client.post(API, data="nope", headers={"X-CSRFToken": token_of(push_client)})
    assert answer.status_code == 400 and "error" in answer.get_json()


@pytest.mark.parametrize("token", ["", "forged"])
def test_without_a_valid_token_nothing_is_stored(push_client, push_service, sessions, token):
    answer = post(push_client, body_for(push_service.browser()), token=token)
    assert answer.status_code in (400, 403)
    with sessions() as session:
        assert session.scalars(select(PushSubscription)).all() == []


def test_the_token_of_a_cached_page_works_for_another_visitor(push_app, push_service):
    first, second = push_app.test_client(), push_app.test_client()
    token = token_of(first)
    assert post(second, body_for(push_service.browser()), token=token).status_code == 201


def test_delete_forgets_the_subscription_and_opts_the_contact_out(push_client, push_service, sessions):
    browser = push_service.browser()
    post(push_client, body_for(browser))
    answer = post(push_client, {"endpoint": browser.endpoint}, method="delete")
    assert answer.status_code == 204
    with sessions() as session:
        assert session.scalars(select(PushSubscription)).all() == []
        assert session.scalar(select(Contact.status)) == "opted_out"
        assert session.scalars(select(Consent.action).order_by(Consent.id)).all()[-1] == "withdrawn"


def test_subscribing_again_after_delete_answers_201_and_reactivates(push_client, push_service, sessions):
    browser = push_service.browser()
    post(push_client, body_for(browser))
    post(push_client, {"endpoint": browser.endpoint}, method="delete")
    assert post(push_client, body_for(browser)).status_code == 201
    with sessions() as session:
        assert session.scalars(select(Contact.status)).all() == ["active"]


def test_the_service_worker_is_served_from_the_root_as_javascript(push_client):
    answer = push_client.get("/sw.js")
    assert answer.status_code == 200 and answer.mimetype == "text/javascript"
    text = answer.get_data(as_text=True)
    assert "showNotification" in text and "notificationclick" in text


def test_the_manifest_names_the_site_and_its_icons(push_client):
    answer = push_client.get("/manifest.webmanifest")
    assert answer.mimetype == "application/manifest+json"
    manifest = answer.get_json()
    assert manifest["display"] == "standalone" and manifest["start_url"] and manifest["short_name"]
    assert {icon["sizes"] for icon in manifest["icons"]} == {"192x192", "512x512"}
    for icon in manifest["icons"]:
        png = push_client.get(icon["src"]).get_data()
        size = int(icon["sizes"].split("x")[0])
        assert png[:8] == b"\x89PNG\r\n\x1a\n" and int.from_bytes(png[16:20], "big") == size


def test_healthz_says_push_is_on(push_client, client):
    assert push_client.get("/healthz").get_json()["channels"]["push"] == "on"
    assert client.get("/healthz").get_json()["channels"]["push"] == "off"


def test_status_says_whether_push_is_on(runner):
    assert "push: off (no NOTIFIER_VAPID_PRIVATE_KEY)" in runner.invoke("status").output


def test_the_manage_page_offers_the_control_for_the_familys_boards(push_app, push_client, subscribe):
    import html
    import json

    from notifier import links

    subscriber_id, _, _ = subscribe(follows=[("tdsb", "secondary"), ("tcdsb", "elementary")])
    settings = push_app.extensions["notifier"].settings
    page = push_client.get(links.manage_url(settings, subscriber_id).removeprefix(settings.base_url)).get_data(
        as_text=True)
    found = re.search(r'<section class="push" id="push"[^>]*data-boards="([^"]+)"', page)
    assert json.loads(html.unescape(found.group(1))) == {"tdsb": ["secondary"], "tcdsb": ["elementary"]}
    assert "the boards you follow" in page


def test_the_board_page_control_follows_both_panels_of_its_board(push_client):
    import html
    import json

    page = push_client.get("/boards/tdsb").get_data(as_text=True)
    found = re.search(r'data-boards="([^"]+)"', page)
    assert json.loads(html.unescape(found.group(1))) == {"tdsb": ["elementary", "secondary"]}


def test_consent_records_the_page_and_appears_in_the_export_without_the_endpoint(push_client, push_service,
                                                                                  sessions):
    from notifier.subscribers.consent import export_rows

    browser = push_service.browser()
    push_client.post(API, json=body_for(browser), headers={
        "X-CSRFToken": token_of(push_client), "Referer": "http://localhost/boards/tdsb?lang=fr"})
    with sessions() as session:
        rows = [r for r in export_rows(session) if r["channel"] == "push"]
    assert [r["action"] for r in rows] == ["given", "confirmed"]
    assert all(r["source"].startswith("/boards/tdsb ") and r["method"] == "web-push" for r in rows)
    assert all(browser.id not in str(r) and "127.0.0.1:" not in r["address_masked"] for r in rows)
    assert rows[0]["language"] == "fr" and len(rows[0]["address_hash"]) == 64


def test_the_push_workers_address_is_the_same_on_a_page_asked_for_in_french(push_app):
    page = push_app.test_client(use_cookies=False).get("/boards/tdsb?lang=fr").get_data(as_text=True)
    assert 'data-worker-url="/sw.js"' in page and 'data-key-url="/api/push/key"' in page


def test_the_english_manifest_starts_at_the_plain_home_page_however_it_was_asked_for(push_client):
    for path in ("/manifest.webmanifest", "/manifest.webmanifest?lang=en"):
        assert push_client.get(path).get_json()["start_url"] == "/"
