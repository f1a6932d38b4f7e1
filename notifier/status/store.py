"""The newest published status document, kept in memory by each web process and reloaded when a new one is published.

Every process reads the same document from the database (`status.published`): a staff publish on one web worker is
served by every other worker and diffed by the clock, whatever each container's own boards.yaml says. The newest
version's number is looked up no more than once per `check_every` seconds, so a rush of parents costs one small
query a second, not one per request. When nothing is published yet, the store seeds the first version from
boards.yaml (the same as `db upgrade` and the clock do).

A version that no longer validates, or a database that does not answer, must never take the site down: the store
keeps serving the last valid state and reports the problems (for /healthz). If nothing valid was ever loaded in
this process, it falls back to the last state the clock recorded (`BoardState`).

In development (`follow`, NOTIFIER_FOLLOW_BOARDS_FILE, on with NOTIFIER_DEBUG) a hand edit of boards.yaml is
published within a second; an invalid one is reported as `PATH:LINE: message` and the last good version stays.
"""

from __future__ import annotations

import hashlib
import json
import logging
import os
import threading
import time
from pathlib import Path

from pydantic import ValidationError
from sqlalchemy import select
from sqlalchemy.exc import SQLAlchemyError
from sqlalchemy.orm import Session, sessionmaker

from notifier.db import utcnow
from notifier.errors import BoardFileError
from notifier.status import published
from notifier.status.boards import Board, StatusFile
from notifier.status.document import Snapshot
from notifier.status.history import BoardState

log = logging.getLogger(__name__)

PUBLISHED = "published"
DATABASE = "database"


class BoardStore:
    """Holds the current `Snapshot`; `problems` lists what keeps the newest version (or a hand edit) from being served.

    `source` says where the snapshot came from: "published" (the newest published version, or an earlier valid
    one) or "database" (the clock's last recorded state, used only when no version was ever valid here).
    """

    def __init__(
        self,
        path: str | os.PathLike[str],
        check_every: float = 1.0,
        sessions: sessionmaker[Session] | None = None,
        follow: bool = False,
    ) -> None:
        if sessions is None:
            raise ValueError("the board store reads the published document from the database: pass `sessions`")
        self.path = Path(path)
        self.check_every = check_every
        self.follow = follow
        self.problems: list[str] = []
        self.source: str | None = None
        self._sessions = sessions
        self._snapshot: Snapshot | None = None
        self._number: int | None = None
        self._seen: tuple[float, int] | None = None
        self._checked_at = 0.0
        self._lock = threading.Lock()
        self.refresh(force=True)

    @property
    def snapshot(self) -> Snapshot:
        """The last valid state (looking for a newer version first if it may have been published)."""
        self.refresh()
        if self._snapshot is None:
            raise BoardFileError(self.problems)
        return self._snapshot

    @property
    def last_good(self) -> Snapshot | None:
        """The last valid state without looking again (None if there never was one)."""
        return self._snapshot

    @property
    def healthy(self) -> bool:
        """True when the snapshot is the newest published version and nothing is wrong."""
        return self._snapshot is not None and not self.problems

    def refresh(self, force: bool = False) -> None:
        """Load the newest version if a new one was published since the last look (publishing a hand edit first,
        in follow mode)."""
        now = time.monotonic()
        if not force and now - self._checked_at < self.check_every:
            return
        with self._lock:
            self._checked_at = now
            problems: list[str] = []
            try:
                if self.follow:
                    problems += self._follow_file(force)
                with self._sessions() as session:
                    number = published.newest_id(session)
                if number is None:
                    with self._sessions() as session, session.begin():
                        number = published.seed(session, self.path, utcnow()).id
                if number != self._number or self.source != PUBLISHED:
                    with self._sessions() as session:
                        snapshot = published.snapshot(session.get_one(published.StatusDocument, number))
                    if self._snapshot is None or snapshot.version != self._snapshot.version:
                        log.info("status document version %s loaded: %d boards", number, len(snapshot.status.boards))
                    self._snapshot, self._number, self.source = snapshot, number, PUBLISHED
            except BoardFileError as error:
                problems += [str(p) for p in error.problems]
            except SQLAlchemyError as error:
                log.warning("cannot read the published status document: %s", type(error).__name__)
                if self._snapshot is None:
                    problems.append(f"the database did not answer ({type(error).__name__})")
            if problems:
                self._keep_last_good(problems)
            else:
                self.problems = []

    def _follow_file(self, force: bool) -> list[str]:
        """Publish the checkout's boards.yaml if it changed on disk (development); its problems if it is invalid."""
        try:
            stat = self.path.stat()
            seen = (stat.st_mtime, stat.st_size)
        except OSError:
            seen = None
        if not force and seen == self._seen:
            return [p for p in self.problems if p.startswith(f"{self.path}:")]
        self._seen = seen
        try:
            with self._sessions() as session, session.begin():
                published.follow(session, self.path, utcnow())
        except BoardFileError as error:
            return [str(p) for p in error.problems]
        return []

    def _keep_last_good(self, problems: list[str]) -> None:
        known, self.problems = self.problems, problems
        if self._snapshot is None:
            self._snapshot = recorded_snapshot(self._sessions)
            self.source = DATABASE if self._snapshot is not None else None
        if self._snapshot is None:
            serving = "nothing to serve: no version was ever valid and no state is recorded in the database"
        elif self.source == DATABASE:
            serving = "serving the last state recorded in the database"
        else:
            serving = "serving the last good state"
        for problem in problems:
            if problem not in known:  # said once, not once a second while it lasts
                log.error("boards file invalid, %s: %s", serving, problem)


def recorded_snapshot(sessions: sessionmaker[Session]) -> Snapshot | None:
    """The boards as the clock last recorded them (`BoardState`), or None when nothing usable is recorded."""
    try:
        with sessions() as session:
            states = list(session.scalars(select(BoardState).order_by(BoardState.board_id)))
    except SQLAlchemyError as error:
        log.warning("cannot read the recorded board states: %s", type(error).__name__)
        return None
    if not states:
        return None
    try:
        status = StatusFile(boards=tuple(Board.model_validate(state.data) for state in states))
    except ValidationError as error:
        log.warning("the recorded board states do not validate: %d problem(s)", error.error_count())
        return None
    fingerprint = json.dumps([state.data for state in states], sort_keys=True).encode()
    recorded = max(state.recorded_at for state in states)
    return Snapshot(status, "db-" + hashlib.sha256(fingerprint).hexdigest()[:13], recorded.timestamp())
