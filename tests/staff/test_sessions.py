"""Staff sessions live on the server: the cookie holds only a random session id, checked on every request, so
signing out, removing an account or letting the session expire ends it everywhere, and a cookie never becomes
someone else's."""

from __future__ import annotations

from datetime import timedelta

import time_machine

from notifier.db import transaction, utcnow
from notifier.staff import accounts, models
from tests.staff.conftest import ADMIN, TDSB_STAFF, Console, csrf_token, make_staff

LEAVER = "leaver@province.example.org"


def copy_of_cookie(client) -> str:
    return client.get_cookie("session").value


def client_with_cookie(app, value: str):
    other = app.test_client()
    other.set_cookie("session", value)
    return other


def test_the_cookie_of_a_removed_account_does_not_open_the_next_account(app, client, settings, sessions):
    make_staff(sessions, LEAVER, [], admin=True)
    Console(client, settings).sign_in(LEAVER)
    saved = copy_of_cookie(client)
    with transaction(sessions) as session:
        accounts.remove(session, LEAVER)
    make_staff(sessions, "boss@province.example.org", [], admin=True)
    response = client_with_cookie(app, saved).get("/staff/accounts")
    assert response.status_code == 302 and "/staff/signin" in response.headers["Location"]


def test_the_public_id_of_a_removed_account_is_never_given_to_the_next(sessions):
    first = make_staff(sessions, LEAVER, [], admin=True)
    with sessions() as session:
        old_public = session.get(models.StaffMember, first).public_id
    with transaction(sessions) as session:
        accounts.remove(session, LEAVER)
    second = make_staff(sessions, "boss@province.example.org", [], admin=True)
    with sessions() as session:
        new_public = session.get(models.StaffMember, second).public_id
    assert new_public != old_public and len(new_public) >= 32


def test_a_copied_cookie_stops_working_after_sign_out(app, client, settings, tdsb_staff):
    Console(client, settings).sign_in(TDSB_STAFF)
    saved = copy_of_cookie(client)
    client.post("/staff/signout", data={"csrf_token": csrf_token(client.get("/staff/").get_data(as_text=True))})
    response = client_with_cookie(app, saved).get("/staff/boards/tdsb")
    assert response.status_code == 302 and "/staff/signin" in response.headers["Location"]


def test_signing_out_ends_only_that_session(app, settings, tdsb_staff):
    laptop, phone = app.test_client(), app.test_client()
    Console(laptop, settings).sign_in(TDSB_STAFF)
    Console(phone, settings).sign_in(TDSB_STAFF)
    laptop.post("/staff/signout", data={"csrf_token": csrf_token(laptop.get("/staff/").get_data(as_text=True))})
    assert phone.get("/staff/boards/tdsb").status_code == 200


def test_removing_an_account_ends_its_sessions_on_the_server(client, settings, sessions, tdsb_staff):
    Console(client, settings).sign_in(TDSB_STAFF)
    with sessions() as session:
        assert session.query(models.StaffSession).count() == 1
    with transaction(sessions) as session:
        accounts.remove(session, TDSB_STAFF)
    with sessions() as session:
        assert session.query(models.StaffSession).count() == 0


def test_the_cookie_holds_a_random_session_id_and_only_its_hash_is_stored(client, settings, sessions, tdsb_staff):
    from flask.sessions import SecureCookieSessionInterface

    Console(client, settings).sign_in(TDSB_STAFF)
    serializer = SecureCookieSessionInterface().get_signing_serializer(client.application)
    cookie = serializer.loads(copy_of_cookie(client))
    assert "staff_id" not in cookie and len(cookie["staff_session"]) >= 32
    with sessions() as session:
        [row] = session.query(models.StaffSession).all()
    assert cookie["staff_session"] not in row.token_hash and row.staff_id == tdsb_staff


def test_a_session_ends_on_the_server_after_the_configured_minutes_even_with_a_fresh_cookie(app, client, settings,
                                                                                              tdsb_staff):
    Console(client, settings).sign_in(TDSB_STAFF)
    saved = copy_of_cookie(client)
    later = utcnow() + timedelta(minutes=settings.staff_session_minutes, seconds=5)
    with time_machine.travel(later):
        response = client_with_cookie(app, saved).get("/staff/boards/tdsb")
    assert response.status_code == 302


def test_an_administrator_removing_an_account_on_the_page_signs_it_out(app, client, settings, sessions, tdsb_staff):
    make_staff(sessions, ADMIN, [], admin=True)
    member = app.test_client()
    Console(member, settings).sign_in(TDSB_STAFF)
    admin = Console(client, settings)
    admin.sign_in(ADMIN)
    page = client.get("/staff/accounts").get_data(as_text=True)
    client.post("/staff/accounts", data={"action": "remove", "email": TDSB_STAFF, "csrf_token": csrf_token(page)})
    assert member.get("/staff/").status_code == 302


def test_migration_0010_gives_existing_accounts_a_public_id_and_downgrades_keeping_their_boards(tmp_path):
    from alembic import command
    from sqlalchemy import inspect, text

    from notifier import migrate
    from notifier.db import make_engine

    url = f"sqlite:///{tmp_path / 'migrate.sqlite3'}"
    migrate.upgrade(url)
    command.downgrade(migrate.alembic_config(url), "0010-1")
    engine = make_engine(url)
    with engine.begin() as connection:
        connection.execute(text("INSERT INTO staff_members (id, email, is_admin, created_at) "
                                "VALUES (7, 'old@example.org', false, '2026-01-01 00:00:00')"))
        connection.execute(text("INSERT INTO staff_boards (staff_id, board_id) VALUES (7, 'tdsb')"))
    migrate.upgrade(url)
    with engine.begin() as connection:
        public_id = connection.execute(text("SELECT public_id FROM staff_members WHERE id = 7")).scalar()
    assert public_id and len(public_id) == 32 and "staff_sessions" in inspect(engine).get_table_names()
    command.downgrade(migrate.alembic_config(url), "0010-1")
    with engine.begin() as connection:
        boards = connection.execute(text("SELECT board_id FROM staff_boards WHERE staff_id = 7")).scalars().all()
    assert boards == ["tdsb"] and "staff_sessions" not in inspect(engine).get_table_names()
    engine.dispose()
