"""Managing a subscription from its signed link, asking for a fresh link, and leaving (one-click unsubscribe)."""

from __future__ import annotations

from sqlalchemy import select

from notifier import links
from notifier.db import transaction
from notifier.subscribers.models import Consent, Contact, Follow, Subscriber
from tests.subscribers.conftest import (
    EMAIL,
    OTHER_PHONE,
    PHONE,
    contacts,
    csrf_token,
    link_in,
    sign_up,
    text_in,
    text_of,
)


def _confirmed_email(client, inbox, **form) -> None:
    sign_up(client, email=EMAIL, **form)
    path = link_in(inbox.messages()[-1], "/confirm/")
    client.post(path, data={"csrf_token": csrf_token(client.get(path).get_data(as_text=True))})


def _ids(sessions) -> tuple[int, int]:
    with sessions() as session:
        contact = session.scalars(select(Contact).order_by(Contact.id)).first()
        return contact.subscriber_id, contact.id


def _manage_path(settings, sessions) -> str:
    return links.manage_url(settings, _ids(sessions)[0]).removeprefix(settings.base_url)


def _save(client, path: str, **fields):
    page = client.get(path).get_data(as_text=True)
    data = {"csrf_token": csrf_token(page), "language": "en", "board-0": "tdsb", "panel-0": ["elementary"],
            **fields}
    return client.post(path, data=data)


def test_the_manage_page_shows_the_subscription_in_its_language(client, smtp_server, sessions, settings):
    _confirmed_email(client, smtp_server[0], board="cepeo", language="fr")
    page = client.get(_manage_path(settings, sessions))
    assert page.status_code == 200
    assert "Vos alertes sur le statut des écoles" in text_of(page) and EMAIL in text_of(page)


def test_the_manage_page_changes_boards_panels_language_and_frequency(client, smtp_server, sessions, settings):
    _confirmed_email(client, smtp_server[0])
    _, contact_id = _ids(sessions)
    response = _save(client, _manage_path(settings, sessions), **{
        "board-0": "peel", "panel-0": ["secondary"], "board-1": "tdsb", "panel-1": ["elementary", "secondary"],
        "language": "fr", f"frequency-{contact_id}": "daily", "notify_on_effect": "1"})
    assert response.status_code == 303
    with sessions() as session:
        subscriber = session.scalars(select(Subscriber)).one()
        assert (subscriber.language, subscriber.notify_on_effect) == ("fr", True)
        assert sorted((f.board_id, f.panel) for f in session.scalars(select(Follow))) == [
            ("peel", "secondary"), ("tdsb", "elementary"), ("tdsb", "secondary")]
        assert session.get(Contact, contact_id).frequency == "daily"


def test_the_manage_page_refuses_an_unknown_board_and_changes_nothing(client, smtp_server, sessions, settings):
    _confirmed_email(client, smtp_server[0])
    response = _save(client, _manage_path(settings, sessions), **{"board-0": "nosuchboard"})
    assert response.status_code == 400 and "We do not know this school board" in text_of(response)
    with sessions() as session:
        assert [f.board_id for f in session.scalars(select(Follow))] == ["tdsb"]


def test_a_number_added_on_the_manage_page_must_confirm_first(client, smtp_server, twilio_server, sessions,
                                                              settings):
    _confirmed_email(client, smtp_server[0])
    _save(client, _manage_path(settings, sessions), new_phone="613 555 0123")
    assert contacts(sessions) == [("email", EMAIL, "active"), ("sms", PHONE, "pending")]
    assert "YES" in twilio_server.sent_to(PHONE)[0]["body"]


def test_a_number_waiting_for_its_confirmation_is_told_to_reply_to_the_text(client, smtp_server, twilio_server,
                                                                            sessions, settings):
    _confirmed_email(client, smtp_server[0])
    _save(client, _manage_path(settings, sessions), new_phone="613 555 0123")
    page = text_of(client.get(_manage_path(settings, sessions)))
    assert "Waiting for your confirmation: reply YES (or OUI) to the text we sent to this number." in page


