"""A staff view of what went out: a board's publishes, newest first, and for each a chart per channel (inline SVG)
with the same numbers in tables, in English and French, for the board's own staff only."""

from __future__ import annotations

import html
import re

import pytest

from notifier.db import utcnow
from notifier.delivery.drain import drain
from notifier.notices import compose, planning
from tests.staff.conftest import PEEL_STAFF, Console, make_staff, make_subscriber

NNBSP, NBSP = "\u202f", "\u00a0"


def text_of(body: str) -> str:
    body = re.sub(r"<(style|script|svg)\b.*?</\1>", " ", body, flags=re.S)
    return " ".join(html.unescape(re.sub(r"<[^>]+>", " ", body)).split())


def cells(fragment: str) -> list[str]:
    return [" ".join(html.unescape(re.sub(r"<[^>]+>", " ", c)).split())
            for c in re.findall(r"<t[hd][^>]*>(.*?)</t[hd]>", fragment, re.S)]


def table(page: str, css_class: str, index: int = 0) -> list[list[str]]:
    """The body rows of the `index`-th table of that class, as lists of cell texts."""
    found = re.findall(rf'<table class="{css_class}">(.*?)</table>', page, re.S)[index]
    body = found.split("<tbody>")[1]
    return [cells(row) for row in re.findall(r"<tr>(.*?)</tr>", body, re.S)]


@pytest.fixture
def published(console, settings, sessions, first_cycle) -> Console:
    """Two families (email and text) of TDSB, a closure published from the console, everything sent."""
    make_subscriber(sessions, "tdsb", "parent@example.org", phone="+16135550123")
    make_subscriber(sessions, "tdsb", "other@example.org", phone="+16135550124")
    console.edit("tdsb", status="closed")
    planning.plan(sessions, settings, utcnow())  # what the clock, woken by the publish, does next
    drain(sessions, settings, compose.MessageBuilder)
    return console


def report_link(console: Console) -> str:
    listing = console.client.get("/staff/boards/tdsb/publishes").get_data(as_text=True)
    return re.search(r'href="(/staff/boards/tdsb/publishes/\d+)"', listing).group(1)


def test_the_list_shows_each_publish_with_who_what_and_how_many(published):
    page = published.client.get("/staff/boards/tdsb/publishes").get_data(as_text=True)
    (when, who, what, recipients), = table(page, "publishes")
    assert who == "comms@tdsb.example.org" and "Closed" in what and recipients == "2 emails, 2 texts"
    assert when.startswith("2") and 'href="/staff/boards/tdsb/publishes/' in page


def test_the_report_has_a_chart_and_a_table_with_the_same_numbers(published):
    page = published.client.get(report_link(published)).get_data(as_text=True)
    assert table(page, "totals") == [["Recipients", "2", "2"], ["Sent", "2", "2"], ["Delivered", "not known", "0"],
                                     ["Failed", "0", "0"], ["Not sent yet", "0", "0"]]
    assert cells(re.search(r'<table class="totals">.*?</thead>', page, re.S).group(0))[-2:] == ["Email",
                                                                                                 "Text message"]
    charts = re.findall(r"<svg class=\"chart\".*?</svg>", page, re.S)
    assert len(charts) == 2 and all('role="img"' in c and "<title id=" in c and "<desc id=" in c for c in charts)
    email, sms = charts
    assert "series-delivered" not in email and "series-delivered" in sms  # no invented delivery for email
    labels = dict(re.findall(r'class="label-(\w+)"[^>]*>(?:Sent|Delivered|Failed) ([\d,]+)<', sms))
    assert labels == {"sent": "2", "delivered": "0", "failed": "0"}
    last = table(page, "series", 1)[-1]
    assert last[1:] == [labels["sent"], labels["delivered"], labels["failed"]]
    assert "mail server’s acceptance is all we know" in text_of(page)


def test_the_report_counts_a_text_delivered_from_twilios_callback(published, sessions):
    from notifier.delivery.outbox import DeliveryReceipt, OutboxRow

    with sessions() as session, session.begin():
        sid = session.query(OutboxRow.provider_id).filter(OutboxRow.channel == "sms").first()[0]
        session.add(DeliveryReceipt(provider_id=sid, status="delivered", updated_at=utcnow()))
    page = published.client.get(report_link(published)).get_data(as_text=True)
    assert [row[2] for row in table(page, "totals")] == ["2", "2", "1", "0", "0"]
    assert table(page, "series", 1)[-1][1:] == ["2", "1", "0"]


def test_the_report_reads_in_french_with_french_typography(published):
    page = published.client.get(report_link(published) + "?lang=fr", follow_redirects=True).get_data(as_text=True)
    words = text_of(page)
    assert "Ce qui a été envoyé" in words and "Courriel" in words and "inconnu" in words
    assert f"Envoyés{NBSP}:" in html.unescape(page) or "Envoyés" in words
    assert "Sent" not in words and "Delivered" not in words
    listing = published.client.get("/staff/boards/tdsb/publishes?lang=fr", follow_redirects=True).get_data(as_text=True)
    assert table(listing, "publishes")[0][3] == "2 courriels, 2 textos"


def test_french_numbers_are_grouped_with_a_no_break_space(app):
    from flask import render_template_string

    with app.test_request_context("/staff/?lang=fr"):
        assert render_template_string("{{ 250000 | number }}") == f"250{NBSP}000"


