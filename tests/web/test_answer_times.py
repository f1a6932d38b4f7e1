"""Pages that send something answer at once and alike, whatever the address: the message is queued in the outbox
and sent by a sending process (or a background thread), never while the visitor waits. Here the mail server is
silent (it takes the connection and never answers), so any page that talked to it inline would hang."""

from __future__ import annotations

import re
import socket
import time

import pytest
from flask.testing import FlaskClient
from sqlalchemy import select

from notifier.delivery.outbox import OutboxRow
from tests.conftest import free_port
from tests.staff.conftest import TDSB_STAFF, make_staff

QUICK = 1.0  # seconds: the silent server would hold an inline send for its 30 s timeout


@pytest.fixture
def silent_app(env):
    """The app sending email through a server that accepts connections and never says a word."""
    from notifier import create_app

    listener = socket.socket()
    port = free_port()
    listener.bind(("127.0.0.1", port))
    listener.listen(16)
    app = create_app({**env, "NOTIFIER_SMTP_URL": f"smtp://127.0.0.1:{port}", "TESTING": True})
    yield app
    listener.close()  # the waiting connections are reset: the background sends give up at once
    app.extensions["notifier"].engine.dispose()


def _post(app, path: str, **data):
    """POST the form at `path` as a browser would (without waiting for background sends); (seconds, response)."""
    client = FlaskClient(app, app.response_class, use_cookies=True)
    page = client.get(path.split("?")[0] if path != "/staff/signin" else path).get_data(as_text=True)
    token = re.search(r'name="csrf_token" value="([^"]+)"', page).group(1)
    started = time.monotonic()
    response = client.post(path, data={"csrf_token": token, **data})
    return time.monotonic() - started, response


def _queued_to(sessions, address: str) -> int:
    with sessions() as session:
        return len([r for r in session.scalars(select(OutboxRow)) if address in (r.payload or "")])


def test_the_lost_link_form_answers_at_once_and_alike_for_a_subscribed_address(silent_app, subscribe, sessions):
    _, email, _ = subscribe(phone=None)
    known_time, known = _post(silent_app, "/manage", address=email)
    unknown_time, unknown = _post(silent_app, "/manage", address="nobody@example.org")
    assert known_time < QUICK and unknown_time < QUICK
    assert (known.status_code, known.get_data()) == (unknown.status_code, unknown.get_data())
    assert _queued_to(sessions, email) == 1


def test_signing_up_answers_at_once_with_the_confirmation_queued(silent_app, subscribe, sessions):
    _, active, _ = subscribe(phone=None)
    form = {"board-0": "tdsb", "panel-0": "elementary", "language": "en", "email_frequency": "immediate",
            "sms_frequency": "immediate"}
    active_time, for_active = _post(silent_app, "/subscribe", email=active, **form)
    fresh_time, for_fresh = _post(silent_app, "/subscribe", email="fresh@example.org", **form)
    assert active_time < QUICK and fresh_time < QUICK
    assert for_active.status_code == for_fresh.status_code == 200
    assert _queued_to(sessions, "fresh@example.org") == 1 and _queued_to(sessions, active) == 1


def test_staff_sign_in_answers_at_once_and_alike_with_the_link_queued(silent_app, sessions):
    make_staff(sessions)
    staff_time, for_staff = _post(silent_app, "/staff/signin", email=TDSB_STAFF)
    other_time, for_other = _post(silent_app, "/staff/signin", email="someone@tdsb.example.org")
    assert staff_time < QUICK and other_time < QUICK
    assert (for_staff.status_code, for_staff.get_data()) == (for_other.status_code, for_other.get_data())
    assert _queued_to(sessions, TDSB_STAFF) == 1
