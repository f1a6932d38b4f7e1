"""The public pages answer "are my children's schools open?" first, in plain words, for every board."""

from __future__ import annotations

import pytest

from tests.web.conftest import ALL_BOARD_IDS, RICH_BOARD, board_ids_in, visible_text


@pytest.mark.parametrize("language", ["en", "fr"])
def test_the_index_links_every_one_of_the_72_boards(client, language):
    client.set_cookie("lang", language)
    html = client.get("/").get_data(as_text=True)
    assert sorted(board_ids_in(html)) == sorted(ALL_BOARD_IDS)
    assert len(ALL_BOARD_IDS) == 72


@pytest.mark.parametrize("language", ["en", "fr"])
def test_every_board_has_a_page_in_both_languages(client, language):
    client.set_cookie("lang", language)
    for board_id in ALL_BOARD_IDS:
        response = client.get(f"/boards/{board_id}")
        assert response.status_code == 200, board_id
        assert f'<html lang="{language}">' in response.get_data(as_text=True)


def test_disrupted_boards_come_first_in_effect_before_announced(client, job_action):
    ids = board_ids_in(client.get("/").get_data(as_text=True))
    assert ids[:2] == [RICH_BOARD, "peel"]  # both have schools closed; TDSB's closure is in effect already
    assert set(ids[2:]) == set(ALL_BOARD_IDS) - {"peel", RICH_BOARD}


def test_boards_are_listed_most_disrupted_first(client, boards):
    boards.update("adsb", status="work-to-rule")
    boards.update("wrdsb", status="closed")
    assert board_ids_in(client.get("/").get_data(as_text=True))[:2] == ["wrdsb", "adsb"]


def test_disrupted_and_normal_boards_are_under_their_own_headings(client, job_action):
    text = visible_text(client.get("/").get_data(as_text=True))
    assert text.index("Boards affected by job action") < text.index("Toronto District School Board") \
        < text.index("Boards operating normally")


def test_the_index_says_so_when_no_board_reports_job_action(client):
    assert "No board reports job action right now." in visible_text(client.get("/").get_data(as_text=True))


def test_the_filter_finds_boards_by_name_without_javascript(client):
    html = client.get("/?q=toronto").get_data(as_text=True)
    assert sorted(board_ids_in(html)) == ["tcdsb", "tdsb"]
    assert "2 boards match “toronto”." in visible_text(html)


def test_the_filter_ignores_accents_and_case(client):
    assert "cepeo" in board_ids_in(client.get("/?q=ECOLES PUBLIQUES de l'est").get_data(as_text=True))


def test_the_filter_matches_the_board_id(client):
    assert board_ids_in(client.get("/?q=ocdsb").get_data(as_text=True)) == ["ocdsb"]


def test_the_filter_says_when_nothing_matches_and_offers_all_boards(client):
    text = visible_text(client.get("/?q=atlantis").get_data(as_text=True))
    assert "0 boards match “atlantis”." in text and "Show all boards" in text


def test_the_filter_keeps_the_query_in_the_language_toggle(client):
    assert 'href="?lang=fr&amp;q=toronto"' in client.get("/?q=toronto").get_data(as_text=True)


def test_the_index_summarises_a_disrupted_board_in_plain_words(client, job_action):
    text = visible_text(client.get("/").get_data(as_text=True))
    assert ("Elementary schools are open, with staff on work-to-rule. Secondary schools are closed. "
            "No buses for secondary schools.") in text
    assert "2 services withdrawn" in text


def test_the_index_shows_today_and_what_is_announced_ahead_with_its_time(client, job_action):
    text = visible_text(client.get("/").get_data(as_text=True))
    peel = text[text.index("Peel District School Board"):]
    assert "Announced ahead" in peel
    assert peel.index("Schools are open as usual.") < peel.index("12:01 a.m.: Schools are closed to students.")


def test_status_is_said_in_words_not_only_colour(client, job_action):
    html = client.get(f"/boards/{RICH_BOARD}").get_data(as_text=True)
    assert '<span class="badge badge-work-to-rule">Elementary: Work-to-rule</span>' in html
    assert '<span class="badge badge-closed">Secondary: Closed</span>' in html


def test_a_board_page_puts_the_answer_first(client, job_action):
    text = visible_text(client.get(f"/boards/{RICH_BOARD}").get_data(as_text=True))
    summary = text.index("Secondary schools are closed. No buses for secondary schools.")
    assert summary < text.index("Services withdrawn") < text.index("History of changes")


def test_a_board_page_shows_each_panel_with_its_own_status(client, job_action):
    text = visible_text(client.get(f"/boards/{RICH_BOARD}").get_data(as_text=True))
    assert "Elementary schools (JK to Grade 8) Work-to-rule Schools are open; staff are on work-to-rule." in text
    assert "Secondary schools (Grades 9 to 12) Closed Schools are closed to students." in text


def test_a_board_page_explains_each_withdrawn_service_and_what_to_do(client, job_action):
    text = visible_text(client.get(f"/boards/{RICH_BOARD}").get_data(as_text=True))
    assert "School buses and transportation Affects: Secondary No buses to secondary schools." in text
    assert ("Custodial cleaning Affects: Elementary and secondary Hallways and gyms are cleaned less often. "
            "What you can do: Send a full water bottle with your child.") in text


