"""The edit form: a valid edit is saved into boards.yaml (and only that board); anything invalid saves nothing."""

from __future__ import annotations

from notifier.config import ROOT
from notifier.db import utcnow
from notifier.staff.models import AuditEntry
from notifier.status import document


def board(settings, board_id: str = "tdsb"):
    return document.load(settings.boards_file).status.by_id()[board_id]


def test_publishing_writes_the_new_status_into_boards_yaml(console, settings):
    response = console.edit("tdsb", status="work-to-rule", panel_secondary="closed",
                            message_en="Secondary schools are closed.",
                            message_fr="Les écoles secondaires sont fermées.")
    assert response.status_code == 200 and "Published" in response.get_data(as_text=True)
    tdsb = board(settings)
    assert (tdsb.status, tdsb.panel_status("secondary"), tdsb.panel_status("elementary")) == \
        ("work-to-rule", "closed", "work-to-rule")
    assert tdsb.message.fr == "Les écoles secondaires sont fermées."


def test_publishing_sets_updated_at_to_now(console, settings):
    before = utcnow().replace(microsecond=0)
    console.edit("tdsb", status="closed")
    assert before <= board(settings).updated_at <= utcnow()


def test_the_public_page_shows_the_published_status_at_once(console, settings):
    console.edit("tdsb", status="closed")
    assert "Closed" in console.client.get("/boards/tdsb").get_data(as_text=True)


def test_a_withdrawal_is_added_with_a_blank_row_without_javascript(console, settings):
    console.edit("tdsb", status="work-to-rule", w0_category="transportation", w0_panels=["secondary"],
                 w0_description_en="No buses to secondary schools.", w0_advice_en="Arrange a ride.")
    [withdrawal] = board(settings).withdrawals
    assert (withdrawal.category, withdrawal.panels, withdrawal.advice.en) == \
        ("transportation", ("secondary",), "Arrange a ride.")


def test_a_withdrawal_is_removed_by_ticking_remove(console, settings):
    console.edit("tdsb", w0_category="transportation", w0_description_en="No buses.")
    console.edit("tdsb", w0_remove="1")
    assert board(settings).withdrawals == ()


def test_only_the_edited_board_changes_in_the_file(console, settings):
    before = document.load(settings.boards_file).status.by_id()
    console.edit("tdsb", status="closed")
    after = document.load(settings.boards_file).status.by_id()
    assert [b for b in after if after[b] != before[b]] == ["tdsb"]


def test_comments_in_boards_yaml_survive_a_save(console, settings):
    comments = [line for line in settings.boards_file.read_text().splitlines() if line.lstrip().startswith("#")]
    console.edit("tdsb", status="closed", message_en="Closed: strike.")
    after = [line for line in settings.boards_file.read_text().splitlines() if line.lstrip().startswith("#")]
    assert after == comments


def test_the_rest_of_the_file_is_byte_identical_after_a_save(console, settings):
    original = (ROOT / "boards.yaml").read_text().splitlines()
    console.edit("tdsb", status="closed")
    changed = settings.boards_file.read_text().splitlines()
    start = original.index("  - id: tdsb")
    end = next(i for i in range(start + 1, len(original)) if original[i].startswith("  - id:"))
    assert changed[:start] == original[:start]
    assert changed[-(len(original) - end):] == original[end:]


def refused(console, settings, **fields):
    """Send an invalid edit; return the page, after checking it was refused and the file is untouched."""
    before = settings.boards_file.read_bytes()
    response = console.edit("tdsb", **fields)
    assert response.status_code == 400
    assert settings.boards_file.read_bytes() == before
    return response.get_data(as_text=True)


def test_an_unknown_status_is_refused_with_a_field_message(console, settings):
    page = refused(console, settings, status="strike")
    assert 'id="status-error"' in page and "Choose the board" in page


def test_a_malformed_announcement_link_is_refused_with_a_field_message(console, settings):
    page = refused(console, settings, announcement_en="board website")
    assert 'id="announcement_en-error"' in page and "full web address" in page


def test_a_malformed_effective_time_is_refused_with_a_field_message(console, settings):
    page = refused(console, settings, effective="next monday")
    assert 'id="effective-error"' in page and "date and a time" in page


def test_a_withdrawal_without_a_description_is_refused(console, settings):
    page = refused(console, settings, w0_category="transportation")
    assert 'id="w0_description_en-error"' in page and "Say what stops" in page


def test_a_withdrawal_for_no_school_is_refused(console, settings):
    page = refused(console, settings, w0_category="transportation", w0_description_en="No buses.", w0_panels=None)
    assert 'id="w0_panels-error"' in page and "Tick elementary, secondary or both" in page


def test_a_service_listed_twice_for_the_same_schools_is_refused(console, settings):
    page = refused(console, settings, w0_category="grounds", w0_description_en="No snow clearing.",
                   w1_category="grounds", w1_description_en="No grass cutting.")
    assert 'id="w1_category-error"' in page


def test_a_refused_form_keeps_what_was_typed(console, settings):
    page = refused(console, settings, message_en="Schools are closed tomorrow.", effective="soon")
    assert "Schools are closed tomorrow." in page


def test_each_publication_is_recorded_in_the_audit_trail(console, settings, sessions):
    console.client.environ_base = {"REMOTE_ADDR": "203.0.113.9"}
    console.edit("tdsb", status="closed")
    with sessions() as session:
        [entry] = session.query(AuditEntry).filter_by(action="edit").all()
    assert (entry.staff_email, entry.board_id, entry.ip, entry.notify) == \
        ("comms@tdsb.example.org", "tdsb", "203.0.113.9", True)
    assert {"kind": "status", "panel": None, "key": None, "before": "open", "after": "closed"} in entry.changes


def test_the_staff_history_page_shows_who_changed_what_and_from_where(console, settings):
    console.client.environ_base = {"REMOTE_ADDR": "203.0.113.9"}
    console.edit("tdsb", status="closed")
    page = console.client.get("/staff/boards/tdsb/history").get_data(as_text=True)
    assert "comms@tdsb.example.org" in page and "203.0.113.9" in page and "Board status: Open → Closed" in page


def test_the_public_history_shows_the_change_without_staff_names(console, settings, first_cycle):
    console.edit("tdsb", status="closed")
    page = console.client.get("/boards/tdsb").get_data(as_text=True)
    assert "Closed" in page and "comms@tdsb.example.org" not in page


def test_a_message_too_long_for_a_phone_is_refused(console, settings):
    page = refused(console, settings, message_en="word " * 300)
    assert 'id="message_en-error"' in page and "too long" in page
