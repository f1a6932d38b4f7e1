"""Texts parents send to the service's number (POST /twilio/inbound, signed by Twilio): keywords in English and
French, subscribing by a board's code, and refusing anything Twilio did not sign."""

from __future__ import annotations

import pytest
from sqlalchemy import select

from notifier.db import transaction
from notifier.subscribers.contacts import mark_opted_out
from notifier.subscribers.models import Consent, Follow, Subscriber
from tests.subscribers.conftest import OTHER_PHONE, PHONE, contacts, everything, reply_of, sign_up, text_in


def _active(client, phone: str = PHONE, board: str = "tdsb") -> None:
    text_in(client, phone, board.upper())


def _follows(sessions) -> list[tuple[str, str]]:
    with sessions() as session:
        return sorted((f.board_id, f.panel) for f in session.scalars(select(Follow)))


def test_texting_a_board_code_subscribes_to_both_panels_without_confirmation(client, sessions):
    response = text_in(client, PHONE, "TDSB")
    assert response.status_code == 200 and response.mimetype == "text/xml"
    assert "TDSB" in reply_of(response) and "STOP" in reply_of(response)
    assert contacts(sessions) == [("sms", PHONE, "active")]
    assert _follows(sessions) == [("tdsb", "elementary"), ("tdsb", "secondary")]


def test_texting_a_board_code_and_panel_follows_that_panel(client, sessions):
    text_in(client, PHONE, "tdsb secondary")
    assert _follows(sessions) == [("tdsb", "secondary")]


def test_texting_a_french_board_code_subscribes_in_french(client, sessions):
    response = text_in(client, PHONE, "CEPEO élémentaire")
    assert "Vous recevrez" in reply_of(response)
    assert _follows(sessions) == [("cepeo", "elementary")]
    with sessions() as session:
        assert session.scalars(select(Subscriber.language)).one() == "fr"


def test_a_keyword_subscription_records_consent_from_the_number(client, sessions):
    text_in(client, PHONE, "TDSB")
    with sessions() as session:
        rows = session.scalars(select(Consent).order_by(Consent.id)).all()
    assert [(r.action, r.method) for r in rows] == [("given", "sms-keyword"), ("confirmed", "sms-keyword")]
    assert PHONE not in rows[0].source and rows[0].source.endswith("0123")


def test_texting_a_second_board_adds_it_to_the_same_subscription(client, sessions):
    text_in(client, PHONE, "TDSB SECONDARY")
    text_in(client, PHONE, "PEEL")
    assert _follows(sessions) == [("peel", "elementary"), ("peel", "secondary"), ("tdsb", "secondary")]
    assert len(contacts(sessions)) == 1


def test_an_unknown_word_gets_a_helpful_reply_and_stores_nothing(client, sessions):
    response = text_in(client, PHONE, "what is this")
    assert "board code" in reply_of(response) and "code d'un conseil" in reply_of(response)
    assert everything(sessions)["Contact"] == 0


def test_stop_opts_the_number_out_and_erases_it(client, sessions):
    _active(client)
    response = text_in(client, PHONE, "STOP")
    assert reply_of(response) == ""  # Twilio answers its own STOP words itself
    [(channel, address, status)] = contacts(sessions)
    assert status == "opted_out" and address != PHONE
    with sessions() as session:
        assert session.scalars(select(Consent.action).order_by(Consent.id.desc())).first() == "withdrawn"


def test_arret_with_or_without_accent_stops_texts_and_answers_in_french(client, sessions):
    _active(client)
    text_in(client, OTHER_PHONE, "TDSB")
    first = text_in(client, PHONE, "ARRET")
    second = text_in(client, OTHER_PHONE, "Arrêt")
    assert "Vous ne recevrez plus de textos" in reply_of(first)
    assert "Vous ne recevrez plus" in reply_of(second)
    assert [status for _, _, status in contacts(sessions)] == ["opted_out", "opted_out"]


