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
    """Count the segments of `text` the way carriers bill them.

    A long text is cut into parts filled in order; a character never straddles two parts (a GSM-7 escape pair, a
    UCS-2 surrogate pair), so a part may hold one unit less than its limit and the total can exceed units / limit.
    """
    if is_gsm7(text):
        sizes = [2 if ch in GSM_EXTENDED else 1 for ch in text]
        single, part = 160, 153
        encoding = "GSM-7"
    else:
        sizes = [len(ch.encode("utf-16-le")) // 2 for ch in text]  # UTF-16 code units: an emoji takes two
        single, part = 70, 67
        encoding = "UCS-2"
    units = sum(sizes)
    if units == 0:
        return SegmentCount(encoding, 0, 0)
    if units <= single:
        return SegmentCount(encoding, units, 1)
    parts, used = 1, 0
    for size in sizes:
        if used + size > part:
            parts, used = parts + 1, 0
        used += size
    return SegmentCount(encoding, units, parts)


def segments(text: str) -> int:
    """Just the number of segments of `text`."""
    return count(text).segments


# What a digest text may cost: two segments (320 GSM-7 characters, or 134 UCS-2) where the content allows; the
# digest template keeps to it and tests/notices/test_matrix.py checks every kind of notice against it.
DIGEST_BUDGET = 2
