"""Fixtures for parents' subscriptions: an app that sends through the real SMTP server and the Twilio-shaped
server, and helpers that act like a parent (fill the form, open the emailed link, text the service's number)."""

from __future__ import annotations

import html
import re
import secrets
from datetime import UTC, datetime, timedelta

import pytest
from sqlalchemy import select
from twilio.request_validator import RequestValidator

from tests.conftest import AUTH_TOKEN, BASE_URL, SERVICE_NUMBER

PHONE = "+16135550123"
OTHER_PHONE = "+16135550145"
EMAIL = "parent@example.org"


@pytest.fixture
def app(provider_env):
    """The app with SMTP and Twilio configured (loopback servers); boards.yaml is re-read at once."""
    from notifier import create_app

    app = create_app({**provider_env, "TESTING": True})
    app.extensions["notifier"].boards.check_every = 0
    yield app
    app.extensions["notifier"].engine.dispose()


@pytest.fixture
def make_app(provider_env):
    """Build another app with some settings changed, e.g. make_app(NOTIFIER_SIGNUP_LIMIT_PER_IP=2)."""
    from notifier import create_app

    built = []

    def make(**overrides):
        app = create_app({**provider_env, **{k: str(v) for k, v in overrides.items()}, "TESTING": True})
        built.append(app)
        return app

    yield make
    for app in built:
        app.extensions["notifier"].engine.dispose()


@pytest.fixture
def later():
    """Jump the clock forward: `later(days=8)` (time keeps ticking from there)."""
    import time_machine

    travels = []

    def travel(days: float = 0, hours: float = 0) -> None:
        travels.append(time_machine.travel(datetime.now(UTC) + timedelta(days=days, hours=hours), tick=True))
        travels[-1].start()

    yield travel
    for trip in reversed(travels):
        trip.stop()


def csrf_token(page: str) -> str:
    return re.search(r'name="csrf_token" value="([^"]+)"', page).group(1)


def text_of(response) -> str:
    """The visible words of a page, for assertions on what a parent reads."""
    body = re.sub(r"<(style|script)\b.*?</\1>", " ", response.get_data(as_text=True), flags=re.S)
    return " ".join(html.unescape(re.sub(r"<[^>]+>", " ", body)).split())


def sign_up(client, email: str = "", phone: str = "", board: str = "tdsb", panels=("elementary",),
            language: str = "en", headers: dict | None = None, **extra):
    """Fill and send the sign-up form the way a browser would (token from the rendered form); `headers` go with
    the post (e.g. X-Forwarded-For)."""
    token = csrf_token(client.get("/subscribe").get_data(as_text=True))
    data = {"csrf_token": token, "board-0": board, "panel-0": list(panels), "email": email, "phone": phone,
            "language": language, "email_frequency": "immediate", "sms_frequency": "immediate", **extra}
    return client.post("/subscribe", data=data, headers=headers or {})


def link_in(message, prefix: str) -> str:
    """The path of the first link starting with BASE_URL + prefix in an email's plain text, without its `?lang=`
    (which only picks the page's language: a browser is redirected to this path, with the language in a cookie)."""
    text = message.get_body(("plain",)).get_content()
    url = re.search(re.escape(BASE_URL + prefix) + r"[^\s?]+", text).group(0)
    return url.removeprefix(BASE_URL)


def text_in(client, sender: str, body: str, signature: str | None = None, sid: str | None = None):
    """An inbound text from `sender`, signed as Twilio signs it (or with the given signature); each text has a
    MessageSid of its own unless `sid` is given (the same sid again is the same message, delivered twice).

    Replies go out through the outbox (so they count against the sender's rate), not as TwiML: the texts the
    Twilio-shaped server received for `sender` during the request are kept on the response as `replies`.
    """
    params = {"MessageSid": "SM" + secrets.token_hex(16) if sid is None else sid, "AccountSid": "AC" + "7" * 32,
              "From": sender, "To": SERVICE_NUMBER, "Body": body, "NumMedia": "0"}
    if signature is None:
        signature = RequestValidator(AUTH_TOKEN).compute_signature(BASE_URL + "/twilio/inbound", params)
    before = _texts_to(client, sender)
    response = client.post("/twilio/inbound", data=params, headers={"X-Twilio-Signature": signature})
    response.replies = _texts_to(client, sender)[len(before):]
    return response


def _texts_to(client, number: str) -> list[str]:
    """Bodies of the texts the Twilio-shaped server accepted for `number`, oldest first (read through its API)."""
    from twilio.rest import Client

    from notifier.delivery.channels.sms import _RebasedHttpClient

    base = client.application.extensions["notifier"].settings.twilio_api_base_url
    sdk = Client("AC" + "7" * 32, AUTH_TOKEN, http_client=_RebasedHttpClient(base, timeout=5), environment={})
    return [m.body for m in reversed(sdk.messages.list(to=number))]


def reply_of(response) -> str:
    """The text of the reply ("" when we answer nothing); the TwiML answer itself is always empty."""
    assert "<Message>" not in response.get_data(as_text=True)
    return "\n".join(response.replies)


def contacts(sessions):
    from notifier.subscribers.models import Contact

    with sessions() as session:
        return [(c.channel, c.address, c.status) for c in session.scalars(select(Contact).order_by(Contact.id))]


def everything(sessions) -> dict:
    """Every subscription row, to prove a refused request stored nothing."""
    from notifier.subscribers.models import Consent, Contact, Follow, Subscriber

    with sessions() as session:
        return {t.__name__: len(session.scalars(select(t)).all())
                for t in (Subscriber, Contact, Follow, Consent)}
