"""Pages and JSON rendered once per change of boards.yaml (or of the recorded history), then served as bytes.

When every parent in a region checks the site at once, a request costs a dictionary lookup and, at most once a
second, a `stat()` of the file and a cheap query for the newest change event. Responses carry an ETag and
Last-Modified so browsers and a CDN can answer repeat visits with 304s, and `Cache-Control` lets a CDN absorb a
rush (and keep serving a stale copy if the app is down). A period "announced ahead" turns current when it starts
(and past when it ends), so those moments also start a new generation: nobody is shown "announced" after the fact.
"""

from __future__ import annotations

import hashlib
import threading
import time
from collections.abc import Callable, Hashable
from dataclasses import dataclass
from datetime import UTC, datetime

from flask import Response, request
from sqlalchemy import select
from sqlalchemy.orm import Session, sessionmaker
from werkzeug.http import http_date, parse_date, parse_etags

from notifier.status.document import Snapshot
from notifier.status.history import ChangeEvent

CACHE_CONTROL = "public, max-age=30, stale-while-revalidate=60, stale-if-error=86400"
VARY_LANGUAGE = "Accept-Language, Cookie"


@dataclass(frozen=True)
class Page:
    """A rendered response body with the validators and headers computed once."""

    body: bytes
    etag: str
    last_modified: datetime
    headers: tuple[tuple[str, str], ...]


class PageCache:
    """Rendered pages keyed by (what, language, …) and valid for one generation: file version, history position
    and how many announced periods have started or ended."""

    def __init__(self, sessions: sessionmaker[Session], check_every: float = 1.0, max_pages: int = 2000) -> None:
        self._sessions = sessions
        self.check_every = check_every
        self.max_pages = max_pages
        self._pages: dict[Hashable, Page] = {}
        self._generation: tuple[str, int, int] | None = None
        self._history: tuple[int, datetime | None] = (0, None)
        self._history_checked = -float("inf")
        self._boundaries: tuple[str, tuple[datetime, ...]] = ("", ())
        self._lock = threading.Lock()
        self.renders = 0

    def history_position(self) -> tuple[int, datetime | None]:
        """The newest change event (id, recorded_at), re-read at most once per `check_every` seconds."""
        now = time.monotonic()
        if now - self._history_checked >= self.check_every:
            with self._sessions() as session:
                row = session.execute(
                    select(ChangeEvent.id, ChangeEvent.recorded_at).order_by(ChangeEvent.id.desc()).limit(1)
                ).first()
            self._history = (row[0], row[1]) if row else (0, None)
            self._history_checked = now
        return self._history

    def get(self, key: Hashable, snapshot: Snapshot, mimetype: str, build: Callable[[], str | bytes],
            vary_language: bool = True, optional: bool = False) -> Page:
        """The cached page for `key`, rendered by `build()` if the file or history moved on since.

        `optional` pages (search results: any text can be searched for) are kept only while the cache holds fewer
        than `max_pages`, so odd searches can neither fill the memory nor push out the pages everyone reads.
        """
        event_id, event_time = self.history_position()
        generation = (snapshot.version, event_id, self._passed_boundaries(snapshot))
        if generation == self._generation:
            page = self._pages.get(key)  # the common case: no lock needed to read a dict
            if page is not None:
                return page
        with self._lock:
            if generation != self._generation:
                self._pages.clear()
                self._generation = generation
            page = self._pages.get(key)
        if page is not None:
            return page
        body = build()
        data = body.encode("utf-8") if isinstance(body, str) else body
        self.renders += 1
        modified = datetime.fromtimestamp(int(snapshot.mtime), UTC)
        if event_time is not None and event_time.replace(microsecond=0) > modified:
            modified = event_time.replace(microsecond=0)
        etag = hashlib.sha256(repr(key).encode() + b"\0" + data).hexdigest()[:20]
        headers = [
            ("Content-Type", f"{mimetype}; charset=utf-8"),
            ("ETag", f'"{etag}"'),
            ("Last-Modified", http_date(modified)),
            ("Cache-Control", CACHE_CONTROL),
        ]
        if vary_language:
            headers.append(("Vary", VARY_LANGUAGE))
        page = Page(data, etag, modified, tuple(headers))
        with self._lock:
            if self._generation == generation and (not optional or len(self._pages) < self.max_pages):
                self._pages[key] = page
        return page

    def _passed_boundaries(self, snapshot: Snapshot) -> int:
        """How many of the file's announced periods have started or ended (changes the moment one is reached)."""
        version, moments = self._boundaries
        if version != snapshot.version:
            now = datetime.now(UTC)
            moments = tuple(sorted(m for b in snapshot.status.boards for m in b.boundaries() if m > now))
            self._boundaries = (snapshot.version, moments)
        if not moments:
            return 0
        now = datetime.now(UTC)
        return sum(1 for moment in moments if moment <= now)


def respond(page: Page) -> Response:
    """A response for `page`: 304 when If-None-Match (or, without it, If-Modified-Since) shows the client has it."""
    if _not_modified(page):
        response = Response(status=304, headers=[h for h in page.headers if h[0] != "Content-Type"])
        return response
    return Response(page.body, headers=page.headers)


def _not_modified(page: Page) -> bool:
    environ = request.environ  # plain dict lookups: this runs on every request of a rush
    if environ.get("REQUEST_METHOD") not in ("GET", "HEAD"):
        return False
    if_none_match = environ.get("HTTP_IF_NONE_MATCH")
    if if_none_match is not None:
        return parse_etags(if_none_match).contains_weak(page.etag)
    since = environ.get("HTTP_IF_MODIFIED_SINCE")
    if since:
        when = parse_date(since)
        return when is not None and page.last_modified <= when
    return False
