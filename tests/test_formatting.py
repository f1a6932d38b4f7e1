"""Dates as pages print them for machines: `<time datetime>` in whole seconds with an offset (HTML allows at most
three digits of a fraction of a second; Python writes six)."""

from __future__ import annotations

import re
from datetime import UTC, datetime

from notifier.formatting import TORONTO, full_stop, html_datetime

VALID = re.compile(r"^\d{4}-\d\d-\d\dT\d\d:\d\d(:\d\d(\.\d{1,3})?)?(Z|[+-]\d\d:\d\d)$")


def test_a_datetime_attribute_drops_the_microseconds():
    assert html_datetime(datetime(2026, 11, 23, 9, 5, 24, 561173, tzinfo=UTC)) == "2026-11-23T09:05:24+00:00"


def test_a_datetime_attribute_keeps_the_offset():
    assert html_datetime(datetime(2026, 11, 23, 9, 5, tzinfo=TORONTO)) == "2026-11-23T09:05:00-05:00"


def test_a_datetime_from_the_database_without_a_zone_is_utc():
    assert html_datetime(datetime(2026, 11, 23, 9, 5, 24, 5)) == "2026-11-23T09:05:24+00:00"


def test_every_datetime_attribute_is_a_valid_html_global_date_and_time():
    assert VALID.match(html_datetime(datetime.now(UTC)))


def test_a_full_stop_is_added_only_where_a_sentence_lacks_one():
    assert full_stop("Latest publish: 2:52 p.m.") == "Latest publish: 2:52 p.m."
    assert full_stop("Secondary schools are closed") == "Secondary schools are closed."
    assert full_stop("Fermé ?") == "Fermé ?"


def test_a_text_names_the_day_as_people_say_it():
    from notifier.formatting import moment

    assert moment("2026-11-26T00:01:00-05:00", "en", "text") == "Thu. Nov. 26, 12:01\u202fa.m."
    assert moment("2026-12-01T14:54:00-05:00", "fr", "text") == "mar. 1er déc., 14\u00a0h\u00a054"
    assert moment("2026-08-05T09:00:00-04:00", "fr", "text") == "mer. 5 aout, 9\u00a0h\u00a000"


def test_after_a_colon_french_goes_on_in_lower_case_and_english_keeps_its_capital():
    from notifier.formatting import after_colon

    assert after_colon("Les écoles sont fermées.", "fr") == "les écoles sont fermées."
    assert after_colon("TDSB ferme.", "fr") == "TDSB ferme."
    assert after_colon("Schools are closed.", "en") == "Schools are closed."
