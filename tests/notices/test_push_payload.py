"""The push notification's JSON stays within what every push service accepts, shortening the body only."""

from __future__ import annotations

import json

from notifier.notices.push_payload import MAX_BYTES, headers, payload


def test_a_long_body_is_shortened_with_an_ellipsis_and_the_link_kept():
    text = payload("Schools closed: TDSB", "é" * 5000, "https://status.example.org/boards/tdsb?lang=fr", "tdsb")
    notice = json.loads(text)
    assert len(text.encode("utf-8")) <= MAX_BYTES
    assert notice["body"].endswith("…") and notice["url"].endswith("?lang=fr") and notice["tag"] == "tdsb"


def test_a_short_body_is_left_alone():
    notice = json.loads(payload("t", "Schools are closed.", "https://x.example/", "tdsb"))
    assert notice["body"] == "Schools are closed."


def test_urgent_notices_are_high_and_keep_at_least_an_hour():
    assert headers(True)["Urgency"] == "high" and int(headers(True)["TTL"]) >= 3600
    assert headers(False)["Urgency"] == "normal"
