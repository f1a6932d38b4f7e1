"""What the fake Twilio sends TO the app: status callbacks and inbound texts, signed as Twilio signs them.

Both are form posts carrying `X-Twilio-Signature` = the SDK's `RequestValidator(auth token)` over the URL Twilio
was given (the public one) and the form. `Routes` maps a public base (https://status.example.org) to where the app
really listens (http://127.0.0.1:PORT), as the proxy in front of a real deployment does: the signature stays over
the public URL. A URL that is neither on loopback nor routed is recorded and not posted, so a test can never reach
a real host. Callbacks go out in order from one thread; a callback that cannot be delivered is recorded and
dropped (Twilio retries only in some setups; the fake never does).

The inbound form has the fields Twilio documents (MessageSid "SM…", SmsSid, AccountSid, From, To, Body,
NumSegments, NumMedia, FromCountry…); with Advanced Opt-Out it would add OptOutType, which the fake does not.
"""

from __future__ import annotations

import queue
import secrets
import threading
import urllib.error
import urllib.request
from collections.abc import Callable
from dataclasses import dataclass, field
from urllib.parse import urlencode, urlsplit

from twilio.request_validator import RequestValidator

from tests.fakes.twilio_messages import segments

LOOPBACK = ("127.0.0.1", "localhost", "::1")


@dataclass
class Post:
    """One webhook request: where it was addressed, where it went, what it carried, and the answer."""

    url: str
    form: dict
    signature: str
    posted_to: str | None = None
    status: int | None = None
    body: str = ""
    error: str | None = None
    kind: str = "callback"
    headers: dict = field(default_factory=dict)


class Routes:
    """Public base URLs -> where the app really listens."""

    def __init__(self) -> None:
        self._bases: dict[str, str] = {}

    def add(self, public_base: str, actual_base: str) -> None:
        self._bases[public_base.rstrip("/")] = actual_base.rstrip("/")

    def clear(self) -> None:
        self._bases.clear()

    def resolve(self, url: str) -> str | None:
        """Where to post `url`: routed, or as is on loopback, or None (not reachable from here)."""
        for public_base, actual_base in self._bases.items():
            if url == public_base or url.startswith(public_base + "/") or url.startswith(public_base + "?"):
                return actual_base + url[len(public_base):]
        return url if urlsplit(url).hostname in LOOPBACK else None


def sign(token: str, url: str, form: dict) -> str:
    """`X-Twilio-Signature` for a form posted to `url`."""
    return RequestValidator(token).compute_signature(url, form)


def signed_post(token: str, url: str, form: dict, kind: str) -> Post:
    """A webhook request ready to deliver (and to deliver again exactly, as Twilio's retries do)."""
    return Post(url, form, sign(token, url, form), kind=kind,
                headers={"I-Twilio-Idempotency-Token": secrets.token_hex(16)})


def deliver(post: Post, routes: Routes, timeout: float = 5.0) -> Post:
    """Send a signed form post (recording the answer or the failure in `post`)."""
    post.posted_to = routes.resolve(post.url)
    if post.posted_to is None:
        post.error = "not routed: neither loopback nor a route()d base"
        return post
    headers = {"X-Twilio-Signature": post.signature, "Content-Type": "application/x-www-form-urlencoded",
               "User-Agent": "TwilioProxy/1.1", **post.headers}
    request = urllib.request.Request(post.posted_to, data=urlencode(post.form).encode(), headers=headers,
                                     method="POST")
    try:
        with urllib.request.urlopen(request, timeout=timeout) as response:  # noqa: S310 - loopback or routed
            post.status, post.body = response.status, response.read().decode(errors="replace")
    except urllib.error.HTTPError as error:
        post.status, post.body = error.code, error.read().decode(errors="replace")
    except (OSError, ValueError) as error:
        post.error = f"{type(error).__name__}: {error}"
    return post


def callback_form(message: dict) -> dict:
    """The status callback Twilio posts when `message` changes state."""
    form = {"MessageSid": message["sid"], "SmsSid": message["sid"], "AccountSid": message["account_sid"],
            "MessageStatus": message["status"], "SmsStatus": message["status"], "To": message["to"] or "",
            "From": message["from"] or "", "ApiVersion": "2010-04-01"}
    if message["messaging_service_sid"]:
        form["MessagingServiceSid"] = message["messaging_service_sid"]
    if message["error_code"] is not None and message["status"] in ("failed", "undelivered"):
        form["ErrorCode"] = str(message["error_code"])
    return form


def inbound_form(account_sid: str, from_: str, to: str, body: str) -> dict:
    """The form Twilio posts to a number's messaging webhook when someone texts it."""
    sid = "SM" + secrets.token_hex(16)
    return {"ToCountry": "CA", "ToState": "ON", "SmsMessageSid": sid, "NumMedia": "0", "ToCity": "", "FromZip": "",
            "SmsSid": sid, "FromState": "ON", "SmsStatus": "received", "FromCity": "", "Body": body,
            "FromCountry": "CA", "To": to, "ToZip": "", "NumSegments": str(segments(body)), "MessageSid": sid,
            "AccountSid": account_sid, "From": from_, "ApiVersion": "2010-04-01"}


class CallbackSender:
    """Posts status callbacks in order from one thread; each `Post` is appended to `record` when done."""

    def __init__(self, routes: Routes, token: Callable[[], str], record: list[Post], timeout: float = 5.0) -> None:
        self.routes = routes
        self.token = token
        self.record = record
        self.timeout = timeout
        self._queue: queue.Queue = queue.Queue()
        self._thread = threading.Thread(target=self._run, daemon=True, name="fake-twilio-callbacks")

    def start(self) -> None:
        self._thread.start()

    def stop(self) -> None:
        self._queue.put(None)
        self._thread.join(timeout=self.timeout + 1)

    def send(self, url: str, form: dict) -> None:
        """Queue one callback (signed when it is sent, with the token of that moment)."""
        self._queue.put((url, form))

    def idle(self) -> bool:
        """True when no callback is waiting to be posted."""
        return self._queue.unfinished_tasks == 0

    def _run(self) -> None:
        while True:
            item = self._queue.get()
            try:
                if item is None:
                    return
                url, form = item
                self.record.append(deliver(signed_post(self.token(), url, form, "callback"), self.routes,
                                           self.timeout))
            finally:
                self._queue.task_done()
