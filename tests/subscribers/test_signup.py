"""Signing up on the web: the form, double opt-in by email (through a real SMTP server) and by text, and the
answers to wrong or abusive input."""

from __future__ import annotations

from sqlalchemy import select

from notifier import links
from notifier.db import transaction
from notifier.delivery.outbox import OutboxRow
from notifier.status.history import ChangeEvent
from notifier.subscribers.models import Consent, Contact, Follow, Subscriber
from tests.subscribers.conftest import (
    EMAIL,
    OTHER_PHONE,
    PHONE,
    contacts,
    csrf_token,
    everything,
    link_in,
    reply_of,
    sign_up,
    text_in,
    text_of,
)

NOTHING = {"Subscriber": 0, "Contact": 0, "Follow": 0, "Consent": 0}


def test_the_form_from_a_board_page_preselects_that_board(client):
    page = client.get("/subscribe?board=tdsb&panel=secondary").get_data(as_text=True)
    assert '<option value="tdsb" selected>' in page
    assert 'name="panel-0" value="secondary" checked' in page
    assert 'name="panel-0" value="elementary" checked' not in page


def test_the_form_for_a_french_language_board_defaults_to_french_messages(client):
    page = client.get("/subscribe?board=cepeo").get_data(as_text=True)
    assert 'name="language" value="fr" checked' in page


def test_every_form_field_has_a_visible_label(client):
    page = client.get("/subscribe").get_data(as_text=True)
    for field in ("board-0", "email", "phone"):
        assert f'<label for="{field}">' in page


def test_the_form_carries_a_notice_of_collection(client):
    assert "Notice of collection" in text_of(client.get("/subscribe"))


def test_board_and_index_pages_offer_the_sign_up(client):
    assert 'action="/subscribe"' in client.get("/boards/tdsb").get_data(as_text=True)
    assert 'action="/subscribe"' in client.get("/").get_data(as_text=True)


def test_email_sign_up_sends_a_confirmation_and_stores_it_as_pending(client, smtp_server, sessions):
    inbox, _ = smtp_server
    response = sign_up(client, email="Parent@Example.org")
    assert response.status_code == 200
    assert "Check your messages" in text_of(response)
    assert contacts(sessions) == [("email", EMAIL, "pending")]
    [message] = inbox.messages()
    assert message["To"] == EMAIL
    assert "/confirm/" in message.get_body(("plain",)).get_content()
    assert message.get_body(("html",)) is not None


def test_opening_the_confirmation_link_alone_confirms_nothing(client, smtp_server, sessions):
    sign_up(client, email=EMAIL)
    path = link_in(smtp_server[0].messages()[0], "/confirm/")
    page = client.get(path)
    assert page.status_code == 200 and "Confirm" in text_of(page)
    assert contacts(sessions) == [("email", EMAIL, "pending")]


def test_pressing_confirm_activates_the_email_and_records_consent(client, smtp_server, sessions):
    sign_up(client, email=EMAIL)
    path = link_in(smtp_server[0].messages()[0], "/confirm/")
    response = client.post(path, data={"csrf_token": csrf_token(client.get(path).get_data(as_text=True))})
    assert response.status_code == 200 and "Your alerts are on" in text_of(response)
    assert contacts(sessions) == [("email", EMAIL, "active")]
    with sessions() as session:
        assert [(c.action, c.method) for c in session.scalars(select(Consent).order_by(Consent.id))] == [
            ("given", "web"), ("confirmed", "email-link")]


def test_a_new_subscriber_is_not_sent_old_news(client, smtp_server, sessions):
    with transaction(sessions) as session:
        session.add(ChangeEvent(board_id="tdsb", kind="status", before="open", after="closed"))
    sign_up(client, email=EMAIL)
    path = link_in(smtp_server[0].messages()[0], "/confirm/")
    client.post(path, data={"csrf_token": csrf_token(client.get(path).get_data(as_text=True))})
    with sessions() as session:
        newest = session.scalar(select(ChangeEvent.id))
        assert session.scalars(select(Contact)).one().seen_event_id == newest


def test_an_expired_confirmation_link_shows_a_clear_page(client, settings, sessions, later):
    sign_up(client, email=EMAIL)
    with sessions() as session:
        contact = session.scalars(select(Contact)).one()
    path = links.confirm_url(settings, contact.id, EMAIL).removeprefix(settings.base_url)
    later(days=8)
    response = client.get(path)
    assert response.status_code == 400 and "This link has expired" in text_of(response)


