"""Staff sign in with an emailed single-use link; the page never tells who has an account; attempts are limited."""

from __future__ import annotations

import logging
from datetime import timedelta

import time_machine

from notifier.db import transaction, utcnow
from notifier.delivery.channels.local import read_outbox
from notifier.staff import accounts, models, signin
from notifier.staff.models import SigninToken
from tests.staff.conftest import TDSB_STAFF, Console, csrf_token, latest_signin_link


def ask_for_link(client, email: str, ip: str = "198.51.100.7"):
    page = client.get("/staff/signin").get_data(as_text=True)
    return client.post("/staff/signin", data={"email": email, "csrf_token": csrf_token(page)},
                       environ_base={"REMOTE_ADDR": ip})


def follow_link(client, settings, email: str):
    path = latest_signin_link(settings.outbox_dir, email).removeprefix(settings.base_url)
    confirm = client.get(path).get_data(as_text=True)
    return client.post(path, data={"csrf_token": csrf_token(confirm)})


def test_the_emailed_link_signs_a_staff_member_in(client, settings, tdsb_staff):
    ask_for_link(client, TDSB_STAFF)
    response = follow_link(client, settings, TDSB_STAFF)
    assert response.status_code == 302 and response.headers["Location"].endswith("/staff/")
    assert "Toronto District School Board" in client.get("/staff/").get_data(as_text=True)


def test_the_link_goes_to_a_real_smtp_server_when_one_is_configured(env, smtp_server, sessions):
    from notifier import create_app
    from tests.staff.conftest import make_staff

    inbox, url = smtp_server
    make_staff(sessions, TDSB_STAFF, ["tdsb"])
    app = create_app({**env, "NOTIFIER_SMTP_URL": url, "TESTING": True})
    ask_for_link(app.test_client(), TDSB_STAFF)
    [message] = inbox.messages()
    assert message["To"] == TDSB_STAFF and "/staff/signin/" in message.get_body(("plain",)).get_content()
    app.extensions["notifier"].engine.dispose()


def test_opening_the_link_does_not_use_it_up_so_mail_scanners_cannot_spend_it(client, settings, tdsb_staff):
    ask_for_link(client, TDSB_STAFF)
    path = latest_signin_link(settings.outbox_dir, TDSB_STAFF).removeprefix(settings.base_url)
    client.get(path)
    client.get(path)
    assert follow_link(client, settings, TDSB_STAFF).status_code == 302


def test_the_page_says_the_same_for_an_address_without_an_account_and_sends_nothing(client, settings, tdsb_staff):
    known = ask_for_link(client, TDSB_STAFF).get_data(as_text=True)
    unknown = ask_for_link(client, "stranger@example.org").get_data(as_text=True)
    assert known == unknown
    assert [m["to"] for m in read_outbox(settings.outbox_dir)] == [TDSB_STAFF]


def test_a_link_works_only_once(client, settings, tdsb_staff):
    ask_for_link(client, TDSB_STAFF)
    assert follow_link(client, settings, TDSB_STAFF).status_code == 302
    client.post("/staff/signout", data={"csrf_token": csrf_token(client.get("/staff/").get_data(as_text=True))})
    again = follow_link(client, settings, TDSB_STAFF)
    assert again.status_code == 400 and "already used" in again.get_data(as_text=True)


def test_a_link_expires_after_15_minutes(sessions, tdsb_staff):
    now = utcnow()
    with transaction(sessions) as session:
        token = signin.issue(session, session.get(models.StaffMember, tdsb_staff), now)
    with transaction(sessions) as session:
        assert signin.redeem(session, token, now + timedelta(minutes=15, seconds=1)) is None
    with transaction(sessions) as session:
        assert signin.redeem(session, token, now + timedelta(minutes=14)) is not None


def test_only_a_hash_of_the_token_is_stored(client, settings, sessions, tdsb_staff):
    ask_for_link(client, TDSB_STAFF)
    token = latest_signin_link(settings.outbox_dir, TDSB_STAFF).rsplit("/", 1)[1]
    with sessions() as session:
        [row] = session.query(SigninToken).all()
    assert token not in row.token_hash and len(row.token_hash) == 64


def test_requests_for_an_address_from_many_ips_never_refuse_its_owner(client, settings, tdsb_staff):
    for i in range(signin.LIMIT_PER_IP[0] + 5):
        ask_for_link(client, TDSB_STAFF, ip=f"203.0.113.{i}")
    owner = ask_for_link(client, TDSB_STAFF, ip="198.51.100.99")
    assert owner.status_code == 200
    assert owner.get_data(as_text=True) == ask_for_link(client, "stranger@example.org").get_data(as_text=True)
    assert follow_link(client, settings, TDSB_STAFF).status_code == 302  # a link in the inbox still works


def test_a_flood_of_requests_for_one_address_sends_it_few_emails(client, settings, tdsb_staff):
    for i in range(10):
        assert ask_for_link(client, TDSB_STAFF, ip=f"203.0.113.{i}").status_code == 200
    assert len([m for m in read_outbox(settings.outbox_dir) if m["to"] == TDSB_STAFF]) == 1
    with time_machine.travel(utcnow() + timedelta(seconds=signin.EMAIL_SPACING_SECONDS)):
        ask_for_link(client, TDSB_STAFF, ip="203.0.113.200")
    assert len([m for m in read_outbox(settings.outbox_dir) if m["to"] == TDSB_STAFF]) == 2


def test_sign_in_requests_are_limited_per_ip(client, tdsb_staff):
    limit = signin.LIMIT_PER_IP[0]
    codes = [ask_for_link(client, f"person{i}@example.org").status_code for i in range(limit + 1)]
    assert codes == [200] * limit + [429]


def test_refusals_are_logged_without_the_whole_address(client, settings, tdsb_staff, caplog):
    caplog.set_level(logging.WARNING)
    ask_for_link(client, "stranger@example.org")
    refusals = [r.getMessage() for r in caplog.records if "refused" in r.getMessage()]
    assert refusals and "s***@example.org" in refusals[0]
    assert not any("stranger@example.org" in r.getMessage() for r in caplog.records)


def test_a_session_expires_after_the_configured_minutes(app, client, settings, tdsb_staff):
    Console(client, settings).sign_in(TDSB_STAFF)
    assert client.get("/staff/boards/tdsb").status_code == 200
    with time_machine.travel(utcnow() + timedelta(minutes=settings.staff_session_minutes, seconds=5)):
        response = client.get("/staff/boards/tdsb")
    assert response.status_code == 302 and "/staff/signin" in response.headers["Location"]


def test_a_removed_account_is_signed_out_at_its_next_click(client, settings, sessions, tdsb_staff):
    Console(client, settings).sign_in(TDSB_STAFF)
    with transaction(sessions) as session:
        accounts.remove(session, TDSB_STAFF)
    assert client.get("/staff/boards/tdsb").status_code == 302


def test_the_session_cookie_is_secure_httponly_and_samesite_lax(client, settings, tdsb_staff):
    ask_for_link(client, TDSB_STAFF)
    response = follow_link(client, settings, TDSB_STAFF)
    cookie = next(h for h in response.headers.getlist("Set-Cookie") if h.startswith("session="))
    assert "Secure" in cookie and "HttpOnly" in cookie and "SameSite=Lax" in cookie
