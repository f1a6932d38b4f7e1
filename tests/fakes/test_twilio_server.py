"""The Twilio-shaped server behaves like Twilio for the real `twilio` SDK: queues per sender, date_sent only once
sent, the list's filters and paging, status callbacks signed, account and load failures, ambiguous timeouts."""

from __future__ import annotations

import json
import subprocess
import sys
import threading
import time
import urllib.parse
import urllib.request
from datetime import UTC, datetime, timedelta
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from pathlib import Path

import pytest
import requests
from twilio.base.exceptions import TwilioRestException
from twilio.request_validator import RequestValidator
from twilio.rest import Client

from tests.fakes import twilio_messages
from tests.fakes.twilio_control import TwilioControl
from tests.fakes.twilio_sdk import sdk_client
from tests.fakes.twilio_server import FakeTwilio

ROOT = Path(__file__).resolve().parents[2]
SID = "AC" + "a1" * 16
TOKEN = "fake-token"
NUMBER = "+16135550100"
OTHER_NUMBER = "+16135550111"
PARENT = "+16135550123"
SERVICE = "MG" + "b2" * 16
PUBLIC_BASE = "https://status.example.org"


def sdk(url: str, token: str = TOKEN, timeout: float = 5.0) -> Client:
    """The real SDK, through the same URL-rewriting HTTP client the app uses (tests/fakes/twilio_sdk.py)."""
    return sdk_client(url, SID, token, timeout)


class Receiver:
    """The app's side of webhooks, for these tests: records each form post and checks its signature."""

    def __init__(self, token: str = TOKEN) -> None:
        self.token = token
        self.posts: list[dict] = []
        receiver = self

        class Handler(BaseHTTPRequestHandler):
            def log_message(self, *args) -> None:
                pass

            def do_POST(self) -> None:  # noqa: N802
                raw = self.rfile.read(int(self.headers["Content-Length"])).decode()
                form = dict(urllib.parse.parse_qsl(raw, keep_blank_values=True))
                receiver.posts.append({"path": self.path, "form": form, "headers": dict(self.headers)})
                self.send_response(200)
                self.send_header("Content-Type", "text/xml")
                self.end_headers()
                self.wfile.write(b"<Response/>")

        self.server = ThreadingHTTPServer(("127.0.0.1", 0), Handler)
        threading.Thread(target=self.server.serve_forever, args=(0.05,), daemon=True).start()
        self.url = f"http://127.0.0.1:{self.server.server_address[1]}"

    def valid(self, post: dict, url: str, token: str | None = None) -> bool:
        return RequestValidator(token or self.token).validate(url, post["form"], post["headers"]["X-Twilio-Signature"])


@pytest.fixture
def fake():
    fake = FakeTwilio(SID, TOKEN).start()
    yield fake
    fake.stop()


@pytest.fixture
def client(fake) -> Client:
    return sdk(fake.url)


@pytest.fixture
def receiver():
    receiver = Receiver()
    yield receiver
    receiver.server.shutdown()


def send(client: Client, to: str = PARENT, body: str = "Schools closed", **kwargs):
    if "messaging_service_sid" not in kwargs:
        kwargs.setdefault("from_", NUMBER)
    return client.messages.create(to=to, body=body, **kwargs)


# --- the message and the sender queue ---------------------------------------------------------------------------


def test_a_new_message_is_queued_without_date_sent(client):
    message = send(client)
    assert message.sid.startswith("SM") and message.status == "queued" and message.date_sent is None


def test_through_a_messaging_service_it_is_accepted(client):
    message = send(client, messaging_service_sid=SERVICE)
    assert message.status == "accepted" and message.date_sent is None


def test_without_a_rate_limit_it_is_sent_and_delivered_at_once(fake, client):
    sid = send(client).sid
    fake.settle()
    fetched = client.messages(sid).fetch()
    assert fetched.status == "delivered" and fetched.date_sent is not None


def test_past_the_senders_rate_messages_wait_queued_with_no_date_sent(fake, client):
    fake.rate(1)
    sids = [send(client, body=f"n{i}").sid for i in range(3)]
    assert client.messages(sids[0]).fetch().date_sent is not None
    waiting = client.messages(sids[2]).fetch()
    assert waiting.status == "queued" and waiting.date_sent is None


