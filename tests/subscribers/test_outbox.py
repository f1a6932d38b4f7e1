"""Without SMTP or Twilio accounts (`make run` on a fresh machine), confirmations land in the local outbox,
which /dev/outbox shows in debug mode only."""

from __future__ import annotations

import re

import pytest

from tests.subscribers.conftest import EMAIL, csrf_token


@pytest.fixture
def local_app(env):
    from notifier import create_app

    def make(debug: bool):
        app = create_app({**env, "NOTIFIER_DEBUG": "1" if debug else "0", "TESTING": True})
        made.append(app)
        return app

    made = []
    yield make
    for app in made:
        app.extensions["notifier"].engine.dispose()


def test_without_providers_the_confirmation_is_shown_at_dev_outbox(local_app):
    client = local_app(debug=True).test_client()
    token = csrf_token(client.get("/subscribe").get_data(as_text=True))
    client.post("/subscribe", data={"csrf_token": token, "board-0": "tdsb", "panel-0": "elementary", "email": EMAIL,
                                    "language": "en", "email_frequency": "daily"})
    page = client.get("/dev/outbox").get_data(as_text=True)
    assert EMAIL in page
    assert re.search(r'href="https://status.example.org/confirm/[^"]+"', page)


def test_dev_outbox_does_not_exist_outside_debug_mode(local_app):
    assert local_app(debug=False).test_client().get("/dev/outbox").status_code == 404
