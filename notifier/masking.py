"""Contact details as they may appear in logs: never whole (MFIPPA; a log file is not a mailing list)."""

from __future__ import annotations


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
