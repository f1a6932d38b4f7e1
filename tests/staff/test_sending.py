"""How long sending takes and how far it has got: the preview's estimate at the configured rates, then a live
view per channel of the board's latest publish (refreshing itself until everything is sent), in English and French."""

from __future__ import annotations

import html
import re
from dataclasses import replace

from flask import render_template_string

from notifier.db import utcnow
from notifier.delivery.drain import drain
from notifier.delivery.progress import Estimate
from notifier.notices import compose, planning
from tests.staff.conftest import make_subscriber

PARENT = "parent@example.org"
PHONE = "+16135550123"


def text_of(response) -> str:
    body = re.sub(r"<(style|script)\b.*?</\1>", " ", response.get_data(as_text=True), flags=re.S)
    return " ".join(html.unescape(re.sub(r"<[^>]+>", " ", body)).split())


def rows_of(response) -> dict[str, list[str]]:
    """The progress table: channel -> its cells."""
    page = response.get_data(as_text=True)
    rows = re.findall(r"<tr>\s*<th scope=\"row\">([^<]+)</th>(.*?)</tr>", page, re.S)
    return {name: [" ".join(html.unescape(re.sub(r"<[^>]+>", " ", c)).split())
                   for c in re.findall(r"<td>(.*?)</td>", cells, re.S)] for name, cells in rows}


def test_the_preview_says_how_long_reaching_everyone_takes_at_the_configured_rates(console, sessions, first_cycle):
    make_subscriber(sessions, "tdsb", PARENT, phone=PHONE)
    page = text_of(console.edit("tdsb", action="preview", status="closed"))
    assert "less than a minute for 1 email at 20/s" in page
    assert "less than a minute for 1 text (1 segment) at 1/s" in page


def test_the_estimate_reads_as_minutes_and_hours_in_english_and_french(app):
    template = '{% from "staff/_sending.html" import estimate with context %}{{ estimate(e) }}'
    texts = Estimate("sms", 250_000, 100.0, 2500.0)
    with app.test_request_context("/staff/?lang=en"):
        assert render_template_string(template, e=texts) == "about 42 min for 250,000 texts at 100/s"
        assert render_template_string(template, e=Estimate("email", 1, 0.5, 3900.0)) == (
            "about 1 h 05 min for 1 email at 0.5/s")
    with app.test_request_context("/staff/?lang=fr"):
        assert render_template_string(template, e=texts) == (
            "environ 42\u00a0min pour 250\u00a0000 textos à 100/s")


def test_texts_are_estimated_in_segments_with_their_cost_in_english_and_french(app):
    from decimal import Decimal

    template = '{% from "staff/_sending.html" import estimate with context %}{{ estimate(e) }}'
    texts = Estimate("sms", 125_000, 100.0, 2500.0, units=250_000, cost=Decimal("2075.0000"), currency="USD")
    with app.test_request_context("/staff/?lang=en"):
        assert render_template_string(template, e=texts) == (
            "about 42 min for 125,000 texts (250,000 segments) at 100/s<br>Cost: about US$2,075.00")
    with app.test_request_context("/staff/?lang=fr"):
        assert render_template_string(template, e=texts) == (
            "environ 42\u00a0min pour 125\u00a0000 textos (250\u00a0000\u00a0segments) à 100/s"
            "<br>Coût\u00a0: environ 2\u00a0075,00\u00a0$\u00a0US")


def test_the_preview_counts_every_language_s_texts_in_segments_and_prices_them(console, sessions, first_cycle,
                                                                                app):
    from decimal import Decimal

    app.extensions["notifier"].settings = replace(app.extensions["notifier"].settings,
                                                  sms_price=(Decimal("0.01"), "CAD"))
    make_subscriber(sessions, "tdsb", PARENT, phone=PHONE)
    make_subscriber(sessions, "tdsb", "autre@example.org", phone="+16135550124", language="fr")
    page = console.edit("tdsb", action="preview", status="closed")
    shown = re.search(r"for 2 texts \((\d) segments\) at 1/s Cost: about \$0\.0(\d)", text_of(page))
    assert shown and shown.group(1) == shown.group(2), text_of(page)


