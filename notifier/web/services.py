"""What every request needs, built once per process: settings, the database, the board store, the page cache."""

from __future__ import annotations

from collections.abc import Callable, Hashable
from dataclasses import dataclass
from typing import TypeVar

from flask import abort, current_app, g, has_request_context, request
from sqlalchemy import Engine
from sqlalchemy.orm import Session, sessionmaker

from notifier.config import Settings
from notifier.db import make_engine, make_sessionmaker
from notifier.i18n import LANGUAGES, best_language
from notifier.status.boards import Board
from notifier.status.document import Snapshot
from notifier.status.store import BoardStore
from notifier.web.pagecache import Page, PageCache

LANGUAGE_COOKIE = "lang"

View = TypeVar("View", bound=Callable)


@dataclass
class Services:
    settings: Settings
    engine: Engine
    sessions: sessionmaker[Session]
    boards: BoardStore
    pages: PageCache

    @classmethod
    def build(cls, settings: Settings) -> Services:
        """Connect to the database and load the published status document (seeded from boards.yaml if none is)."""
        engine = make_engine(settings.database_url)
        sessions = make_sessionmaker(engine)
        store = BoardStore(settings.boards_file, sessions=sessions, follow=settings.follow_boards_file)
        return cls(settings, engine, sessions, store, PageCache(sessions))


def services() -> Services:
    """The current app's services."""
    return current_app.extensions["notifier"]


def select_language() -> str:
    """The page language: an explicit ?lang=, else the remembered choice, else the browser's Accept-Language.

    A value the site does not offer (`?lang=de`, an old cookie) is passed over, as if it were not there."""
    context = g._get_current_object()  # one context lookup instead of one per attribute (this runs per request)
    language = context.get("language")
    if language is None:
        current = request._get_current_object()  # type: ignore[attr-defined]  # a LocalProxy, typed as Request
        chosen = current.args.get("lang")
        if chosen not in LANGUAGES:
            chosen = current.cookies.get(LANGUAGE_COOKIE)
        language = chosen if chosen in LANGUAGES else _negotiated(current.headers.get("Accept-Language"))
        context.language = language
    return language


_NEGOTIATED: dict[str | None, str] = {}


def _negotiated(accept_language: str | None) -> str:
    """`best_language`, remembered per header value: a rush of parents sends a few dozen distinct headers."""
    language = _NEGOTIATED.get(accept_language)
    if language is None:
        language = best_language(accept_language)
        if len(_NEGOTIATED) < 1000:
            _NEGOTIATED[accept_language] = language
    return language


def speak(language: str) -> None:
    """Answer this request in `language` (a subscription's own) unless the visitor chose one (?lang= or the cookie),
    so a link from a French message opens in French even in a browser that keeps no cookies."""
    if LANGUAGE_COOKIE not in request.cookies and explicit_language() is None and language in LANGUAGES:
        g.language = language


def language_in_url(view: View) -> View:
    """Mark a view whose URL keeps its language (`?lang=fr`): answered in it at once, and no cookie is set.

    Feed readers and scripts keep no cookies, so a feed or the API asked for in French must answer in French itself.
    """
    view.language_in_url = True  # type: ignore[attr-defined]
    return view


def explicit_language() -> str | None:
    """The language the URL asks for (`?lang=`), or None when it names none it offers."""
    chosen = request.args.get("lang")
    return chosen if chosen in LANGUAGES else None


def named_language() -> str | None:
    """`explicit_language()`, or None outside a request: what a page's GET forms carry on as a hidden `lang`."""
    return explicit_language() if has_request_context() else None


def current_language() -> str:
    """The language of the page being rendered ('en' outside a request)."""
    try:
        return select_language()
    except RuntimeError:
        return "en"


@dataclass(frozen=True)
class BoardAsked:
    """A request for one board's page, feed, calendar or widget: the board as published and the language asked for.

    Every such answer is cached per board and language; when the URL names the language the answer depends on the
    URL alone, so it needs no `Vary`.
    """

    board: Board
    snapshot: Snapshot
    language: str
    explicit: bool

    def cached(self, kind: str, mimetype: str, build: Callable[[], str | bytes], *key: Hashable) -> Page:
        """The cached answer of this `kind`, built by `build()` when the published status or history moved on."""
        return services().pages.get((kind, self.board.id, self.language, self.explicit, *key), self.snapshot,
                                    mimetype, build, vary_language=not self.explicit)


def board_asked(board_id: str) -> BoardAsked:
    """The board `board_id` (404 when none is published under it) in the language of this request."""
    snapshot = services().boards.snapshot
    board = snapshot.status.by_id().get(board_id)
    if board is None:
        abort(404)
    return BoardAsked(board, snapshot, select_language(), explicit_language() is not None)
