"""The sender's rate, shared by every process that sends: never more than the cap in any second, nearly the cap on
average, with 1 or many processes on any number of hosts.

The limiter is pyrate-limiter's GCRA (generic cell rate algorithm): one "theoretical arrival time" per channel,
moved by one atomic Lua script in Redis (NOTIFIER_REDIS_URL) or held in memory when one process sends. Its burst
is 1, so sends are evenly spaced, never bunched (a burst at the end of one second and another at the start of the
next would break the cap in the second between). Each sending thread reserves the next free slot by asking the
bucket at that slot's own time, then sleeps until it. A thread that wakes more than `JITTER` after its slot (the
machine was busy) gives the slot up and reserves another, rather than send late into the next slot's second: a
late send plus the on-time ones after it would put more than the cap into one second; the sender asks again
(`on_time`) just before it hands the message over. A thread stopped before its slot leaves it unused rather than
send early. Slots are reserved at most `HORIZON` ahead.

The cap is in the provider's units: a text of two segments takes two units' time (`acquire(weight)`), as
Twilio counts a sender's rate and queue in segments; an email or a push is one.

Sends are spaced for 99 % of the cap, and a little wider when the cap is small, so that the jitter between a slot
and the provider's receipt (network, an SMTP exchange, a busy machine) keeps the busiest second within 5 % of the
cap.

Push-back (HTTP 429, Twilio 20429 and 30001, SMTP 421 and 451) halves the shared rate, at most once a second, and
the rate then recovers linearly to the cap within `RECOVERY_SECONDS` (additive increase, multiplicative decrease).
The rate's state lives next to the bucket, so every process slows down together.
"""

from __future__ import annotations

import logging
import math
import threading
import time
from typing import Any

log = logging.getLogger(__name__)

HORIZON = 1.0  # seconds: how far ahead a slot may be reserved (at least two slots)
JITTER = 0.03  # seconds of send-time jitter the spacing absorbs
HEADROOM = 0.99  # the share of the cap paced: an email's SMTP exchange, or a busy machine, can delay a receipt by
# tens of milliseconds, which at 50 a second is enough to put 53 into one second
FLOOR = 0.05  # push-back never lowers the rate below this share of the cap
RECOVERY_SECONDS = 20.0  # from the floor back to the cap
REFRESH = 0.5  # seconds between reads of the shared rate
# The limiter counts time in whole units, which it takes for milliseconds. In milliseconds a slot falls on the next
# whole one (90 texts/s would leave every 12 ms: 83/s), so it is given tenths of a millisecond counted from 2026,
# which keep its arithmetic exact in the doubles of Redis's Lua for decades.
TICK = 0.0001
EPOCH = 1_767_225_600  # 2026-01-01 00:00 UTC


def spacing(rate: float, weight: int = 1) -> float:
    """Seconds a send of `weight` units (a text's segments) holds at `rate` units a second: a little over
    weight/rate (`HEADROOM`), and wider when few such sends fit in a second, so that jitter between a slot and the
    provider's receipt cannot break the cap (at 10 a second, three-segment texts leave 3 a second, not 3.3)."""
    allowed = math.floor(rate * 1.05 / weight + 1e-9)  # sends of this weight the busiest second may hold
    base = weight / (rate * HEADROOM)
    return max(base, (1.0 + JITTER) / allowed) if allowed >= 1 else base


class _LocalShare:
    """The push-back state of one process (no Redis: this process is the only sender)."""

    def __init__(self) -> None:
        self.lock = threading.Lock()
        self.factor, self.at, self.cut = 1.0, 0.0, 0.0

    def read(self) -> tuple[float, float, float]:
        with self.lock:
            return self.factor, self.at, self.cut

    def cut_to(self, factor: float, now: float) -> None:
        with self.lock:
            self.factor, self.at, self.cut = factor, now, now


class _RedisShare:
    """The push-back state in a Redis hash, shared by every process."""

    def __init__(self, client: Any, key: str) -> None:  # a redis.Redis
        self.client, self.key = client, key

    def read(self) -> tuple[float, float, float]:
        values = self.client.hmget(self.key, "factor", "at", "cut")
        if values[0] is None:
            return 1.0, 0.0, 0.0
        return float(values[0]), float(values[1]), float(values[2])

    def cut_to(self, factor: float, now: float) -> None:
        self.client.hset(self.key, mapping={"factor": factor, "at": now, "cut": now})
        self.client.expire(self.key, int(RECOVERY_SECONDS * 4) + 60)


