"""Email over SMTP with `smtplib`: multipart text + HTML, one message per recipient, one connection per batch.

`NOTIFIER_SMTP_URL` is `smtp://user:pass@host:587` (STARTTLS when the server offers it, and required before a
password is sent to anything but loopback) or `smtps://user:pass@host:465` (TLS from the start).
Whose fault a refusal is follows RFC 5321 (reply codes) and RFC 3463 (enhanced status codes): a refused login,
sender or relay is the account's (the channel pauses); a refused recipient is the recipient's; 4xx and
connection trouble are temporary (421 and 451 also slow the shared rate down).
"""

from __future__ import annotations

import re
import smtplib
import ssl
from collections.abc import Iterator
from contextlib import contextmanager
from email.message import EmailMessage
from email.utils import formataddr, formatdate, parseaddr
from urllib.parse import unquote, urlsplit

from notifier.delivery.channels.base import Channel, Message, Receipt
from notifier.errors import (
    AccountError,
    ConfigError,
    DeliveryError,
    MessageError,
    RecipientError,
    TemporaryDeliveryError,
)

LOOPBACK = ("127.0.0.1", "localhost", "::1")
ENHANCED = re.compile(r"^\s*([245])\.(\d{1,3})\.(\d{1,3})\b")
PUSHBACK_CODES = {421, 451}


class SmtpChannel(Channel):
    """Sends email through one SMTP server; `session()` keeps one connection open for a batch."""

    name = "email"

    def __init__(self, url: str, mail_from: str, timeout: float = 30.0) -> None:
        parts = urlsplit(url)
        self.tls = parts.scheme == "smtps"
        self.host = parts.hostname or "localhost"
        self.port = parts.port or (465 if self.tls else 587)
        self.username = unquote(parts.username) if parts.username else None
        self.password = unquote(parts.password) if parts.password else None
        self.mail_from = mail_from
        self.timeout = timeout
        self._connection: smtplib.SMTP | None = None
        self._in_session = False
        if not parseaddr(mail_from)[1]:
            raise ConfigError(f"NOTIFIER_MAIL_FROM={mail_from!r}: expected an address such as "
                              "'School status <status@board.example>'")

    @contextmanager
    def session(self) -> Iterator[SmtpChannel]:
        """One SMTP connection for every send inside the block (reopened if the server drops it)."""
        self._in_session = True
        try:
            yield self
        finally:
            self._in_session = False
            self._close()

    def build(self, message: Message) -> EmailMessage:
        """The RFC 5322 message for `message`: deterministic Message-ID, language, plain text then HTML."""
        email = EmailMessage()
        email["From"] = self.mail_from
        email["To"] = formataddr(("", message.to))
        email["Subject"] = message.subject or ""
        email["Date"] = formatdate(localtime=False)
        domain = parseaddr(self.mail_from)[1].rpartition("@")[2] or "localhost"
        email["Message-ID"] = f"<{message.reference}@{domain}>"
        email.set_content(message.text)
        if message.html:
            email.add_alternative(message.html, subtype="html")
        # After the body: add_alternative moves Content-* headers into the first part.
        email["Content-Language"] = message.language
        for name, value in message.headers.items():
            if name in email:
                email.replace_header(name, value)
            else:
                email[name] = value
        return email

    def _send(self, message: Message) -> Receipt:
        try:
            return self._send_over_connection(message)
        finally:
            if not self._in_session:  # a single send (a confirmation) must not leave its connection open
                self._close()

    def _send_over_connection(self, message: Message) -> Receipt:
        try:
            email = self.build(message)
        except (ValueError, TypeError) as error:  # e.g. a line break in the subject: this message alone fails
            raise MessageError(f"the email could not be built: {error}") from None
        for attempt in (1, 2):  # a pooled connection may have been dropped by the server: reconnect once
            connection = self._connect()
            try:
                connection.send_message(email, to_addrs=[message.to])
                return Receipt(provider_id=email["Message-ID"], status="sent")
            except smtplib.SMTPServerDisconnected as error:
                self._connection = None
                if attempt == 2:
                    raise TemporaryDeliveryError(f"SMTP server disconnected: {error}") from None
            except smtplib.SMTPRecipientsRefused as error:
                code, reason = next(iter(error.recipients.values()))
                raise self._refused("RCPT", code, reason) from None
            except smtplib.SMTPSenderRefused as error:
                raise self._refused("MAIL", error.smtp_code, error.smtp_error) from None
            except smtplib.SMTPResponseException as error:
                raise self._refused("DATA", error.smtp_code, error.smtp_error) from None
            except (OSError, smtplib.SMTPException) as error:
                self._close()
                raise TemporaryDeliveryError(f"SMTP: {type(error).__name__}: {error}") from None
        raise TemporaryDeliveryError("SMTP: could not send")  # pragma: no cover - loop always returns or raises

    def _refused(self, stage: str, code: int, reason: bytes | str) -> DeliveryError:
        if code == 421:  # the server is closing this connection
            self._close()
        return classify(stage, code, reason)

    def _connect(self) -> smtplib.SMTP:
        if self._connection is not None:
            return self._connection
        try:
            if self.tls:
                connection: smtplib.SMTP = smtplib.SMTP_SSL(self.host, self.port, timeout=self.timeout,
                                                            context=ssl.create_default_context())
            else:
                connection = smtplib.SMTP(self.host, self.port, timeout=self.timeout)
                connection.ehlo()
                if connection.has_extn("starttls"):
                    connection.starttls(context=ssl.create_default_context())
                    connection.ehlo()
                elif self.username and self.host not in LOOPBACK:
                    connection.quit()
                    raise AccountError("SMTP server offers no STARTTLS; refusing to send the password "
                                       "in clear text (use smtps:// or a server with STARTTLS)")
            if self.username:
                connection.login(self.username, self.password or "")
        except smtplib.SMTPAuthenticationError as error:
            raise AccountError(f"SMTP login refused ({error.smtp_code}); check NOTIFIER_SMTP_URL",
                               code=error.smtp_code) from None
        except smtplib.SMTPResponseException as error:
            raise classify("LOGIN", error.smtp_code, error.smtp_error) from None
        except (OSError, smtplib.SMTPException) as error:
            raise TemporaryDeliveryError(f"SMTP connection to {self.host}:{self.port} failed: {error}") from None
        self._connection = connection
        return connection

    def _close(self) -> None:
        if self._connection is not None:
            try:
                self._connection.quit()
            except (OSError, smtplib.SMTPException):
                pass
            self._connection = None


