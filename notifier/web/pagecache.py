"""Pages and JSON rendered once per change of boards.yaml (or of the recorded history), then served as bytes.

When every parent in a region checks the site at once, a request costs a dictionary lookup and, at most once a
second, a `stat()` of the file and a cheap query for the newest change event. Responses carry an ETag and
Last-Modified so browsers and a CDN can answer repeat visits with 304s.
"""

from __future__ import annotations

import hashlib
import threading
import time
from collections.abc import Callable, Hashable
from dataclasses import dataclass
from datetime import datetime

from flask import Response, request
from sqlalchemy.orm import Session, sessionmaker

from notifier.history import latest_event_id

CACHE_CONTROL = "public, max-age=30, stale-while-revalidate=60, stale-if-error=86400"


@dataclass(frozen=True)
class Page:
    body: bytes
    etag: str
    last_modified: datetime
    mimetype: str


class PageCache:
    """Rendered pages keyed by (what, language, …) and valid for one (file version, history position)."""

    def __init__(self, sessions: sessionmaker[Session], check_every: float = 1.0) -> None:
        self._sessions = sessions
        self._check_every = check_every
        self._pages: dict[Hashable, Page] = {}
        self._generation: tuple[str, int] | None = None
        self._history = 0
        self._history_checked = 0.0
        self._lock = threading.Lock()

    def history_position(self) -> int:
        """The newest change event id, re-read from the database at most once per `check_every` seconds."""
        now = time.monotonic()
        if now - self._history_checked >= self._check_every:
            with self._sessions() as session:
                self._history = latest_event_id(session)
            self._history_checked = now
        return self._history

    def get(self, key: Hashable, file_version: str, modified: datetime, mimetype: str,
            build: Callable[[], str | bytes]) -> Page:
        """The cached page for `key`, rendered by `build()` if the file or history moved on since."""
        generation = (file_version, self.history_position())
        with self._lock:
            if generation != self._generation:
                self._pages.clear()
                self._generation = generation
            page = self._pages.get(key)
        if page is None:
            body = build()
            data = body.encode("utf-8") if isinstance(body, str) else body
            etag = hashlib.sha256(repr((generation, key)).encode() + data).hexdigest()[:20]
            page = Page(data, etag, modified, mimetype)
            with self._lock:
                if self._generation == generation:
                    self._pages[key] = page
        return page


def respond(page: Page, vary_language: bool = True) -> Response:
    """A response for `page` that answers If-None-Match / If-Modified-Since with 304 and lets a CDN cache it."""
    response = Response(page.body, mimetype=page.mimetype)
    response.set_etag(page.etag)
    response.last_modified = page.last_modified
    response.headers["Cache-Control"] = CACHE_CONTROL
    if vary_language:
        response.vary.update(("Accept-Language", "Cookie"))
    return response.make_conditional(request)
