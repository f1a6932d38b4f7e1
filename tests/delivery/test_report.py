"""What went out for one publish: recipients, sent, delivered (Twilio's callbacks) and failed per channel, over time,
counted from a real fan-out through the loopback SMTP server and the Twilio-shaped server."""

from __future__ import annotations

import itertools
from datetime import timedelta

import pytest
from twilio.request_validator import RequestValidator

from notifier.delivery import publishes, report
from tests.conftest import AUTH_TOKEN, BASE_URL, NOW, outbox_rows

LATER = NOW + timedelta(minutes=1)


@pytest.fixture
def callback(fast_env):
    """Post a signed Twilio status callback to the app: `callback(sid, status, error_code=None)`."""
    from notifier import create_app

    app = create_app({**fast_env, "TESTING": True})
    client = app.test_client()
    url = f"{BASE_URL}/twilio/status"

    def post(sid: str, status: str, error_code: str | None = None):
        form = {"MessageSid": sid, "MessageStatus": status, "AccountSid": "AC" + "7" * 32}
        if error_code:
            form["ErrorCode"] = error_code
        signed = RequestValidator(AUTH_TOKEN).compute_signature(url, form)
        assert client.post("/twilio/status", data=form, headers={"X-Twilio-Signature": signed}).status_code == 204

    yield post
    app.extensions["notifier"].engine.dispose()


def report_of(sessions, publish_id: int | None = None, now=None) -> report.Report:
    with sessions() as session:
        publish = publishes.latest(session, "tdsb") if publish_id is None else publishes.find(session, "tdsb",
                                                                                              publish_id)
        return report.build(session, publish, now or LATER)


def totals(channel: report.ChannelReport) -> tuple:
    return channel.recipients, channel.sent, channel.delivered, channel.failed, channel.waiting


def close_tdsb(run, boards, subscribe, families: int = 3, deliver: bool = True, **family) -> list[str]:
    """`families` families following TDSB by email and text, then TDSB closes; returns their phone numbers."""
    run()
    phones = [subscribe(**family)[2] for _ in range(families)]
    boards.update("tdsb", status="closed")
    run(LATER, deliver=deliver)
    return phones


def test_a_fan_out_is_counted_per_channel_with_texts_delivered_from_twilios_callbacks(
        run, boards, subscribe, twilio_server, smtp_server, callback, sessions):
    close_tdsb(run, boards, subscribe)
    for message in twilio_server.messages[:2]:
        callback(message["sid"], "delivered")
    found = report_of(sessions)
    email, sms = found.channels
    assert (email.channel, sms.channel) == ("email", "sms") and found.recipients == 6
    assert totals(email) == (3, 3, None, 0, 0)  # the SMTP server's acceptance is all email tells
    assert totals(sms) == (3, 3, 2, 0, 0)
    assert len(smtp_server[0].envelopes) == 3


def test_the_series_run_from_zero_to_the_totals_in_at_most_sixty_steps(
        run, boards, subscribe, twilio_server, callback, sessions):
    close_tdsb(run, boards, subscribe)
    callback(twilio_server.messages[0]["sid"], "delivered")
    found = report_of(sessions)
    for channel in found.channels:
        first, last = channel.points[0], channel.points[-1]
        assert (first.at, first.sent, first.failed) == (found.start, 0, 0) and last.at == found.end
        assert (last.sent, last.delivered, last.failed) == (channel.sent, channel.delivered, channel.failed)
        assert len(channel.points) <= report.MAX_POINTS + 1
        assert all(a.sent <= b.sent and a.failed <= b.failed for a, b in itertools.pairwise(channel.points))
        assert all(b.at - a.at == found.step for a, b in itertools.pairwise(channel.points))


