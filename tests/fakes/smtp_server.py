"""A real SMTP server (aiosmtpd) on loopback that a test can make fail the ways mail relays fail.

`FakeSmtp().start()`; give the app `fake.url` (smtp://127.0.0.1:PORT). It records every message it accepts
(`fake.received`, `fake.messages()` parsed, `fake.stats()`), and on demand:
- `down()` / `up()`: stops listening (connections refused, open sessions dropped), then listens on the same port;
- `refuse(address, code)`: refuses one recipient at RCPT (550, 551, 552, 553 permanent; 450, 451, 452 temporary);
- `answer(stage, code)`: answers every session at "connect", "mail", "rcpt" or "data" with that code (push-back:
  421 closes the connection after saying so, as a relay shedding load does; so does any answer at connect);
  `answer(stage, None)` stops;
- `require_auth(username, password)`: AUTH PLAIN/LOGIN without TLS (loopback); MAIL before AUTH gets 530, a wrong
  password 535.
It does not do TLS/STARTTLS, DSNs, greylisting timers, size limits, or delivery anywhere.

Standalone: `python -m tests.fakes.smtp_server [--port N] [--control-port M]` prints `smtp listening on
127.0.0.1:N` and `control on http://127.0.0.1:M`; `SmtpControl(url)` drives it (GET /stats, /messages; POST
/down, /up, /refuse, /answer, /auth, /reset).
"""

from __future__ import annotations

import argparse
import re
import socket
import threading
import time
import warnings
from collections import Counter
from dataclasses import dataclass, field
from email import message_from_bytes, policy
from email.message import EmailMessage

from aiosmtpd.controller import Controller
from aiosmtpd.smtp import SMTP, AuthResult, LoginPassword

from tests.fakes.control import ControlClient, ControlServer, run_until_signalled

TEXT = {
    421: "4.3.2 Service not available, closing transmission channel", 450: "4.2.1 Mailbox busy, try again later",
    451: "4.3.0 Local error, try again later", 452: "4.3.1 Insufficient system storage",
    550: "5.1.1 Mailbox unavailable", 551: "5.1.6 User not local", 552: "5.2.2 Mailbox full",
    553: "5.1.3 Mailbox name not allowed", 554: "5.7.1 Transaction failed",
}
STAGES = ("connect", "mail", "rcpt", "data")


def reply(code: int, text: str | None = None) -> str:
    """An SMTP reply line: "550 5.1.1 Mailbox unavailable"."""
    return f"{code} {text or TEXT.get(code, 'Refused')}"


@dataclass
class Received:
    """One message accepted: envelope sender and recipients, the raw content, its Message-ID, when."""

    mail_from: str
    rcpt_tos: list[str]
    content: bytes
    message_id: str
    at: float = field(default_factory=time.time)


class _FaultySMTP(SMTP):
    """aiosmtpd's server with the fake's session-wide answers in front of each stage."""

    def __init__(self, fake: FakeSmtp, **kwargs) -> None:
        super().__init__(fake, **kwargs)
        self.fake = fake

    async def _refuse_if_told(self, stage: str) -> bool:
        answer = self.fake._answers.get(stage)
        if answer is None:
            return False
        await self.push(answer)
        if (stage == "connect" or answer.startswith("421")) and self.transport is not None:
            self.transport.close()  # a refused greeting or 421 ends the session (RFC 5321 3.1, 3.8)
        return True

    async def _handle_client(self) -> None:
        if not await self._refuse_if_told("connect"):
            await super()._handle_client()

    async def smtp_MAIL(self, arg: str) -> None:  # noqa: N802 - aiosmtpd's naming
        if not await self._refuse_if_told("mail"):
            await super().smtp_MAIL(arg)

    async def smtp_RCPT(self, arg: str) -> None:  # noqa: N802
        if not await self._refuse_if_told("rcpt"):
            await super().smtp_RCPT(arg)

    async def smtp_DATA(self, arg: str) -> None:  # noqa: N802
        if not await self._refuse_if_told("data"):
            await super().smtp_DATA(arg)


