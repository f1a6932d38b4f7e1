"""The staff console's preview and audience: the same text that is later sent, and who would get it when."""

from __future__ import annotations

from datetime import timedelta

from notifier.notices.preview import audience, preview
from notifier.status import document
from notifier.status.boards import Board
from notifier.status.changes import diff
from tests.conftest import NOW, make_subscriber


def test_the_preview_is_exactly_what_parents_receive(run, subscribe, boards, boards_file, fast_settings,
                                                     smtp_server, twilio_server):
    run()
    subscribe(language="fr")
    old = document.load(str(boards_file)).status.by_id()["tdsb"]
    boards.update("tdsb", status="closed")
    new = document.load(str(boards_file)).status.by_id()["tdsb"]
    shown = preview(old, new, "fr", fast_settings)
    run(NOW + timedelta(minutes=1))
    mail = smtp_server[0].messages()[0]
    assert mail["Subject"] == shown.email_subject
    assert twilio_server.messages[0]["body"] == shown.sms_text
    assert _without_links(mail.get_body(("plain",)).get_content()) == _without_links(shown.email_text)


def _without_links(text: str) -> list[str]:
    """The lines of a digest except the personal manage and unsubscribe links (signed per contact)."""
    return [line for line in text.splitlines() if "/manage/" not in line and "/unsubscribe/" not in line]


def test_audience_counts_who_hears_now_and_who_in_the_daily_summary(sessions, boards_file):
    board = document.load(str(boards_file)).status.by_id()["tdsb"]
    with sessions() as session, session.begin():
        make_subscriber(session)
        make_subscriber(session, frequency="daily")
        make_subscriber(session, phone=None, follows=[("tdsb", "elementary")], frequency="daily")
        make_subscriber(session, follows=[("peel", "elementary")])
        make_subscriber(session, status="pending")
    work_to_rule = Board.model_validate({**board.model_dump(mode="json"), "status": "work-to-rule"})
    closed = Board.model_validate({**board.model_dump(mode="json"), "panels": {"secondary": "closed"}})
    with sessions() as session:
        assert audience(session, "tdsb", diff(board, work_to_rule), NOW) == {
            "email": {"now": 1, "daily": 2}, "sms": {"now": 1, "daily": 1}}
        assert audience(session, "tdsb", diff(board, closed), NOW) == {
            "email": {"now": 2, "daily": 0}, "sms": {"now": 2, "daily": 0}}


def test_audience_counts_a_closure_called_off_as_heard_now_even_by_daily_subscribers(sessions, boards_file):
    board = document.load(str(boards_file)).status.by_id()["tdsb"]
    strike = {"from": (NOW + timedelta(days=2)).isoformat(), "until": (NOW + timedelta(days=3)).isoformat(),
              "status": "closed", "panels": ["secondary"]}
    announced = Board.model_validate({**board.model_dump(mode="json"), "upcoming": [strike]})
    with sessions() as session, session.begin():
        make_subscriber(session, follows=[("tdsb", "secondary")], frequency="daily")
        make_subscriber(session, phone=None, follows=[("tdsb", "elementary")], frequency="daily")
    with sessions() as session:
        assert audience(session, "tdsb", diff(announced, board, NOW), NOW) == {
            "email": {"now": 1, "daily": 0}, "sms": {"now": 1, "daily": 0}}


def test_audience_and_estimates_count_push_subscribers_at_their_own_rate(sessions, boards_file, settings):
    from notifier.notices.preview import estimates
    from notifier.subscribers import push
    from tests.fakes.push_service import Browser

    class Service:  # only what Browser reads: an origin and a registry
        origin, browsers = "https://fcm.googleapis.com", {}

    board = document.load(str(boards_file)).status.by_id()["tdsb"]
    with sessions() as session, session.begin():
        make_subscriber(session)
        body = {"subscription": Browser(Service).subscription, "boards": {"tdsb": ["secondary"]}}
        push.store(session, push.parse(body, {"tdsb"}, ("https://fcm.googleapis.com",)), source="test")
    closed = Board.model_validate({**board.model_dump(mode="json"), "panels": {"secondary": "closed"}})
    with sessions() as session:
        counts = audience(session, "tdsb", diff(board, closed), NOW)
    assert counts["push"] == {"now": 1, "daily": 0}
    assert estimates(settings, counts)["push"].rate == settings.push_per_second == 200


def test_texts_are_timed_and_priced_in_each_language_s_segments(settings):
    from dataclasses import replace
    from decimal import Decimal

    from notifier.notices.preview import estimates

    priced = replace(settings, sms_per_second=2.0, sms_price=(Decimal("0.0083"), "USD"))
    counts = {"email": {"now": 0, "daily": 0}, "sms": {"now": 5, "daily": 1}}
    texts = estimates(priced, counts, {"en": 3, "fr": 2}, {"en": 1, "fr": 2})["sms"]
    assert (texts.count, texts.units, texts.seconds) == (5, 7, 3.5)
    assert (texts.cost, texts.currency) == (Decimal("0.0581"), "USD")
    assert estimates(priced, counts, {"pa": 1}, {"en": 1, "fr": 2})["sms"].units == 2  # no preview: the longest
    assert estimates(settings, counts)["sms"].cost is None
