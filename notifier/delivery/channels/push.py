"""Web Push (RFC 8030) with `requests`: the payload encrypted by `http_ece` (RFC 8291, `aes128gcm`) and signed for
VAPID by `py_vapid` (RFC 8292), one POST per subscription to the endpoint its browser gave.

The outbox row names the subscription by its contact's address (`Message.to`); the endpoint and keys are read as
the request leaves, so a subscription deleted meanwhile gets nothing, and the endpoint is checked against
NOTIFIER_PUSH_SERVICES again before each request (it came from a browser). Only the endpoint's origin is logged:
the rest of it is the capability to post to that browser. Headers: `TTL` and `Urgency` from the message (see
`notices.push_payload`), `Topic` (the board id) so a push service holding an undelivered notice for that board
replaces it, and `Authorization: vapid t=<ES256 JWT: aud the endpoint's origin, exp 12 h ahead, sub the
operator's contact>, k=<the public key>`. Tokens are reused per origin until an hour before they expire.

Whose fault a failure is: 200/201/202 delivered. 404 and 410: the subscription is gone for good: deleted at once,
its contact marked invalid (`RecipientError`), never retried. 413 and other 4xx: this message alone fails
(`MessageError`; 403 too, as FCM answers it for a subscription made under another key). 401: our VAPID signature
is refused (`AccountError`: the channel pauses). 429 and 5xx: temporary, retried with the channel's backoff, and no
sooner than `Retry-After` says; 429 also slows the shared rate. Timeouts and connection errors are retried: a
duplicate carries the same tag, so the device shows it once.
"""

from __future__ import annotations

import base64
import json
import logging
import re
import threading
import time
from datetime import UTC
from email.utils import parsedate_to_datetime

import http_ece
import requests
from cryptography.hazmat.primitives.asymmetric import ec
from cryptography.hazmat.primitives.serialization import Encoding, PublicFormat
from py_vapid import Vapid02
from sqlalchemy.orm import Session, sessionmaker

from notifier.db import make_engine, make_sessionmaker
from notifier.delivery.channels.base import PUSH, Channel, Message, Receipt
from notifier.errors import AccountError, MessageError, RecipientError, TemporaryDeliveryError
from notifier.subscribers import push, push_endpoints
from notifier.subscribers.push_endpoints import EndpointError

log = logging.getLogger(__name__)
TOKEN_SECONDS = 12 * 3600  # RFC 8292 allows at most 24 h
RENEW_SECONDS = 3600
MAX_RETRY_AFTER = 3600.0
TOPIC = re.compile(r"^[A-Za-z0-9_-]{1,32}$")  # RFC 8030: at most 32 characters of the base64url alphabet
USER_AGENT = "notifier-webpush/1"


def public_key(private_pem: str) -> str:
    """The application server key browsers subscribe with: the uncompressed P-256 point, base64url, no padding."""
    vapid = Vapid02.from_pem(private_pem.encode())
    raw = vapid.public_key.public_bytes(Encoding.X962, PublicFormat.UncompressedPoint)
    return base64.urlsafe_b64encode(raw).decode().rstrip("=")


def encrypt(plaintext: bytes, p256dh: str, auth: str) -> bytes:
    """The RFC 8291 body for one subscription: a fresh sender key and salt every time (`aes128gcm`)."""
    sender = ec.generate_private_key(ec.SECP256R1())
    body: bytes = http_ece.encrypt(plaintext, private_key=sender, dh=push.b64decode(p256dh),
                                   auth_secret=push.b64decode(auth), version="aes128gcm")
    return body


def retry_after(value: str | None, now: float | None = None) -> float | None:
    """Seconds to wait from a `Retry-After` header (seconds or an HTTP date), at most an hour; None if absent."""
    if not value:
        return None
    value = value.strip()
    if value.isdigit():
        return min(float(value), MAX_RETRY_AFTER)
    try:
        when = parsedate_to_datetime(value)
    except (TypeError, ValueError):
        return None
    if when.tzinfo is None:
        when = when.replace(tzinfo=UTC)
    wait = when.timestamp() - (now if now is not None else time.time())
    return min(max(wait, 0.0), MAX_RETRY_AFTER)


