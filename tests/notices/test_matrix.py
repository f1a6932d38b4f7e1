"""Every kind of notice, in English and French, by email and by text, says which board, which schools and what now.

Each row of the matrix is a change as the clock records it (a status, a panel, a service, a message, a period
announced, moved or called off, a period coming into force by itself, a day's worth of changes, several boards),
turned into events and rendered by the real `render_digest`. Each rendering must name the board, the panel or panels
concerned and the new situation in the reader's language; a subject never says more than happened ("Secondary
schools closed", never "Schools closed", when only secondary schools closed); a text stays within its budget of
segments.
"""

from __future__ import annotations

import re
from dataclasses import dataclass, field
from datetime import UTC, datetime, timedelta

import pytest

from notifier.config import Settings
from notifier.delivery.channels import segments
from notifier.notices import templates
from notifier.notices.digests import PANELS, Event, select_for
from notifier.notices.render import render_digest
from notifier.status.boards import Board
from notifier.status.changes import as_scheduled, diff, diff_state

SETTINGS = Settings.from_env({"NOTIFIER_SECRET_KEY": "k", "NOTIFIER_BASE_URL": "https://status.example.org"})
NOW = datetime(2026, 11, 23, 17, 0, tzinfo=UTC)  # Monday noon in Toronto
MONDAY_NEXT = "2026-11-30T00:01:00-05:00"
TUESDAY_NEXT = "2026-12-01T00:01:00-05:00"
NAMES = {"tdsb": "Toronto District School Board", "viamonde": "Conseil scolaire Viamonde"}
BUSES = {"category": "transportation",
         "description": {"en": "No buses this week.", "fr": "Aucun autobus cette semaine."}}
MESSAGE = {"en": "Talks resume Thursday.", "fr": "Les pourparlers reprennent jeudi."}

# What each language calls each thing; a row lists the keys it expects, the checks look them up here.
WORDS = {
    "en": {
        "all closed": "All schools are closed to students.",
        "elementary closed": "Elementary schools are closed to students.",
        "secondary closed": "Secondary schools are closed to students.",
        "all work-to-rule": "Schools are open; staff are on work-to-rule.",
        "secondary work-to-rule": "Secondary schools are open; staff are on work-to-rule.",
        "all open": "Schools are open as usual.",
        "secondary open": "Secondary schools are open as usual.",
        "buses": "School buses and transportation",
        "elementary": "elementary schools",
        "secondary": "secondary schools",
        "message": "Talks resume Thursday.",
        "called off": "Closure called off:",
        "in effect": "Now in effect, as announced:",
    },
    "fr": {
        "all closed": "Toutes les écoles sont fermées aux élèves.",
        "elementary closed": "Les écoles élémentaires sont fermées aux élèves.",
        "secondary closed": "Les écoles secondaires sont fermées aux élèves.",
        "all work-to-rule": "Les écoles sont ouvertes ; le personnel fait la grève du zèle.",
        "secondary work-to-rule": "Les écoles secondaires sont ouvertes ; le personnel fait la grève du zèle.",
        "all open": "Les écoles sont ouvertes comme d'habitude.",
        "secondary open": "Les écoles secondaires sont ouvertes comme d'habitude.",
        "buses": "Transport scolaire (autobus)",
        "elementary": "écoles élémentaires",
        "secondary": "écoles secondaires",
        "message": "Les pourparlers reprennent jeudi.",
        "called off": "Fermeture annulée :",
        "in effect": "En vigueur maintenant, comme annoncé :",
    },
}
# Email-only words (a text keeps to its budget and says less): the board's message, a changed service's details.
EMAIL_WORDS = {
    "en": {"message": "Message from the board: Talks resume Thursday.", "restored": "Service restored",
           "updated": "Details changed", "details": "No buses this week.",
           "then": "Services withdrawn then: School buses and transportation.", "plain message": MESSAGE["en"],
           "what was called off": "Called off: the closure of secondary schools planned from Monday, November 30"},
    "fr": {"message": "Message du conseil scolaire : Les pourparlers reprennent jeudi.",
           "restored": "Service rétabli", "updated": "Précisions modifiées", "details": "Aucun autobus cette semaine.",
           "then": "Services retirés pendant cette période : Transport scolaire (autobus).",
           "plain message": MESSAGE["fr"],
           "what was called off": ("Annulation : la fermeture des écoles secondaires prévue à partir du "
                                   "lundi 30 novembre")},
}
# Text-only words: a text says what changed in fewer words.
SMS_WORDS = {"en": {"restored": "Restored", "updated": "Updated", "new message": "New message from the board."},
             "fr": {"restored": "Rétabli", "updated": "Modifié", "new message": "Nouveau message du conseil scolaire."}}
