"""Administrators manage accounts on /staff/accounts; nobody else can."""

from __future__ import annotations

from notifier.staff.models import AuditEntry
from tests.staff.conftest import ADMIN, Console, csrf_token, make_staff


def admin_console(client, settings, sessions) -> Console:
    make_staff(sessions, ADMIN, [], admin=True)
    admin = Console(client, settings)
    admin.sign_in(ADMIN)
    return admin


def test_staff_who_are_not_administrators_cannot_open_the_accounts_page(console):
    assert console.client.get("/staff/accounts").status_code == 403


def test_an_administrator_gives_someone_access_to_a_board(client, settings, sessions):
    admin = admin_console(client, settings, sessions)
    token = csrf_token(client.get("/staff/accounts").get_data(as_text=True))
    response = client.post("/staff/accounts", data={"csrf_token": token, "action": "add",
                                                    "email": "new@peel.example.org", "boards": "peel"})
    assert response.status_code == 200 and "new@peel.example.org" in response.get_data(as_text=True)
    with sessions() as session:
        assert session.query(AuditEntry).filter_by(action="staff_add", staff_email=ADMIN).count() == 1
    assert admin


def test_an_unknown_board_id_is_refused_and_nothing_is_created(client, settings, sessions):
    admin_console(client, settings, sessions)
    token = csrf_token(client.get("/staff/accounts").get_data(as_text=True))
    response = client.post("/staff/accounts", data={"csrf_token": token, "action": "add",
                                                    "email": "new@peel.example.org", "boards": "nosuchboard"})
    assert response.status_code == 400 and "new@peel.example.org" not in response.get_data(as_text=True)


def test_an_administrator_removes_an_account(client, settings, sessions):
    admin_console(client, settings, sessions)
    make_staff(sessions, "old@tdsb.example.org", ["tdsb"])
    token = csrf_token(client.get("/staff/accounts").get_data(as_text=True))
    response = client.post("/staff/accounts", data={"csrf_token": token, "action": "remove",
                                                    "email": "old@tdsb.example.org"})
    assert "old@tdsb.example.org" not in response.get_data(as_text=True)
