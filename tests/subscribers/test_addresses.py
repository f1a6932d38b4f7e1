"""What counts as a Canadian mobile number: the quick form of the region check gives the full check's answers."""

from __future__ import annotations

import phonenumbers

from notifier.subscribers.addresses import ContactError, parse_phone


def _full_check(raw: str) -> str:
    """parse_phone as it was, validating for Canada after finding the region: the reference."""
    text = raw.strip()
    if not text or len(text) > 32:
        return "phone_malformed"
    try:
        number = phonenumbers.parse(text, "CA")
    except phonenumbers.NumberParseException:
        return "phone_malformed"
    if not phonenumbers.is_possible_number(number):
        return "phone_malformed"
    if phonenumbers.region_code_for_number(number) != "CA" or not phonenumbers.is_valid_number_for_region(number,
                                                                                                           "CA"):
        return "phone_not_canadian"
    return phonenumbers.format_number(number, phonenumbers.PhoneNumberFormat.E164)


def _quick_check(raw: str) -> str:
    try:
        return parse_phone(raw)
    except ContactError as error:
        return error.code


def test_the_region_check_answers_as_the_full_check_for_every_north_american_area_code_and_more():
    numbers = [f"{area}-{exchange}-{line}" for area in range(200, 1000) for exchange in (200, 555, 911, 987)
               for line in ("0131", "9999")]
    numbers += ["+44 20 7946 0958", "+33 1 23 45 67 89", "+1 876 555 0133", "+1 900 555 0100", "1-800-555-0199",
                "(613) 555-0131", "+1 613 555 0131 ext 12", "613555013", "6135550131555", "abc", "+", "911"]
    answers = {raw: _quick_check(raw) for raw in numbers}
    assert answers == {raw: _full_check(raw) for raw in numbers}
    assert sum(1 for a in answers.values() if a.startswith("+1")) > 400  # both answers are well represented
    assert sum(1 for a in answers.values() if a == "phone_not_canadian") > 3000
