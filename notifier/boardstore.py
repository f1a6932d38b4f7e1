"""The last good boards.yaml, kept in memory by each web process and reloaded when the file changes.

A broken edit must never take the site down or half-apply: the store keeps serving the last valid state, logs the
problems and reports them (for /healthz) until a valid file replaces it. The file is looked at no more than once
per `check_every` seconds, so a rush of parents costs one `stat()` a second, not one per request.
"""

from __future__ import annotations

import logging
import os
import threading
import time
from pathlib import Path

from notifier import boardfile
from notifier.boardfile import Snapshot
from notifier.errors import BoardFileError

log = logging.getLogger(__name__)


class BoardStore:
    """Holds the current `Snapshot`; `problems` lists what is wrong with the file on disk, if anything."""

    def __init__(self, path: str | os.PathLike[str], check_every: float = 1.0) -> None:
        self.path = Path(path)
        self.check_every = check_every
        self.problems: list[str] = []
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
        """The last valid state without looking at the file again (None if the file was never valid)."""
        return self._snapshot

    @property
    def healthy(self) -> bool:
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
                snapshot = boardfile.load(self.path)
            except BoardFileError as error:
                self.problems = [str(p) for p in error.problems]
                for problem in self.problems:
                    log.error("boards file invalid, serving the last good state: %s", problem)
                return
            if self._snapshot is None or snapshot.version != self._snapshot.version:
                log.info("boards file loaded: %d boards, version %s", len(snapshot.status.boards), snapshot.version)
            self._snapshot, self.problems = snapshot, []