def test_an_address_can_be_stopped_alone(client, smtp_server, sessions, settings):
    sign_up(client, email=EMAIL, phone=PHONE)
    text_in(client, PHONE, "YES")
    _, email_id = _ids(sessions)
    _save(client, _manage_path(settings, sessions), stop=str(email_id))
    assert [status for _, _, status in contacts(sessions)] == ["opted_out", "active"]


def test_leaving_erases_the_addresses_and_keeps_the_consent_record(client, smtp_server, sessions, settings):
    _confirmed_email(client, smtp_server[0])
    path = _manage_path(settings, sessions)
    token = csrf_token(client.get(path).get_data(as_text=True))
    response = client.post(path + "/leave", data={"csrf_token": token})
    assert response.status_code == 200 and "Your alerts are stopped" in text_of(response)
    [(_, address, status)] = contacts(sessions)
    assert status == "opted_out" and EMAIL not in address
    with sessions() as session:
        actions = [c.action for c in session.scalars(select(Consent).order_by(Consent.id))]
    assert actions == ["given", "confirmed", "withdrawn"]
    assert client.get(path).status_code == 404


def test_an_expired_manage_link_shows_a_clear_page(client, smtp_server, sessions, settings, later):
    _confirmed_email(client, smtp_server[0])
    path = _manage_path(settings, sessions)
    later(days=91)
    response = client.get(path)
    assert response.status_code == 400 and "This link has expired" in text_of(response)


def test_a_lost_link_is_mailed_to_a_subscribed_address(client, smtp_server, sessions):
    _confirmed_email(client, smtp_server[0])
    token = csrf_token(client.get("/manage").get_data(as_text=True))
    response = client.post("/manage", data={"csrf_token": token, "address": EMAIL})
    assert "If this email address is signed up" in text_of(response)
    assert "/manage/" in smtp_server[0].messages()[-1].get_body(("plain",)).get_content()


def test_a_lost_link_request_never_reveals_whether_an_address_is_subscribed(client, smtp_server, sessions):
    _confirmed_email(client, smtp_server[0])
    token = csrf_token(client.get("/manage").get_data(as_text=True))
    known = client.post("/manage", data={"csrf_token": token, "address": EMAIL})
    unknown = client.post("/manage", data={"csrf_token": token, "address": "stranger@example.org"})
    assert (known.status_code, text_of(known)) == (unknown.status_code, text_of(unknown))
    assert [m["To"] for m in smtp_server[0].messages()[1:]] == [EMAIL]


def test_a_lost_link_is_texted_to_a_subscribed_number(client, twilio_server):
    text_in(client, PHONE, "TDSB")
    token = csrf_token(client.get("/manage").get_data(as_text=True))
    client.post("/manage", data={"csrf_token": token, "address": "613-555-0123"})
    assert "/manage/" in twilio_server.sent_to(PHONE)[-1]["body"]


def test_a_lost_link_request_for_nonsense_says_what_is_wrong(client):
    token = csrf_token(client.get("/manage").get_data(as_text=True))
    response = client.post("/manage", data={"csrf_token": token, "address": "hello"})
    assert response.status_code == 400 and "This is not a phone number" in text_of(response)


def test_one_click_unsubscribe_by_post_needs_no_cookie_and_does_not_redirect(app, smtp_server, sessions, settings):
    client = app.test_client()
    _confirmed_email(client, smtp_server[0])
    url = links.unsubscribe_url(settings, _ids(sessions)[1])
    fresh = app.test_client()  # no cookies, no CSRF token: what a mail provider sends
    response = fresh.post(url.removeprefix(settings.base_url), data={"List-Unsubscribe": "One-Click"})
    assert response.status_code == 200
    [(_, address, status)] = contacts(sessions)
    assert status == "opted_out" and EMAIL not in address
    with sessions() as session:
        last = session.scalars(select(Consent).order_by(Consent.id.desc())).first()
    assert (last.action, last.method) == ("withdrawn", "one-click")