def test_start_resumes_the_same_subscription(client, sessions):
    text_in(client, PHONE, "TDSB SECONDARY")
    text_in(client, PHONE, "STOP")
    response = text_in(client, PHONE, "START")
    assert "alerts are on" in reply_of(response)
    assert contacts(sessions) == [("sms", PHONE, "active")]
    assert _follows(sessions) == [("tdsb", "secondary")]


def test_a_number_that_said_stop_can_sign_up_on_the_web_after_start(client, sessions, twilio_server):
    _active(client)
    text_in(client, PHONE, "STOP")
    text_in(client, PHONE, "START")
    twilio_server.reset()
    response = sign_up(client, phone=PHONE, board="peel")
    assert response.status_code == 200


def test_help_answers_who_we_are_and_how_to_stop(client):
    reply = reply_of(text_in(client, PHONE, "HELP"))
    assert "https://status.example.org" in reply and "STOP" in reply


def test_aide_answers_in_french(client):
    reply = reply_of(text_in(client, PHONE, "aide"))
    assert "Alertes sur le statut des écoles" in reply and "ARRET" in reply


def test_help_answers_in_the_subscribers_language(client):
    text_in(client, PHONE, "CEPEO")
    assert "ARRET" in reply_of(text_in(client, PHONE, "HELP"))


def test_a_forged_signature_gets_403_and_changes_nothing(client, sessions):
    _active(client)
    before = everything(sessions), contacts(sessions)
    response = text_in(client, PHONE, "STOP", signature="forged")
    assert response.status_code == 403
    assert (everything(sessions), contacts(sessions)) == before


def test_a_missing_signature_gets_403_and_changes_nothing(client, sessions):
    response = client.post("/twilio/inbound", data={"From": PHONE, "Body": "TDSB"})
    assert response.status_code == 403
    assert everything(sessions)["Contact"] == 0


def test_a_signature_for_other_words_gets_403(client, sessions):
    from twilio.request_validator import RequestValidator

    from tests.conftest import AUTH_TOKEN, BASE_URL

    signed = RequestValidator(AUTH_TOKEN).compute_signature(BASE_URL + "/twilio/inbound",
                                                            {"From": PHONE, "Body": "HELP"})
    response = client.post("/twilio/inbound", data={"From": PHONE, "Body": "TDSB"},
                           headers={"X-Twilio-Signature": signed})
    assert response.status_code == 403
    assert everything(sessions)["Contact"] == 0


def test_21610_from_a_send_marks_the_number_opted_out(client, sessions):
    _active(client)
    with transaction(sessions) as session:
        mark_opted_out(session, "sms", PHONE, "provider", "twilio 21610")
    assert contacts(sessions)[0][2] == "opted_out"


def test_replies_to_one_number_are_capped_per_hour(client):
    replies = [reply_of(text_in(client, PHONE, "HELP")) for _ in range(12)]
    assert all(replies[:10]) and replies[10:] == ["", ""]


def test_a_replayed_signed_start_does_not_undo_a_later_stop(client, sessions):
    text_in(client, PHONE, "TDSB")
    text_in(client, PHONE, "STOP")
    text_in(client, PHONE, "START", sid="SM" + "5" * 32)
    text_in(client, PHONE, "STOP")
    replayed = text_in(client, PHONE, "START", sid="SM" + "5" * 32)
    assert replayed.status_code == 200
    assert contacts(sessions)[0][2] == "opted_out"


def test_a_signed_text_without_a_message_sid_is_refused_and_changes_nothing(client, sessions):
    text_in(client, PHONE, "TDSB")
    text_in(client, PHONE, "STOP")
    refused = text_in(client, PHONE, "START", sid="")
    assert refused.status_code == 400 and reply_of(refused) == ""
    assert contacts(sessions)[0][2] == "opted_out"


