"""SMS through Twilio's Python SDK, pointed at Twilio or (TWILIO_API_BASE_URL) at any Twilio-compatible endpoint.

The client is built once, here, with an explicit timeout (the SDK's default waits forever), `environment={}` so
stray TWILIO_EDGE/TWILIO_REGION variables cannot rewrite the host, and a logger of its own held at WARNING: the
SDK logs every request at INFO, with the account SID in the URL and the recipient's number in the parameters.
Twilio's answer says whose fault a failure is (see `notifier.errors` for the codes and `classify` below).
"""

from __future__ import annotations

import logging
import urllib.parse
from collections.abc import Iterator
from dataclasses import dataclass
from datetime import datetime
from typing import Any

import requests
from twilio.base.exceptions import TwilioException, TwilioRestException, TwilioServiceException
from twilio.http.http_client import TwilioHttpClient
from twilio.rest import Client
from urllib3.exceptions import NewConnectionError

from notifier.delivery.channels import segments
from notifier.delivery.channels.base import Channel, Message, Receipt
from notifier.errors import (
    AccountError,
    DeliveryError,
    MessageError,
    RecipientError,
    TemporaryDeliveryError,
    UncertainDeliveryError,
)

OPTED_OUT = 21610
INVALID_NUMBER = 21211
NOT_MOBILE = 21614
RECIPIENT_CODES = {OPTED_OUT, INVALID_NUMBER, NOT_MOBILE, 21612, 21408, 30004, 30005, 30006}
ACCOUNT_CODES = {20003, 20404, 10001, 30002, 21606, 21212, 21603, 21608, 21659, 21660,
                 21701, 21702, 21703, 21704, 21705}
MESSAGE_CODES = {21617, 21619, 30007}
PUSHBACK_CODES = {20429, 30001, 21611}

# The SDK's request log (URL with the account SID, To number, body) never reaches a handler below WARNING.
SDK_LOGGER = logging.getLogger("notifier.delivery.channels.sms.sdk")
SDK_LOGGER.setLevel(logging.WARNING)


class _RebasedHttpClient(TwilioHttpClient):  # type: ignore[misc]  # twilio ships no types
    """The SDK's own HTTP client, sending every request to another scheme and host (tests, staging)."""

    def __init__(self, base_url: str, **kwargs: Any) -> None:
        super().__init__(**kwargs)
        self._base = urllib.parse.urlsplit(base_url)

    def request(self, method: str, url: str, *args: Any, **kwargs: Any) -> Any:
        parts = urllib.parse.urlsplit(url)
        prefix = self._base.path.rstrip("/")
        url = urllib.parse.urlunsplit(
            (self._base.scheme, self._base.netloc, prefix + parts.path, parts.query, parts.fragment)
        )
        return super().request(method, url, *args, **kwargs)


@dataclass(frozen=True)
class SentSms:
    """A message Twilio has (queued, sent or delivered), for reconciling after a crash."""

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
        options = {"timeout": timeout, "logger": SDK_LOGGER}
        http_client = _RebasedHttpClient(api_base_url, **options) if api_base_url else TwilioHttpClient(**options)
        self.client = Client(account_sid, auth_token, http_client=http_client, environment={})
        self.from_number = from_number
        self.messaging_service_sid = messaging_service_sid
        self.status_callback = status_callback if status_callback and "localhost" not in status_callback else None
        self.validity_period = validity_period

    def units(self, message: Message) -> int:
        """Segments, as Twilio counts the messages per second of a sender and its queue (GSM-7 160/153, UCS-2
        70/67)."""
        return max(1, segments.segments(message.text))

    def warm(self) -> None:
        self.client.messages  # noqa: B018 - the SDK imports its REST resources on first access

    def _send(self, message: Message) -> Receipt:
        kwargs: dict[str, Any] = {"to": message.to, "body": message.text}
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
        except (TwilioRestException, TwilioServiceException) as error:
            raise classify(error.status, error.code, _text(error)) from None
        except (requests.RequestException, TwilioException, OSError) as error:
            raise _transport(error) from None
        return Receipt(provider_id=sent.sid, status=sent.status or "queued")

    def find_sent(self, to: str, since: datetime, body: str | None = None) -> list[SentSms]:
        """Messages Twilio has for `to` created since `since` (optionally with exactly `body`), whatever their state.

        No `DateSent` filter: a text still waiting in Twilio's queue (a busy sender, a Messaging Service) has no
        send date yet. The list comes newest first; paging stops at the first message created before `since`.
        """
        try:
            return [m for m in self._since(to, since) if body is None or m.body == body]
        except (TwilioRestException, TwilioServiceException) as error:
            raise classify(error.status, error.code, _text(error)) from None
        except (requests.RequestException, TwilioException, OSError) as error:
            raise TemporaryDeliveryError(f"Twilio unreachable: {type(error).__name__}") from None

    def _since(self, to: str, since: datetime) -> Iterator[SentSms]:
        for m in self.client.messages.stream(to=to, page_size=50):
            if m.date_created is not None and m.date_created < since:
                return
            yield SentSms(m.sid, m.to, m.body, str(m.status), m.date_created)

    def check_account(self) -> None:
        """A cheap request proving the credentials and the account work (fetch the account); raises on failure."""
        try:
            self.client.api.v2010.accounts(self.client.account_sid).fetch()
        except (TwilioRestException, TwilioServiceException) as error:
            raise classify(error.status, error.code, _text(error)) from None
        except (requests.RequestException, TwilioException, OSError) as error:
            raise TemporaryDeliveryError(f"Twilio unreachable: {type(error).__name__}") from None


def classify(status: int, code: int | None, text: str) -> DeliveryError:
    """Whose fault a Twilio refusal is, from its HTTP status and Twilio code (see `notifier.errors`)."""
    described = f"Twilio {status}/{code}: {text}"
    if code in RECIPIENT_CODES:
        return RecipientError(described, code=code)
    if code in MESSAGE_CODES:
        return MessageError(described, code=code)
    if code in ACCOUNT_CODES or status in (401, 403):
        return AccountError(described, code=code)
    if status == 429 or code in PUSHBACK_CODES:
        return TemporaryDeliveryError(described, code=code, pushback=True)
    # 5xx, and 4xx codes we do not know: retried with backoff, never blamed on the recipient.
    return TemporaryDeliveryError(described, code=code)


def _text(error: TwilioRestException | TwilioServiceException) -> str:
    return str(getattr(error, "msg", None) or getattr(error, "detail", None) or getattr(error, "title", ""))[:300]


def _transport(error: Exception) -> DeliveryError:
    """A failure below HTTP: safe to retry only when the request surely never left (no connection was made)."""
    if isinstance(error, requests.ConnectTimeout):
        return TemporaryDeliveryError(f"Twilio unreachable: {type(error).__name__}")
    if isinstance(error, requests.ConnectionError) and _never_connected(error):
        return TemporaryDeliveryError(f"Twilio unreachable: {type(error).__name__}")
    return UncertainDeliveryError(f"Twilio may have the message: {type(error).__name__}")


def _never_connected(error: requests.ConnectionError) -> bool:
    """True when the connection itself failed (refused, no route), so no byte of the request was sent."""
    for arg in error.args:
        reason = getattr(arg, "reason", arg)
        if isinstance(reason, NewConnectionError | ConnectionRefusedError):
            return True
    return False
