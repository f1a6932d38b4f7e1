"""The fake's sender queues: what Twilio does with a message after it answered 201.

Each sender (the `From` number, or the `MessagingServiceSid`) sends at most `mps` segments a second, as Twilio
counts a sender's rate (a two-segment text takes two slots); what comes
faster waits in that sender's queue, `queued` (`accepted` with a Messaging Service) with no date_sent. A
dispatcher thread moves the head of each queue to `sent` (stamping date_sent) at that rate, then after
`delivery_seconds` to `delivered`, or to the outcome scripted for that number (`undelivered`/`failed` with 30003,
30005, 30006, 30007…). A message still waiting when its queue time runs out (`queue_seconds`, Twilio's is about
10 hours) or its `ValidityPeriod` ends becomes `failed` with 30001. A suspended account's messages become `failed`
with 30002 when their turn comes. With `mps=None` (the default) a sender has no limit: a message is sent the
moment it is accepted (still answered as `queued`, as Twilio does).

It does not pick numbers out of a Messaging Service's pool.
"""

from __future__ import annotations

import heapq
import itertools
import threading
import time
from collections import defaultdict, deque
from collections.abc import Callable
from datetime import UTC, datetime

from tests.fakes.twilio_messages import ERROR_TEXT, WAITING, rfc2822

Change = Callable[[dict], None]


class SenderQueues:
    """Holds waiting messages per sender and a thread that sends and delivers them; see the module docstring.

    Every method expects the caller to hold `lock` (the fake's own), which the thread also takes.
    """

    def __init__(self, lock: threading.Condition, on_change: Change, mps: float | None = None,
                 queue_seconds: float = 36_000, delivery_seconds: float = 0.0) -> None:
        self.lock = lock
        self.on_change = on_change
        self.default_mps = mps
        self.rates: dict[str, float | None] = {}
        self.queue_seconds = queue_seconds
        self.delivery_seconds = delivery_seconds
        self.suspended = False
        self.outcomes: dict[str, list] = {}  # To -> [status, code, times left or None]
        self._queues: dict[str, deque] = defaultdict(deque)
        self._next_slot: dict[str, float] = defaultdict(float)
        self._expiries: list = []  # heap of (deadline, n, message)
        self._deliveries: list = []  # heap of (due, n, message)
        self._order = itertools.count()
        self._stopped = False
        self._thread = threading.Thread(target=self._run, daemon=True, name="fake-twilio-dispatcher")

    def start(self) -> None:
        self._thread.start()

    def stop(self) -> None:
        with self.lock:
            self._stopped = True
            self.lock.notify_all()
        self._thread.join(timeout=5)

    def mps(self, sender: str) -> float | None:
        return self.rates.get(sender, self.default_mps)

    def clear(self) -> None:
        self._queues.clear()
        self._next_slot.clear()
        self._expiries.clear()
        self._deliveries.clear()
        self.outcomes.clear()
        self.suspended = False

    def accept(self, message: dict) -> None:
        """Queue a message just accepted (or send it at once when its sender has no limit)."""
        sender = message["_sender"]
        if self.mps(sender) is None:
            self._send(message, time.monotonic())
            return
        limit = self.queue_seconds
        validity = message["_form"].get("ValidityPeriod")
        if validity and validity.isdigit():
            limit = min(limit, int(validity))
        heapq.heappush(self._expiries, (message["_accepted_mono"] + limit, next(self._order), message))
        self._queues[sender].append(message)
        self.lock.notify_all()

    def busy(self) -> bool:
        """True while a message waits to be sent or a sent one waits to be delivered."""
        return bool(self._deliveries) or any(self.waiting(sender) for sender in self._queues)

    def waiting(self, sender: str) -> int:
        """How many messages wait in `sender`'s queue."""
        return sum(1 for m in self._queues.get(sender, ()) if m["status"] in WAITING)

    # --- the dispatcher ------------------------------------------------------------------------------------------

    def _run(self) -> None:
        with self.lock:
            while not self._stopped:
                now = time.monotonic()
                wake = now + 1.0
                while self._expiries and self._expiries[0][0] <= now:
                    message = heapq.heappop(self._expiries)[2]
                    if message["status"] in WAITING:
                        self._change(message, "failed", 30001)
                for sender, queue in self._queues.items():
                    while queue and queue[0]["status"] not in WAITING:
                        queue.popleft()
                    if not queue:
                        continue
                    rate = self.mps(sender)
                    if self._next_slot[sender] <= now:
                        sent = queue.popleft()
                        self._send(sent, now)
                        self._next_slot[sender] = now + (max(1, sent["_segments"]) / rate if rate else 0.0)
                    wake = min(wake, self._next_slot[sender]) if queue else wake
                while self._deliveries and self._deliveries[0][0] <= now:
                    self._deliver(heapq.heappop(self._deliveries)[2])
                for heap in (self._expiries, self._deliveries):
                    if heap:
                        wake = min(wake, heap[0][0])
                self.lock.wait(max(wake - time.monotonic(), 0.0005))

    def _send(self, message: dict, now: float) -> None:
        if self.suspended:
            self._change(message, "failed", 30002)
            return
        message["_date_sent"] = datetime.now(UTC)
        message["_sent_mono"] = now
        message["date_sent"] = rfc2822(message["_date_sent"])
        self._change(message, "sent")
        heapq.heappush(self._deliveries, (now + self.delivery_seconds, next(self._order), message))
        self.lock.notify_all()

    def _deliver(self, message: dict) -> None:
        outcome = self.outcomes.get(message["to"])
        if outcome is None:
            self._change(message, "delivered")
            return
        status, code, left = outcome
        if left is not None:
            outcome[2] = left - 1
            if outcome[2] <= 0:
                del self.outcomes[message["to"]]
        self._change(message, status, code)

    def _change(self, message: dict, status: str, code: int | None = None) -> None:
        message["status"] = status
        message["date_updated"] = rfc2822(datetime.now(UTC))
        if code is not None:
            message["error_code"] = code
            message["error_message"] = ERROR_TEXT.get(code)
        self.on_change(message)