def test_after_publishing_the_console_follows_the_sending_per_channel(console, settings, sessions, first_cycle):
    make_subscriber(sessions, "tdsb", PARENT, phone=PHONE)
    make_subscriber(sessions, "tdsb", "other@example.org", phone="+16135550124")
    published = console.edit("tdsb", status="closed").get_data(as_text=True)
    assert 'href="/staff/boards/tdsb/progress"' in published
    planning.plan(sessions, settings, utcnow())  # what the clock, woken by the publish, does next
    drain(sessions, settings, compose.MessageBuilder, only=("email",))
    page = console.client.get("/staff/boards/tdsb/progress")
    rows = rows_of(page)
    assert rows["Email"][:4] == ["2", "0", "0", "0.03 per second"] and rows["Email"][4] == "Done"
    assert rows["Text message"][:4] == ["0", "2", "0", "1 per second (configured)"]
    assert 'http-equiv="refresh"' not in page.get_data(as_text=True)  # only when asked for
    assert 'http-equiv="refresh"' in console.client.get("/staff/boards/tdsb/progress?auto=1").get_data(as_text=True)
    assert "<th scope=\"col\">Remaining</th>" in page.get_data(as_text=True)


def test_the_progress_page_shows_reached_so_far_against_the_preview_s_estimate(console, settings, sessions,
                                                                               first_cycle):
    make_subscriber(sessions, "tdsb", PARENT, phone=PHONE)
    make_subscriber(sessions, "tdsb", "autre@example.org", phone="+16135550124", language="fr")
    console.edit("tdsb", status="closed")
    planning.plan(sessions, settings, utcnow())
    drain(sessions, settings, compose.MessageBuilder, only=("email",))
    page = text_of(console.client.get("/staff/boards/tdsb/progress"))
    assert re.search(r"Email: 2 of 2 reached \(100 %\); the estimate at the configured rate: less than a minute for "
                     r"2 emails at 20/s, everyone by ", page), page
    assert re.search(r"Text message: 0 of 2 reached \(0 %\); the estimate at the configured rate: less than a "
                     r"minute for 2 texts \(2 segments\) at 1/s, everyone by ", page), page
    french = html.unescape(console.client.get("/staff/boards/tdsb/progress?lang=fr").get_data(as_text=True))
    expected = "Message texte\u00a0: 0 sur 2 atteints (0\u00a0%)\u202f; estimation au débit configuré\u00a0: "
    assert expected in french, french


def test_when_everything_is_sent_the_page_stops_refreshing(console, settings, sessions, first_cycle):
    make_subscriber(sessions, "tdsb", PARENT, phone=PHONE)
    console.edit("tdsb", status="closed")
    planning.plan(sessions, settings, utcnow())
    drain(sessions, settings, compose.MessageBuilder)
    page = console.client.get("/staff/boards/tdsb/progress?lang=fr&auto=1", follow_redirects=True)
    assert "Tout a été envoyé." in text_of(page) and "Envoyés" in text_of(page)
    assert 'http-equiv="refresh"' not in page.get_data(as_text=True)


def test_before_the_clock_has_planned_the_page_says_it_is_preparing_not_that_all_is_sent(console, sessions,
                                                                                         first_cycle):
    make_subscriber(sessions, "tdsb", PARENT, phone=PHONE)
    console.edit("tdsb", status="closed")
    page = console.client.get("/staff/boards/tdsb/progress")
    assert "preparing the messages" in text_of(page) and "Everything has been sent." not in text_of(page)
    assert "Refresh every 5 seconds" in text_of(page)


def test_the_progress_of_another_board_is_refused(console, first_cycle):
    assert console.client.get("/staff/boards/peel/progress").status_code == 403


def test_a_board_never_published_says_so(console, first_cycle):
    page = console.client.get("/staff/boards/tdsb/progress")
    assert "Nothing has been published to parents for this board yet." in text_of(page)



def test_the_latest_publish_time_ends_its_sentence_with_one_full_stop(console, sessions, first_cycle):
    make_subscriber(sessions, "tdsb", PARENT)
    console.edit("tdsb", status="closed")
    page = text_of(console.client.get("/staff/boards/tdsb/progress"))
    assert re.search(r"Latest publish: .*?, \d+:\d\d [ap]\.m\. ", page), page
    assert not re.search(r"[ap]\.m\.\.", page)
