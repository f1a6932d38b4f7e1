"""Properties of reading parents' texts: case, accents, punctuation and spacing never change what a keyword means,
and no text at all (emoji, control characters, a novel) makes the handler fail instead of answering."""

from __future__ import annotations

import unicodedata

from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from notifier.config import ROOT
from notifier.status import document
from notifier.subscribers import keywords
from tests.conftest import NOW

BOARDS = document.load(str(ROOT / "boards.yaml")).status.by_id()
KEYWORDS = sorted(keywords.TWILIO_STOP | keywords.OUR_STOP | keywords.START | keywords.HELP)
ACCENTED = {"A": "ÀÂÄ", "E": "ÉÈÊË", "I": "ÎÏ", "O": "ÔÖ", "U": "ÙÛÜ", "C": "Ç"}
punctuation = st.text(alphabet=" \t\n.,;:!?¡¿«»\"'’()…-_*", max_size=4).filter(lambda s: "-" not in s)


@st.composite
def written(draw, keyword: str) -> str:
    """`keyword` as a person might type it: any case, accents on some letters, punctuation and spaces around."""
    letters = []
    for letter in keyword:
        if letter in ACCENTED and draw(st.booleans()):
            letter = draw(st.sampled_from(ACCENTED[letter]))
        letters.append(letter.lower() if draw(st.booleans()) else letter)
    form = draw(st.sampled_from(["NFC", "NFD"]))
    return draw(punctuation) + unicodedata.normalize(form, "".join(letters)) + draw(punctuation)


@settings(max_examples=300)
@given(st.sampled_from(KEYWORDS).flatmap(lambda k: st.tuples(st.just(k), written(k))))
def test_a_keyword_in_any_case_with_accents_and_punctuation_reads_as_itself(case: tuple[str, str]) -> None:
    keyword, text = case
    assert keywords.words(text) == [keyword]


@settings(max_examples=300)
@given(st.text())
def test_words_are_plain_upper_case_ascii_and_ignore_case(text: str) -> None:
    said = keywords.words(text)
    assert all(word and word.isascii() and word == word.upper() and " " not in word for word in said)
    assert keywords.words(text.lower()) == keywords.words(text.upper()) == said or not text.isascii()


@settings(max_examples=150, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture])
@given(body=st.one_of(st.text(max_size=200), st.sampled_from(KEYWORDS).flatmap(written),
                      st.sampled_from(sorted(BOARDS)).map(lambda b: f"{b} {b}")),
       known=st.booleans())
def test_any_text_from_any_number_gets_an_answer_never_an_error(sessions, body: str, known: bool) -> None:
    from tests.conftest import make_subscriber

    with sessions() as session:
        number = make_subscriber(session, email=None).contacts[0].address if known else "+16135559876"
        reply = keywords.handle(session, BOARDS, number, body, NOW)
        session.rollback()
    assert reply.template is None or (ROOT / "templates" / "sms" / f"{reply.template}.txt").exists()
    assert reply.languages and set(reply.languages) <= {"en", "fr"}
