"""SMS through Twilio's Python SDK, pointed at Twilio or (TWILIO_API_BASE_URL) at any Twilio-compatible endpoint.

The client is built once, here, with an explicit timeout (the SDK's default waits forever) and `environment={}`
so stray TWILIO_EDGE/TWILIO_REGION variables cannot rewrite the host. Twilio's error codes decide what happens:
21610 (the person texted STOP), 21211 (invalid number), 21614 (not a mobile number) and 30004/30006 are permanent;
429, 5xx, timeouts and connection errors are temporary.
"""

from __future__ import annotations

import urllib.parse
from dataclasses import dataclass
from datetime import datetime

import requests
from twilio.base.exceptions import TwilioException, TwilioRestException
from twilio.http.http_client import TwilioHttpClient
from twilio.rest import Client

from notifier.delivery.channels.base import Channel, Message, Receipt
from notifier.errors import PermanentDeliveryError, TemporaryDeliveryError

OPTED_OUT = 21610
INVALID_NUMBER = 21211
NOT_MOBILE = 21614
PERMANENT_CODES = {OPTED_OUT, INVALID_NUMBER, NOT_MOBILE, 21612, 21408, 30004, 30005, 30006}


class _RebasedHttpClient(TwilioHttpClient):
    """The SDK's own HTTP client, sending every request to another scheme and host (tests, staging)."""

    def __init__(self, base_url: str, **kwargs) -> None:
        super().__init__(**kwargs)
        self._base = urllib.parse.urlsplit(base_url)

    def request(self, method, url, *args, **kwargs):
        parts = urllib.parse.urlsplit(url)
        prefix = self._base.path.rstrip("/")
        url = urllib.parse.urlunsplit(
            (self._base.scheme, self._base.netloc, prefix + parts.path, parts.query, parts.fragment)
        )
        return super().request(method, url, *args, **kwargs)


@dataclass(frozen=True)
class SentSms:
    """A message Twilio knows it sent (for reconciling after a crash)."""

    sid: str
    to: str
    body: str
    status: str
    date_created: datetime | None


class TwilioChannel(Channel):
    """Sends texts with the `twilio` SDK from one number or a Messaging Service."""

    name = "sms"

    def __init__(
        self,
        account_sid: str,
        auth_token: str,
        from_number: str | None = None,
        messaging_service_sid: str | None = None,
        api_base_url: str | None = None,
        timeout: float = 10.0,
        status_callback: str | None = None,
        validity_period: int | None = None,
    ) -> None:
        if not (from_number or messaging_service_sid):
            raise ValueError("a sender is needed: from_number or messaging_service_sid")
        http_client = (
            _RebasedHttpClient(api_base_url, timeout=timeout) if api_base_url else TwilioHttpClient(timeout=timeout)
        )
        self.client = Client(account_sid, auth_token, http_client=http_client, environment={})
        self.from_number = from_number
        self.messaging_service_sid = messaging_service_sid
        self.status_callback = status_callback if status_callback and "localhost" not in status_callback else None
        self.validity_period = validity_period

    def _send(self, message: Message) -> Receipt:
        kwargs: dict = {"to": message.to, "body": message.text}
        if self.messaging_service_sid:
            kwargs["messaging_service_sid"] = self.messaging_service_sid
        else:
            kwargs["from_"] = self.from_number
        if self.status_callback:
            kwargs["status_callback"] = self.status_callback
        if self.validity_period:
            kwargs["validity_period"] = self.validity_period
        try:
            sent = self.client.messages.create(**kwargs)
        except TwilioRestException as error:
            raise _classify(error) from None
        except (requests.RequestException, TwilioException, OSError) as error:
            raise TemporaryDeliveryError(f"Twilio unreachable: {type(error).__name__}: {error}") from None
        return Receipt(provider_id=sent.sid, status=sent.status or "queued")

    def find_sent(self, to: str, since: datetime, body: str | None = None) -> list[SentSms]:
        """Messages Twilio sent to `to` since `since` (optionally with exactly `body`): to reconcile before a resend."""
        try:
            found = self.client.messages.list(to=to, date_sent_after=since, limit=50)
        except TwilioRestException as error:
            raise _classify(error) from None
        except (requests.RequestException, TwilioException, OSError) as error:
            raise TemporaryDeliveryError(f"Twilio unreachable: {type(error).__name__}: {error}") from None
        return [
            SentSms(m.sid, m.to, m.body, str(m.status), m.date_created)
            for m in found
            if body is None or m.body == body
        ]


def _classify(error: TwilioRestException) -> Exception:
    code = error.code
    text = f"Twilio {error.status}/{code}: {error.msg}"
    if code in PERMANENT_CODES:
        return PermanentDeliveryError(text, code=code)
    if error.status == 429 or error.status >= 500 or code == 20429:
        return TemporaryDeliveryError(text)
    if 400 <= error.status < 500:
        return PermanentDeliveryError(text, code=code)
    return TemporaryDeliveryError(text)
