"""Publishing a staff edit: save the board, record it in the audit trail, and start the clock's cycle at once.

There is no second sending path. With "notify parents" on, the save is followed by the clock's own cycle run
here without delivery (it records the change events and plans the outbox rows at once), and the clock process
is woken to send within seconds. With it off (a typo fix), the file is saved and its change recorded in one
transaction holding the cycle lock, with `notify=False`: the history shows it, nobody is sent it, and the clock's
next cycle (which reads the file under the same lock) finds nothing new to send.
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
from notifier.status import cycle
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
    """Save `edited` (see `edits.save_board` for conflicts) and hand it to the clock's path; audit it."""
    path = settings.boards_file
    if notify:
        saved = edits.save_board(path, edited, base, version, now)
        with transaction(sessions) as session:
            audit.record_edit(session, staff_email, edited.id, saved.changes, True, ip, saved.version, now)
        result = _start_cycle(settings, sessions)
    else:
        with transaction(sessions) as session:
            db.hold_lock(session, "cycle")
            saved = edits.save_board(path, edited, base, version, now,
                                       then=lambda saved: _record_quietly(session, saved, now))
            audit.record_edit(session, staff_email, edited.id, saved.changes, False, ip, saved.version, now)
        result = None
    log.info("board %s published by %s from %s: %d change(s), notify parents %s", edited.id,
             mask_email(staff_email), ip, len(saved.changes), "on" if notify else "off")
    return Published(saved, result)


def _record_quietly(session: Session, saved: edits.Saved, now: datetime) -> None:
    """Record this board's edit with notify=False, leaving other boards' unrecorded changes to the clock."""
    state = session.get(BoardState, saved.new.id)
    if state is not None and Board.model_validate(state.data) != saved.old:
        # The board had changed in the file before this edit (a hand edit the clock has not seen yet): that
        # change keeps its notification; only this edit is silent.
        cycle.record(session, StatusFile(boards=(saved.old,)), saved.version, None, now, notify=True)
    cycle.record(session, StatusFile(boards=(saved.new,)), saved.version, None, now, notify=False)


def _start_cycle(settings: Settings, sessions: sessionmaker[Session]) -> CycleResult:
    """The clock's own cycle, now: record and plan here, send from the clock process (woken at once)."""
    from notifier import clock

    result = clock.tick(settings, sessions, deliver=False)
    clock.request_wakeup(sessions)
    return result
