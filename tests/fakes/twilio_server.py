"""A local HTTP server that behaves like the part of Twilio's REST API we use, under load and failure, so the real
`twilio` SDK (and the app's processes) can be tested against it.

The API (HTTP Basic auth with the account SID and the CURRENT auth token; errors in Twilio's JSON shape):
- `POST /2010-04-01/Accounts/{Sid}/Messages.json` accepts a message: 201, `queued` (`accepted` with a Messaging
  Service), date_sent null; then the sender queues send it at the sender's rate and deliver it
  (tests/fakes/twilio_queue.py), posting signed status callbacks to its `StatusCallback`
  (tests/fakes/twilio_webhooks.py);
- `GET …/Messages.json` lists them like Twilio (filters To, From, DateSent, DateSent<, DateSent> on date_sent only,
  newest first, PageSize and next_page_uri: tests/fakes/twilio_messages.py); `GET …/Messages/{SM…}.json` one.

Failures, scripted or random:
- per destination: `script(to, (429, 20429), (500, None))` for the next sends, `always(to, 400, 21610)`;
  `fail_delivery(to, "undelivered", 30003)` for what happens after sending;
- account-wide: `fail_account(401, 20003)` (or 400/21606…) on every API call, `suspend_account()` (accepted, then
  failed 30002), `rotate_token(new)` (the old token gets 401/20003), a `numbers` set (another From gets 21606);
- load: `rate(mps, sender=None)`, `queue_seconds` (then failed 30001; also `ValidityPeriod`), `max_concurrent`
  (more requests in flight at once get 429/20429);
- slowness: `delay` (every create) or `delay_for(to, s)`: the answer comes after the delay, and if the client has
  given up by then the message is NOT created (Twilio never got it); `accept_then_stall(to, s)`: the message IS
  created and will be sent, but the answer comes `s` later (the client believes it failed);
- `faults(rate, seed)`: that fraction of creates answer 429/20429, 500, 503, or stall (created, answered late).
What the test reads: `messages` (dicts; `sent_to(to)`), `requests` (every create's form), `callbacks`, `inbound`,
`stats()` (busiest second and mean rate per sender, in messages and in segments, with the segments of each
second; per-To counts, duplicates), `settle()` to wait for quiet. Rates are in segments (GSM-7 160/153, UCS-2 70/67).
Inbound: `text(url, from_, body)` posts a signed inbound SMS to the app; `replay()` sends one again exactly.

Standalone: `python -m tests.fakes.twilio_server --port N --account-sid AC… --auth-token T [--mps R]
[--queue-seconds S] [--max-concurrent N] [--fault-rate F --seed S]` prints `fake twilio listening on URL`; control
endpoints under `/_fake/` (tests/fakes/twilio_control.py, with the `TwilioControl` client).
Not imitated: MMS, scheduling, Messaging Service sender pools, 21611, cancelling messages.
"""

from __future__ import annotations

import argparse
import base64
import json
import random
import re
import select
import socket
import threading
import time
from collections import defaultdict, deque
from datetime import UTC, datetime
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from typing import NamedTuple
from urllib.parse import parse_qsl, urlsplit

from tests.fakes.control import run_until_signalled
from tests.fakes.twilio_control import control_routes
from tests.fakes.twilio_messages import API, error_body, listing, new_message, public, stats
from tests.fakes.twilio_queue import SenderQueues
from tests.fakes.twilio_webhooks import CallbackSender, Post, Routes, callback_form, deliver, inbound_form, signed_post

MESSAGES = API + "/Accounts/{sid}/Messages.json"
ONE_MESSAGE = re.compile(API + r"/Accounts/(AC\w+)/Messages/(SM[0-9a-f]+)\.json")
FAULT_KINDS = ("429", "500", "503", "stall")


class Reply(NamedTuple):
    """The app's answer to a webhook."""

    status: int
    body: str


