"""How many SMS segments a text costs: GSM-7 (160 per text, 153 per part) or UCS-2 (70, 67 per part).

One character outside the GSM-7 alphabet (`ê`, `â`, `ô`, a lowercase `ç`, a curly apostrophe) switches the whole
text to UCS-2 and more than halves what fits, so French texts are counted, and tested, separately.
"""

from __future__ import annotations

from dataclasses import dataclass

# GSM 03.38 basic alphabet (one septet each) and its extension table (escape + one septet: two each).
GSM_BASIC = frozenset(
    "@£$¥èéùìòÇ\nØø\rÅåΔ_ΦΓΛΩΠΨΣΘΞ\x1bÆæßÉ !\"#¤%&'()*+,-./0123456789:;<=>?"
    "¡ABCDEFGHIJKLMNOPQRSTUVWXYZÄÖÑÜ§¿abcdefghijklmnopqrstuvwxyzäöñüà"
)
GSM_EXTENDED = frozenset("^{}\\[~]|€\f")


@dataclass(frozen=True)
class SegmentCount:
    """The encoding a text needs, its length in that encoding's units, and the segments it is billed as."""

    encoding: str  # "GSM-7" or "UCS-2"
    units: int
    segments: int


def is_gsm7(text: str) -> bool:
    """True when every character of `text` exists in GSM-7 (basic or extension table)."""
    return all(ch in GSM_BASIC or ch in GSM_EXTENDED for ch in text)


def count(text: str) -> SegmentCount:
    """Count the segments of `text` the way carriers bill them."""
    if is_gsm7(text):
        units = sum(2 if ch in GSM_EXTENDED else 1 for ch in text)
        single, part = 160, 153
        encoding = "GSM-7"
    else:
        units = len(text.encode("utf-16-le")) // 2  # UTF-16 code units: an emoji takes two
        single, part = 70, 67
        encoding = "UCS-2"
    if units == 0:
        return SegmentCount(encoding, 0, 0)
    segments = 1 if units <= single else -(-units // part)
    return SegmentCount(encoding, units, segments)


def segments(text: str) -> int:
    """Just the number of segments of `text`."""
    return count(text).segments