def test_a_date_sent_filter_does_not_find_a_queued_message(fake, client):
    fake.rate(1)
    for i in range(3):
        send(client, body=f"n{i}")
    since = datetime.now(UTC) - timedelta(minutes=5)
    assert len(client.messages.list(to=PARENT)) == 3
    assert [m.body for m in client.messages.list(to=PARENT, date_sent_after=since)] == ["n0"]
    assert client.messages.list(to=PARENT, date_sent=datetime.now(UTC)) != []
    assert client.messages.list(to=PARENT, date_sent_before=since) == []


def test_the_rate_cap_holds_per_sender_and_other_senders_are_not_slowed(fake, client):
    fake.rate(20, sender=NUMBER)
    for i in range(30):
        send(client, body=f"n{i}")
    send(client, body="other sender", from_=OTHER_NUMBER)
    fake.settle(timeout=10)
    figures = fake.stats()["per_sender"]
    assert figures[NUMBER]["busiest_second"] == 30  # accepted at once…
    assert 15 <= figures[NUMBER]["busiest_second_sent"] <= 20  # …sent at the sender's rate
    assert figures[NUMBER]["mean_rate_sent"] <= 20.5
    assert figures[OTHER_NUMBER]["sent"] == 1
    assert set(fake.stats()["statuses"]) == {"delivered"}


@pytest.mark.parametrize(("body", "expected"), [
    ("a" * 160, 1), ("a" * 161, 2), ("a" * 306, 2), ("a" * 307, 3),  # GSM-7: 160, then 153 a part
    ("é" * 160, 1), ("€" * 80, 1), ("€" * 81, 2),  # é is GSM-7; € takes two septets
    ("ê" * 70, 1), ("ê" * 71, 2), ("ê" * 134, 2), ("ê" * 135, 3),  # UCS-2: 70, then 67 a part
    ("😀" * 35, 1), ("a" * 66 + "😀" + "a" * 66, 3),  # an emoji is two UTF-16 units and never straddles two parts
])
def test_segments_are_counted_by_gsm7_and_ucs2_rules(body, expected):
    assert twilio_messages.segments(body) == expected


def test_the_senders_rate_is_in_segments_and_stats_count_them_per_second(fake, client):
    fake.rate(4, sender=NUMBER)
    for i in range(4):
        send(client, body=f"{i} " + "ê" * 100)  # two UCS-2 segments each
    fake.settle(timeout=10)
    sent = sorted(m["_sent_mono"] for m in fake.messages)
    assert sent[-1] - sent[0] >= 1.4  # 8 segments at 4 a second: the last leaves 1.5 s after the first
    figures = fake.stats()["per_sender"][NUMBER]
    assert figures["segments"] == 8 and figures["busiest_second_segments"] == 8  # all accepted at once
    assert sum(figures["segments_per_second"]) == 8


def test_a_message_waiting_longer_than_the_queue_allows_fails_with_30001():
    fake = FakeTwilio(SID, TOKEN, mps=1, queue_seconds=0.3).start()
    try:
        client = sdk(fake.url)
        sids = [send(client, body=f"n{i}").sid for i in range(3)]
        fake.settle()
        outcomes = [(client.messages(s).fetch().status, client.messages(s).fetch().error_code) for s in sids]
        assert outcomes == [("delivered", None), ("failed", 30001), ("failed", 30001)]
    finally:
        fake.stop()


def test_a_message_past_its_validity_period_fails_with_30001(fake, client):
    fake.rate(0.5)
    send(client, body="first")
    late = send(client, body="second", validity_period=1).sid
    time.sleep(1.3)
    fetched = client.messages(late).fetch()
    assert (fetched.status, fetched.error_code, fetched.date_sent) == ("failed", 30001, None)


def test_a_scripted_delivery_failure_ends_undelivered_with_its_code(fake, client):
    fake.fail_delivery(PARENT, "undelivered", 30003, times=1)
    first, second = send(client).sid, send(client).sid
    fake.settle()
    assert client.messages(first).fetch().error_code == 30003
    assert client.messages(first).fetch().status == "undelivered"
    assert client.messages(second).fetch().status == "delivered"


# --- the list ----------------------------------------------------------------------------------------------------


def test_paging_follows_next_page_uri_and_returns_everything_newest_first(fake, client):
    for i in range(120):
        send(client, body=f"n{i}")
    found = client.messages.list(page_size=50)
    assert len(found) == 120 and len({m.sid for m in found}) == 120
    assert [m.body for m in found[:2]] == ["n119", "n118"]
    first = client.messages.page(page_size=50)
    assert first._payload["next_page_uri"].startswith(f"/2010-04-01/Accounts/{SID}/Messages.json?")


