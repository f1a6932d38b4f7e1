"""Two people, one board: a change made after the form was shown is detected and shown, never overwritten."""

from __future__ import annotations

from notifier.status import document
from tests.staff.conftest import Console, make_staff


def board(settings, board_id: str = "tdsb"):
    return document.load(settings.boards_file).status.by_id()[board_id]


def test_a_direct_edit_of_the_file_after_the_form_was_shown_is_detected_and_kept(console, settings, boards):
    fields = console.form("tdsb")
    boards.update("tdsb", status="closed")  # someone edits boards.yaml by hand meanwhile
    fields["status"] = ["work-to-rule"]
    before = settings.boards_file.read_bytes()
    response = console.send("tdsb", fields)
    page = response.get_data(as_text=True)
    assert response.status_code == 409
    assert "Someone else changed this board" in page and "Board status: Open → Closed" in page
    assert settings.boards_file.read_bytes() == before


def test_a_second_staff_member_saving_first_is_detected(console, client, settings, sessions, app):
    make_staff(sessions, "backup@tdsb.example.org", ["tdsb"])
    other = Console(app.test_client(), settings)
    other.sign_in("backup@tdsb.example.org")
    mine = console.form("tdsb")
    other.edit("tdsb", status="closed")
    mine["message_en"] = ["Buses are running."]
    response = console.send("tdsb", mine)
    assert response.status_code == 409
    assert board(settings).status == "closed" and board(settings).message is None


def test_after_a_conflict_the_form_shows_the_board_as_it_is_now(console, settings, boards):
    fields = console.form("tdsb")
    boards.update("tdsb", status="closed")
    fields["status"] = ["work-to-rule"]
    page = console.send("tdsb", fields).get_data(as_text=True)
    assert '<option value="closed" selected>' in page


def test_a_change_to_another_board_meanwhile_does_not_block_the_save_and_is_kept(console, settings, boards):
    fields = console.form("tdsb")
    boards.update("peel", status="closed")
    fields["status"] = ["work-to-rule"]
    assert console.send("tdsb", fields).status_code == 200
    assert board(settings).status == "work-to-rule" and board(settings, "peel").status == "closed"