def test_a_board_page_shows_when_it_took_effect_and_the_last_update(client, job_action):
    text = visible_text(client.get(f"/boards/{RICH_BOARD}").get_data(as_text=True))
    assert "In effect since: Monday, November 2, 2026, 12:01 a.m." in text
    assert "Last updated by the board: Sunday, November 1, 2026, 6:30 p.m." in text


def test_a_board_page_shows_today_first_then_what_is_announced_ahead_and_when(client, job_action):
    text = visible_text(client.get("/boards/peel").get_data(as_text=True))
    assert text.index("Status right now") < text.index("Schools are open as usual.") < text.index("Announced ahead")
    assert "12:01 a.m.: Schools are closed to students." in text[text.index("Announced ahead"):]


def test_a_board_page_links_to_the_boards_announcement_in_the_readers_language(client, job_action):
    client.set_cookie("lang", "fr")
    assert 'href="https://www.tdsb.on.ca/greve"' in client.get(f"/boards/{RICH_BOARD}").get_data(as_text=True)


def test_text_given_only_in_english_is_marked_as_english_on_a_french_page(client, boards):
    boards.update("tdsb", status="work-to-rule", withdrawals=[
        {"category": "grounds", "description": {"en": "No snow clearing."}}])
    client.set_cookie("lang", "fr")
    assert '<span lang="en">No snow clearing.</span>' in client.get("/boards/tdsb").get_data(as_text=True)


def test_the_history_lists_changes_recorded_by_the_clock_newest_first(client, runner, boards):
    runner.invoke("tick")
    boards.update("tdsb", status="work-to-rule")
    runner.invoke("tick")
    boards.update("tdsb", status="closed")
    runner.invoke("tick")
    text = visible_text(client.get("/boards/tdsb").get_data(as_text=True))
    history = text[text.index("History of changes"):]
    assert history.index("Board status: Work-to-rule → Closed") < history.index("Board status: Open → Work-to-rule")


def test_the_history_gives_machines_each_time_in_whole_seconds(client, runner, boards):
    import re

    runner.invoke("tick")
    boards.update("tdsb", status="closed")
    runner.invoke("tick")
    times = re.findall(r'<time datetime="([^"]+)"', client.get("/boards/tdsb").get_data(as_text=True))
    assert times and all(re.fullmatch(r"\d{4}-\d\d-\d\dT\d\d:\d\d:\d\d[+-]\d\d:\d\d", t) for t in times), times


def test_an_unknown_board_gets_a_helpful_page_not_found(client):
    response = client.get("/boards/atlantis")
    assert response.status_code == 404
    text = visible_text(response.get_data(as_text=True))
    assert "Page not found" in text and "Find your school board" in text and "See all school boards" in text


def test_an_unknown_board_gets_a_page_not_found_in_french(client):
    client.set_cookie("lang", "fr")
    response = client.get("/boards/atlantis")
    assert response.status_code == 404
    html = response.get_data(as_text=True)
    assert '<html lang="fr">' in html and "Page introuvable" in visible_text(html)


def test_every_page_has_a_title_landmarks_and_a_skip_link(client, job_action):
    for url in ["/", f"/boards/{RICH_BOARD}", "/boards/atlantis", "/?q=york"]:
        html = client.get(url).get_data(as_text=True)
        assert '<a class="skip" href="#main">' in html, url
        assert "<header" in html and '<main id="main"' in html and "<footer" in html and "<nav" in html, url
        assert "<title>" in html and "<h1>" in html, url


def test_the_index_and_board_pages_leave_a_block_for_the_sign_up_form():
    from notifier.config import ROOT

    for template in ("board.html", "index.html"):
        assert "{% block subscribe %}" in (ROOT / "templates/public" / template).read_text()


def test_a_one_day_strike_is_told_once_then_current_on_the_day_and_past_the_next_without_an_edit(client, runner,
                                                                                                   boards):
    import time_machine

    wednesday = {"from": "2030-01-09T00:00", "until": "2030-01-10T00:00", "status": "closed"}
    with time_machine.travel("2030-01-07 09:00 -0500"):  # Monday: the strike is announced
        runner.invoke("tick")
        boards.update("tdsb", upcoming=[wednesday])
        runner.invoke("tick")
        monday = visible_text(client.get("/boards/tdsb").get_data(as_text=True))
    with time_machine.travel("2030-01-09 09:00 -0500"):  # Wednesday: nobody edits anything
        runner.invoke("tick")
        on_the_day = visible_text(client.get("/boards/tdsb").get_data(as_text=True))
    with time_machine.travel("2030-01-10 09:00 -0500"):  # Thursday
        runner.invoke("tick")
        thursday = visible_text(client.get("/boards/tdsb").get_data(as_text=True))
    assert "Announced ahead" in monday and "Schools are open as usual." in monday
    assert "Announced ahead" not in on_the_day and "Schools are closed to students." in on_the_day
    assert "Announced ahead" not in thursday and "Schools are open as usual." in thursday
    assert thursday.count("Announced: From") == 1  # told once, when it was announced