SUBJECTS = {
    "en": {
        "all closed": "Schools closed: {board}",
        "elementary closed": "Elementary schools closed: {board}",
        "secondary closed": "Secondary schools closed: {board}",
        "all work-to-rule": "Schools open under work-to-rule: {board}",
        "secondary work-to-rule": "Secondary schools open under work-to-rule: {board}",
        "all open": "Schools open: {board}",
        "secondary open": "Secondary schools open: {board}",
        "update": "School status update: {board}",
        "called off": "Closure called off: secondary schools, Monday, Nov. 30 ({board})",
        "secondary closed from monday": "Secondary schools closed from Monday, Nov. 30: {board}",
        "secondary closed monday": "Secondary schools closed Monday, Nov. 30: {board}",
        "many closed": "Schools closed: {count} boards changed",
        "many secondary closed": "Secondary schools closed: {count} boards changed",
    },
    "fr": {
        "all closed": "Écoles fermées : {board}",
        "elementary closed": "Écoles élémentaires fermées : {board}",
        "secondary closed": "Écoles secondaires fermées : {board}",
        "all work-to-rule": "Écoles ouvertes, grève du zèle : {board}",
        "secondary work-to-rule": "Écoles secondaires ouvertes, grève du zèle : {board}",
        "all open": "Écoles ouvertes : {board}",
        "secondary open": "Écoles secondaires ouvertes : {board}",
        "update": "Mise à jour de l'état des écoles : {board}",
        "called off": "Fermeture annulée : écoles secondaires, lundi 30 nov. ({board})",
        "secondary closed from monday": "Écoles secondaires fermées à partir du lundi 30 nov. : {board}",
        "secondary closed monday": "Écoles secondaires fermées le lundi 30 nov. : {board}",
        "many closed": "Écoles fermées : {count} conseils scolaires ont changé",
        "many secondary closed": "Écoles secondaires fermées : {count} conseils scolaires ont changé",
    },
}


def board(board_id: str = "tdsb", **fields) -> Board:
    return Board.model_validate({"id": board_id, "name": NAMES[board_id], "status": "open", "withdrawals": [],
                                 **fields})


@dataclass
class Row:
    """One change combination: the boards before and after (or, scheduled, the board and when time passed to), the
    words every rendering must hold (keys of WORDS), the subject (a key of SUBJECTS)."""

    name: str
    before: list[Board]
    after: list[Board]
    words: list[str]
    subject: str
    email_words: list[str] = field(default_factory=list)
    sms_words: list[str] = field(default_factory=list)
    scheduled_to: datetime | None = None  # time passes from NOW to then with `after` unchanged: "now in effect"
    steps: list[list[Board]] = field(default_factory=list)  # versions in between (a day's changes)

    def events(self) -> tuple[list[Event], dict[str, Board]]:
        events: list[Event] = []
        if self.scheduled_to:
            for stored in self.after:
                changes = as_scheduled(diff_state(stored.at(NOW), stored.at(self.scheduled_to)))
                events += [Event.from_change(len(events) + i + 1, c, stored) for i, c in enumerate(changes)]
            return events, {b.id: b for b in self.after}
        versions = [self.before, *self.steps, self.after]
        for old_versions, new_versions in zip(versions, versions[1:], strict=False):
            olds = {b.id: b for b in old_versions}
            for new in new_versions:
                changes = diff(olds[new.id], new, NOW)
                events += [Event.from_change(len(events) + i + 1, c, new) for i, c in enumerate(changes)]
        return events, {b.id: b for b in self.after}


