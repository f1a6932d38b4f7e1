"""Without SMTP or Twilio accounts (`make run` on a fresh machine), confirmations land in the local outbox,
which /dev/outbox shows in debug mode only."""

from __future__ import annotations

import re

import pytest

from tests.subscribers.conftest import EMAIL, PHONE, contacts, csrf_token, text_of


@pytest.fixture
def local_app(env):
    from notifier import create_app

    def make(debug: bool):
        app = create_app({**env, "NOTIFIER_DEBUG": "1" if debug else "0", "TESTING": True})
        made.append(app)
        return app

    made = []
    yield make
    for app in made:
        app.extensions["notifier"].engine.dispose()


def test_without_providers_the_confirmation_is_shown_at_dev_outbox(local_app):
    client = local_app(debug=True).test_client()
    token = csrf_token(client.get("/subscribe").get_data(as_text=True))
    client.post("/subscribe", data={"csrf_token": token, "board-0": "tdsb", "panel-0": "elementary", "email": EMAIL,
                                    "language": "en", "email_frequency": "daily"})
    page = client.get("/dev/outbox").get_data(as_text=True)
    assert EMAIL in page
    assert re.search(r'href="https://status.example.org/confirm/[^"]+"', page)


def test_dev_outbox_does_not_exist_outside_debug_mode(local_app):
    assert local_app(debug=False).test_client().get("/dev/outbox").status_code == 404


def _text_sign_up(client, language: str = "en") -> None:
    token = csrf_token(client.get("/subscribe").get_data(as_text=True))
    client.post("/subscribe", data={"csrf_token": token, "board-0": "tdsb", "panel-0": "elementary", "phone": PHONE,
                                    "language": language, "sms_frequency": "immediate"})


def _reply(client, body: str, word: bool = True, **request):
    page = client.get("/dev/outbox").get_data(as_text=True)
    field = {"word": body} if word else {"text": body}
    return client.post("/dev/outbox/reply", data={"csrf_token": csrf_token(page), "from": PHONE, **field}, **request)


def test_each_text_in_the_outbox_can_be_answered_as_the_parent(local_app):
    client = local_app(debug=True).test_client()
    _text_sign_up(client)
    page = client.get("/dev/outbox").get_data(as_text=True)
    assert 'action="/dev/outbox/reply"' in page and f'name="from" value="{PHONE}"' in page
    assert all(f'name="word" value="{word}"' in page for word in ("OUI", "STOP", "AIDE"))


def test_replying_oui_in_the_outbox_confirms_the_number_and_shows_the_answer(local_app, sessions):
    client = local_app(debug=True).test_client()
    _text_sign_up(client)
    assert contacts(sessions) == [("sms", PHONE, "pending")]
    response = _reply(client, "OUI")
    assert response.status_code == 200
    assert contacts(sessions) == [("sms", PHONE, "active")]
    assert "Your school status alerts are on." in text_of(response)


def test_the_answer_is_kept_in_the_outbox_as_the_text_the_parent_receives(local_app, settings):
    from notifier.delivery.channels.local import read_outbox

    client = local_app(debug=True).test_client()
    _text_sign_up(client)
    _reply(client, "OUI")
    newest = read_outbox(settings.outbox_dir)[0]
    assert (newest["channel"], newest["to"]) == ("sms", PHONE)
    assert newest["text"].startswith("Your school status alerts are on.")


def test_replying_stop_in_the_outbox_opts_the_number_out(local_app, sessions):
    client = local_app(debug=True).test_client()
    _text_sign_up(client)
    response = _reply(client, "STOP")
    assert contacts(sessions)[0][2] == "opted_out"
    assert "The service answered nothing" in text_of(response)  # Twilio answers its own STOP words


def test_replying_aide_in_the_outbox_gets_help_in_french(local_app):
    client = local_app(debug=True).test_client()
    _text_sign_up(client, language="fr")
    assert "Alertes sur le statut des écoles de l'Ontario" in text_of(_reply(client, "AIDE"))


def test_a_free_reply_goes_through_the_same_keywords(local_app):
    client = local_app(debug=True).test_client()
    _text_sign_up(client)
    assert "Sorry, we did not understand." in text_of(_reply(client, "what is this?", word=False))


def test_an_empty_reply_is_refused_and_changes_nothing(local_app, sessions):
    client = local_app(debug=True).test_client()
    _text_sign_up(client)
    response = _reply(client, "  ", word=False)
    assert response.status_code == 400 and contacts(sessions)[0][2] == "pending"


def test_a_reply_needs_the_pages_form_token(local_app, sessions):
    client = local_app(debug=True).test_client()
    _text_sign_up(client)
    response = client.post("/dev/outbox/reply", data={"from": PHONE, "word": "OUI"})
    assert response.status_code == 400 and contacts(sessions)[0][2] == "pending"


def test_replies_do_not_exist_outside_debug_mode(local_app, sessions):
    client = local_app(debug=False).test_client()
    _text_sign_up(client)
    token = csrf_token(client.get("/subscribe").get_data(as_text=True))
    response = client.post("/dev/outbox/reply", data={"csrf_token": token, "from": PHONE, "word": "OUI"})
    assert response.status_code == 404 and contacts(sessions)[0][2] == "pending"


