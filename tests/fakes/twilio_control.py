"""The fake Twilio's control endpoints under `/_fake/` (JSON), and `TwilioControl`, the client tests use when the
fake runs as its own process (`python -m tests.fakes.twilio_server`).

GET  /_fake/stats, /_fake/messages[?to=], /_fake/callbacks
POST /_fake/script {to, failures: [[status, code], …]}   /_fake/always {to, status, code}
     /_fake/fail_delivery {to, status, code, times?}     /_fake/rate {mps, sender?}
     /_fake/fail_account {status, code}  /_fake/suspend_account  /_fake/restore_account  /_fake/rotate_token {token}
     /_fake/delay {seconds, to?}  /_fake/accept_then_stall {to, seconds, times?}  /_fake/max_concurrent {n}
     /_fake/faults {rate, seed?, kinds?, stall_seconds?}  /_fake/route {public, actual}
     /_fake/text {url, from, body, to?} -> {status, body}  /_fake/replay {index?} -> {status, body}  /_fake/reset
"""

from __future__ import annotations

from typing import Any

from tests.fakes.control import ControlClient
from tests.fakes.twilio_messages import public


def _message_view(message: dict) -> dict:
    return {**public(message), "accepted_at": message["_accepted_at"], "sender": message["_sender"],
            "status_callback": message["_form"].get("StatusCallback")}


def _set_delay(fake, body: dict) -> None:
    if body.get("to"):
        fake.delay_for(body["to"], float(body["seconds"]))
    else:
        fake.delay = float(body["seconds"])


def _set_cap(fake, body: dict) -> None:
    fake.max_concurrent = None if body.get("n") is None else int(body["n"])


def control_routes(fake) -> dict:
    """The `/_fake/…` routes of one FakeTwilio: "METHOD /path" -> function(body or query) -> JSON-able."""

    def messages(query: dict) -> list[dict]:
        with fake._lock:
            return [_message_view(m) for m in fake.messages if not query.get("to") or m["to"] == query["to"]]

    def reply(answer) -> dict:
        return {"status": answer.status, "body": answer.body}

    return {
        "GET /stats": lambda _: fake.stats(),
        "GET /messages": messages,
        "GET /callbacks": lambda _: [{"url": c.url, "form": c.form, "status": c.status, "error": c.error}
                                     for c in list(fake.callbacks)],
        "POST /script": lambda b: fake.script(b["to"], *[tuple(f) for f in b["failures"]]),
        "POST /always": lambda b: fake.always(b["to"], int(b["status"]), b.get("code")),
        "POST /fail_delivery": lambda b: fake.fail_delivery(b["to"], b.get("status", "undelivered"),
                                                            int(b.get("code", 30003)), b.get("times")),
        "POST /rate": lambda b: fake.rate(None if b.get("mps") is None else float(b["mps"]), b.get("sender")),
        "POST /fail_account": lambda b: fake.fail_account(int(b["status"]), b.get("code")),
        "POST /suspend_account": lambda _: fake.suspend_account(),
        "POST /restore_account": lambda _: fake.restore_account(),
        "POST /rotate_token": lambda b: fake.rotate_token(b["token"]),
        "POST /delay": lambda b: _set_delay(fake, b),
        "POST /accept_then_stall": lambda b: fake.accept_then_stall(b["to"], float(b["seconds"]),
                                                                    int(b.get("times", 1))),
        "POST /max_concurrent": lambda b: _set_cap(fake, b),
        "POST /faults": lambda b: fake.faults(float(b["rate"]), int(b.get("seed", 0)),
                                              tuple(b.get("kinds") or ("429", "500", "503", "stall")),
                                              float(b.get("stall_seconds", 30.0))),
        "POST /route": lambda b: fake.route(b["public"], b["actual"]),
        "POST /text": lambda b: reply(fake.text(b["url"], b["from"], b["body"], b.get("to"))),
        "POST /replay": lambda b: reply(fake.replay(int(b.get("index", -1)))),
        "POST /reset": lambda _: fake.reset(),
    }


class TwilioControl(ControlClient):
    """Drives a fake Twilio in another process through `/_fake/` (give it the fake's base URL)."""

    def __init__(self, url: str, timeout: float = 30.0) -> None:
        super().__init__(url.rstrip("/") + "/_fake", timeout)

    def stats(self) -> dict:
        return self.get("/stats")

    def messages(self, to: str | None = None) -> list[dict]:
        return self.get("/messages", **({"to": to} if to else {}))

    def callbacks(self) -> list[dict]:
        return self.get("/callbacks")

    def script(self, to: str, *failures: tuple[int, int | None]) -> None:
        self.post("/script", to=to, failures=[list(f) for f in failures])

    def always(self, to: str, status: int, code: int | None) -> None:
        self.post("/always", to=to, status=status, code=code)

    def fail_delivery(self, to: str, status: str = "undelivered", code: int = 30003, times: int | None = None) -> None:
        self.post("/fail_delivery", to=to, status=status, code=code, times=times)

    def rate(self, mps: float | None, sender: str | None = None) -> None:
        self.post("/rate", mps=mps, sender=sender)

    def fail_account(self, status: int, code: int | None) -> None:
        self.post("/fail_account", status=status, code=code)

    def suspend_account(self) -> None:
        self.post("/suspend_account")

    def restore_account(self) -> None:
        self.post("/restore_account")

    def rotate_token(self, token: str) -> None:
        self.post("/rotate_token", token=token)

    def delay(self, seconds: float, to: str | None = None) -> None:
        self.post("/delay", seconds=seconds, to=to)

    def accept_then_stall(self, to: str, seconds: float, times: int = 1) -> None:
        self.post("/accept_then_stall", to=to, seconds=seconds, times=times)

    def max_concurrent(self, n: int | None) -> None:
        self.post("/max_concurrent", n=n)

    def faults(self, rate: float, seed: int = 0, kinds: tuple[str, ...] | None = None,
               stall_seconds: float = 30.0) -> None:
        self.post("/faults", rate=rate, seed=seed, kinds=list(kinds) if kinds else None, stall_seconds=stall_seconds)

    def route(self, public_base: str, actual_base: str) -> None:
        self.post("/route", public=public_base, actual=actual_base)

    def text(self, url: str, from_: str, body: str, to: str | None = None) -> dict[str, Any]:
        return self.post("/text", url=url, body=body, to=to, **{"from": from_})

    def replay(self, index: int = -1) -> dict[str, Any]:
        return self.post("/replay", index=index)

    def reset(self) -> None:
        self.post("/reset")