class FakeTwilio:
    """Start with `FakeTwilio(account_sid, auth_token).start()`; `.url` is the base to give the SDK."""

    def __init__(self, account_sid: str, auth_token: str, delay: float = 0.0, *, mps: float | None = None,
                 queue_seconds: float = 36_000, delivery_seconds: float = 0.0, max_concurrent: int | None = None,
                 numbers: set[str] | None = None, number: str = "+16135550100", callbacks: bool = True,
                 port: int = 0, host: str = "127.0.0.1") -> None:
        self.account_sid = account_sid
        self.auth_token = auth_token
        self.delay = delay
        self.max_concurrent = max_concurrent
        self.numbers = set(numbers) if numbers else None
        self.number = number  # the account's number, that inbound texts are sent to
        self.send_callbacks = callbacks
        self.messages: list[dict] = []  # every message accepted, in order
        self.requests: list[dict] = []  # the form of every create seen, accepted or not
        self.callbacks: list[Post] = []  # every status callback, with the app's answer
        self.inbound: list[Post] = []  # every inbound text sent with text() or replay()
        self.routes = Routes()
        self.max_in_flight = 0
        self._initial = (auth_token, mps, max_concurrent)
        self._scripts: dict[str, deque] = defaultdict(deque)
        self._always: dict[str, tuple[int, int | None]] = {}
        self._delays: dict[str, float] = {}
        self._stalls: dict[str, list] = {}  # To -> [seconds, times left]
        self._faults: tuple[float, random.Random, tuple[str, ...], float] | None = None
        self._account_failure: tuple[int, int | None] | None = None
        self._in_flight = 0
        self._lock = threading.Condition()
        self._stopping = threading.Event()
        self.queues = SenderQueues(self._lock, self._changed, mps, queue_seconds, delivery_seconds)
        self._callback_sender = CallbackSender(self.routes, lambda: self.auth_token, self.callbacks)
        self._control = control_routes(self)
        self._server = _Server((host, port), _Handler)
        self._server.daemon_threads = True
        self._server.fake = self
        self._thread = threading.Thread(target=self._server.serve_forever, args=(0.05,), daemon=True,
                                        name="fake-twilio-http")

    @property
    def url(self) -> str:
        host, port = self._server.server_address[:2]
        return f"http://{host}:{port}"

    def start(self) -> FakeTwilio:
        self.queues.start()
        self._callback_sender.start()
        self._thread.start()
        return self

    def stop(self) -> None:
        self._stopping.set()  # releases stalled and delayed requests
        self._server.shutdown()
        self._server.server_close()
        self.queues.stop()
        self._callback_sender.stop()

    # --- scripting -----------------------------------------------------------------------------------------------

    def script(self, to: str, *failures: tuple[int, int | None]) -> None:
        """The next sends to `to` fail with these (HTTP status, Twilio code) pairs, then succeed."""
        with self._lock:
            self._scripts[to].extend(failures)

    def always(self, to: str, status: int, code: int | None) -> None:
        """Every send to `to` fails this way."""
        with self._lock:
            self._always[to] = (status, code)

    def fail_delivery(self, to: str, status: str = "undelivered", code: int = 30003, times: int | None = None) -> None:
        """Messages to `to` are sent, then end `status` with `code` (the next `times` ones; None: all)."""
        with self._lock:
            self.queues.outcomes[to] = [status, code, times]

    def rate(self, mps: float | None, sender: str | None = None) -> None:
        """Segments per second for one sender (From or MessagingServiceSid), or for every sender; None: no limit."""
        with self._lock:
            if sender is None:
                self.queues.default_mps = mps
            else:
                self.queues.rates[sender] = mps
            self._lock.notify_all()

    def fail_account(self, status: int, code: int | None) -> None:
        """Every API request answers `status` with `code` (401/20003, 400/21606…) until `restore_account()`."""
        with self._lock:
            self._account_failure = (status, code)

    def suspend_account(self) -> None:
        """Messages are still accepted, then fail with 30002 (account suspended) when their turn comes."""
        with self._lock:
            self.queues.suspended = True

    def restore_account(self) -> None:
        with self._lock:
            self._account_failure = None
            self.queues.suspended = False

    def rotate_token(self, new_token: str) -> None:
        """The auth token changes: requests with the old one get 401/20003; webhooks are signed with the new one."""
        with self._lock:
            self.auth_token = new_token

    def delay_for(self, to: str, seconds: float) -> None:
        """Answer creates to `to` after `seconds` (not created if the client gave up meanwhile); 0: no delay."""
        with self._lock:
            self._delays[to] = seconds

    def accept_then_stall(self, to: str, seconds: float, times: int = 1) -> None:
        """The next `times` creates to `to` are accepted (and will be sent) but answered only after `seconds`."""
        with self._lock:
            self._stalls[to] = [seconds, times]

    def faults(self, rate: float, seed: int = 0, kinds: tuple[str, ...] = FAULT_KINDS,
               stall_seconds: float = 30.0) -> None:
        """That fraction of creates (drawn with `seed`) fails with one of `kinds`; `faults(0)` stops it."""
        unknown = set(kinds) - set(FAULT_KINDS)
        if unknown:
            raise ValueError(f"unknown fault kinds {sorted(unknown)}; known: {FAULT_KINDS}")
        with self._lock:
            dice = random.Random(seed)  # noqa: S311 - reproducible test faults, not secrets
            self._faults = (rate, dice, tuple(kinds), stall_seconds) if rate else None

    def route(self, public_base: str, actual_base: str) -> None:
        """Post webhooks addressed to `public_base…` to `actual_base…` instead (signature still over the public URL)."""
        self.routes.add(public_base, actual_base)

    def reset(self) -> None:
        """Forget messages, requests, webhooks and every fault; token, rates and cap as constructed (routes stay)."""
        with self._lock:
            self.messages.clear()
            self.requests.clear()
            self._scripts.clear()
            self._always.clear()
            self._delays.clear()
            self._stalls.clear()
            self._faults = None
            self._account_failure = None
            self.queues.clear()
            self.queues.rates.clear()
            self.auth_token, self.queues.default_mps, self.max_concurrent = self._initial
            self.max_in_flight = 0
        self.callbacks.clear()
        self.inbound.clear()

    # --- reading ---------------------------------------------------------------------------------------------------

    def sent_to(self, to: str) -> list[dict]:
        return [m for m in self.messages if m["to"] == to]

    def stats(self) -> dict:
        """Accepted per sender with busiest second and mean rate, per-To counts, statuses, duplicates."""
        with self._lock:
            figures = stats(self.messages)
            figures.update(requests=len(self.requests), max_in_flight=self.max_in_flight,
                           waiting={s: self.queues.waiting(s) for s in figures["per_sender"]})
        figures["callbacks"] = len(self.callbacks)
        return figures

    def settle(self, timeout: float = 10.0) -> None:
        """Wait until nothing waits in a queue, no delivery is due and every callback was posted."""
        deadline = time.monotonic() + timeout
        while time.monotonic() < deadline:
            with self._lock:
                busy = self.queues.busy()
            if not busy and self._callback_sender.idle():
                return
            time.sleep(0.01)
        raise TimeoutError(f"the fake Twilio did not settle in {timeout} s: {self.stats()}")

    # --- webhooks to the app ---------------------------------------------------------------------------------------

    def text(self, url: str, from_: str, body: str, to: str | None = None, extra: dict | None = None) -> Reply:
        """Post a signed inbound SMS to the webhook `url`; the app's answer.

        Give the public URL the app validates signatures against (NOTIFIER_BASE_URL + "/twilio/inbound") after
        `route(NOTIFIER_BASE_URL, app_url)`: the signature is over the URL given, as Twilio's is.
        """
        form = {**inbound_form(self.account_sid, from_, to or self.number, body), **(extra or {})}
        return self._post(signed_post(self.auth_token, url, form, "inbound"))

    def replay(self, index: int = -1) -> Reply:
        """Send an earlier inbound text again, exactly (same form, signature and idempotency token)."""
        earlier = self.inbound[index]
        return self._post(Post(earlier.url, dict(earlier.form), earlier.signature, kind=earlier.kind,
                               headers=dict(earlier.headers)))

    def _post(self, post: Post) -> Reply:
        self.inbound.append(deliver(post, self.routes))
        if post.error:
            raise ConnectionError(f"could not post to {post.url}: {post.error}")
        return Reply(post.status, post.body)

    def _changed(self, message: dict) -> None:
        """A message changed state (called by the queues, lock held): post its status callback if it asked."""
        url = message["_form"].get("StatusCallback")
        if url and self.send_callbacks:
            self._callback_sender.send(url, callback_form(message))

    # --- the API ---------------------------------------------------------------------------------------------------

    def _api(self, method: str, path: str, query: dict, form: dict, handler: _Handler, over_cap: bool):
        """(status, JSON body) for one API request; (None, None) when there is no one left to answer."""
        messages_path = MESSAGES.format(sid=self.account_sid)
        if method == "POST" and path == messages_path:
            with self._lock:
                self.requests.append(form)
        if over_cap:
            return 429, error_body(429, 20429)
        expected = base64.b64encode(f"{self.account_sid}:{self.auth_token}".encode()).decode()
        if handler.headers.get("Authorization") != f"Basic {expected}":
            return 401, error_body(401, 20003)
        if self._account_failure:
            return self._account_failure[0], error_body(*self._account_failure, from_=form.get("From", ""))
        if method == "POST" and path == messages_path:
            return self._create(form, handler)
        if method == "GET" and path == messages_path:
            with self._lock:
                return 200, listing(self.messages, query, path)
        one = ONE_MESSAGE.fullmatch(path)
        if method == "GET" and one and one.group(1) == self.account_sid:
            with self._lock:
                found = next((public(m) for m in self.messages if m["sid"] == one.group(2)), None)
            if found:
                return 200, found
        return 404, error_body(404, 20404, path=path)

    def _create(self, form: dict, handler: _Handler):
        to = form.get("To", "")
        with self._lock:
            delay = self._delays.get(to, self.delay)
        if delay:
            if self._stopping.wait(delay) or _client_gone(handler.connection):
                return None, None  # the client gave up: Twilio never saw this request
        stall = 0.0
        with self._lock:
            failure = self._scripts[to].popleft() if self._scripts.get(to) else self._always.get(to)
            if failure is None and self._faults:
                fault_rate, dice, kinds, stall_seconds = self._faults
                if dice.random() < fault_rate:
                    kind = dice.choice(kinds)
                    failure = {"429": (429, 20429), "500": (500, None), "503": (503, None)}.get(kind)
                    stall = stall_seconds if kind == "stall" else 0.0
        if failure is None:
            failure = self._refusal(form)
        if failure is not None:
            status, code = failure
            return status, error_body(status, code, to=to, from_=form.get("From", ""))
        with self._lock:
            message = new_message(self.account_sid, form, datetime.now(UTC), time.monotonic())
            self.messages.append(message)
            answer = public(message)  # as accepted: the queue may send it before this answer leaves
            self.queues.accept(message)
            planned = self._stalls.get(to)
            if planned:
                stall = max(stall, planned[0])
                planned[1] -= 1
                if planned[1] <= 0:
                    del self._stalls[to]
        if stall:
            self._stopping.wait(stall)
        return 201, answer

    def _refusal(self, form: dict) -> tuple[int, int] | None:
        """What Twilio refuses in the request itself: no To, no Body, a From the account does not own."""
        if not form.get("To"):
            return 400, 21604
        if not (form.get("Body") or form.get("MediaUrl") or form.get("ContentSid")):
            return 400, 21602
        if self.numbers is not None and form.get("From") and form["From"] not in self.numbers:
            return 400, 21606
        return None