def test_a_tampered_confirmation_link_fails_and_confirms_nothing(client, smtp_server, sessions):
    sign_up(client, email=EMAIL)
    path = link_in(smtp_server[0].messages()[0], "/confirm/")
    tampered = path[:-3] + ("xyz" if not path.endswith("xyz") else "abc")
    token = csrf_token(client.get("/subscribe").get_data(as_text=True))
    response = client.post(tampered, data={"csrf_token": token})
    assert response.status_code == 400 and "This link does not work" in text_of(response)
    assert contacts(sessions) == [("email", EMAIL, "pending")]


def test_sms_sign_up_texts_a_request_to_reply_yes(client, twilio_server, sessions):
    sign_up(client, phone="613-555-0123", panels=("secondary",))
    [sent] = twilio_server.sent_to(PHONE)
    assert "YES" in sent["body"] and "TDSB" in sent["body"]
    assert contacts(sessions) == [("sms", PHONE, "pending")]


def test_replying_yes_confirms_the_number(client, sessions):
    sign_up(client, phone=PHONE)
    response = text_in(client, PHONE, "Yes")
    assert "alerts are on" in reply_of(response)
    assert contacts(sessions) == [("sms", PHONE, "active")]


def test_replying_oui_confirms_a_french_subscriber_in_french(client, sessions):
    sign_up(client, phone=PHONE, board="cepeo", language="fr")
    response = text_in(client, PHONE, "oui")
    assert "activées" in reply_of(response)
    assert contacts(sessions) == [("sms", PHONE, "active")]


def test_a_family_can_follow_several_boards_and_panels(client, sessions):
    token = csrf_token(client.get("/subscribe").get_data(as_text=True))
    client.post("/subscribe", data={
        "csrf_token": token, "board-0": "tdsb", "panel-0": ["elementary"], "board-1": "cepeo",
        "panel-1": ["elementary", "secondary"], "board-2": "", "email": EMAIL, "language": "fr",
        "email_frequency": "daily", "sms_frequency": "immediate", "notify_on_effect": "1"})
    with sessions() as session:
        follows = sorted((f.board_id, f.panel) for f in session.scalars(select(Follow)))
        subscriber = session.scalars(select(Subscriber)).one()
        contact = session.scalars(select(Contact)).one()
    assert follows == [("cepeo", "elementary"), ("cepeo", "secondary"), ("tdsb", "elementary")]
    assert (subscriber.language, subscriber.notify_on_effect, contact.frequency) == ("fr", True, "daily")


def test_notify_on_effect_is_off_unless_the_parent_asks(client, sessions):
    sign_up(client, email=EMAIL)
    with sessions() as session:
        assert session.scalars(select(Subscriber)).one().notify_on_effect is False


def test_a_bad_email_is_refused_with_its_own_message_and_nothing_stored(client, sessions):
    response = sign_up(client, email="parent@")
    assert response.status_code == 400
    assert "This email address is not valid" in text_of(response)
    assert everything(sessions) == NOTHING


def test_a_jamaican_number_is_refused_as_not_canadian(client, sessions, twilio_server):
    response = sign_up(client, phone="+1 876 555 0123")
    assert response.status_code == 400
    assert "Only Canadian mobile numbers" in text_of(response)
    assert everything(sessions) == NOTHING and twilio_server.messages == []


def test_a_premium_rate_number_is_refused_as_not_canadian(client, sessions):
    response = sign_up(client, phone="+1 900 555 0123")
    assert "Only Canadian mobile numbers" in text_of(response)
    assert everything(sessions) == NOTHING


def test_a_malformed_number_is_refused_with_its_own_message(client, sessions):
    response = sign_up(client, phone="call me")
    assert response.status_code == 400
    assert "This is not a phone number" in text_of(response)
    assert everything(sessions) == NOTHING


def test_an_unknown_board_is_refused_with_its_own_message(client, sessions):
    response = sign_up(client, email=EMAIL, board="nosuchboard")
    assert response.status_code == 400
    assert "We do not know this school board" in text_of(response)
    assert everything(sessions) == NOTHING


def test_an_unknown_panel_is_refused(client, sessions):
    response = sign_up(client, email=EMAIL, panels=("kindergarten",))
    assert "Schools are either elementary or secondary" in text_of(response)
    assert everything(sessions) == NOTHING


def test_no_email_and_no_number_is_refused(client, sessions):
    response = sign_up(client)
    assert "Give an email address, a mobile number, or both" in text_of(response)
    assert everything(sessions) == NOTHING


def test_a_number_that_said_stop_gets_the_same_answer_as_any_other_and_is_not_texted(client, sessions,
                                                                                     twilio_server):
    text_in(client, PHONE, "STOP")
    before = everything(sessions)
    stopped = sign_up(client, phone=PHONE)
    fresh = sign_up(client, phone=OTHER_PHONE)
    assert stopped.status_code == fresh.status_code == 200
    assert text_of(stopped) == text_of(fresh)
    assert "text START" in text_of(stopped)  # said to everyone: how a number that once said STOP gets texts again
    assert everything(sessions)["Contact"] == before["Contact"] + 1 and twilio_server.sent_to(PHONE) == []