def test_the_list_filters_by_to_and_from(client):
    send(client, to=PARENT)
    send(client, to="+16135550124")
    send(client, to=PARENT, from_=OTHER_NUMBER)
    assert len(client.messages.list(to=PARENT)) == 2
    assert [m.from_ for m in client.messages.list(from_=OTHER_NUMBER)] == [OTHER_NUMBER]


def test_an_unknown_message_is_a_404_with_code_20404(client):
    with pytest.raises(TwilioRestException) as missing:
        client.messages("SM" + "0" * 32).fetch()
    assert (missing.value.status, missing.value.code) == (404, 20404)


# --- callbacks ----------------------------------------------------------------------------------------------------


def test_status_callbacks_arrive_in_order_signed_over_the_callback_url(fake, client, receiver):
    url = f"{receiver.url}/twilio/status"
    sid = send(client, status_callback=url).sid
    fake.settle()
    assert [p["form"]["MessageStatus"] for p in receiver.posts] == ["sent", "delivered"]
    form = receiver.posts[0]["form"]
    assert form["MessageSid"] == form["SmsSid"] == sid and form["AccountSid"] == SID
    assert (form["To"], form["From"], form["ApiVersion"]) == (PARENT, NUMBER, "2010-04-01")
    assert all(receiver.valid(p, url) for p in receiver.posts)


def test_callbacks_to_the_public_url_are_routed_and_signed_over_the_public_url(fake, client, receiver):
    fake.route(PUBLIC_BASE, receiver.url)
    fake.fail_delivery(PARENT, "undelivered", 30006)
    send(client, status_callback=f"{PUBLIC_BASE}/twilio/status")
    fake.settle()
    last = receiver.posts[-1]
    assert last["path"] == "/twilio/status" and last["form"]["ErrorCode"] == "30006"
    assert receiver.valid(last, f"{PUBLIC_BASE}/twilio/status")


def test_callbacks_to_an_unrouted_host_are_recorded_and_never_sent(fake, client):
    send(client, status_callback="https://status.example.org/twilio/status")
    fake.settle()
    assert {c.error for c in fake.callbacks} == {"not routed: neither loopback nor a route()d base"}


def test_a_suspended_account_fails_messages_with_30002_on_the_callback(fake, client, receiver):
    fake.suspend_account()
    send(client, status_callback=f"{receiver.url}/s")
    fake.settle()
    [post] = receiver.posts
    assert (post["form"]["MessageStatus"], post["form"]["ErrorCode"]) == ("failed", "30002")


# --- account failures --------------------------------------------------------------------------------------------


def test_after_rotate_token_the_old_token_gets_20003_and_the_new_one_works(fake, client, receiver):
    fake.rotate_token("new-token")
    with pytest.raises(TwilioRestException) as refused:
        send(client)
    assert (refused.value.status, refused.value.code) == (401, 20003)
    send(sdk(fake.url, token="new-token"), status_callback=f"{receiver.url}/s")
    fake.settle()
    assert receiver.valid(receiver.posts[0], f"{receiver.url}/s", token="new-token")


@pytest.mark.parametrize("status, code", [(401, 20003), (400, 21606)])
def test_an_account_failure_answers_every_request_until_restored(fake, client, status, code):
    fake.fail_account(status, code)
    with pytest.raises(TwilioRestException) as refused:
        send(client)
    assert (refused.value.status, refused.value.code) == (status, code)
    fake.restore_account()
    assert send(client).status == "queued"


def test_a_from_number_the_account_does_not_own_gets_21606():
    fake = FakeTwilio(SID, TOKEN, numbers={NUMBER}).start()
    try:
        with pytest.raises(TwilioRestException) as refused:
            send(sdk(fake.url), from_=OTHER_NUMBER)
        assert refused.value.code == 21606 and fake.messages == []
    finally:
        fake.stop()


# --- load, slowness and ambiguity --------------------------------------------------------------------------------


def test_over_the_concurrency_cap_requests_get_429_with_20429(fake):
    fake.max_concurrent = 2
    fake.delay = 1.0  # the first two stay in flight while the others arrive
    clients = [sdk(fake.url) for _ in range(6)]
    start = threading.Barrier(len(clients))
    outcomes: list = []

    def one(client: Client, i: int) -> None:
        start.wait()
        try:
            outcomes.append(send(client, body=f"n{i}").status)
        except TwilioRestException as error:
            outcomes.append((error.status, error.code))

    threads = [threading.Thread(target=one, args=(c, i)) for i, c in enumerate(clients)]
    for thread in threads:
        thread.start()
    for thread in threads:
        thread.join()
    assert sorted(map(str, outcomes)) == ["(429, 20429)"] * 4 + ["queued"] * 2
    assert len(fake.messages) == 2 and fake.stats()["max_in_flight"] >= 3


