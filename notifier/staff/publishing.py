"""Publishing a staff edit: store a new version of the status document, audit it, and start the clock's cycle at once.

The version goes to the database every process reads (`status.published`), never to this container's disk, so the
clock (in a container of its own) diffs exactly what was published and nothing is recorded back.

There is no second sending path. With "notify parents" on, the save is followed by the clock's own cycle run
here without its steps: it records the change events only (milliseconds, whatever the number of followers), and the
clock process is woken to plan and send within seconds. Planning every recipient inside the staff member's request
would keep them waiting, and a web worker busy, for as long as the board has followers. With it off (a typo fix),
the version is stored and its change recorded in one
transaction holding the cycle lock, with `notify=False`: the history shows it, nobody is sent it, and the clock's
next cycle (which reads the document under the same lock) finds nothing new to send.
"""

from __future__ import annotations

import logging
from dataclasses import dataclass
from datetime import datetime

from sqlalchemy.orm import Session, sessionmaker

from notifier import db
from notifier.config import Settings
from notifier.db import transaction
from notifier.masking import mask_email
from notifier.staff import audit, edits
from notifier.status import cycle, published
from notifier.status.boards import Board, StatusFile
from notifier.status.cycle import CycleResult
from notifier.status.history import BoardState

log = logging.getLogger(__name__)


@dataclass(frozen=True)
class Published:
    """A published edit and, when parents are notified, the cycle that recorded it."""

    saved: edits.Saved
    cycle: CycleResult | None


def publish(settings: Settings, sessions: sessionmaker[Session], edited: Board, base: Board, version: str,
            now: datetime, notify: bool, staff_email: str, ip: str) -> Published:
    """Store `edited` (see `edits.save_board` for conflicts) and hand it to the clock's path; audit it."""
    path, follow = settings.boards_file, settings.follow_boards_file
    mirror = path if follow else None
    with transaction(sessions) as session:
        db.hold_lock(session, "cycle")
        current = published.current(session, path, now, follow)
        saved = edits.save_board(session, current, edited, base, version, now, staff_email, mirror)
        if not notify:
            _record_quietly(session, saved, now)
        audit.record_edit(session, staff_email, edited.id, saved.changes, notify, ip, saved.version, now)
    result = _start_cycle(settings, sessions) if notify else None
    log.info("board %s published by %s from %s as status document version %s: %d change(s), notify parents %s",
             edited.id, mask_email(staff_email), ip, saved.number, len(saved.changes), "on" if notify else "off")
    return Published(saved, result)


def _record_quietly(session: Session, saved: edits.Saved, now: datetime) -> None:
    """Record this board's edit with notify=False, leaving other boards' unrecorded changes to the clock."""
    state = session.get(BoardState, saved.new.id)
    if state is not None and Board.model_validate(state.data) != saved.old:
        # The board had changed in the document before this edit (an import the clock has not seen yet): that
        # change keeps its notification; only this edit is silent.
        cycle.record(session, StatusFile(boards=(saved.old,)), saved.version, None, now, notify=True)
    cycle.record(session, StatusFile(boards=(saved.new,)), saved.version, None, now, notify=False)


def _start_cycle(settings: Settings, sessions: sessionmaker[Session]) -> CycleResult:
    """The clock's own cycle, now, recording only: the clock process (woken at once) plans and sends."""
    from notifier import clock

    result = cycle.run(sessions, str(settings.boards_file))
    clock.request_wakeup(sessions)
    return result
