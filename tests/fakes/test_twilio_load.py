"""The fake Twilio as its own process under load and random faults (marker `faults`: slow): what it counts
matches what clients saw, and each sender's rate holds."""

from __future__ import annotations

import threading
import time

import pytest
import requests
from twilio.base.exceptions import TwilioRestException

from tests.fakes.twilio_control import TwilioControl
from tests.fakes.twilio_sdk import sdk_client

SID = "AC" + "c3" * 16
TOKEN = "load-token"
NUMBER = "+16135550100"

pytestmark = pytest.mark.faults


def test_under_random_faults_and_a_concurrency_cap_counts_match_and_the_rate_holds(processes):
    fake = processes.command(["python", "-m", "tests.fakes.twilio_server", "--account-sid", SID, "--auth-token",
                              TOKEN, "--mps", "25", "--max-concurrent", "4", "--fault-rate", "0.2", "--seed", "3",
                              "--stall-seconds", "1.5"], {}, label="fake-twilio")
    url = fake.wait_for_log(r"listening on (\S+)").group(1)
    control = TwilioControl(url)
    outcomes: dict[str, object] = {}  # body -> what the client saw
    lock = threading.Lock()

    def sender(n: int) -> None:
        client = sdk_client(url, SID, TOKEN, timeout=1.0)
        for i in range(12):
            body = f"{n}-{i}"
            try:
                client.messages.create(to=f"+1613555{n:02d}{i:02d}", from_=NUMBER, body=body)
                outcome = "accepted"
            except TwilioRestException as error:
                outcome = error.status
            except requests.exceptions.ConnectTimeout:
                outcome = "not sent"  # a busy machine: the connection itself timed out
            except requests.exceptions.Timeout:
                outcome = "timeout"
            with lock:
                outcomes[body] = outcome

    threads = [threading.Thread(target=sender, args=(n,)) for n in range(8)]
    for thread in threads:
        thread.start()
    for thread in threads:
        thread.join()

    sent = sum(1 for outcome in outcomes.values() if outcome != "not sent")
    deadline = time.monotonic() + 20  # on a busy machine the fake may still be reading requests clients gave up on
    while control.stats()["requests"] < sent and time.monotonic() < deadline:
        time.sleep(0.1)
    stats = control.stats()
    assert len(outcomes) == 96 and stats["requests"] == sent
    seen = list(outcomes.values())
    assert 429 in seen and "timeout" in seen  # the seed draws a 429 and a stall among the first ten creates
    held = {m["body"] for m in control.messages()}
    assert {b for b, o in outcomes.items() if o == "accepted"} <= held
    assert held <= {b for b, o in outcomes.items() if o in ("accepted", "timeout")}, "no refused create was kept"
    assert held & {b for b, o in outcomes.items() if o == "timeout"}, "a stalled create is kept: Twilio has it"
    assert stats["max_in_flight"] >= 4
    assert stats["per_sender"][NUMBER]["busiest_second_sent"] <= 25
    assert stats["duplicates"] == []