def test_accept_then_stall_creates_the_message_though_the_client_times_out(fake):
    fake.accept_then_stall(PARENT, 1.0)
    with pytest.raises(requests.exceptions.Timeout):
        send(sdk(fake.url, timeout=0.3))
    [message] = fake.sent_to(PARENT)
    fake.settle()
    assert message["status"] == "delivered"
    assert send(sdk(fake.url)).status == "queued", "only the next send stalls"


def test_a_delayed_request_the_client_gave_up_on_is_not_created(fake):
    fake.delay_for(PARENT, 0.6)
    with pytest.raises(requests.exceptions.Timeout):
        send(sdk(fake.url, timeout=0.2))
    time.sleep(0.8)
    assert fake.sent_to(PARENT) == [] and len(fake.requests) == 1


def test_a_delay_the_client_waits_out_creates_the_message(fake, client):
    fake.delay_for(PARENT, 0.2)
    assert send(client).status == "queued" and len(fake.sent_to(PARENT)) == 1


def test_seeded_random_faults_repeat_the_same_way(fake, client):
    def run() -> list:
        fake.reset()
        fake.faults(0.5, seed=7, kinds=("429", "500", "503"))
        outcomes = []
        for i in range(30):
            try:
                outcomes.append(send(client, body=f"n{i}").status)
            except TwilioRestException as error:
                outcomes.append(error.status)
        return outcomes

    first = run()
    assert set(first) == {"queued", 429, 500, 503}
    assert run() == first


# --- stats, inbound texts, the standalone process ----------------------------------------------------------------


def test_stats_count_per_to_and_duplicates(fake, client):
    send(client, body="same")
    send(client, body="same")
    send(client, to="+16135550124", body="same")
    figures = fake.stats()
    assert figures["per_to"] == {PARENT: 2, "+16135550124": 1}
    assert figures["duplicates"] == [{"to": PARENT, "body": "same", "count": 2}]


def test_an_inbound_text_is_posted_signed_and_replayed_exactly(fake, receiver):
    fake.route(PUBLIC_BASE, receiver.url)
    answer = fake.text(f"{PUBLIC_BASE}/twilio/inbound", "+16135550123", "STOP")
    assert answer == (200, "<Response/>")
    [post] = receiver.posts
    assert (post["form"]["From"], post["form"]["To"], post["form"]["Body"]) == ("+16135550123", NUMBER, "STOP")
    assert post["form"]["MessageSid"].startswith("SM") and post["form"]["AccountSid"] == SID
    assert receiver.valid(post, f"{PUBLIC_BASE}/twilio/inbound")
    fake.replay()
    assert receiver.posts[1]["form"] == post["form"]
    assert receiver.posts[1]["headers"]["X-Twilio-Signature"] == post["headers"]["X-Twilio-Signature"]


def test_the_standalone_server_serves_the_api_and_its_control_endpoints():
    process = subprocess.Popen([sys.executable, "-m", "tests.fakes.twilio_server", "--port", "0",
                                "--account-sid", SID, "--auth-token", TOKEN, "--mps", "50"],
                               cwd=ROOT, stdout=subprocess.PIPE, text=True)
    try:
        url = process.stdout.readline().split()[-1]
        client, control = sdk(url), TwilioControl(url)
        send(client, body="one")
        control.script(PARENT, (503, None))
        with pytest.raises(TwilioRestException) as refused:
            send(client, body="two")
        assert refused.value.status == 503
        stats = control.stats()
        assert stats["per_sender"][NUMBER]["accepted"] == 1 and stats["requests"] == 2
        assert [m["body"] for m in control.messages(to=PARENT)] == ["one"]
        control.reset()
        assert control.stats()["accepted"] == 0
    finally:
        process.terminate()
        process.wait(timeout=10)
    assert process.returncode == 0


def test_the_control_endpoints_answer_json_in_process_too(fake):
    with urllib.request.urlopen(f"{fake.url}/_fake/stats", timeout=5) as response:  # noqa: S310
        assert json.loads(response.read())["accepted"] == 0
