"""The real `twilio` SDK pointed at the fake, the way notifier/channels/sms.py points it at TWILIO_API_BASE_URL:
the SDK's own HTTP client with every request's scheme and host rewritten (the SDK hard-codes api.twilio.com).

    client = sdk_client(fake.url, ACCOUNT_SID, AUTH_TOKEN, timeout=5)
    client.messages.create(to="+16135550123", from_="+16135550100", body="…")
"""

from __future__ import annotations

import urllib.parse

from twilio.http.http_client import TwilioHttpClient
from twilio.rest import Client


class RebasedHttpClient(TwilioHttpClient):
    """The SDK's HTTP client, sending every request to `base_url`'s scheme and host instead."""

    def __init__(self, base_url: str, **kwargs) -> None:
        super().__init__(**kwargs)
        self._base = urllib.parse.urlsplit(base_url)

    def request(self, method, url, *args, **kwargs):
        parts = urllib.parse.urlsplit(url)
        url = urllib.parse.urlunsplit((self._base.scheme, self._base.netloc, parts.path, parts.query, ""))
        return super().request(method, url, *args, **kwargs)


def sdk_client(base_url: str, account_sid: str, auth_token: str, timeout: float = 5.0) -> Client:
    """A `twilio.rest.Client` talking to `base_url`, with a timeout, ignoring TWILIO_EDGE/TWILIO_REGION."""
    return Client(account_sid, auth_token, http_client=RebasedHttpClient(base_url, timeout=timeout), environment={})
