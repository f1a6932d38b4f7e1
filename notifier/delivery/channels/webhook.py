"""Webhooks over HTTP with `requests`: a POST of the planned JSON, signed by the Standard Webhooks scheme.

The outbox row names the endpoint by its public id (`Message.to`); the URL and the `whsec_` secret are read from
`webhook_endpoints` as the request leaves, so a removed or disabled endpoint gets nothing. Headers: `webhook-id` (the
row's reference: the same on every retry, for the receiver to drop duplicates), `webhook-timestamp` (seconds, this
attempt), `webhook-signature` (`v1,` and the base64 HMAC-SHA256 of `id.timestamp.body` with the decoded secret,
computed by the `standardwebhooks` library). Redirects are not followed; the URL is checked and its name resolved
again before each request (see `subscribers.webhook_urls`), and the request connects to the address that was
checked (`PinnedAdapter`), keeping the name for the Host header, TLS SNI and the certificate's check, so a name
that resolves elsewhere a moment later (DNS rebinding) changes nothing. Only the URL's scheme and host are logged.

Whose fault a failure is: 2xx is delivered. 5xx, 408, 429, timeouts and connection errors are temporary (retried
with backoff; the receiver drops a duplicate by its `webhook-id`). 410 Gone disables the endpoint at once. Other
answers (3xx, 4xx) are the endpoint's: that request fails alone. Every failure counts towards a day of continuous
failures, after which the endpoint is disabled (its owner is emailed by the next planning pass).
"""

from __future__ import annotations

import logging
from collections.abc import Callable
from datetime import datetime
from urllib.parse import urlsplit

import requests
from requests.adapters import HTTPAdapter
from sqlalchemy import update
from sqlalchemy.orm import Session, sessionmaker
from standardwebhooks.webhooks import Webhook

from notifier.db import make_engine, make_sessionmaker, utcnow
from notifier.delivery.channels.base import WEBHOOK, Channel, Message, Receipt
from notifier.delivery.outbox import OutboxRow, RowStatus
from notifier.errors import DeliveryError, MessageError, TemporaryDeliveryError
from notifier.subscribers import webhook_urls, webhooks
from notifier.subscribers.webhooks import WebhookError

log = logging.getLogger(__name__)
TEMPORARY_CODES = {408, 425, 429}
USER_AGENT = "notifier-webhooks/1 (+https://www.standardwebhooks.com/)"


def signature_headers(message_id: str, secret: str, body: str, at: datetime) -> dict[str, str]:
    """The three Standard Webhooks headers for `body` sent at `at`."""
    return {"webhook-id": message_id, "webhook-timestamp": str(int(at.timestamp())),
            "webhook-signature": Webhook(secret).sign(message_id, at, body)}


class PinnedAdapter(HTTPAdapter):
    """A transport that connects to one address given in advance, whatever the URL's name resolves to now; for
    https the name is still the one sent in SNI and the one the certificate must be issued for."""

    def __init__(self, address: str) -> None:
        super().__init__(max_retries=0)
        self.address = address

    def build_connection_pool_key_attributes(self, request, verify, cert=None):  # type: ignore[no-untyped-def]
        """requests' hook for subclasses choosing the urllib3 pool: the address, and the name for TLS."""
        host_params, pool_kwargs = super().build_connection_pool_key_attributes(request, verify, cert)
        name = host_params["host"]
        host_params["host"] = self.address
        if host_params["scheme"] == "https":
            # urllib3's pools take both; types-requests' _PoolKwargs lists only the keys requests itself sets
            pool_kwargs["server_hostname"] = name  # type: ignore[typeddict-unknown-key]
            pool_kwargs["assert_hostname"] = name  # type: ignore[typeddict-unknown-key]
        return host_params, pool_kwargs


class WebhookChannel(Channel):
    """POSTs webhook rows to their endpoint; `clock` (for tests) dates the failures that may disable one, and
    `verify` is requests' (True: the usual certificate authorities; a path: a bundle of one's own, for tests)."""

    name = WEBHOOK

    def __init__(self, sessions: sessionmaker[Session] | None, allow_private: bool, timeout: float = 5.0,
                 database_url: str | None = None, clock: Callable[[], datetime] = utcnow,
                 verify: bool | str = True) -> None:
        self._sessions, self.database_url, self.verify = sessions, database_url, verify
        self.allow_private, self.timeout, self.clock = allow_private, timeout, clock

    @property
    def sessions(self) -> sessionmaker[Session]:
        if self._sessions is None:  # built on first use only: most processes that build channels never send one
            self._sessions = make_sessionmaker(make_engine(self.database_url or ""))
        return self._sessions

    def _send(self, message: Message) -> Receipt:
        with self.sessions() as session:
            endpoint = webhooks.find(session, message.to)
            if endpoint is None or not endpoint.active:
                raise MessageError("the endpoint was removed or disabled")
            url, secret, shown = endpoint.url, endpoint.secret, endpoint.masked_url()
        try:
            target = webhook_urls.destination(url, self.allow_private)
        except WebhookError as error:
            raise self._failed(message, f"refused: {error}", MessageError) from None
        body = message.text.encode("utf-8")
        headers = {"Host": urlsplit(target.url).netloc, "Content-Type": "application/json", "User-Agent": USER_AGENT,
                   **signature_headers(message.reference, secret, message.text, utcnow())}
        try:
            with requests.Session() as http:
                http.trust_env = False  # no proxy from the environment: the checked address is the one connected to
                http.verify = self.verify
                http.mount("http://", PinnedAdapter(target.address))
                http.mount("https://", PinnedAdapter(target.address))
                response = http.post(target.url, data=body, headers=headers, timeout=self.timeout,
                                     allow_redirects=False, stream=True)
                response.close()  # the answer's body is never read: a hostile endpoint cannot make us download much
        except requests.RequestException as error:
            raise self._failed(message, f"{shown}: {type(error).__name__}", TemporaryDeliveryError) from None
        status = response.status_code
        if 200 <= status < 300:
            self._succeeded(message)
            return Receipt(provider_id=message.reference, status="sent")
        described = f"{shown} answered HTTP {status}"
        if status == 410:
            raise self._failed(message, described, MessageError, gone=True)
        if status >= 500 or status in TEMPORARY_CODES:
            raise self._failed(message, described, TemporaryDeliveryError, code=status)
        raise self._failed(message, described, MessageError, code=status)

    def _succeeded(self, message: Message) -> None:
        with self.sessions() as session, session.begin():
            endpoint = webhooks.find(session, message.to)
            if endpoint is not None:
                webhooks.succeeded(session, endpoint)

    def _failed(self, message: Message, reason: str, kind: type[DeliveryError], code: int | None = None,
                gone: bool = False) -> DeliveryError:
        """Record the failure on the endpoint; the error to raise (this row fails alone once it is disabled)."""
        with self.sessions() as session, session.begin():
            endpoint = webhooks.find(session, message.to)
            disabled = endpoint is not None and webhooks.failed(session, endpoint, reason, self.clock(), gone)
            if disabled:
                session.execute(update(OutboxRow).where(
                    OutboxRow.channel == WEBHOOK, OutboxRow.digest_key.like(f"webhook-{message.to}-%"),
                    OutboxRow.status == RowStatus.PENDING.value).values(
                    status=RowStatus.CANCELLED.value, payload=None, last_error="endpoint disabled"))
        if disabled:
            log.warning("webhook %s disabled: %s", message.to, reason)
            return MessageError(f"{reason}; endpoint disabled", code=code)
        return kind(reason, code=code)