class Pacer:
    """Paces one channel's sends at `rate` per second, shared through Redis when `redis_url` is given."""

    def __init__(self, channel: str, rate: float, redis_url: str | None = None) -> None:
        # Imported here: processes that never send (web pages, a staff publication) need not load it.
        from pyrate_limiter import GCRA, InMemoryStateStore, Rate, RedisStateStore

        self.channel, self.cap, self.Rate = channel, rate, Rate
        self.algorithm = GCRA()
        if redis_url:
            import redis

            client = redis.Redis.from_url(redis_url, socket_timeout=5, socket_connect_timeout=5,
                                          health_check_interval=30)
            # Reservations run ahead of the clock: the state must outlive the furthest of them by far.
            keep = max(60.0, 4 * spacing(rate * FLOOR) + HORIZON)
            self.store: RedisStateStore | InMemoryStateStore = RedisStateStore(
                client, f"notifier:pace:{channel}:ticks", ttl_ms=int(keep * 1000))
            self.share: _LocalShare | _RedisShare = _RedisShare(client, f"notifier:pace:{channel}:rate")
        else:
            self.store = InMemoryStateStore()
            self.share = _LocalShare()
        self._factor, self._read_at = 1.0, 0.0
        self._complained = 0.0

    def rate(self) -> float:
        """The shared rate now: the cap, or less for a while after push-back."""
        now = time.time()
        if now - self._read_at >= REFRESH:
            factor, at, _ = self.share.read()
            self._factor = min(1.0, factor + (1.0 - FLOOR) * (now - at) / RECOVERY_SECONDS)
            self._read_at = now
        return self.cap * self._factor

    def pushback(self) -> None:
        """The provider asked us to slow down: halve the shared rate (at most once a second)."""
        try:
            now = time.time()
            factor, at, cut = self.share.read()
            if now - cut < 1.0:
                return
            current = min(1.0, factor + (1.0 - FLOOR) * (now - at) / RECOVERY_SECONDS)
            self.share.cut_to(max(FLOOR, current / 2), now)
            self._read_at = 0.0
            log.warning("%s: the provider pushed back; sending at %.2f/s for now (cap %.2f/s), recovering within "
                        "%.0f s", self.channel, self.cap * max(FLOOR, current / 2), self.cap, RECOVERY_SECONDS)
        except Exception:
            self._complain("could not lower the shared rate")

    def acquire(self, stop: threading.Event | None = None, weight: int = 1,
                timeout: float | None = None) -> float | None:
        """Wait for the slot of a send costing `weight` units (a text's segments: the cap is in what the provider
        counts) and return its time (epoch seconds); None if `stop` was set (or `timeout` passed) first. The slot
        holds the rate for `weight` units, so the next send comes that much later. While Redis is away it waits:
        it never sends without the limiter."""
        at = _ticks()
        give_up = None if timeout is None else time.monotonic() + timeout
        while not (stop is not None and stop.is_set()) and not (give_up is not None and time.monotonic() > give_up):
            try:
                interval = spacing(self.rate(), weight)
                # The library counts whole "milliseconds": given ticks instead, a slot is placed to 0.1 ms, not 1 ms.
                rate = self.Rate(1000, max(1, round(interval / TICK * 1000 / weight)), burst=max(1, weight))
                # pyrate_limiter's stores leave their check() unannotated (its base class declares it)
                decision = self.store.check(self.algorithm, [rate], at, weight)  # type: ignore[no-untyped-call]
            except Exception:
                self._complain("the shared rate limiter is unreachable; sending waits for it")
                _wait(stop, 1.0)
                at = _ticks()
                continue
            if decision.allowed:
                _wait(stop, (at - _ticks()) * TICK)
                if stop is not None and stop.is_set():
                    return None  # stopping: the slot goes unused (sending it early would crowd its second)
                if self.on_time(_epoch(at)):
                    return _epoch(at)
                at = _ticks()  # woke too late (a busy machine): sending now would crowd the next second; a new slot
                continue
            slot, now = at + (decision.retry_after_ms or 1), _ticks()
            ahead = (slot - now) * TICK - max(HORIZON, 2 * interval)
            if ahead > 0:
                _wait(stop, ahead)
                now = _ticks()
            at = max(slot, now)
        return None

    @staticmethod
    def on_time(slot: float) -> bool:
        """Whether a send may still use `slot` (epoch seconds): past it by more than `JITTER`, it would crowd the
        second that follows, so the caller takes another slot instead."""
        return time.time() - slot <= JITTER

    def _complain(self, what: str) -> None:
        if time.monotonic() - self._complained > 30:
            self._complained = time.monotonic()
            log.error("%s: %s", self.channel, what, exc_info=True)


def _ticks() -> int:
    """Now, in the limiter's units: `TICK`s since `EPOCH`."""
    return (time.time_ns() - EPOCH * 1_000_000_000) // round(TICK * 1_000_000_000)


def _epoch(ticks: int) -> float:
    return EPOCH + ticks * TICK


def _wait(stop: threading.Event | None, seconds: float) -> None:
    if seconds <= 0:
        return
    if stop is None:
        time.sleep(seconds)
    else:
        stop.wait(seconds)


_pacers: dict[tuple[str, float, str | None], Pacer] = {}
_pacers_lock = threading.Lock()


def shared(channel: str, rate: float, redis_url: str | None) -> Pacer:
    """This process's pacer for `channel`: one per process, so its threads share it (and Redis shares it further)."""
    with _pacers_lock:
        key = (channel, rate, redis_url)
        if key not in _pacers:
            _pacers[key] = Pacer(channel, rate, redis_url)
        return _pacers[key]
