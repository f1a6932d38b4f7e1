"""Named locks (notifier.db.hold_lock): two processes taking a lock that does not exist yet, at the same moment,
both get it in turn; neither fails (clock and workers all start together after a deploy)."""

from __future__ import annotations

import threading
import time

from notifier import db


def test_two_sessions_taking_a_new_lock_at_once_both_get_it_one_after_the_other(sessions):
    ready = threading.Barrier(2)
    held: list[tuple[str, float, float]] = []
    errors: list[BaseException] = []

    def take(who: str) -> None:
        try:
            with sessions() as session, session.begin():
                ready.wait(timeout=10)
                db.hold_lock(session, "brand-new")
                start = time.monotonic()
                time.sleep(0.3)
                held.append((who, start, time.monotonic()))
        except BaseException as error:  # noqa: BLE001 - reported below
            errors.append(error)

    threads = [threading.Thread(target=take, args=(name,)) for name in ("first", "second")]
    for thread in threads:
        thread.start()
    for thread in threads:
        thread.join(timeout=30)
    assert errors == []
    (_, _, first_end), (_, second_start, _) = sorted(held, key=lambda h: h[1])
    assert second_start >= first_end - 0.05, "the lock was held by both at once"
