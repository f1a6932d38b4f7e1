"""Waiting in tests that drive real processes: until something holds, or until a count stops moving."""

from __future__ import annotations

import time
from collections.abc import Callable


def wait_for(condition: Callable[[], object], seconds: float, every: float = 0.1) -> bool:
    """Poll `condition` until it is true (True) or `seconds` pass (False)."""
    deadline = time.monotonic() + seconds
    while time.monotonic() < deadline:
        if condition():
            return True
        time.sleep(every)
    return False


def quiet(count: Callable[[], int], seconds: float = 3.0) -> Callable[[], bool]:
    """A condition for `wait_for`: true once `count()` did not move for `seconds` (a fan-out has finished)."""
    last = [-1]

    def check() -> bool:
        now = count()
        if now != last[0]:
            last[0] = now
            return False
        time.sleep(seconds)
        return count() == now

    return check


class StampPrecision:
    """How late this process's threads woke while it ran: a probe thread sleeps 10 ms at a time and keeps the worst
    lateness. A fake provider in this process stamps arrivals in its own threads; when they woke this late, a
    busiest second measured from its stamps says more about the test machine than about the senders."""

    def __init__(self) -> None:
        import threading

        self.worst = 0.0
        self._stop = threading.Event()
        self._thread = threading.Thread(target=self._probe, daemon=True)

    def __enter__(self) -> StampPrecision:
        self._thread.start()
        return self

    def __exit__(self, *exc) -> None:
        self._stop.set()
        self._thread.join()

    def _probe(self) -> None:
        while not self._stop.is_set():
            asked = time.monotonic()
            time.sleep(0.01)
            self.worst = max(self.worst, time.monotonic() - asked - 0.01)