def test_the_same_message_delivered_twice_is_answered_once(client):
    first = text_in(client, PHONE, "HELP", sid="SM" + "6" * 32)
    again = text_in(client, PHONE, "HELP", sid="SM" + "6" * 32)
    assert "STOP" in reply_of(first) and reply_of(again) == ""


def test_a_keyword_older_than_the_last_one_applied_is_ignored(sessions):
    from datetime import UTC, datetime

    from notifier.config import ROOT
    from notifier.status.document import load
    from notifier.subscribers import keywords

    boards = load(ROOT / "boards.yaml").status.by_id()
    monday, tuesday = datetime(2026, 11, 2, 9, tzinfo=UTC), datetime(2026, 11, 3, 9, tzinfo=UTC)
    with transaction(sessions) as session:
        keywords.handle(session, boards, PHONE, "TDSB", monday)
        keywords.handle(session, boards, PHONE, "STOP", tuesday)
    with transaction(sessions) as session:
        late = keywords.handle(session, boards, PHONE, "START", monday)  # sent before the STOP, arrived after
    assert late.template is None
    assert contacts(sessions)[0][2] == "opted_out"


@pytest.mark.parametrize("word", ["Arrête", "Arrêtez", "FIN", "désinscrire", "Désabonner", "annuler", "ARRÊT"])
def test_french_stop_words_stop_texts_and_are_answered_in_french(client, sessions, word):
    _active(client)
    reply = reply_of(text_in(client, PHONE, word))
    assert "Vous ne recevrez plus de textos" in reply
    assert contacts(sessions)[0][2] == "opted_out"


@pytest.mark.parametrize("word", ["STOP", "stopall", "Unsubscribe", "cancel", "END", "quit", "revoke", "OptOut"])
def test_twilios_stop_words_stop_texts_and_are_left_for_twilio_to_answer(client, sessions, word):
    _active(client)
    assert reply_of(text_in(client, PHONE, word)) == ""
    assert contacts(sessions)[0][2] == "opted_out"


@pytest.mark.parametrize("body", ["STOP please", "Stop! no more texts", "cancel my alerts"])
def test_a_stop_word_followed_by_other_words_still_stops_and_is_answered(client, sessions, body):
    _active(client)
    reply = reply_of(text_in(client, PHONE, body))
    assert "no more texts" in reply and "did not understand" not in reply
    assert contacts(sessions)[0][2] == "opted_out"


def test_a_french_stop_sentence_is_answered_in_french(client, sessions):
    _active(client)
    assert "Vous ne recevrez plus" in reply_of(text_in(client, PHONE, "Arrêtez svp merci"))
    assert contacts(sessions)[0][2] == "opted_out"


@pytest.mark.parametrize("word", ["START", "unstop", "Yes please", "OUI", "début", "Commencer"])
def test_start_words_in_both_languages_resume_texts(client, sessions, word):
    _active(client)
    text_in(client, PHONE, "STOP")
    reply = reply_of(text_in(client, PHONE, word))
    assert reply and "did not understand" not in reply
    assert contacts(sessions)[0][2] == "active"


@pytest.mark.parametrize(("word", "words"), [("HELP me", "STOP to stop"), ("info", "STOP to stop"),
                                             ("Aide SVP", "ARRET")])
def test_help_words_are_answered_in_the_language_of_the_word(client, word, words):
    assert words in reply_of(text_in(client, PHONE, word))


def test_the_unknown_word_reply_points_to_a_page_that_lists_the_codes(client):
    import re

    from tests.conftest import BASE_URL

    links = re.findall(r"https?://\S+", reply_of(text_in(client, PHONE, "what is this")))
    assert links and all(link.startswith(BASE_URL) and link.endswith("#codes") for link in links)
    for link in links:
        page = client.get(link.removeprefix(BASE_URL).split("#")[0], follow_redirects=True).get_data(as_text=True)
        codes = page[page.index('id="codes"'):]
        assert "TDSB" in codes and "CEPEO" in codes