class _Controller(Controller):
    def __init__(self, fake: FakeSmtp, **kwargs) -> None:
        super().__init__(fake, **kwargs)
        self.fake = fake

    def factory(self) -> SMTP:
        credentials = self.fake._credentials  # read per connection: require_auth() applies to the next session
        with warnings.catch_warnings():  # AUTH without TLS is the point here (loopback, test credentials)
            warnings.filterwarnings("ignore", message="Requiring AUTH while not requiring TLS")
            return _FaultySMTP(self.fake, hostname="fake-smtp.test", enable_SMTPUTF8=True,
                               auth_required=credentials is not None and self.fake._auth_required,
                               auth_require_tls=False,
                               authenticator=self.fake._authenticate if credentials else None)


class FakeSmtp:
    """See the module docstring. Also the aiosmtpd handler of its own server (the `handle_*` hooks)."""

    def __init__(self, port: int = 0, host: str = "127.0.0.1") -> None:
        self.host = host
        self.port = port or _free_port(host)
        self.received: list[Received] = []
        self.sessions = 0  # sessions that said EHLO/HELO
        self._refusals: dict[str, str] = {}
        self._answers: dict[str, str] = {}
        self._credentials: tuple[str, str] | None = None
        self._auth_required = False
        self._lock = threading.Lock()
        self._controller: _Controller | None = None

    @property
    def url(self) -> str:
        return f"smtp://{self.host}:{self.port}"

    def start(self) -> FakeSmtp:
        return self.up()

    def stop(self) -> None:
        self.down()

    def up(self) -> FakeSmtp:
        """Listen (again) on the same port."""
        if self._controller is None:
            self._controller = _Controller(self, hostname=self.host, port=self.port)
            self._controller.start()
        return self

    def down(self) -> None:
        """Stop listening and drop open sessions: new connections are refused until `up()`."""
        if self._controller is not None:
            self._controller.stop()
            self._controller = None

    def refuse(self, address: str, code: int = 550, text: str | None = None) -> None:
        """Refuse `address` at RCPT with `code` from now on (`code=None`: accept it again)."""
        with self._lock:
            if code is None:
                self._refusals.pop(address.lower(), None)
            else:
                self._refusals[address.lower()] = reply(code, text)

    def answer(self, stage: str, code: int | None, text: str | None = None) -> None:
        """Answer every session at `stage` (connect, mail, rcpt, data) with `code`; None: stop doing so."""
        if stage not in STAGES:
            raise ValueError(f"stage must be one of {STAGES}, not {stage!r}")
        with self._lock:
            if code is None:
                self._answers.pop(stage, None)
            else:
                self._answers[stage] = reply(code, text)

    def require_auth(self, username: str, password: str, required: bool = True) -> None:
        """Offer AUTH with these credentials (and, if `required`, refuse MAIL without it: 530)."""
        self._credentials = (username, password)
        self._auth_required = required

    def no_auth(self) -> None:
        self._credentials = None
        self._auth_required = False

    def reset(self) -> None:
        """Forget messages and faults (the server keeps running)."""
        with self._lock:
            self.received.clear()
            self._refusals.clear()
            self._answers.clear()
            self.sessions = 0
        self.no_auth()

    def messages(self) -> list[EmailMessage]:
        """Every accepted message, parsed."""
        return [message_from_bytes(r.content, policy=policy.default) for r in list(self.received)]

    def stats(self) -> dict:
        """Totals, messages per recipient, distinct Message-IDs, and (recipient, Message-ID) pairs seen twice+."""
        with self._lock:
            pairs = Counter((rcpt, r.message_id) for r in self.received for rcpt in r.rcpt_tos)
            return {
                "messages": len(self.received), "sessions": self.sessions,
                "per_recipient": dict(Counter(rcpt for rcpt, _ in pairs.elements())),
                "message_ids": len({r.message_id for r in self.received}),
                "duplicates": [{"recipient": rcpt, "message_id": mid, "count": n}
                               for (rcpt, mid), n in sorted(pairs.items()) if n > 1],
            }

    # --- aiosmtpd hooks ------------------------------------------------------------------------------------------

    async def handle_EHLO(self, server, session, envelope, hostname, responses):  # noqa: N802 - aiosmtpd's naming
        with self._lock:
            self.sessions += 1
        session.host_name = hostname
        return responses

    async def handle_HELO(self, server, session, envelope, hostname):  # noqa: N802
        with self._lock:
            self.sessions += 1
        session.host_name = hostname
        return f"250 {server.hostname}"

    async def handle_RCPT(self, server, session, envelope, address, rcpt_options):  # noqa: N802
        refusal = self._refusals.get(address.lower())
        if refusal:
            return refusal
        envelope.rcpt_tos.append(address)
        return "250 OK"

    async def handle_DATA(self, server, session, envelope):  # noqa: N802
        found = re.search(rb"^Message-ID:\s*(<[^>\r\n]+>)", envelope.content, re.MULTILINE | re.IGNORECASE)
        with self._lock:
            self.received.append(Received(envelope.mail_from, list(envelope.rcpt_tos), envelope.content,
                                          found.group(1).decode() if found else ""))
        return "250 Message accepted for delivery"

    def _authenticate(self, server, session, envelope, mechanism, auth_data) -> AuthResult:
        expected = self._credentials
        if expected is None or not isinstance(auth_data, LoginPassword):
            return AuthResult(success=False, handled=False)
        given = (auth_data.login.decode(), auth_data.password.decode())
        return AuthResult(success=given == expected, handled=False)