def test_twilio_refusing_with_21610_opts_the_number_out_and_answers_like_any_sign_up(client, sessions,
                                                                                      twilio_server):
    twilio_server.always(PHONE, 400, 21610)
    response = sign_up(client, phone=PHONE)
    assert response.status_code == 200 and "Check your messages" in text_of(response)
    assert contacts(sessions)[0][2] == "opted_out"
    with sessions() as session:
        assert session.scalars(select(Consent.action).order_by(Consent.id.desc())).first() == "withdrawn"


def test_a_form_without_its_csrf_token_is_refused(client, sessions):
    response = client.post("/subscribe", data={"board-0": "tdsb", "panel-0": "elementary", "email": EMAIL,
                                               "language": "en"})
    assert response.status_code == 400
    assert everything(sessions) == NOTHING


def test_signing_up_an_active_address_changes_nothing_and_mails_its_owner_a_manage_link(
        client, smtp_server, sessions):
    sign_up(client, email=EMAIL, board="tdsb")
    path = link_in(smtp_server[0].messages()[0], "/confirm/")
    client.post(path, data={"csrf_token": csrf_token(client.get(path).get_data(as_text=True))})
    response = sign_up(client, email=EMAIL, board="peel")
    assert "Check your messages" in text_of(response)
    with sessions() as session:
        assert [f.board_id for f in session.scalars(select(Follow))] == ["tdsb"]
    assert "/manage/" in smtp_server[0].messages()[-1].get_body(("plain",)).get_content()


def test_the_per_address_limit_stops_repeated_confirmations(client, smtp_server):
    answers = [sign_up(client, email=EMAIL).status_code for _ in range(4)]
    assert answers == [200, 200, 200, 429]
    assert len(smtp_server[0].messages()) == 3


def test_plus_dot_and_case_variants_count_against_one_address_limit(client, smtp_server):
    variants = ["parent+1@example.org", "Par.ent+school@Example.org", "p.a.r.e.n.t@example.org", "parent+2@example.org"]
    answers = [sign_up(client, email=address).status_code for address in variants]
    assert answers == [200, 200, 200, 429]


def test_a_second_sign_up_never_changes_a_pending_one_and_resends_its_confirmation(client, smtp_server, sessions):
    sign_up(client, email=EMAIL, board="tdsb", language="en")
    response = sign_up(client, email=EMAIL, board="peel", language="fr")
    assert response.status_code == 200
    with sessions() as session:
        assert [f.board_id for f in session.scalars(select(Follow))] == ["tdsb"]
        assert [s.language for s in session.scalars(select(Subscriber))] == ["en"]
        assert [c.action for c in session.scalars(select(Consent))] == ["given"]
    assert contacts(sessions) == [("email", EMAIL, "pending")]
    assert len(smtp_server[0].messages()) == 2


def test_the_per_connection_limit_allows_a_school_sized_burst_then_stops(make_app, sessions):
    client = make_app(NOTIFIER_SIGNUP_LIMIT_PER_IP=22).test_client()
    answers = [sign_up(client, email=f"parent{i}@example.org").status_code for i in range(23)]
    assert answers[:22] == [200] * 22 and answers[22] == 429
    assert "Too many requests from your connection" in text_of(sign_up(client, email="late@example.org"))


def test_the_per_connection_limit_holds_across_workers(make_app):
    first = make_app(NOTIFIER_SIGNUP_LIMIT_PER_IP=1).test_client()
    second = make_app(NOTIFIER_SIGNUP_LIMIT_PER_IP=1).test_client()
    assert sign_up(first, email="one@example.org").status_code == 200
    assert sign_up(second, email="two@example.org").status_code == 429


def test_the_hourly_cap_on_confirmation_texts_protects_against_sms_pumping(make_app, twilio_server, sessions):
    client = make_app(NOTIFIER_CONFIRMATION_SMS_PER_HOUR=2).test_client()
    numbers = ["+16135550101", "+16135550102", "+16135550103"]
    answers = [sign_up(client, phone=n).status_code for n in numbers]
    assert answers == [200, 200, 429]
    assert len(twilio_server.messages) == 2
    assert "We cannot send confirmation texts right now" in text_of(sign_up(client, phone="+16135550104"))


