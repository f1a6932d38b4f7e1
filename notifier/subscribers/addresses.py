"""What counts as an address we may write to: a syntactically valid email, or a Canadian phone number in E.164.

`+1` alone is not Canada: +1 876 is Jamaica and +1 900 premium-rate, both favourites of SMS pumping, so a number
must be valid *and* belong to region CA. Errors carry a `code` that the pages turn into a sentence in the
parent's language (no user-facing text here).
"""

from __future__ import annotations

import functools

import phonenumbers
from email_validator import EmailNotValidError, validate_email
from phonenumbers.phonemetadata import PhoneMetadata

from notifier.errors import NotifierError

EMAIL, SMS = "email", "sms"


class ContactError(NotifierError):
    """An address we cannot accept; `code` is one of email_invalid, phone_malformed, phone_not_canadian."""

    def __init__(self, code: str) -> None:
        self.code = code
        super().__init__(code)


def parse_email(raw: str) -> str:
    """The normalised, lower-cased address; raises ContactError("email_invalid")."""
    text = (raw or "").strip()
    if not text or len(text) > 254:
        raise ContactError("email_invalid")
    try:
        return validate_email(text, check_deliverability=False).normalized.lower()
    except EmailNotValidError:
        raise ContactError("email_invalid") from None


def parse_phone(raw: str) -> str:
    """The number in E.164 (+16135550123); raises ContactError("phone_malformed" or "phone_not_canadian")."""
    text = (raw or "").strip()
    if not text or len(text) > 32:
        raise ContactError("phone_malformed")
    try:
        number = phonenumbers.parse(text, "CA")
    except phonenumbers.NumberParseException:
        raise ContactError("phone_malformed") from None
    if not phonenumbers.is_possible_number(number):
        raise ContactError("phone_malformed")
    # The region is looked up once (it is the slow part); a number found in no region has none. Where Canada's
    # metadata gives no leading digits, the lookup answers "CA" only for a number valid for Canada (it tries each
    # +1 region's full validation in turn), so asking again would change nothing.
    if phonenumbers.region_code_for_number(number) != "CA" or not (
            _found_means_valid() or phonenumbers.is_valid_number_for_region(number, "CA")):
        raise ContactError("phone_not_canadian")
    return phonenumbers.format_number(number, phonenumbers.PhoneNumberFormat.E164)


@functools.cache
def _found_means_valid() -> bool:
    """True when `region_code_for_number` returns "CA" only after validating the number for Canada: the region has
    no leading digits in this version of phonenumbers' metadata (a region with them is matched on those alone)."""
    metadata = PhoneMetadata.metadata_for_region("CA")
    return metadata is not None and metadata.leading_digits is None


def limit_key(channel: str, address: str) -> str:
    """The address as limits count it: one mailbox however it is spelled (case, dots, +tags), so variants of a
    victim's address share one limit. Only for counting: mail still goes to the address as typed."""
    if channel != EMAIL or "@" not in address:
        return address
    local, domain = address.lower().rsplit("@", 1)
    return f"{local.split('+', 1)[0].replace('.', '')}@{domain}"


def parse_any(raw: str) -> tuple[str, str]:
    """(channel, address) for text that is either an email address or a phone number (the lost-link form)."""
    if "@" in (raw or ""):
        return EMAIL, parse_email(raw)
    return SMS, parse_phone(raw)


def display_phone(e164: str) -> str:
    """'+16135550100' -> '613-555-0100', as parents write Canadian numbers."""
    number = phonenumbers.parse(e164, "CA")
    return phonenumbers.format_number(number, phonenumbers.PhoneNumberFormat.NATIONAL).replace(" ", "-") \
        .replace("(", "").replace(")", "")
