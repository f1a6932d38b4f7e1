"""What a notice says, word for word: the day as people say it in a text, the status named, the message that belongs
to what the notice tells, and a subject saying what is coming and when."""

from __future__ import annotations

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
NOW = datetime(2026, 11, 24, 17, 0, tzinfo=UTC)  # Tuesday noon in Toronto
THURSDAY = "2026-11-26T00:01:00-05:00"
FRIDAY = "2026-11-27T00:01:00-05:00"
CORRECTION = {"en": "Correction: secondary schools are open. Education workers are on work-to-rule, not on strike.",
              "fr": "Correction : les écoles secondaires sont ouvertes. Le personnel fait la grève du zèle."}
STRIKE = {"en": "One-day strike: secondary schools are closed on Thursday.",
          "fr": "Grève d'un jour : les écoles secondaires sont fermées jeudi."}


def board(**fields) -> Board:
    return Board.model_validate({"id": "tdsb", "name": "Toronto District School Board", "status": "open",
                                 "withdrawals": [], **fields})


def one_day_strike(message=None) -> dict:
    period = {"from": THURSDAY, "until": FRIDAY, "status": "closed", "panels": ["secondary"]}
    return {**period, "message": message} if message else period


def render(old: Board, new: Board, language: str, channel: str):
    events = [Event.from_change(i, c, new) for i, c in enumerate(diff(old, new, NOW), start=1)]
    events = select_for(events, {new.id: frozenset(PANELS)}, True).events
    return render_digest(events, {new.id: new}, language, channel, SETTINGS)


def plain(text: str) -> str:
    return text.translate(templates.GSM_PLAIN)


@pytest.mark.parametrize(("language", "expected"), [
    ("en", "From Thu. Nov. 26, 12:01 a.m. to Fri. Nov. 27, 12:01 a.m.: "),
    ("fr", "Du jeu. 26 nov., 0 h 01 au ven. 27 nov., 0 h 01 : "),
])
def test_a_text_names_the_days_of_an_announced_period_as_people_say_them(language, expected):
    text = render(board(), board(upcoming=[one_day_strike()]), language, "sms").text
    assert expected in text, text
    assert "2026-" not in text
    assert segments.count(text).segments <= segments.DIGEST_BUDGET


@pytest.mark.parametrize("language", ["en", "fr"])
def test_a_notice_about_an_announced_period_quotes_its_message_not_the_boards_of_today(language):
    today = board(message=CORRECTION)
    text = plain(render(today, board(message=CORRECTION, upcoming=[one_day_strike(STRIKE)]), language, "email").text)
    said = {"en": "Message from the board: ", "fr": "Message du conseil scolaire : "}[language]
    assert said + plain(STRIKE[language]) in text
    assert plain(CORRECTION[language]) not in text


@pytest.mark.parametrize("language", ["en", "fr"])
def test_a_notice_about_today_still_quotes_the_boards_message(language):
    text = plain(render(board(message=CORRECTION), board(status="work-to-rule", message=CORRECTION), language,
                        "email").text)
    assert plain(CORRECTION[language]) in text


UNLISTED = {"en": "The board has not listed which services are affected.",
            "fr": "Le conseil scolaire n'a pas précisé quels services sont touchés."}
WORK_TO_RULE = {"en": "Secondary schools are open; staff are on work-to-rule.",
                "fr": "Les écoles secondaires sont ouvertes ; le personnel fait la grève du zèle."}


@pytest.mark.parametrize("language", ["en", "fr"])
@pytest.mark.parametrize("channel", ["email", "sms"])
def test_a_work_to_rule_with_no_service_listed_says_so_instead_of_some_services(language, channel):
    rendered = render(board(), board(panels={"secondary": "work-to-rule"}), language, channel)
    text = plain(rendered.text)
    assert f"{plain(WORK_TO_RULE[language])} {plain(UNLISTED[language])}" in text, text
    assert "some services" not in text and "certains services" not in text
    if channel == "sms":
        assert segments.count(rendered.text).segments <= segments.DIGEST_BUDGET


@pytest.mark.parametrize(("language", "subject"), [
    ("en", "Secondary schools open under work-to-rule: Toronto District School Board"),
    ("fr", "Écoles secondaires ouvertes, grève du zèle : Toronto District School Board"),
])
def test_the_subject_of_a_work_to_rule_names_it(language, subject):
    assert plain(render(board(), board(panels={"secondary": "work-to-rule"}), language, "email").subject) == subject


def test_a_work_to_rule_with_services_listed_lists_them_and_says_nothing_of_unlisted():
    buses = {"category": "transportation", "panels": ["secondary"], "description": {"en": "No buses."}}
    text = render(board(), board(panels={"secondary": "work-to-rule"}, withdrawals=[buses]), "en", "email").text
    assert UNLISTED["en"] not in text and "School buses and transportation" in text


@pytest.mark.parametrize("language", ["en", "fr"])
def test_an_announced_work_to_rule_with_no_service_listed_says_so(language):
    period = {"from": THURSDAY, "status": "work-to-rule", "panels": ["secondary"]}
    text = plain(render(board(), board(upcoming=[period]), language, "sms").text)
    assert plain(UNLISTED[language]) in text, text


@pytest.mark.parametrize(("language", "subject"), [
    ("en", "Secondary schools closed Thursday, Nov. 26: Toronto District School Board"),
    ("fr", "Écoles secondaires fermées le jeudi 26 nov. : Toronto District School Board"),
])
def test_the_subject_of_an_announced_one_day_closure_says_what_is_coming_and_when(language, subject):
    assert plain(render(board(), board(upcoming=[one_day_strike()]), language, "email").subject) == subject


@pytest.mark.parametrize(("period", "subject"), [
    ({"from": THURSDAY, "status": "closed"}, "Schools closed from Thursday, Nov. 26: Toronto District School Board"),
    ({"from": THURSDAY, "status": "work-to-rule", "panels": ["elementary"]},
     "Elementary schools open under work-to-rule from Thursday, Nov. 26: Toronto District School Board"),
])
def test_the_subject_of_a_longer_announced_period_says_from_when(period, subject):
    assert render(board(), board(upcoming=[period]), "en", "email").subject == subject


def test_a_french_text_names_the_board_with_a_space_before_the_colon_and_no_capital_after_one():
    text = render(board(), board(upcoming=[one_day_strike()]), "fr", "sms").text
    assert text.startswith("Toronto District School Board : Du jeu. 26 nov., 0 h 01 au ven. 27 nov., 0 h 01 : "
                           "les écoles secondaires sont fermées aux élèves."), text


def test_a_french_email_starts_no_sentence_with_a_capital_after_a_colon():
    text = plain(render(board(), board(upcoming=[one_day_strike(STRIKE)]), "fr", "email").text)
    assert "0 h 01 : les écoles secondaires sont fermées aux élèves." in text, text


def test_a_work_to_rule_now_in_force_with_its_own_services_does_not_say_none_are_listed():
    buses = {"category": "transportation", "panels": ["secondary"], "description": {"en": "No buses."}}
    period = {"from": "2026-11-24T11:00:00-05:00", "status": "work-to-rule", "panels": ["secondary"],
              "withdrawals": [buses]}
    stored = board(upcoming=[period])
    events = [Event.from_change(i, c, stored) for i, c in enumerate(
        as_scheduled(diff_state(stored.at(NOW - timedelta(hours=2)), stored.at(NOW))), start=1)]
    text = render_digest(events, {"tdsb": stored}, "en", "sms", SETTINGS).text
    assert "Secondary schools are open; staff are on work-to-rule." in text and UNLISTED["en"] not in text, text