def test_unconfirmed_sign_ups_are_deleted_after_seven_days(client, sessions, runner, later):
    sign_up(client, email=EMAIL)
    later(days=8)
    result = runner.invoke("subscribers", "purge-unconfirmed")
    assert "1 unconfirmed contact(s) deleted" in result.output
    counts = everything(sessions)
    assert (counts["Subscriber"], counts["Contact"], counts["Follow"]) == (0, 0, 0)
    assert counts["Consent"] == 1


def test_confirmed_subscriptions_survive_the_purge(client, sessions, runner, later):
    sign_up(client, phone=PHONE)
    text_in(client, PHONE, "YES")
    later(days=8)
    runner.invoke("subscribers", "purge-unconfirmed")
    assert contacts(sessions) == [("sms", PHONE, "active")]


def test_an_email_the_server_refuses_is_marked_invalid_and_the_page_says_the_same(client, smtp_server, sessions):
    smtp_server[0].refuse(EMAIL, 550)
    response = sign_up(client, email=EMAIL)
    assert response.status_code == 200 and "Check your messages" in text_of(response)
    assert contacts(sessions) == [("email", EMAIL, "invalid")]


def test_a_provider_that_is_down_leaves_the_confirmation_queued_for_a_retry(client, twilio_server, sessions):
    twilio_server.script(PHONE, (503, None))
    response = sign_up(client, phone=PHONE)
    assert response.status_code == 200 and "Check your messages" in text_of(response)
    with sessions() as session:
        row = session.scalars(select(OutboxRow)).one()
        assert (row.status, row.attempts) == ("pending", 1)


def test_signing_up_an_active_number_texts_its_owner_a_manage_link_and_changes_nothing(client, twilio_server,
                                                                                       sessions):
    text_in(client, PHONE, "TDSB")
    sign_up(client, phone=PHONE, board="peel")
    assert "/manage/" in twilio_server.sent_to(PHONE)[-1]["body"]
    with sessions() as session:
        assert {f.board_id for f in session.scalars(select(Follow))} == {"tdsb"}


def test_every_email_can_be_left_in_one_click(client, smtp_server):
    sign_up(client, email=EMAIL)
    [message] = smtp_server[0].messages()
    assert message["List-Unsubscribe"].startswith("<https://status.example.org/unsubscribe/")
    assert message["List-Unsubscribe-Post"] == "List-Unsubscribe=One-Click"
    assert "/unsubscribe/" in message.get_body(("plain",)).get_content()


def test_a_forwarded_for_header_from_no_trusted_proxy_neither_resets_the_limit_nor_becomes_evidence(
        make_app, sessions):
    client = make_app(NOTIFIER_SIGNUP_LIMIT_PER_IP=2).test_client()
    answers = [sign_up(client, email=f"p{i}@example.org", headers={"X-Forwarded-For": f"203.0.113.{i}"}).status_code
               for i in range(3)]
    assert answers == [200, 200, 429]
    with sessions() as session:
        sources = set(session.scalars(select(Consent.source)))
    assert sources == {"127.0.0.1"}


def test_behind_one_trusted_proxy_the_address_it_saw_counts(make_app, sessions):
    client = make_app(NOTIFIER_TRUSTED_PROXIES=1).test_client()
    sign_up(client, email=EMAIL, headers={"X-Forwarded-For": "=2+5+cmd, 198.51.100.4"})
    with sessions() as session:
        assert set(session.scalars(select(Consent.source))) == {"198.51.100.4"}


def _owner_of(sessions, address: str) -> tuple[int, str]:
    with sessions() as session:
        contact = session.scalars(select(Contact).where(Contact.address == address)).one()
        return contact.subscriber_id, contact.status


def test_signing_up_another_live_familys_invalid_email_leaves_it_in_that_family_and_answers_the_same(
        client, smtp_server, sessions):
    smtp_server[0].refuse(EMAIL, 550)
    sign_up(client, email=EMAIL, phone=PHONE)
    text_in(client, PHONE, "YES")
    before = _owner_of(sessions, EMAIL)
    assert before[1] == "invalid"
    taken = sign_up(client, email=EMAIL, board="peel")
    fresh = sign_up(client, email="fresh@example.org", board="peel")
    assert taken.status_code == fresh.status_code == 200
    assert text_of(taken) == text_of(fresh).replace("fresh@example.org", EMAIL)
    assert _owner_of(sessions, EMAIL) == before


def test_signing_up_an_invalid_email_whose_family_reaches_nobody_starts_afresh(client, smtp_server, sessions):
    smtp_server[0].refuse(EMAIL, 550)
    sign_up(client, email=EMAIL)
    smtp_server[0].refusals.clear()  # the mailbox works again
    sign_up(client, email=EMAIL, board="peel")
    assert contacts(sessions) == [("email", EMAIL, "pending")]
    with sessions() as session:
        assert {f.board_id for f in session.scalars(select(Follow))} == {"peel"}