WTR_BOTH = board(status="work-to-rule", withdrawals=[BUSES])
ANNOUNCED_IN_FULL = board(upcoming=[{"from": MONDAY_NEXT, "status": "closed", "panels": ["secondary"],
                                     "message": MESSAGE, "withdrawals": [{**BUSES, "panels": ["secondary"]}]}])
ANNOUNCED = board(upcoming=[{"from": MONDAY_NEXT, "status": "closed", "panels": ["secondary"]}])
IN_EFFECT_SOON = board(upcoming=[{"from": (NOW + timedelta(minutes=2)).isoformat(), "status": "closed",
                                  "panels": ["elementary"], "message": MESSAGE,
                                  "withdrawals": [{**BUSES, "panels": ["elementary"]}]}])

ROWS = [
    Row("both panels closed", [board()], [board(status="closed")], ["all closed"], "all closed"),
    Row("only elementary closed", [board()], [board(panels={"elementary": "closed"})],
        ["elementary closed"], "elementary closed"),
    Row("only secondary closed", [board()], [board(panels={"secondary": "closed"})],
        ["secondary closed"], "secondary closed"),
    Row("secondary closed during work-to-rule", [WTR_BOTH],
        [board(status="work-to-rule", panels={"secondary": "closed"}, withdrawals=[BUSES])],
        ["secondary closed"], "secondary closed"),
    Row("work-to-rule with buses withdrawn", [board()], [WTR_BOTH], ["all work-to-rule", "buses"],
        "all work-to-rule", ["details"]),
    Row("work-to-rule at secondary schools only", [board()],
        [board(panels={"secondary": "work-to-rule"}, withdrawals=[{**BUSES, "panels": ["secondary"]}])],
        ["secondary work-to-rule", "buses", "secondary"], "secondary work-to-rule"),
    Row("reopened", [board(status="closed")], [board()], ["all open"], "all open"),
    Row("secondary reopened", [board(panels={"secondary": "closed"})], [board()], ["secondary open"],
        "secondary open"),
    Row("a service withdrawn at elementary schools", [board()],
        [board(withdrawals=[{**BUSES, "panels": ["elementary"]}])], ["buses", "elementary"], "update", ["details"]),
    Row("a service's details changed", [WTR_BOTH],
        [board(status="work-to-rule", withdrawals=[{**BUSES, "advice": MESSAGE}])], ["buses"], "update",
        ["updated"], ["updated"]),
    Row("a service restored at secondary schools", [board(withdrawals=[{**BUSES, "panels": ["secondary"]}])],
        [board()], ["buses", "secondary"], "update", ["restored"], ["restored"]),
    Row("the board's message changed", [board()], [board(message=MESSAGE)], [], "update", ["message"],
        ["new message"]),
    Row("a closure announced ahead", [board()], [ANNOUNCED], ["secondary closed"], "secondary closed from monday"),
    Row("a closure announced ahead with its own services and message", [board()], [ANNOUNCED_IN_FULL],
        ["secondary closed"], "secondary closed from monday", ["then", "plain message"]),
    Row("an announced closure moved its end", [ANNOUNCED],
        [board(upcoming=[{"from": MONDAY_NEXT, "until": TUESDAY_NEXT, "status": "closed", "panels": ["secondary"]}])],
        ["secondary closed"], "secondary closed monday"),
    Row("an announced closure called off", [ANNOUNCED], [board()], ["called off", "secondary"], "called off",
        ["what was called off"]),
    Row("a closure now in effect, as announced", [IN_EFFECT_SOON], [IN_EFFECT_SOON],
        ["in effect", "elementary closed", "buses", "elementary"], "elementary closed", ["message", "details"],
        scheduled_to=NOW + timedelta(minutes=3)),
    Row("a day's changes in one summary", [board()], [board(status="work-to-rule", withdrawals=[BUSES],
                                                           message=MESSAGE)],
        ["all work-to-rule", "buses"], "all work-to-rule", ["message", "details"],
        steps=[[board(status="work-to-rule")], [board(status="work-to-rule", withdrawals=[BUSES])]]),
    Row("two boards, secondary closed at both", [board(), board("viamonde")],
        [board(panels={"secondary": "closed"}), board("viamonde", panels={"secondary": "closed"})],
        ["secondary closed"], "many secondary closed"),
    Row("two boards, a different panel closed at each", [board(), board("viamonde")],
        [board(panels={"secondary": "closed"}), board("viamonde", panels={"elementary": "closed"})],
        ["secondary closed", "elementary closed"], "many closed"),
]