def test_opening_the_unsubscribe_link_alone_unsubscribes_nothing(client, smtp_server, sessions, settings):
    _confirmed_email(client, smtp_server[0])
    url = links.unsubscribe_url(settings, _ids(sessions)[1])
    page = client.get(url.removeprefix(settings.base_url))
    assert page.status_code == 200 and "Unsubscribe" in text_of(page)
    assert contacts(sessions)[0][2] == "active"


def test_unsubscribing_twice_is_harmless(app, smtp_server, sessions, settings):
    client = app.test_client()
    _confirmed_email(client, smtp_server[0])
    path = links.unsubscribe_url(settings, _ids(sessions)[1]).removeprefix(settings.base_url)
    assert [client.post(path).status_code for _ in range(2)] == [200, 200]
    with sessions() as session:
        assert [c.action for c in session.scalars(select(Consent))].count("withdrawn") == 1


def test_a_forged_unsubscribe_link_changes_nothing(client, smtp_server, sessions, settings):
    _confirmed_email(client, smtp_server[0])
    response = client.post("/unsubscribe/not-a-real-token")
    assert response.status_code == 400
    assert contacts(sessions)[0][2] == "active"


def test_an_email_that_left_can_sign_up_again(client, smtp_server, sessions, settings):
    _confirmed_email(client, smtp_server[0])
    with transaction(sessions) as session:
        from notifier.subscribers.contacts import mark_opted_out

        mark_opted_out(session, "email", EMAIL, "web", "test")
    _confirmed_email(client, smtp_server[0])
    assert contacts(sessions) == [("email", EMAIL, "active")]


def test_morning_reminders_are_offered_at_sign_up_per_channel(client, smtp_server, sessions):
    _confirmed_email(client, smtp_server[0], email_reminder="1")
    with sessions() as session:
        assert session.scalars(select(Contact)).one().morning_reminder is True


def test_morning_reminders_are_off_unless_asked_for(client, smtp_server, sessions):
    _confirmed_email(client, smtp_server[0])
    with sessions() as session:
        assert session.scalars(select(Contact)).one().morning_reminder is False


def test_the_manage_page_turns_morning_reminders_on_and_off(client, smtp_server, sessions, settings):
    _confirmed_email(client, smtp_server[0])
    _, contact_id = _ids(sessions)
    path = _manage_path(settings, sessions)
    assert _save(client, path, reminder=str(contact_id)).status_code == 303
    with sessions() as session:
        assert session.get(Contact, contact_id).morning_reminder is True
    assert f'name="reminder" value="{contact_id}" checked' in client.get(path).get_data(as_text=True)
    assert _save(client, path).status_code == 303
    with sessions() as session:
        assert session.get(Contact, contact_id).morning_reminder is False


def test_a_number_that_said_stop_added_on_the_manage_page_is_answered_like_any_other_and_not_texted(
        client, smtp_server, twilio_server, sessions, settings):
    _confirmed_email(client, smtp_server[0])
    text_in(client, PHONE, "STOP")
    path = _manage_path(settings, sessions)
    stopped = _save(client, path, new_phone=PHONE)
    fresh = _save(client, path, new_phone=OTHER_PHONE)
    assert stopped.status_code == fresh.status_code == 303
    assert twilio_server.sent_to(PHONE) == [] and ("sms", PHONE, "pending") not in contacts(sessions)


def test_a_number_that_said_stop_counts_against_the_per_address_limit_on_the_manage_page(
        client, smtp_server, twilio_server, sessions, settings):
    _confirmed_email(client, smtp_server[0])
    text_in(client, PHONE, "STOP")
    path = _manage_path(settings, sessions)
    answers = [_save(client, path, new_phone=PHONE).status_code for _ in range(4)]
    assert answers == [303, 303, 303, 429]


