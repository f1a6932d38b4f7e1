"""A push service that speaks RFC 8030 on loopback, and browsers that subscribe to it.

`Browser` holds what a browser keeps for one subscription: a P-256 key pair and a 16-byte auth secret; its
`subscription` is the JSON a page posts (`PushSubscription.toJSON()`). `PushService` accepts `POST /push/<id>`
only as a real service would: `TTL` present, `Content-Encoding: aes128gcm`, and a VAPID `Authorization` whose
ES256 JWT verifies with the `k` key sent beside it, names this service's origin as `aud`, expires within 24 hours
and carries a `mailto:` or `https:` `sub` (401 otherwise, 400 for a missing TTL, 413 above 4,096 bytes). Each
accepted message is decrypted with the browser's private key, as the browser would (`delivered`). `answer(status,
times, headers)` scripts the next answers; `forget(browser)` makes that subscription answer 410 Gone.
"""

from __future__ import annotations

import base64
import json
import os
import threading
import time
from dataclasses import dataclass, field
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer

import http_ece
import jwt
from cryptography.hazmat.primitives.asymmetric import ec
from cryptography.hazmat.primitives.serialization import Encoding, PublicFormat


def b64(data: bytes) -> str:
    return base64.urlsafe_b64encode(data).decode().rstrip("=")


def unb64(text: str) -> bytes:
    return base64.urlsafe_b64decode(text + "=" * (-len(text) % 4))


class Browser:
    """One browser's subscription keys (what `pushManager.subscribe` creates)."""

    def __init__(self, service: PushService) -> None:
        self.private_key = ec.generate_private_key(ec.SECP256R1())
        self.auth = os.urandom(16)
        self.id = b64(os.urandom(24))
        self.endpoint = f"{service.origin}/push/{self.id}"
        service.browsers[self.id] = self

    @property
    def p256dh(self) -> str:
        return b64(self.private_key.public_key().public_bytes(Encoding.X962, PublicFormat.UncompressedPoint))

    @property
    def subscription(self) -> dict:
        return {"endpoint": self.endpoint, "expirationTime": None,
                "keys": {"p256dh": self.p256dh, "auth": b64(self.auth)}}

    def decrypt(self, body: bytes) -> dict:
        return json.loads(http_ece.decrypt(body, private_key=self.private_key, auth_secret=self.auth,
                                           version="aes128gcm"))


@dataclass
class Delivered:
    """A message the service accepted, as its browser reads it."""

    browser: str
    payload: dict
    headers: dict[str, str]
    claims: dict
    size: int


@dataclass
class PushService:
    """The fake service; `origin` for NOTIFIER_PUSH_SERVICES, `delivered` and `attempts` for assertions."""

    browsers: dict[str, Browser] = field(default_factory=dict)
    delivered: list[Delivered] = field(default_factory=list)
    attempts: list[tuple[str, int]] = field(default_factory=list)  # (browser id, status answered)
    script: list[tuple[int, dict[str, str]]] = field(default_factory=list)
    gone: set[str] = field(default_factory=set)
    origin: str = ""

    def __post_init__(self) -> None:
        self.lock = threading.Lock()
        service = self

        class Handler(BaseHTTPRequestHandler):
            def do_POST(self) -> None:  # noqa: N802 - http.server's hook
                body = self.rfile.read(int(self.headers.get("Content-Length") or 0))
                browser_id = self.path.removeprefix("/push/")
                status, extra = service._answer(browser_id, {k.lower(): v for k, v in self.headers.items()}, body)
                self.send_response(status)
                for name, value in extra.items():
                    self.send_header(name, value)
                if status == 201:
                    self.send_header("Location", f"{service.origin}/message/{len(service.delivered)}")
                self.send_header("Content-Length", "0")
                self.end_headers()

            def log_message(self, *args) -> None:
                pass

        self.server = ThreadingHTTPServer(("127.0.0.1", 0), Handler)
        self.origin = f"http://127.0.0.1:{self.server.server_address[1]}"
        threading.Thread(target=self.server.serve_forever, daemon=True).start()

    def browser(self) -> Browser:
        return Browser(self)

    def answer(self, status: int, times: int = 1, headers: dict[str, str] | None = None) -> None:
        with self.lock:
            self.script.extend([(status, headers or {})] * times)

    def forget(self, browser: Browser) -> None:
        self.gone.add(browser.id)

    def close(self) -> None:
        self.server.shutdown()
        self.server.server_close()

    def _answer(self, browser_id: str, headers: dict[str, str], body: bytes) -> tuple[int, dict[str, str]]:
        with self.lock:
            status, extra = self._check(browser_id, headers, body)
            self.attempts.append((browser_id, status))
            return status, extra

    def _check(self, browser_id: str, headers: dict[str, str], body: bytes) -> tuple[int, dict[str, str]]:
        if browser_id in self.gone or browser_id not in self.browsers:
            return 410, {}
        if self.script:
            return self.script.pop(0)
        if "ttl" not in headers or not headers["ttl"].isdigit():
            return 400, {}
        if len(body) > 4096:
            return 413, {}
        if headers.get("content-encoding") != "aes128gcm":
            return 415, {}
        claims = self._claims(headers.get("authorization", ""))
        if claims is None:
            return 401, {}
        payload = self.browsers[browser_id].decrypt(body)
        self.delivered.append(Delivered(browser_id, payload, headers, claims, len(body)))
        return 201, {}

    def _claims(self, authorization: str) -> dict | None:
        """The VAPID JWT's claims if it verifies with the `k` key sent with it (RFC 8292), else None."""
        scheme, _, rest = authorization.partition(" ")
        if scheme != "vapid":
            return None
        parts = dict(item.strip().split("=", 1) for item in rest.split(",") if "=" in item)
        try:
            key = ec.EllipticCurvePublicKey.from_encoded_point(ec.SECP256R1(), unb64(parts["k"]))
            claims = jwt.decode(parts["t"], key, algorithms=["ES256"], audience=self.origin)
        except (KeyError, ValueError, jwt.PyJWTError):
            return None
        if not 0 < claims["exp"] - time.time() <= 24 * 3600:
            return None
        if not str(claims.get("sub", "")).startswith(("mailto:", "https:")):
            return None
        return claims
