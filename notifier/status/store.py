"""The last good boards.yaml, kept in memory by each web process and reloaded when the file changes.

A broken edit must never take the site down or half-apply: the store keeps serving the last valid state, logs the
problems and reports them (for /healthz) until a valid file replaces it. If the file is already broken when the
process starts, the store falls back to the last state the clock recorded in the database (`BoardState`), so a
restart during a bad edit does not take the site down either. The file is looked at no more than once per
`check_every` seconds, so a rush of parents costs one `stat()` a second, not one per request.
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

from notifier.errors import BoardFileError
from notifier.status import document
from notifier.status.boards import Board, StatusFile
from notifier.status.document import Snapshot
from notifier.status.history import BoardState

log = logging.getLogger(__name__)

FILE = "file"
DATABASE = "database"


class BoardStore:
    """Holds the current `Snapshot`; `problems` lists what is wrong with the file on disk, if anything.

    `source` says where the snapshot came from: "file" (boards.yaml, possibly an earlier valid version of it) or
    "database" (the clock's last recorded state, used only when the file was never valid in this process).
    """

    def __init__(
        self,
        path: str | os.PathLike[str],
        check_every: float = 1.0,
        sessions: sessionmaker[Session] | None = None,
    ) -> None:
        self.path = Path(path)
        self.check_every = check_every
        self.problems: list[str] = []
        self.source: str | None = None
        self._sessions = sessions
        self._snapshot: Snapshot | None = None
        self._seen: tuple[float, int] | None = None
        self._checked_at = 0.0
        self._lock = threading.Lock()
        self.refresh(force=True)

    @property
    def snapshot(self) -> Snapshot:
        """The last valid state (reloading first if the file may have changed)."""
        self.refresh()
        if self._snapshot is None:
            raise BoardFileError(self.problems)
        return self._snapshot

    @property
    def last_good(self) -> Snapshot | None:
        """The last valid state without looking at the file again (None if there never was one)."""
        return self._snapshot

    @property
    def healthy(self) -> bool:
        """True when the snapshot is the file on disk as it is now."""
        return self._snapshot is not None and not self.problems

    def refresh(self, force: bool = False) -> None:
        """Reload the file if its modification time or size changed since the last look."""
        now = time.monotonic()
        if not force and now - self._checked_at < self.check_every:
            return
        with self._lock:
            self._checked_at = now
            try:
                stat = self.path.stat()
                seen = (stat.st_mtime, stat.st_size)
            except OSError:
                seen = None
            if not force and seen == self._seen:
                return
            self._seen = seen
            try:
                snapshot = document.load(self.path)
            except BoardFileError as error:
                self._keep_last_good([str(p) for p in error.problems])
                return
            if self._snapshot is None or snapshot.version != self._snapshot.version:
                log.info("boards file loaded: %d boards, version %s", len(snapshot.status.boards), snapshot.version)
            self._snapshot, self.problems, self.source = snapshot, [], FILE

    def _keep_last_good(self, problems: list[str]) -> None:
        self.problems = problems
        if self._snapshot is None:
            self._snapshot = recorded_snapshot(self._sessions) if self._sessions is not None else None
            self.source = DATABASE if self._snapshot is not None else None
        if self._snapshot is None:
            serving = "nothing to serve: the file was never valid and no state is recorded in the database"
        elif self.source == DATABASE:
            serving = "serving the last state recorded in the database"
        else:
            serving = "serving the last good state"
        for problem in problems:
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
