"""The functions other parts rely on: opting out and invalid addresses (delivery), signed links (digest emails),
and database rate limits (sign-up, staff sign-in)."""

from __future__ import annotations

from datetime import UTC, datetime, timedelta

import pytest
from sqlalchemy import select

from notifier import links
from notifier.db import transaction
from notifier.subscribers import consent, ratelimit
from notifier.subscribers.contacts import mark_invalid, mark_opted_out
from notifier.subscribers.models import Consent, Contact, ContactStatus, Subscriber

PHONE = "+16135550123"
NOW = datetime(2026, 11, 23, 12, 0, tzinfo=UTC)


def _active_phone(sessions) -> int:
    with transaction(sessions) as session:
        subscriber = Subscriber(language="fr")
        subscriber.contacts.append(Contact(channel="sms", address=PHONE, status=ContactStatus.ACTIVE.value))
        session.add(subscriber)
        session.flush()
        return subscriber.contacts[0].id


def test_mark_opted_out_stops_the_contact_and_erases_its_address(sessions):
    contact_id = _active_phone(sessions)
    with transaction(sessions) as session:
        mark_opted_out(session, "sms", PHONE, "provider", "twilio 21610")
    with sessions() as session:
        contact = session.get(Contact, contact_id)
        assert contact.status == ContactStatus.OPTED_OUT.value
        assert PHONE not in contact.address


def test_mark_opted_out_records_one_withdrawal_however_often_it_is_called(sessions):
    _active_phone(sessions)
    for _ in range(3):
        with transaction(sessions) as session:
            mark_opted_out(session, "sms", PHONE, "provider", "twilio 21610")
    with sessions() as session:
        rows = session.scalars(select(Consent)).all()
        assert [(r.action, r.method, r.language) for r in rows] == [("withdrawn", "provider", "fr")]
        assert consent.has_withdrawn(session, "sms", PHONE)


def test_mark_opted_out_of_an_unknown_address_still_records_the_withdrawal(sessions):
    with transaction(sessions) as session:
        mark_opted_out(session, "email", "stranger@example.org", "email-reply", "smtp")
    with sessions() as session:
        assert consent.has_withdrawn(session, "email", "stranger@example.org")
        assert session.scalars(select(Contact)).all() == []


def test_mark_invalid_stops_sending_to_the_contact(sessions):
    contact_id = _active_phone(sessions)
    with transaction(sessions) as session:
        mark_invalid(session, "sms", PHONE, "twilio 21614")
    with sessions() as session:
        assert session.get(Contact, contact_id).status == ContactStatus.INVALID.value


def test_manage_and_unsubscribe_urls_are_absolute_and_signed(settings):
    manage = links.manage_url(settings, 42)
    unsubscribe = links.unsubscribe_url(settings, 7, "key-7")
    assert manage.startswith("https://status.example.org/manage/")
    assert unsubscribe.startswith("https://status.example.org/unsubscribe/")
    assert links.read_manage(settings, manage.rsplit("/", 1)[1]) == 42
    assert links.read_unsubscribe(settings, unsubscribe.rsplit("/", 1)[1])[:2] == (7, "key-7")


def test_a_tampered_link_is_refused(settings):
    token = links.manage_url(settings, 42).rsplit("/", 1)[1]
    with pytest.raises(links.LinkError) as error:
        links.read_manage(settings, token[:-2] + ("AA" if not token.endswith("AA") else "BB"))
    assert error.value.reason == "invalid"


def test_one_kind_of_link_does_not_open_another(settings):
    token = links.unsubscribe_url(settings, 42).rsplit("/", 1)[1]
    with pytest.raises(links.LinkError):
        links.read_manage(settings, token)


def test_rate_limit_allows_up_to_the_limit_within_a_window(sessions):
    with transaction(sessions) as session:
        answers = [ratelimit.allow(session, "signup:ip:x", 3, 3600, NOW) for _ in range(5)]
    assert answers == [True, True, True, False, False]


def test_rate_limit_counts_are_shared_between_sessions(sessions):
    for _ in range(2):
        with transaction(sessions) as session:
            assert ratelimit.allow(session, "k", 2, 3600, NOW)
    with transaction(sessions) as session:
        assert not ratelimit.allow(session, "k", 2, 3600, NOW)


def test_rate_limit_opens_again_in_the_next_window(sessions):
    with transaction(sessions) as session:
        assert ratelimit.allow(session, "k", 1, 3600, NOW)
        assert not ratelimit.allow(session, "k", 1, 3600, NOW)
        assert ratelimit.allow(session, "k", 1, 3600, NOW + timedelta(hours=1))
