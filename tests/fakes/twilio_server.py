"""A local HTTP server that speaks the part of Twilio's REST API we use, so the real `twilio` SDK can be tested.

POST /2010-04-01/Accounts/{Sid}/Messages.json creates a message (201 + Twilio's JSON), GET lists them (with the
`To` and `DateSent>` filters the SDK sends; `queue_messages = True` leaves messages queued, without a send date).
Failures are scripted per destination number, in order:
`server.script("+14165550123", (429, 20429), (500, None))`, or for every attempt: `server.always(number, 400, 21610)`.
Error bodies have Twilio's shape: {"code", "message", "more_info", "status"}.
"""

from __future__ import annotations

import base64
import json
import secrets
import threading
from collections import defaultdict, deque
from datetime import UTC, datetime
from email.utils import format_datetime
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from urllib.parse import parse_qs, urlsplit

MESSAGES = "/2010-04-01/Accounts/{sid}/Messages.json"

ERROR_TEXT = {
    20429: "Too Many Requests",
    21211: "The 'To' number {to} is not a valid phone number.",
    21610: "Attempt to send to unsubscribed recipient",
    21614: "'To' number is not a valid mobile number",
}


def _public(message: dict) -> dict:
    """A message as Twilio shows it: without the fake's own bookkeeping (keys starting with "_")."""
    return {k: v for k, v in message.items() if not k.startswith("_")}


class FakeTwilio:
    """Start with `FakeTwilio(account_sid, auth_token).start()`; `.url` is the base to give the SDK."""

    def __init__(self, account_sid: str, auth_token: str, delay: float = 0.0) -> None:
        self.account_sid = account_sid
        self.auth_token = auth_token
        self.delay = delay
        self.queue_messages = False  # True: accepted messages stay `queued` (a busy sender), with no date_sent
        self.messages: list[dict] = []  # every message accepted, in order
        self.requests: list[dict] = []  # every POST seen, accepted or not
        self._scripts: dict[str, deque] = defaultdict(deque)
        self._always: dict[str, tuple[int, int | None]] = {}
        self._lock = threading.Lock()
        self._server = ThreadingHTTPServer(("127.0.0.1", 0), self._handler())
        self._server.daemon_threads = True
        self._thread = threading.Thread(target=self._server.serve_forever, daemon=True)

    @property
    def url(self) -> str:
        host, port = self._server.server_address[:2]
        return f"http://{host}:{port}"

    def start(self) -> FakeTwilio:
        self._thread.start()
        return self

    def stop(self) -> None:
        self._server.shutdown()
        self._server.server_close()

    def script(self, to: str, *failures: tuple[int, int | None]) -> None:
        """The next sends to `to` fail with these (HTTP status, Twilio code) pairs, then succeed."""
        with self._lock:
            self._scripts[to].extend(failures)

    def always(self, to: str, status: int, code: int | None) -> None:
        """Every send to `to` fails this way."""
        with self._lock:
            self._always[to] = (status, code)

    def sent_to(self, to: str) -> list[dict]:
        return [m for m in self.messages if m["to"] == to]

    def reset(self) -> None:
        with self._lock:
            self.messages.clear()
            self.requests.clear()
            self._scripts.clear()
            self._always.clear()

    # --- the HTTP side -------------------------------------------------------------------------------------------

    def _handler(self):
        fake = self

        class Handler(BaseHTTPRequestHandler):
            def log_message(self, *args) -> None:  # keep test output clean
                pass

            def do_POST(self) -> None:  # noqa: N802 - http.server's naming
                if not self._authorised():
                    return
                length = int(self.headers.get("Content-Length") or 0)
                form = {k: v[0] for k, v in parse_qs(self.rfile.read(length).decode()).items()}
                path = urlsplit(self.path).path
                if path != MESSAGES.format(sid=fake.account_sid):
                    return self._error(404, 20404, "The requested resource was not found")
                if fake.delay:
                    import time

                    time.sleep(fake.delay)
                to = form.get("To", "")
                with fake._lock:
                    fake.requests.append(form)
                    failure = fake._scripts[to].popleft() if fake._scripts.get(to) else fake._always.get(to)
                    if failure is None:
                        message = fake._message(form)
                        fake.messages.append(message)
                if failure is not None:
                    status, code = failure
                    return self._error(status, code, ERROR_TEXT.get(code, "Internal Server Error").format(to=to))
                self._json(201, message)

            def do_GET(self) -> None:  # noqa: N802
                if not self._authorised():
                    return
                parts = urlsplit(self.path)
                if parts.path != MESSAGES.format(sid=fake.account_sid):
                    return self._error(404, 20404, "The requested resource was not found")
                query = {k: v[0] for k, v in parse_qs(parts.query).items()}
                since = query.get("DateSent>")
                with fake._lock:
                    found = [
                        m for m in fake.messages
                        if ("To" not in query or m["to"] == query["To"])
                        # Like Twilio: DateSent matches the send date, which a queued message does not have yet.
                        and (since is None or (m["_sent"] is not None
                                               and m["_sent"] >= datetime.fromisoformat(since.replace("Z", "+00:00"))))
                    ]
                self._json(200, {
                    "messages": [_public(m) for m in reversed(found)], "end": max(len(found) - 1, 0),
                    "first_page_uri": parts.path,
                    "next_page_uri": None, "page": 0, "page_size": 50, "previous_page_uri": None, "start": 0,
                    "uri": self.path,
                })

            def _authorised(self) -> bool:
                expected = base64.b64encode(f"{fake.account_sid}:{fake.auth_token}".encode()).decode()
                if self.headers.get("Authorization") != f"Basic {expected}":
                    self._error(401, 20003, "Authenticate")
                    return False
                return True

            def _json(self, status: int, body: dict) -> None:
                data = json.dumps(_public(body)).encode()
                self.send_response(status)
                self.send_header("Content-Type", "application/json")
                self.send_header("Content-Length", str(len(data)))
                self.end_headers()
                self.wfile.write(data)

            def _error(self, status: int, code: int | None, message: str) -> None:
                self._json(status, {
                    "code": code, "message": message, "status": status,
                    "more_info": f"https://www.twilio.com/docs/errors/{code}" if code else None,
                })

        return Handler

    def _message(self, form: dict) -> dict:
        now = datetime.now(UTC)
        sid = "SM" + secrets.token_hex(16)
        return {
            "account_sid": self.account_sid, "api_version": "2010-04-01", "body": form.get("Body", ""),
            "date_created": format_datetime(now), "date_updated": format_datetime(now),
            "direction": "outbound-api", "error_code": None, "error_message": None, "from": form.get("From"),
            "messaging_service_sid": form.get("MessagingServiceSid"), "num_media": "0",
            "num_segments": "1", "price": None, "price_unit": "CAD", "sid": sid,
            "status": "accepted" if form.get("MessagingServiceSid") else "queued",
            "date_sent": None if self.queue_messages else format_datetime(now),
            "subresource_uris": {}, "to": form.get("To"),
            "uri": f"/2010-04-01/Accounts/{self.account_sid}/Messages/{sid}.json",
            "_created": now, "_sent": None if self.queue_messages else now, "_form": form,
        }