def classify(stage: str, code: int, reason: bytes | str) -> DeliveryError:
    """Whose fault an SMTP refusal is, from the command refused (LOGIN, MAIL, RCPT, DATA) and its reply.

    4xx: temporary (421 and 451 push back). 5xx: 530/534/535, any refusal of LOGIN or MAIL FROM, and a relay or
    policy refusal of RCPT (5.7.x, "relay") are the account's; other RCPT refusals (5.1.x mailbox unknown, 551,
    553) and 5.1.x/5.2.x after DATA are the recipient's; anything else after DATA is this message's alone.
    """
    text = reason.decode("utf-8", "replace") if isinstance(reason, bytes) else str(reason)
    described = f"SMTP {code} at {stage}: {text[:300]}"
    if not 500 <= code < 600:
        return TemporaryDeliveryError(described, code=code, pushback=code in PUSHBACK_CODES)
    enhanced = ENHANCED.match(text)
    subject = int(enhanced.group(2)) if enhanced else None
    relay_refused = stage == "RCPT" and (subject == 7 or "relay" in text.lower())
    if code in (530, 534, 535) or stage in ("LOGIN", "MAIL") or relay_refused:
        return AccountError(described, code=code)
    if stage == "RCPT" or subject in (1, 2):
        return RecipientError(described, code=code)
    return MessageError(described, code=code)