def _free_port(host: str) -> int:
    # aiosmtpd's controller needs a port number up front (it connects to itself once started).
    with socket.socket() as sock:
        sock.bind((host, 0))
        return sock.getsockname()[1]


class SmtpControl(ControlClient):
    """Drives a standalone fake (`python -m tests.fakes.smtp_server`) through its control port."""

    def stats(self) -> dict:
        return self.get("/stats")

    def messages(self) -> list[dict]:
        return self.get("/messages")

    def down(self) -> None:
        self.post("/down")

    def up(self) -> None:
        self.post("/up")

    def refuse(self, address: str, code: int | None = 550) -> None:
        self.post("/refuse", address=address, code=code)

    def answer(self, stage: str, code: int | None) -> None:
        self.post("/answer", stage=stage, code=code)

    def require_auth(self, username: str, password: str, required: bool = True) -> None:
        self.post("/auth", username=username, password=password, required=required)

    def reset(self) -> None:
        self.post("/reset")


def main(argv: list[str] | None = None) -> None:
    parser = argparse.ArgumentParser(description="An SMTP server on loopback that fails on demand.")
    parser.add_argument("--port", type=int, default=0)
    parser.add_argument("--control-port", type=int, default=0)
    args = parser.parse_args(argv)
    fake = FakeSmtp(port=args.port).start()
    control = ControlServer({
        "GET /stats": lambda _: fake.stats(),
        "GET /messages": lambda _: [{"mail_from": r.mail_from, "rcpt_tos": r.rcpt_tos, "message_id": r.message_id,
                                     "at": r.at, "subject": str(m["Subject"] or "")}
                                    for r, m in zip(list(fake.received), fake.messages(), strict=False)],
        "POST /down": lambda _: fake.down(),
        "POST /up": lambda _: fake.up() and None,
        "POST /refuse": lambda body: fake.refuse(body["address"], body.get("code", 550), body.get("text")),
        "POST /answer": lambda body: fake.answer(body["stage"], body.get("code"), body.get("text")),
        "POST /auth": lambda body: fake.require_auth(body["username"], body["password"], body.get("required", True)),
        "POST /reset": lambda _: fake.reset(),
    }, port=args.control_port).start()
    run_until_signalled(f"smtp listening on {fake.host}:{fake.port}", f"control on {control.url}")
    control.stop()
    fake.stop()


if __name__ == "__main__":
    main()