class PushChannel(Channel):
    """Sends notifications to browsers' push services, signed with one VAPID key."""

    name = PUSH

    def __init__(self, sessions: sessionmaker[Session] | None, private_pem: str, subject: str,
                 services: tuple[str, ...], timeout: float = 10.0, database_url: str | None = None) -> None:
        self._sessions, self.database_url = sessions, database_url
        self.vapid = Vapid02.from_pem(private_pem.encode())
        self.public_key = public_key(private_pem)
        self.subject, self.services, self.timeout = subject, services, timeout
        self.http = requests.Session()
        self.http.trust_env = False  # no proxy from the environment: the checked origin is the one connected to
        adapter = requests.adapters.HTTPAdapter(pool_connections=8, pool_maxsize=64)
        self.http.mount("https://", adapter)
        self.http.mount("http://", adapter)
        self._tokens: dict[str, tuple[str, float]] = {}
        self._lock = threading.Lock()

    @property
    def sessions(self) -> sessionmaker[Session]:
        if self._sessions is None:  # built on first use only: most processes that build channels never push
            self._sessions = make_sessionmaker(make_engine(self.database_url or ""))
        return self._sessions

    def authorization(self, audience: str, now: float | None = None) -> str:
        """`vapid t=…, k=…` for `audience` (an origin), reusing a token until an hour before it expires."""
        now = time.time() if now is None else now
        with self._lock:
            token, expires = self._tokens.get(audience, ("", 0.0))
            if expires - now < RENEW_SECONDS:
                expires = now + TOKEN_SECONDS
                signed = self.vapid.sign({"aud": audience, "exp": int(expires), "sub": self.subject})
                token = signed["Authorization"].split("t=", 1)[1].split(",", 1)[0]
                self._tokens[audience] = (token, expires)
        return f"vapid t={token}, k={self.public_key}"

    def _send(self, message: Message) -> Receipt:
        with self.sessions() as session:
            found = push.find(session, message.to)
            if found is None:
                raise RecipientError("the push subscription was deleted")
            endpoint, p256dh, auth = found.endpoint, found.p256dh, found.auth
        origin = push_endpoints.origin(endpoint)
        try:
            push_endpoints.check(endpoint, self.services)
        except EndpointError as error:
            raise MessageError(f"push to {origin} refused: {error}") from None
        body = encrypt(message.text.encode("utf-8"), p256dh, auth)
        headers = {"Content-Encoding": "aes128gcm", "Content-Type": "application/octet-stream",
                   "TTL": message.headers.get("TTL", "3600"), "Urgency": message.headers.get("Urgency", "normal"),
                   "Authorization": self.authorization(origin), "User-Agent": USER_AGENT}
        topic = _tag(message.text)
        if topic:
            headers["Topic"] = topic
        try:
            response = self.http.post(endpoint, data=body, headers=headers, timeout=self.timeout,
                                      allow_redirects=False, stream=True)
            response.close()  # the answer's body is never read: a push service's error text is not needed
        except requests.RequestException as error:
            raise TemporaryDeliveryError(f"push to {origin}: {type(error).__name__}") from None
        status = response.status_code
        if status in (200, 201, 202):
            return Receipt(provider_id=response.headers.get("Location", "")[-120:] or message.reference,
                           status="sent")
        return self._refused(message, origin, status, response.headers.get("Retry-After"))

    def _refused(self, message: Message, origin: str, status: int, wait: str | None) -> Receipt:
        described = f"push service {origin} answered HTTP {status}"
        if status in (404, 410):
            with self.sessions() as session, session.begin():
                push.gone(session, message.to)
            raise RecipientError(f"{described}: the subscription is gone", code=status)
        if status == 429 or status >= 500:
            raise TemporaryDeliveryError(described, code=status, pushback=status == 429,
                                         retry_after=retry_after(wait))
        if status == 401:
            raise AccountError(f"{described}: the VAPID signature is refused (NOTIFIER_VAPID_PRIVATE_KEY, "
                               "NOTIFIER_VAPID_SUBJECT)", code=status)
        raise MessageError(described, code=status)  # 413 too big, 400 malformed, 403 another key's subscription


def _tag(text: str) -> str | None:
    try:
        tag = json.loads(text).get("tag")
    except (ValueError, AttributeError):
        return None
    return tag if isinstance(tag, str) and TOPIC.match(tag) else None
