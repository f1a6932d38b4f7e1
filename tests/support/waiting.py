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
