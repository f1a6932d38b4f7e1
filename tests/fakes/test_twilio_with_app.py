"""The fake's webhooks pass the app's own signature check: an inbound text and status callbacks addressed to the
public base URL, routed to the app on loopback."""

from __future__ import annotations

import threading

import pytest

from notifier.delivery import express
from tests.conftest import ACCOUNT_SID, AUTH_TOKEN, BASE_URL, SERVICE_NUMBER
from tests.fakes.twilio_sdk import sdk_client


@pytest.fixture
def app_url(provider_env, twilio_server):
    """The app (with the fake's credentials) served on loopback; webhooks for BASE_URL are routed to it."""
    from werkzeug.serving import make_server

    from notifier import create_app

    app = create_app({**provider_env, "TESTING": True})
    server = make_server("127.0.0.1", 0, app, threaded=True)
    threading.Thread(target=server.serve_forever, daemon=True).start()
    url = f"http://127.0.0.1:{server.server_port}"
    twilio_server.route(BASE_URL, url)
    yield url
    server.shutdown()
    app.extensions["notifier"].engine.dispose()


def test_an_inbound_text_is_accepted_and_answered_by_the_app(app_url, twilio_server):
    reply = twilio_server.text(f"{BASE_URL}/twilio/inbound", "+16135550123", "HELP")
    assert reply.status == 200  # the answer is a text of its own, sent through the outbox under the shared rate
    express.settle()  # sent by a background thread of the app's process (no sending process runs here)
    assert [m["to"] for m in twilio_server.messages] == ["+16135550123"]
    assert twilio_server.replay().status == 200


def test_an_inbound_text_signed_with_an_old_token_is_refused(app_url, twilio_server):
    twilio_server.rotate_token("another-token")
    assert twilio_server.text(f"{BASE_URL}/twilio/inbound", "+16135550123", "HELP").status == 403


def test_status_callbacks_are_accepted_by_the_app(app_url, twilio_server):
    client = sdk_client(twilio_server.url, ACCOUNT_SID, AUTH_TOKEN)
    client.messages.create(to="+16135550123", from_=SERVICE_NUMBER, body="Closed",
                           status_callback=f"{BASE_URL}/twilio/status")
    twilio_server.settle()
    assert [(c.form["MessageStatus"], c.status) for c in twilio_server.callbacks] == [("sent", 204),
                                                                                      ("delivered", 204)]