def test_a_refused_text_and_an_undelivered_one_are_counted_as_failed(
        run, boards, subscribe, twilio_server, callback, sessions):
    run()
    refused = subscribe()[2]
    twilio_server.always(refused, 400, 21211)  # not a mobile number: the row fails, nothing is accepted
    subscribe(), subscribe()
    boards.update("tdsb", status="closed")
    run(LATER)
    accepted = twilio_server.messages
    callback(accepted[0]["sid"], "undelivered", "30003")
    callback(accepted[1]["sid"], "delivered")
    sms = report_of(sessions).channels[1]
    assert totals(sms) == (3, 2, 1, 2, 0)
    assert sms.points[-1].failed == 2


def test_rows_merged_into_a_newer_digest_are_not_counted_twice(run, boards, subscribe, sessions):
    close_tdsb(run, boards, subscribe, families=2, deliver=False)  # planned, nothing sent yet
    boards.update("tdsb", message={"en": "Closed until further notice.", "fr": "Fermées jusqu'à nouvel ordre."})
    run(LATER + timedelta(minutes=1))  # each family's unsent digest is merged into one covering both publishes
    assert sorted(row.status for row in outbox_rows(sessions)) == ["cancelled"] * 4 + ["sent"] * 4
    with sessions() as session:
        (second, _), (first, _) = publishes.of_board(session, "tdsb")[:2]
    for publish in (first, second):
        found = report_of(sessions, publish.id, now=LATER + timedelta(minutes=2))
        assert [totals(c) for c in found.channels] == [(2, 2, None, 0, 0), (2, 2, 0, 0, 0)]
    with sessions() as session:
        listed = publishes.recipients(session, [first, second])
    assert listed == {first.id: {"email": 2, "sms": 2}, second.id: {"email": 2, "sms": 2}}


def test_what_is_still_waiting_is_counted_and_the_span_reaches_now(run, boards, subscribe, sessions):
    close_tdsb(run, boards, subscribe, families=2, deliver=False)
    found = report_of(sessions, now=LATER + timedelta(minutes=20))
    assert [totals(c) for c in found.channels] == [(2, 0, None, 0, 2), (2, 0, 0, 0, 2)]
    assert found.end >= LATER + timedelta(minutes=20) and found.step == timedelta(seconds=30)


@pytest.mark.parametrize(("span", "step"), [(timedelta(0), 10), (timedelta(minutes=10), 10),
                                            (timedelta(minutes=10, seconds=1), 30), (timedelta(hours=1), 60),
                                            (timedelta(hours=5), 300), (timedelta(days=30), 43200),
                                            (timedelta(days=600), 864000)])
def test_the_bucket_size_keeps_the_series_within_sixty_points(span, step):
    assert report.step_for(span) == timedelta(seconds=step)


def test_a_publish_is_named_by_its_first_event_only(run, boards, subscribe, sessions):
    close_tdsb(run, boards, subscribe, families=1, deliver=False)
    boards.update("tdsb", status="open", message={"en": "Open.", "fr": "Ouvertes."})
    run(LATER + timedelta(minutes=1), deliver=False)
    with sessions() as session:
        newest = publishes.latest(session, "tdsb")
        assert len(newest.event_ids) > 1 and publishes.find(session, "tdsb", newest.id) == newest
        assert publishes.find(session, "tdsb", newest.event_ids[-1]) is None
        assert publishes.find(session, "peel", newest.id) is None
        assert publishes.find(session, "tdsb", 0) is None and publishes.find(session, "tdsb", 2**40) is None


def test_a_receipt_long_after_the_last_send_stretches_the_span_in_coarser_steps(
        run, boards, subscribe, twilio_server, callback, sessions):
    from notifier.delivery.outbox import DeliveryReceipt

    close_tdsb(run, boards, subscribe, families=1)
    sid = twilio_server.messages[0]["sid"]
    callback(sid, "delivered")
    with sessions() as session, session.begin():
        receipt = session.get(DeliveryReceipt, sid)
        late = receipt.updated_at + timedelta(days=3)
        receipt.updated_at = late
    found = report_of(sessions)
    sms = found.channels[1]
    assert found.end >= late and len(sms.points) <= report.MAX_POINTS + 1
    assert sms.points[-1].delivered == 1 and sms.points[-2].delivered == 0
