"""French as a French reader expects it (Office québécois de la langue française): a no-break space before ":" and
inside « », a narrow no-break space before "?", "!" and ";", and "1er" for the first day of a month. Texts keep to
GSM-7, whose alphabet has no such spaces, so they get plain ones."""

from __future__ import annotations

import re
from datetime import datetime

import pytest
from babel.messages.pofile import read_po

from notifier.config import ROOT
from notifier.delivery.channels import segments
from notifier.formatting import TORONTO, moment
from notifier.notices import templates
from notifier.status import document
from notifier.status.boards import Panel

NBSP, NNBSP = "\u00a0", "\u202f"
CATALOGUES = sorted((ROOT / "translations" / "fr").glob("*.po"))
MONTHS = "janvier|février|mars|avril|mai|juin|juillet|août|septembre|octobre|novembre|décembre"


def french_strings() -> list[tuple[str, str]]:
    """(catalogue, msgstr) for every translated string of every French catalogue (plural forms included)."""
    found = []
    for path in CATALOGUES:
        with path.open("rb") as handle:
            for message in read_po(handle, locale="fr_CA"):
                if not message.id:
                    continue  # the header
                strings = message.string if isinstance(message.string, tuple) else (message.string,)
                found.extend((path.name, s) for s in strings if s)
    return found


def typography_mistakes(text: str) -> list[str]:
    """What `text` gets wrong, as the characters around each mistake."""
    mistakes = []
    # A punctuation mark, as opposed to "https://" or "12:30": followed by a space, the end, » or ).
    for match in re.finditer(r"(?<=.)([?!;:])(?=\s|$|»|\))", text):
        wanted = NBSP if match.group(1) == ":" else NNBSP
        if text[match.start() - 1] != wanted:
            mistakes.append(repr(text[max(0, match.start() - 12):match.end() + 2]))
    mistakes += [repr(text[m.start():m.start() + 12]) for m in re.finditer(f"«(?!{NBSP})", text)]
    mistakes += [repr(text[max(0, m.start() - 12):m.end()]) for m in re.finditer(f"(?<!{NBSP})»", text)]
    mistakes += [repr(m.group(0)) for m in re.finditer(rf"\b1 ({MONTHS})\b", text)]
    return mistakes


def test_the_rules_catch_what_they_should():
    assert typography_mistakes("Déjà abonné? Erreur : « oui » le 1 novembre; fin !") != []
    assert len(typography_mistakes("Déjà abonné? Erreur : « oui » le 1 novembre; fin !")) == 7
    assert typography_mistakes(f"Déjà abonné{NNBSP}? Erreur{NBSP}: «{NBSP}oui{NBSP}» le 1er novembre{NNBSP}; "
                               f"https://example.org 12:30") == []


@pytest.mark.parametrize("catalogue", [p.name for p in CATALOGUES])
def test_every_french_string_follows_french_typography(catalogue):
    mistakes = {text: typography_mistakes(text) for name, text in french_strings() if name == catalogue}
    assert {text: found for text, found in mistakes.items() if found} == {}


def test_the_catalogues_have_punctuation_to_check():
    texts = [text for _, text in french_strings()]
    assert sum(f"{NBSP}:" in t for t in texts) > 30 and sum(f"{NNBSP}?" in t for t in texts) >= 3


@pytest.mark.parametrize(("day", "expected"), [(1, "dimanche 1er novembre 2026"), (2, "lundi 2 novembre 2026"),
                                               (11, "mercredi 11 novembre 2026"), (21, "samedi 21 novembre 2026")])
def test_the_first_of_a_month_is_1er_in_french(day, expected):
    assert moment(datetime(2026, 11, day, 13, 30, tzinfo=TORONTO), "fr").startswith(expected + ",")


def test_english_dates_keep_the_plain_day():
    assert moment(datetime(2026, 11, 1, 13, 30, tzinfo=TORONTO), "en").startswith("Sunday, November 1, 2026")


def test_a_french_time_never_breaks_around_the_h():
    assert moment(datetime(2026, 12, 1, 13, 30, tzinfo=TORONTO), "fr").endswith(f"13{NBSP}h{NBSP}30")


TEXTS = sorted(p.stem for p in (ROOT / "templates" / "sms").glob("*.txt")
               if p.name not in ("digest.txt", "reminder.txt"))  # reminder.txt: tests/notices/test_reminders.py


@pytest.mark.parametrize("template", TEXTS)
def test_french_texts_keep_to_gsm7_with_plain_spaces(template):
    board = document.load(ROOT / "boards.yaml").status.by_id()["cepeo"]
    context = {"base_url": "https://status.example.org", "manage_url": "https://status.example.org/manage/x",
               "follows": [{"board": board, "code": "CEPEO", "panels": ["elementary", "secondary"]}],
               "code": "CEPEO", "panels": [p.value for p in Panel], "board": board, "invited": True}
    text = templates.render(f"sms/{template}.txt", "fr", **context)
    assert segments.count(text).encoding == "GSM-7", text
    assert NBSP not in text and NNBSP not in text



@pytest.mark.parametrize("typed", ["Correction : les écoles ; voir « ici » !", "Correction: oui; «non»?",
                                   f"Déjà{NBSP}: bien{NNBSP}; https://example.org/?lang=fr à 12:30."])
def test_staffs_french_gets_french_spacing_and_keeps_links_and_times(typed):
    from notifier.formatting import french_spacing

    spaced = french_spacing(typed)
    assert typography_mistakes(spaced) == []
    assert re.sub(r"[\s\u00a0\u202f]", "", spaced) == re.sub(r"[\s\u00a0\u202f]", "", typed)  # only spaces change
