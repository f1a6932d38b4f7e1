"""Staff may read and change only their own boards; nothing is changed without a session and a CSRF token."""

from __future__ import annotations

from datetime import timedelta

import time_machine

from notifier.db import utcnow
from tests.staff.conftest import ADMIN, PEEL_STAFF, TDSB_STAFF, Console, csrf_token, make_staff


def test_staff_of_one_board_cannot_read_the_edit_form_of_another(console):
    assert console.client.get("/staff/boards/peel").status_code == 403


def test_staff_of_one_board_cannot_change_another_and_its_file_stays_byte_identical(console, settings, sessions):
    make_staff(sessions, PEEL_STAFF, ["peel"])
    peel = Console(console.client.application.test_client(), settings)
    peel.sign_in(PEEL_STAFF)
    fields = peel.form("peel")
    fields["status"] = ["closed"]
    fields["csrf_token"] = [csrf_token(console.client.get("/staff/").get_data(as_text=True))]
    before = settings.boards_file.read_bytes()
    response = console.send("peel", fields)
    assert response.status_code == 403
    assert settings.boards_file.read_bytes() == before


def test_staff_cannot_read_the_audit_history_of_another_board(console):
    assert console.client.get("/staff/boards/peel/history").status_code == 403


def test_the_list_of_boards_shows_only_the_staff_members_own(console):
    page = console.client.get("/staff/").get_data(as_text=True)
    assert "/staff/boards/tdsb" in page and "/staff/boards/peel" not in page


def test_an_administrator_may_edit_any_board(client, settings, sessions):
    make_staff(sessions, ADMIN, [], admin=True)
    admin = Console(client, settings)
    admin.sign_in(ADMIN)
    assert admin.edit("peel", status="closed").status_code == 200
    assert "id: peel" in settings.boards_file.read_text()
    from notifier.status import document

    assert document.load(settings.boards_file).status.by_id()["peel"].status == "closed"


def test_a_board_given_to_two_people_can_be_published_by_either(client, settings, sessions):
    make_staff(sessions, TDSB_STAFF, ["tdsb"])
    make_staff(sessions, "backup@tdsb.example.org", ["tdsb"])
    backup = Console(client, settings)
    backup.sign_in("backup@tdsb.example.org")
    assert backup.edit("tdsb", status="closed").status_code == 200


def test_without_signing_in_the_form_redirects_to_sign_in(client):
    response = client.get("/staff/boards/tdsb")
    assert response.status_code == 302 and "/staff/signin" in response.headers["Location"]


def test_an_unauthenticated_post_is_refused_and_the_file_stays_byte_identical(console, settings, app):
    fields = console.form("tdsb")
    fields["status"] = ["closed"]
    before = settings.boards_file.read_bytes()
    stranger = app.test_client()  # has a valid CSRF token (from the sign-in page) but never signed in
    fields["csrf_token"] = [csrf_token(stranger.get("/staff/signin").get_data(as_text=True))]
    response = stranger.post("/staff/boards/tdsb", data={**fields, "action": "publish"})
    assert response.status_code == 401
    assert settings.boards_file.read_bytes() == before


def test_a_post_after_the_session_expired_is_refused_and_the_file_stays_byte_identical(console, settings):
    fields = console.form("tdsb")
    fields["status"] = ["closed"]
    before = settings.boards_file.read_bytes()
    with time_machine.travel(utcnow() + timedelta(minutes=settings.staff_session_minutes + 1)):
        response = console.send("tdsb", fields)
    assert response.status_code == 401
    assert settings.boards_file.read_bytes() == before


def test_a_post_without_csrf_token_is_refused_and_the_file_stays_byte_identical(console, settings):
    fields = console.form("tdsb")
    fields["status"] = ["closed"]
    del fields["csrf_token"]
    before = settings.boards_file.read_bytes()
    response = console.send("tdsb", fields)
    assert response.status_code == 400
    assert settings.boards_file.read_bytes() == before


def _forged_base(board) -> str:
    """A `base` field as an attacker writes it: the board's entry as plain base64 JSON, no signature."""
    import base64
    import json

    raw = json.dumps(board.model_dump(mode="json", exclude_none=True), sort_keys=True)
    return base64.urlsafe_b64encode(raw.encode()).decode()


def test_a_forged_base_naming_another_board_is_refused_and_changes_nothing(console, settings, sessions, first_cycle):
    from notifier.delivery.outbox import OutboxRow
    from notifier.status import document
    from tests.staff.conftest import make_subscriber

    make_subscriber(sessions, "adsb", "adsb-parent@example.org")
    adsb = document.load(settings.boards_file).status.by_id()["adsb"]
    fields = console.form("tdsb")
    fields.update(base=[_forged_base(adsb)], status=["closed"], message_en=["Forged: all schools closed"])
    before = settings.boards_file.read_bytes()
    response = console.send("tdsb", fields)
    assert response.status_code == 400
    assert "nothing was saved" in response.get_data(as_text=True)
    assert settings.boards_file.read_bytes() == before
    with sessions() as session:
        assert session.query(OutboxRow).filter(~OutboxRow.digest_key.startswith("staff-signin-")).count() == 0


def test_a_tampered_base_is_refused_and_the_file_stays_byte_identical(console, settings):
    fields = console.form("tdsb")
    signed = fields["base"][0]
    fields.update(base=[signed[:-3] + ("AAA" if not signed.endswith("AAA") else "BBB")], status=["closed"])
    before = settings.boards_file.read_bytes()
    assert console.send("tdsb", fields).status_code == 400
    assert settings.boards_file.read_bytes() == before


def test_a_base_signed_for_another_board_is_refused(client, settings, sessions):
    make_staff(sessions, ADMIN, [], admin=True)
    admin = Console(client, settings)
    admin.sign_in(ADMIN)
    peel_base = admin.form("peel")["base"]
    fields = admin.form("tdsb")
    fields.update(base=peel_base, status=["closed"])
    before = settings.boards_file.read_bytes()
    assert admin.send("tdsb", fields).status_code == 400
    assert settings.boards_file.read_bytes() == before


def test_a_base_signed_for_another_staff_member_is_refused(console, client, settings, sessions):
    make_staff(sessions, "backup@tdsb.example.org", ["tdsb"])
    backup = Console(client.application.test_client(), settings)
    backup.sign_in("backup@tdsb.example.org")
    fields = console.form("tdsb")
    fields.update(base=backup.form("tdsb")["base"], status=["closed"])
    before = settings.boards_file.read_bytes()
    assert console.send("tdsb", fields).status_code == 400
    assert settings.boards_file.read_bytes() == before


def test_a_missing_base_is_refused(console, settings):
    fields = console.form("tdsb")
    fields.pop("base")
    fields["status"] = ["closed"]
    before = settings.boards_file.read_bytes()
    assert console.send("tdsb", fields).status_code == 400
    assert settings.boards_file.read_bytes() == before
