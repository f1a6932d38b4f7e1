"""Contact details as they may appear in logs: never whole (MFIPPA; a log file is not a mailing list).

`mask`, `mask_phone` and `mask_email` are for code that logs an address on purpose. `MaskingFilter` is the safety
net under everything else: installed on every handler by `install` (the command line and the web app both call
it), it rewrites each record's message, arguments, traceback and stack so that no phone number, email address,
link token, Twilio account SID or configured secret gets through, whoever logged it (a library included).
The patterns are public (`PATTERNS`, `LINK_TOKEN`) so the access log's redaction can use the same ones.
"""

from __future__ import annotations

import logging
import re
from collections.abc import Iterable


def mask_phone(number: str) -> str:
    """'+14165551234' -> '+1416***1234'."""
    if len(number) <= 8:
        return "***"
    return f"{number[:5]}***{number[-4:]}"


def mask_email(address: str) -> str:
    """'parent@example.com' -> 'p***@example.com'."""
    local, _, domain = address.partition("@")
    return f"{local[:1]}***@{domain}" if domain else "***"


def mask(contact: str) -> str:
    """Mask a phone number or an email address, whichever `contact` is."""
    return mask_email(contact) if "@" in contact else mask_phone(contact)


# A signed link's secret part: everything after /manage/, /unsubscribe/, /confirm/, /calendar/ or (staff) /signin/.
LINK_TOKEN = re.compile(r"(/(?:manage|unsubscribe|confirm|calendar|signin)/)(?![*<{])[^\s/?#\"'<>*]{8,}")
# A chat webhook's URL is its password (Slack, Teams/Power Automate): keep the host, hide the path. A webhook's
# secret (`whsec_…`) is never logged on purpose; this catches a mistake.
CHAT_WEBHOOK = re.compile(r"((?:hooks\.slack\.com|[\w.-]*webhook\.office\.com|[\w.-]*logic\.azure\.com)(?::\d+)?)"
                          r"/[^\s\"'<>]+")
WEBHOOK_SECRET = re.compile(r"whsec_[A-Za-z0-9+/=]{8,}")
PATTERNS: dict[str, re.Pattern[str]] = {
    "email": re.compile(r"(?<![\w.%+*\-])[A-Za-z0-9][A-Za-z0-9._%+\-]*@[A-Za-z0-9\-]+(?:\.[A-Za-z0-9\-]+)*"
                        r"\.[A-Za-z]{2,}"),
    "phone": re.compile(r"(?<![\w*+])\+\d{10,15}(?![\d*])"),
    # 613-555-0123, (613) 555-0123, 613.555.0123, 6135550123, 1-613-555-0123: area code and exchange 2-9.
    "phone (national)": re.compile(r"(?<![\w*+.\-])(?:1[-. ]?)?(?:\([2-9]\d\d\)\s?|[2-9]\d\d[-. ]?)[2-9]\d\d[-. ]?"
                                   r"\d{4}(?![\w*])"),
    "signed token": re.compile(r"(?<![\w.\-])\.?[A-Za-z0-9_\-]+\.[A-Za-z0-9_\-]{6}\."
                               r"(?:[A-Za-z0-9_\-]{86}|[A-Za-z0-9_\-]{43}|[A-Za-z0-9_\-]{27})(?![\w\-])"),
    "account sid": re.compile(r"(?<![A-Za-z0-9])AC[0-9a-f]{32}(?![0-9a-f])"),
}


def redact(text: str, secrets: Iterable[str] = ()) -> str:
    """`text` with every phone number, email address, link token, account SID and secret masked."""
    for secret in secrets:
        if secret:
            text = text.replace(secret, "***")
    text = LINK_TOKEN.sub(r"\1***", text)
    text = CHAT_WEBHOOK.sub(r"\1/***", text)
    text = WEBHOOK_SECRET.sub("whsec_***", text)
    text = PATTERNS["email"].sub(lambda m: mask_email(m.group(0)), text)
    text = PATTERNS["phone"].sub(lambda m: mask_phone(m.group(0)), text)
    text = PATTERNS["phone (national)"].sub(lambda m: "***" + re.sub(r"\D", "", m.group(0))[-4:], text)
    text = PATTERNS["signed token"].sub("***", text)
    return PATTERNS["account sid"].sub("AC***", text)


class MaskingFilter(logging.Filter):
    """Masks personal data and secrets in every record that passes (message, arguments, traceback, stack)."""

    def __init__(self, secrets: Iterable[str] = ()) -> None:
        super().__init__()
        self.secrets = [s for s in secrets if s and len(s) >= 4]

    def filter(self, record: logging.LogRecord) -> bool:
        try:
            message = record.getMessage()
        except Exception:  # a malformed record: keep what we can, masked
            message = f"{record.msg} {record.args}"
        record.msg, record.args = redact(message, self.secrets), ()
        if record.exc_info and not record.exc_text:
            record.exc_text = logging.Formatter().formatException(record.exc_info)
        if record.exc_text:
            record.exc_text = redact(record.exc_text, self.secrets)
        if record.stack_info:
            record.stack_info = redact(record.stack_info, self.secrets)
        return True


def install(secrets: Iterable[str] = ()) -> None:
    """Put a `MaskingFilter` on every handler there is now (root's and every logger's), and keep the Twilio SDK's
    request log (URLs with the account SID, recipients' numbers) and urllib3's (request paths, which for a chat
    webhook are its secret) at WARNING."""
    for name in ("twilio", "twilio.http_client", "urllib3.connectionpool"):  # urllib3: request paths (webhooks)
        logging.getLogger(name).setLevel(logging.WARNING)
    loggers = [logging.getLogger()] + [item for item in logging.Logger.manager.loggerDict.values()
                                      if isinstance(item, logging.Logger)]
    secrets = list(secrets)
    for logger in loggers:
        for handler in logger.handlers:
            if not any(isinstance(f, MaskingFilter) for f in handler.filters):
                handler.addFilter(MaskingFilter(secrets))