def plain(text: str) -> str:
    """Spaces and apostrophes as a text has them, so one expectation serves an email and a text."""
    return text.translate(templates.GSM_PLAIN)


def said(words: str, text: str) -> bool:
    """Whether `text` says `words`, as a sentence or after a colon (where French starts it in lower case)."""
    return plain(words) in text or plain(words[:1].lower() + words[1:]) in text


def render(row: Row, language: str, channel: str):
    events, boards = row.events()
    # What a family following both panels of every board, and asking to hear "now in effect", is sent.
    events = select_for(events, {board_id: frozenset(PANELS) for board_id in boards}, True).events
    assert events, f"{row.name}: the change made no event"
    return render_digest(events, boards, language, channel, SETTINGS)


@pytest.mark.parametrize("language", ["en", "fr"])
@pytest.mark.parametrize("row", ROWS, ids=[r.name for r in ROWS])
def test_an_email_names_the_board_the_schools_and_what_now(row, language):
    rendered = render(row, language, "email")
    text = plain(rendered.text)
    missing = [WORDS[language][w] for w in row.words if not said(WORDS[language][w], text)]
    missing += [EMAIL_WORDS[language][w] for w in row.email_words if plain(EMAIL_WORDS[language][w]) not in text]
    missing += [NAMES[b.id] for b in row.after if NAMES[b.id] not in text]
    assert missing == [], text


@pytest.mark.parametrize("language", ["en", "fr"])
@pytest.mark.parametrize("row", ROWS, ids=[r.name for r in ROWS])
def test_the_subject_and_first_line_say_no_more_than_happened(row, language):
    rendered = render(row, language, "email")
    expected = SUBJECTS[language][row.subject].format(board=NAMES[row.after[0].id], count=len(row.after))
    assert plain(rendered.subject) == expected
    assert rendered.text.splitlines()[0] == rendered.subject


@pytest.mark.parametrize("language", ["en", "fr"])
@pytest.mark.parametrize("row", ROWS, ids=[r.name for r in ROWS])
def test_a_text_names_the_board_the_schools_and_what_now_within_its_budget(row, language):
    text = render(row, language, "sms").text
    missing = [WORDS[language][w] for w in row.words if not said(WORDS[language][w], text)]
    missing += [SMS_WORDS[language][w] for w in row.sms_words if SMS_WORDS[language][w] not in text]
    missing += [NAMES[b.id] for b in row.after if NAMES[b.id] not in text]
    assert missing == [], text
    assert text.startswith(f"{NAMES[row.after[0].id]}{' :' if language == 'fr' else ':'}")
    assert not re.search(r"[a-zé]\.[A-ZÉ]", text), "two sentences run together"
    assert segments.count(text).segments <= segments.DIGEST_BUDGET, (segments.count(text), text)
    assert "?lang=" + language in text


@pytest.mark.parametrize("language", ["en", "fr"])
@pytest.mark.parametrize("row", ROWS, ids=[r.name for r in ROWS])
def test_the_links_of_an_email_carry_its_language(row, language):
    rendered = render(row, language, "email").with_links("https://status.example.org/manage/x",
                                                         "https://status.example.org/unsubscribe/y")
    links = [word.rstrip(".") for word in rendered.text.split() if word.startswith("https://")]
    assert links and all(link.endswith(f"lang={language}") for link in links), links
