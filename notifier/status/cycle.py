"""One cycle of the clock: read the published status document, record what changed since the last cycle, then hand
over to delivery.

The document is the newest version in the database (`status.published`), never this process's own boards.yaml,
which only seeds the first version (and, in development's follow mode, is published when edited by hand).

This is the only path from a file edit to a parent's phone: the clock runs it on a schedule, `tick` runs it once,
and the staff console's "publish" runs it at once. Cycles are serialised by a row lock, so two processes never
record the same change twice.
"""

from __future__ import annotations

import logging
from collections.abc import Callable
from dataclasses import dataclass, field
from datetime import datetime

from sqlalchemy import select
from sqlalchemy.orm import Session, sessionmaker

from notifier.db import hold_lock, utcnow
from notifier.errors import BoardFileError
from notifier.status import published
from notifier.status.boards import Board, StatusFile
from notifier.status.changes import Change, as_scheduled, diff_schedule, diff_state
from notifier.status.history import BoardState, ChangeEvent, Cycle

log = logging.getLogger(__name__)


@dataclass
class CycleResult:
    """What a cycle did, for the log, `tick`'s exit code and `status`."""

    cycle_id: int
    outcome: str
    changes: list[Change] = field(default_factory=list)
    problems: list[str] = field(default_factory=list)
    # A step stopped early because newer news came in (a correction during a long planning pass): the clock runs
    # the next cycle at once, which records it and carries on.
    unfinished: bool = False

    @property
    def ok(self) -> bool:
        return self.outcome == "ok"


# Steps run after changes are recorded (digest planning, delivery); each gets the session factory, the cycle's
# result and the time. Kept as a list so the digest and delivery modules plug in without this module knowing them.
AfterRecord = Callable[[sessionmaker[Session], CycleResult, datetime], None]


def run(
    sessions: sessionmaker[Session],
    boards_path: str,
    now: datetime | None = None,
    after_record: list[AfterRecord] | tuple[AfterRecord, ...] = (),
    follow: bool = False,
) -> CycleResult:
    """Run one cycle on the newest published version (seeded from `boards_path` when nothing is published yet;
    with `follow`, development's hand edits of that file are published first). An invalid document (or hand edit)
    records nothing and sends nothing; the last good state stays in force."""
    now = now or utcnow()
    with sessions() as session, session.begin():
        cycle = Cycle(started_at=now)
        session.add(cycle)
        session.flush()
        cycle_id = cycle.id
    try:
        with sessions() as session, session.begin():
            # The document is read under the lock, so a staff publish (which stores and records under the same
            # lock) is never diffed against a stale read.
            hold_lock(session, "cycle")
            snapshot = published.snapshot(published.current(session, boards_path, now, follow), now)
            changes = record(session, snapshot.status, snapshot.version, cycle_id, now)
    except BoardFileError as error:
        problems = [str(p) for p in error.problems]
        for problem in problems:
            log.error("boards file invalid, keeping the last good state: %s", problem)
        _finish(sessions, cycle_id, "invalid", "\n".join(problems), None)
        return CycleResult(cycle_id, "invalid", problems=problems)
    try:
        result = CycleResult(cycle_id, "ok", changes=changes)
        for step in after_record:
            step(sessions, result, now)
    except Exception as error:
        log.exception("cycle %s failed", cycle_id)
        _finish(sessions, cycle_id, "failed", f"{type(error).__name__}: {error}", snapshot.version)
        return CycleResult(cycle_id, "failed", problems=[str(error)])
    detail = f"{len(changes)} change(s)" if changes else "nothing to do"
    # A cycle that found nothing stays out of the log (the clock's heartbeat says it is alive): one a minute adds up.
    log.log(logging.INFO if changes else logging.DEBUG, "cycle %s: %s (status document version %s)", cycle_id, detail,
            snapshot.number)
    _finish(sessions, cycle_id, "ok", detail, snapshot.version)
    return result


def record(
    session: Session, status: StatusFile, version: str, cycle_id: int | None, now: datetime, notify: bool = True
) -> list[Change]:
    """Diff the file against the stored state, store change events and the new state; return the changes.

    Two kinds of change are told apart: what time alone changed since the last record (an announced period started
    or ended: `scheduled`), and what the new version of the file changed (a status, a withdrawal, a period announced,
    moved or called off). The very first cycle (no stored state at all) only stores the state: nobody is messaged
    about the state of the world when the service starts. With `notify=False` (a staff edit with "notify parents"
    off) the events are kept for the history but never sent. The caller holds `hold_lock(session, "cycle")`.
    """
    states = {state.board_id: state for state in session.scalars(select(BoardState))}
    first_cycle = not states
    changes: list[Change] = []
    for board in status.boards:
        state = states.get(board.id)
        board_changes = [] if first_cycle or state is None else _changes(state, board, now)
        for change in board_changes:
            session.add(_event(change, cycle_id, board, state, now, notify))
        changes += board_changes
        data = board.model_dump(mode="json", exclude_none=True)
        upcoming = next((moment for moment in board.boundaries() if moment > now), None)
        if state is None:
            session.add(BoardState(board_id=board.id, data=data, file_version=version, recorded_at=now,
                                   pending_effective=upcoming))
        elif board_changes or state.data != data or state.pending_effective != upcoming:
            state.data, state.file_version, state.recorded_at = data, version, now
            state.pending_effective = upcoming
    return changes


def _changes(state: BoardState, board: Board, now: datetime) -> list[Change]:
    """What time alone changed since the state was recorded, then what the new version of the board changed."""
    old = Board.model_validate(state.data)
    expected = old.at(now)
    was = old.at(state.recorded_at) if state.recorded_at < now else expected
    return (as_scheduled(diff_state(was, expected)) + diff_state(expected, board.at(now))
            + diff_schedule(old, board, now))


def _event(change: Change, cycle_id: int | None, board: Board, state: BoardState | None, now: datetime,
           notify: bool) -> ChangeEvent:
    effective = board.at(now).effective
    if change.scheduled and state is not None:  # when it happened: the boundary that passed
        old = Board.model_validate(state.data)
        passed = [moment for moment in old.boundaries() if state.recorded_at < moment <= now]
        effective = passed[-1] if passed else effective
    return ChangeEvent(
        cycle_id=cycle_id,
        board_id=change.board_id,
        kind=change.kind.value,
        panel=change.panel.value if change.panel else None,
        key=change.key,
        before=change.before,
        after=change.after,
        urgent=change.urgent,
        notify=notify,
        scheduled=change.scheduled,
        effective_at=effective,
        recorded_at=now,
    )


def _finish(sessions: sessionmaker[Session], cycle_id: int, outcome: str, detail: str, version: str | None) -> None:
    with sessions() as session, session.begin():
        cycle = session.get_one(Cycle, cycle_id)
        cycle.finished_at, cycle.outcome, cycle.detail, cycle.file_version = utcnow(), outcome, detail, version
