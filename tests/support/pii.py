"""Finds what must never be in a log: whole phone numbers, email addresses, signed link tokens, Twilio account
SIDs, and secrets the caller names (an auth token). Masked forms (`+1613***0123`, `p***@example.org`, what
notifier.masking writes) are fine.

    assert offending_lines(process.log()) == []
    assert offending_lines(text, secrets=[AUTH_TOKEN], allowed=["status@example.org"]) == []

What it recognises: E.164 numbers (`+16135550123`), North American 10-digit forms (`613-555-0123`,
`(613) 555-0123`, `613.555.0123`, `6135550123`, `1-613-555-0123`; area code and exchange starting 2-9, so Unix
timestamps and most ids do not match), email addresses, anything after /manage/, /unsubscribe/, /confirm/ or
/staff/signin/ in a path, bare `itsdangerous` URL-safe timed tokens (payload.timestamp.signature), `AC` + 32 hex.
What it does not: numbers written with words or split across lines, other countries' national formats, secrets it
is not told about. An address that is not a person's (the service's own sender) goes in `allowed`.
"""

from __future__ import annotations

import re
from collections.abc import Iterable
from dataclasses import dataclass

PATTERNS = {
    "phone": re.compile(r"(?<![\w*+])\+\d{10,15}(?![\d*])"),
    "phone (10 digits)": re.compile(
        r"(?<![\w*+.\-])(?:\+?1[-. ]?)?(?:\([2-9]\d\d\)\s?|[2-9]\d\d[-. ]?)[2-9]\d\d[-. ]?\d{4}(?![\w*])"
    ),
    "email": re.compile(
        r"(?<![\w.%+*\-])[A-Za-z0-9][A-Za-z0-9._%+\-]*@[A-Za-z0-9\-]+(?:\.[A-Za-z0-9\-]+)*\.[A-Za-z]{2,}"
    ),
    "link token": re.compile(r"/(?:manage|unsubscribe|confirm|staff/signin)/(?![*<{])[^\s/?#\"'<>*]{8,}"),
    # itsdangerous: base64url payload (a leading "." when compressed), a 4-byte timestamp (6 characters), and an
    # HMAC of 20, 32 or 64 bytes (SHA-1, the default, SHA-256, SHA-512).
    "signed token": re.compile(
        r"(?<![\w.\-])\.?[A-Za-z0-9_\-]+\.[A-Za-z0-9_\-]{6}\.(?:[A-Za-z0-9_\-]{86}|[A-Za-z0-9_\-]{43}|[A-Za-z0-9_\-]{27})"
        r"(?![\w\-])"
    ),
    "Twilio account SID": re.compile(r"(?<![A-Za-z0-9])AC[0-9a-f]{32}(?![0-9a-f])"),
}


@dataclass(frozen=True)
class Finding:
    """One thing found: the line number (from 1), what it is, the text matched, and the whole line."""

    line_number: int
    kind: str
    found: str
    line: str


def scan(text: str, secrets: Iterable[str] = (), allowed: Iterable[str] = ()) -> list[Finding]:
    """Everything in `text` that looks like personal data or a secret, except the exact strings in `allowed`."""
    secrets = [s for s in secrets if s]
    allowed = set(allowed)
    findings = []
    for number, line in enumerate(text.splitlines(), start=1):
        for kind, pattern in PATTERNS.items():
            for match in pattern.finditer(line):
                if match.group(0).strip() not in allowed:
                    findings.append(Finding(number, kind, match.group(0).strip(), line))
        findings.extend(Finding(number, "secret", secret, line) for secret in secrets if secret in line)
    return findings


def offending_lines(text: str, secrets: Iterable[str] = (), allowed: Iterable[str] = ()) -> list[str]:
    """The lines of `text` holding a phone number, an email address, a link token, an account SID or a secret."""
    lines: dict[int, str] = {}
    for finding in scan(text, secrets, allowed):
        lines.setdefault(finding.line_number, finding.line)
    return [lines[number] for number in sorted(lines)]