class _Server(ThreadingHTTPServer):
    request_queue_size = 128  # http.server's 5 drops connections when many clients arrive at once, as under load


def _client_gone(connection: socket.socket) -> bool:
    """True when the client closed its end (it timed out) while the request waited."""
    try:
        readable, _, _ = select.select([connection], [], [], 0)
        return bool(readable) and connection.recv(1, socket.MSG_PEEK) == b""
    except OSError:
        return True


class _Handler(BaseHTTPRequestHandler):
    protocol_version = "HTTP/1.1"  # keep-alive, as the SDK's requests session expects
    disable_nagle_algorithm = True  # headers and body go in two writes: without this, 40 ms per answer

    def log_message(self, *args) -> None:  # keep test output clean
        pass

    def do_GET(self) -> None:  # noqa: N802 - http.server's naming
        self._dispatch("GET")

    def do_POST(self) -> None:  # noqa: N802
        self._dispatch("POST")

    def _dispatch(self, method: str) -> None:
        fake: FakeTwilio = self.server.fake
        if fake._stopping.is_set():  # a stopped fake answers nothing, even on a connection kept alive
            self.close_connection = True
            return
        length = int(self.headers.get("Content-Length") or 0)
        raw = self.rfile.read(length).decode() if length else ""  # always read: the connection is reused
        parts = urlsplit(self.path)
        query = dict(parse_qsl(parts.query, keep_blank_values=True))
        if parts.path.startswith("/_fake/"):
            return self._control(fake, method, parts.path[len("/_fake"):], query, raw)
        form = dict(parse_qsl(raw, keep_blank_values=True)) if method == "POST" else {}
        with fake._lock:
            fake._in_flight += 1
            fake.max_in_flight = max(fake.max_in_flight, fake._in_flight)
            over_cap = fake.max_concurrent is not None and fake._in_flight > fake.max_concurrent
        try:
            status, body = fake._api(method, parts.path, query, form, self, over_cap)
            if status is None:
                self.close_connection = True
            else:
                self._json(status, body)
        finally:
            with fake._lock:
                fake._in_flight -= 1

    def _control(self, fake: FakeTwilio, method: str, path: str, query: dict, raw: str) -> None:
        route = fake._control.get(f"{method} {path}")
        if route is None:
            return self._json(404, {"error": f"no {method} /_fake{path}"})
        try:
            result = route(json.loads(raw) if raw else query)
        except (KeyError, TypeError, ValueError, ConnectionError) as error:
            return self._json(400, {"error": f"{type(error).__name__}: {error}"})
        self._json(200, {"ok": True} if result is None else result)

    def _json(self, status: int, body) -> None:
        data = json.dumps(body, default=str).encode()
        try:
            self.send_response(status)
            self.send_header("Content-Type", "application/json")
            self.send_header("Content-Length", str(len(data)))
            self.end_headers()
            self.wfile.write(data)
        except OSError:  # the client went away (it timed out while the answer stalled)
            self.close_connection = True


