"""Properties of SMS segment counting, checked against a carrier's way of cutting a long text: parts of at most
153 septets (GSM-7) or 67 UTF-16 units (UCS-2), filled in order, never splitting a character's escape pair or an
emoji's surrogate pair across two parts."""

from __future__ import annotations

from hypothesis import example, given, settings
from hypothesis import strategies as st

from notifier.delivery.channels import segments

GSM = sorted(segments.GSM_BASIC | segments.GSM_EXTENDED)
gsm_texts = st.text(alphabet=st.sampled_from(GSM), max_size=700)
any_texts = st.text(max_size=400)


def _units(character: str, gsm: bool) -> int:
    if gsm:
        return 2 if character in segments.GSM_EXTENDED else 1
    return len(character.encode("utf-16-le")) // 2


def carrier_parts(text: str) -> int:
    """How many messages a carrier sends `text` as, cutting it part by part."""
    gsm = all(c in segments.GSM_BASIC or c in segments.GSM_EXTENDED for c in text)
    single, part = (160, 153) if gsm else (70, 67)
    sizes = [_units(c, gsm) for c in text]
    if not sizes:
        return 0
    if sum(sizes) <= single:
        return 1
    parts, used = 1, 0
    for size in sizes:
        if used + size > part:
            parts, used = parts + 1, 0
        used += size
    return parts


@settings(max_examples=300)
@given(gsm_texts)
@example("a" * 152 + "€" + "a" * 152)  # 306 septets, but the euro's escape pair cannot straddle two parts
def test_a_text_within_gsm7_is_counted_in_septets_and_cut_like_a_carrier_does(text: str) -> None:
    count = segments.count(text)
    assert count.encoding == "GSM-7"
    assert count.units == len(text) + sum(c in segments.GSM_EXTENDED for c in text)
    assert count.segments == carrier_parts(text)


@settings(max_examples=300)
@given(gsm_texts, st.characters(blacklist_categories=["Cs"]).filter(lambda c: not segments.is_gsm7(c)),
       st.integers(0, 700))
def test_one_character_outside_gsm7_makes_the_whole_text_ucs2(text: str, character: str, where: int) -> None:
    where = min(where, len(text))
    mixed = text[:where] + character + text[where:]
    count = segments.count(mixed)
    assert count.encoding == "UCS-2"
    assert count.units == len(mixed.encode("utf-16-le")) // 2
    assert count.segments == carrier_parts(mixed)


@settings(max_examples=300)
@given(any_texts)
@example("é" + "a" * 65 + "😀" + "a" * 66)  # 134 units, but the emoji's two halves cannot straddle two parts
def test_any_text_costs_as_many_segments_as_a_carrier_sends(text: str) -> None:
    count = segments.count(text)
    assert count.segments == carrier_parts(text)
    assert (count.segments == 0) == (text == "")
    single = 160 if count.encoding == "GSM-7" else 70
    assert (count.segments <= 1) == (count.units <= single)


@settings(max_examples=200)
@given(any_texts, any_texts)
def test_a_longer_text_never_costs_fewer_segments(text: str, more: str) -> None:
    assert segments.segments(text + more) >= segments.segments(text)