def test_saving_the_manage_page_is_limited_per_connection(make_app, smtp_server, sessions):
    app = make_app(NOTIFIER_SIGNUP_LIMIT_PER_IP=2)
    client = app.test_client()
    _confirmed_email(client, smtp_server[0])
    path = _manage_path(app.extensions["notifier"].settings, sessions)
    answers = [_save(client, path).status_code for _ in range(3)]
    assert answers == [303, 303, 429]


def _owners(sessions) -> dict[str, tuple[int, str]]:
    with sessions() as session:
        return {c.address: (c.subscriber_id, c.status) for c in session.scalars(select(Contact))}


def test_another_familys_pending_address_added_on_the_manage_page_stays_theirs_and_is_sent_its_confirmation(
        client, smtp_server, sessions, settings):
    _confirmed_email(client, smtp_server[0])
    path = _manage_path(settings, sessions)
    sign_up(client, email="victim@example.org", board="peel")
    before = _owners(sessions)["victim@example.org"]
    taken = _save(client, path, new_email="victim@example.org")
    fresh = _save(client, path, new_email="fresh@example.org")
    assert taken.status_code == fresh.status_code == 303
    assert _owners(sessions)["victim@example.org"] == before
    assert len([m for m in smtp_server[0].messages() if m["To"] == "victim@example.org"]) == 2


def test_confirming_after_another_family_added_the_address_follows_the_owners_boards(
        client, smtp_server, sessions, settings):
    _confirmed_email(client, smtp_server[0])
    sign_up(client, email="victim@example.org", board="peel")
    _save(client, _manage_path(settings, sessions), new_email="victim@example.org")
    path = link_in([m for m in smtp_server[0].messages() if m["To"] == "victim@example.org"][-1], "/confirm/")
    client.post(path, data={"csrf_token": csrf_token(client.get(path).get_data(as_text=True))})
    with sessions() as session:
        contact = session.scalars(select(Contact).where(Contact.address == "victim@example.org")).one()
        assert contact.status == "active"
        assert [f.board_id for f in contact.subscriber.follows] == ["peel"]


def test_another_familys_active_address_added_on_the_manage_page_stays_theirs(client, smtp_server, sessions,
                                                                              settings):
    _confirmed_email(client, smtp_server[0])
    path = _manage_path(settings, sessions)
    sign_up(client, email="victim@example.org", board="peel")
    confirm = link_in(smtp_server[0].messages()[-1], "/confirm/")
    client.post(confirm, data={"csrf_token": csrf_token(client.get(confirm).get_data(as_text=True))})
    before = _owners(sessions)["victim@example.org"]
    assert _save(client, path, new_email="victim@example.org").status_code == 303
    assert _owners(sessions)["victim@example.org"] == before


def test_an_unsubscribe_link_opts_out_only_the_contact_it_was_made_for(app, smtp_server, sessions, settings):
    from datetime import timedelta

    from notifier.db import utcnow

    client = app.test_client()
    sign_up(client, email=EMAIL)
    with sessions() as session:
        contact = session.scalars(select(Contact)).one()
        theirs = links.unsubscribe_url(settings, contact.id, contact.link_key).removeprefix(settings.base_url)
    with transaction(sessions) as session:  # the same id now names another parent (a different key)
        session.get(Contact, contact.id).link_key = "someone-else"
    assert client.post(theirs).status_code == 400
    assert contacts(sessions) == [("email", EMAIL, "pending")]
    old = links.unsubscribe_url(settings, contact.id).removeprefix(settings.base_url)  # a link without a key
    with transaction(sessions) as session:  # ... made before this contact existed
        session.get(Contact, contact.id).created_at = utcnow() + timedelta(minutes=1)
    assert client.post(old).status_code == 400
    assert contacts(sessions) == [("email", EMAIL, "pending")]