def main(argv: list[str] | None = None) -> None:
    parser = argparse.ArgumentParser(description="A Twilio-shaped server for tests, with faults on demand.")
    parser.add_argument("--port", type=int, default=0)
    parser.add_argument("--account-sid", default="AC" + "0" * 32)
    parser.add_argument("--auth-token", default="fake-auth-token")
    parser.add_argument("--mps", type=float, default=None, help="segments/second per sender (default: no limit)")
    parser.add_argument("--queue-seconds", type=float, default=36_000)
    parser.add_argument("--delivery-seconds", type=float, default=0.0)
    parser.add_argument("--max-concurrent", type=int, default=None)
    parser.add_argument("--fault-rate", type=float, default=0.0)
    parser.add_argument("--seed", type=int, default=0)
    parser.add_argument("--stall-seconds", type=float, default=30.0)
    parser.add_argument("--route", action="append", default=[], metavar="PUBLIC=ACTUAL",
                        help="post webhooks for PUBLIC base URL to ACTUAL base URL")
    args = parser.parse_args(argv)
    fake = FakeTwilio(args.account_sid, args.auth_token, mps=args.mps, queue_seconds=args.queue_seconds,
                      delivery_seconds=args.delivery_seconds, max_concurrent=args.max_concurrent, port=args.port)
    if args.fault_rate:
        fake.faults(args.fault_rate, args.seed, stall_seconds=args.stall_seconds)
    for pair in args.route:
        public_base, _, actual_base = pair.partition("=")
        fake.route(public_base, actual_base)
    fake.start()
    run_until_signalled(f"fake twilio listening on {fake.url}")
    fake.stop()


if __name__ == "__main__":
    main()