@pytest.mark.parametrize("headers", [{}, {"X-Forwarded-For": "127.0.0.1"}])
def test_the_outbox_answers_only_this_machine(local_app, sessions, headers):
    client = local_app(debug=True).test_client()
    _text_sign_up(client)
    elsewhere = {"environ_base": {"REMOTE_ADDR": "198.51.100.7"}, "headers": headers}
    assert client.get("/dev/outbox", **elsewhere).status_code == 404
    assert _reply(client, "OUI", **elsewhere).status_code == 404
    assert contacts(sessions)[0][2] == "pending"


def test_the_page_after_a_text_sign_up_does_not_mention_a_spam_folder(local_app):
    client = local_app(debug=True).test_client()
    token = csrf_token(client.get("/subscribe").get_data(as_text=True))
    response = client.post("/subscribe", data={"csrf_token": token, "board-0": "tdsb", "panel-0": "elementary",
                                               "phone": PHONE, "language": "en", "sms_frequency": "immediate"})
    text = text_of(response)
    assert "We sent you a text" in text and "spam" not in text and "email" not in text.lower()
    assert "If this number was already signed up, we texted it a link" in text


def test_the_page_after_an_email_sign_up_mentions_the_spam_folder(local_app):
    client = local_app(debug=True).test_client()
    token = csrf_token(client.get("/subscribe").get_data(as_text=True))
    response = client.post("/subscribe", data={"csrf_token": token, "board-0": "tdsb", "panel-0": "elementary",
                                               "email": EMAIL, "language": "en", "email_frequency": "immediate"})
    text = text_of(response)
    assert "check your spam folder" in text and "text" not in text and "number" not in text


def test_in_debug_mode_the_sent_page_points_to_the_outbox(local_app):
    client = local_app(debug=True).test_client()
    token = csrf_token(client.get("/subscribe").get_data(as_text=True))
    response = client.post("/subscribe", data={"csrf_token": token, "board-0": "tdsb", "panel-0": "elementary",
                                               "phone": PHONE, "language": "en", "sms_frequency": "immediate"})
    assert 'href="/dev/outbox"' in response.get_data(as_text=True)


def test_behind_a_trusted_proxy_a_forwarded_loopback_address_still_does_not_open_the_outbox(env, sessions):
    from notifier import create_app

    app = create_app({**env, "NOTIFIER_DEBUG": "1", "NOTIFIER_TRUSTED_PROXIES": "1", "TESTING": True})
    try:
        client = app.test_client()
        response = client.get("/dev/outbox", environ_base={"REMOTE_ADDR": "198.51.100.7"},
                              headers={"X-Forwarded-For": "127.0.0.1"})
        assert response.status_code == 404
        assert client.get("/dev/outbox").status_code == 200  # from this machine, it answers
    finally:
        app.extensions["notifier"].engine.dispose()


def test_a_proxy_on_this_machine_forwarding_another_caller_does_not_open_the_outbox(env, sessions):
    from notifier import create_app

    app = create_app({**env, "NOTIFIER_DEBUG": "1", "NOTIFIER_TRUSTED_PROXIES": "1", "TESTING": True})
    try:
        response = app.test_client().get("/dev/outbox", headers={"X-Forwarded-For": "198.51.100.7"})
        assert response.status_code == 404
    finally:
        app.extensions["notifier"].engine.dispose()


def test_a_french_reply_is_in_the_outbox_once_in_french(local_app, settings):
    from notifier.delivery.channels.local import read_outbox

    client = local_app(debug=True).test_client()
    _text_sign_up(client, language="fr")
    _reply(client, "AIDE")
    replies = [m for m in read_outbox(settings.outbox_dir) if m["reference"].startswith("reply-")]
    assert [(m["to"], m["language"]) for m in replies] == [(PHONE, "fr")]


def test_the_debug_notice_after_a_french_sign_up_is_in_french(local_app):
    client = local_app(debug=True).test_client()
    page = client.get("/subscribe?lang=fr", follow_redirects=True).get_data(as_text=True)
    response = client.post("/subscribe", data={"csrf_token": csrf_token(page), "board-0": "tdsb",
                                               "panel-0": "elementary", "phone": PHONE, "language": "fr",
                                               "sms_frequency": "immediate"})
    words = text_of(response).replace("\u00a0", " ").replace("\u202f", " ")
    assert "Mode débogage : rien n’a quitté cet ordinateur." in words, words
    assert "Debug mode" not in words and '<p class="notice" lang="en">' not in response.get_data(as_text=True)
    assert 'href="/dev/outbox"' in response.get_data(as_text=True)


@pytest.mark.parametrize(("word", "start"), [
    ("OUI", "Vos alertes sur le statut des écoles sont activées."),
    ("AIDE", "Alertes sur le statut des écoles de l'Ontario"),
    ("ARRET", "Vous ne recevrez plus de textos sur le statut des écoles."),  # a stop word Twilio does not know
    ("STOP", None),  # Twilio answers its own stop words: nothing from us
])
def test_a_french_parents_reply_is_on_the_outbox_page_once_in_french(local_app, settings, word, start):
    from notifier.delivery.channels.local import read_outbox

    client = local_app(debug=True).test_client()
    _text_sign_up(client, language="fr")
    _reply(client, word)
    replies = [m for m in read_outbox(settings.outbox_dir) if m["reference"].startswith("reply-")]
    assert [(m["to"], m["language"], m["text"].startswith(start or "")) for m in replies] == (
        [(PHONE, "fr", True)] if start else [])
    listed = client.get("/dev/outbox").get_data(as_text=True)
    assert listed.count("&middot; reply-") + listed.count("· reply-") == len(replies)