def test_the_console_links_to_the_reports(published):
    assert 'href="/staff/boards/tdsb/publishes"' in published.client.get("/staff/boards/tdsb").get_data(as_text=True)
    assert 'href="/staff/boards/tdsb/publishes"' in published.client.get(
        "/staff/boards/tdsb/history").get_data(as_text=True)
    progress = published.client.get("/staff/boards/tdsb/progress").get_data(as_text=True)
    assert f'href="{report_link(published)}"' in progress


@pytest.mark.parametrize("tail", ["abc", "-1", "0", "99999999999999999999", "1.5", "1;DROP", "%00"])
def test_a_nonsense_publish_id_is_not_found(published, tail):
    assert published.client.get(f"/staff/boards/tdsb/publishes/{tail}").status_code == 404


def test_a_later_event_or_another_boards_event_is_not_a_publish(published):
    number = int(report_link(published).rsplit("/", 1)[1])
    assert published.client.get(f"/staff/boards/tdsb/publishes/{number + 1000}").status_code == 404


def test_staff_of_another_board_are_refused(published, client, settings, sessions):
    make_staff(sessions, PEEL_STAFF, ["peel"])
    link = report_link(published)
    published.client.post("/staff/signout", data={"csrf_token": re.search(
        r'name="csrf_token" value="([^"]+)"', published.client.get("/staff/").get_data(as_text=True)).group(1)})
    other = Console(client, settings)
    other.sign_in(PEEL_STAFF)
    assert other.client.get(link).status_code == 403
    assert other.client.get("/staff/boards/tdsb/publishes").status_code == 403


def test_signed_out_visitors_are_sent_to_sign_in(client, first_cycle):
    response = client.get("/staff/boards/tdsb/publishes/1")
    assert response.status_code == 302 and response.headers["Location"].endswith("/staff/signin")


def test_a_board_never_published_says_so(console, first_cycle):
    page = console.client.get("/staff/boards/tdsb/publishes").get_data(as_text=True)
    assert "Nothing has been published to parents for this board yet." in text_of(page)


def test_the_pages_pass_the_w3c_nu_html_checker(published, vnu):
    link = report_link(published)
    get = published.client.get
    pages = {f"{name} {language}": get(f"{path}?lang={language}", follow_redirects=True).get_data(as_text=True)
             for name, path in (("list", "/staff/boards/tdsb/publishes"), ("report", link),
                                ("progress", "/staff/boards/tdsb/progress"))
             for language in ("en", "fr")}
    assert vnu.errors(pages) == dict.fromkeys(pages, [])


@pytest.mark.browser
@pytest.mark.parametrize("language", ["en", "fr"])
def test_the_list_and_the_report_pass_axe_on_a_phone(page, live_server, settings, sessions, axe, first_cycle,
                                                     language, tmp_path):
    from tests.staff.test_browser import sign_in

    make_staff(sessions, "comms@tdsb.example.org", ["tdsb"])
    make_subscriber(sessions, "tdsb", "parent@example.org", phone="+16135550123")
    sign_in(page, live_server, settings, axe, language)
    page.goto(f"{live_server}/staff/boards/tdsb")
    page.get_by_label("Statut du conseil" if language == "fr" else "Board status").select_option("closed")
    page.get_by_role("button", name="Voir ce que les parents recevront" if language == "fr"
                     else "Preview what parents will receive").click()
    page.get_by_role("button", name="Publier et aviser les parents" if language == "fr"
                     else "Publish and notify parents").click()
    planning.plan(sessions, settings, utcnow())
    drain(sessions, settings, compose.MessageBuilder)
    with page.expect_navigation(wait_until="load"):  # axe on a page still unloading finds no document
        page.get_by_role("link", name="Ce qui a été envoyé aux parents" if language == "fr"
                         else "What went out to parents").click()
    axe(page)
    with page.expect_navigation(wait_until="load"):
        page.locator("table.publishes a").first.click()
    assert page.get_by_role("img").count() == 2  # one chart per channel, each an image with a name
    axe(page)
    assert page.evaluate("document.documentElement.scrollWidth") <= 390
    page.screenshot(path=str(tmp_path / f"report-{language}.png"), full_page=True)


def test_a_change_announced_ahead_taking_effect_is_not_credited_to_a_person(console, settings, sessions, first_cycle):
    from datetime import timedelta

    from notifier.formatting import TORONTO
    from notifier.status import cycle

    start = (utcnow() + timedelta(days=2)).astimezone(TORONTO).replace(second=0, microsecond=0)
    console.edit("tdsb", status="closed", effective=start.strftime("%Y-%m-%dT%H:%M"))
    cycle.run(sessions, str(settings.boards_file), now=start + timedelta(minutes=1), follow=True)
    page = console.client.get("/staff/boards/tdsb/publishes").get_data(as_text=True)
    (taking_effect, announced) = [row[1] for row in table(page, "publishes")]
    assert (taking_effect, announced) == ("not from the console", "comms@tdsb.example.org")
    report = console.client.get(report_link(console)).get_data(as_text=True)
    assert "not from the console" in text_of(report) and "by comms@tdsb.example.org" not in text_of(report)
