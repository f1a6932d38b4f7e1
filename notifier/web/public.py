"""Public pages: every board at a glance, one page per board, an Atom feed per board, and the language toggle.

Every page is rendered once per generation (see `pagecache`) and served as bytes; views only pick the cached page.
"""

from __future__ import annotations

import unicodedata
from datetime import UTC, datetime
from urllib.parse import quote, urlencode

from flask import Blueprint, abort, current_app, redirect, render_template, request, send_from_directory, url_for
from werkzeug.exceptions import NotFound
from werkzeug.wrappers import Response

from notifier.errors import BoardFileError
from notifier.i18n import LANGUAGES
from notifier.status.boards import Board, Panel, now_toronto
from notifier.status.document import Snapshot, version_of
from notifier.status.history import board_history
from notifier.web.calendar import feed_urls
from notifier.web.pagecache import respond
from notifier.web.services import (
    LANGUAGE_COOKIE,
    board_asked,
    language_in_url,
    select_language,
    services,
)
from notifier.web.widgets import snippets

bp = Blueprint("public", __name__)

MAX_QUERY = 100
PATH_SAFE = "/:@!$&'()*+,;=-._~"  # what a path may hold as is (RFC 3986 pchar); anything else is percent-encoded


@bp.before_app_request
def remember_language() -> Response | None:
    """`?lang=fr` (the visible toggle) on a page is remembered in a cookie, then the page is shown without it.

    Views marked `language_in_url` (feeds, the API) answer in the asked language themselves instead. The address
    redirected to is this request's own path and query minus `lang`: nothing in the query reaches `url_for` (an
    argument named `endpoint` or `_external` would break it or build an address on another host), and the path is
    made to start with exactly one slash, so the redirect never leaves the site.
    """
    chosen = request.args.get("lang")
    if chosen not in LANGUAGES or request.method != "GET" or _language_in_url():
        return None
    response = redirect(_without_language(), 302)
    response.set_cookie(LANGUAGE_COOKIE, chosen, max_age=365 * 24 * 3600, samesite="Lax", httponly=True)
    response.headers["Cache-Control"] = "no-store"
    return response


def _language_in_url() -> bool:
    if request.path.startswith("/api/"):  # the API answers even its 404 in JSON, never through a redirect
        return True
    view = current_app.view_functions.get(request.endpoint) if request.endpoint else None
    return bool(getattr(view, "language_in_url", False))


def _without_language() -> str:
    """This page's site-relative address without `lang`: "/boards/tdsb?q=x" for "/boards/tdsb?lang=fr&q=x"."""
    # To a browser, a path that starts with two slashes (or a slash and a backslash) names another host: keep one
    # leading slash and percent-encode the rest ("?" and "#" in the path too, so they stay part of it).
    path = "/" + quote((request.script_root + request.path).lstrip("/\\"), safe=PATH_SAFE)
    query = urlencode([(k, v) for k, v in request.args.items(multi=True) if k != "lang"])
    return f"{path}?{query}" if query else path


@bp.get("/")
def index() -> Response:
    """All boards, disrupted first; `?q=` filters by name (a plain form: no JavaScript needed)."""
    language = select_language()
    found = services()
    snapshot = found.boards.snapshot
    query = " ".join(request.args.get("q", "").split())[:MAX_QUERY]
    key = ("index", language, _fold(query)) if query else ("index", language, "")
    page = found.pages.get(key, snapshot, "text/html", lambda: _render_index(snapshot, query), optional=bool(query))
    return respond(page)


@bp.get("/boards/<board_id>")
def board(board_id: str) -> Response:
    """One board: status first, then each panel, withdrawn services, and the history of changes."""
    language = select_language()
    snapshot = services().boards.snapshot
    found = snapshot.status.by_id().get(board_id) or abort(404)

    def build() -> str:
        with services().sessions() as session:
            history = board_history(session, board_id)
        now = now_toronto()
        return render_template("public/board.html", board=found.at(now), panels=list(Panel), history=history,
                               in_force=found.period_at(now), calendar=feed_urls(board_id, language),
                               snippets=snippets(board_id, language))

    return respond(services().pages.get(("board", board_id, language), snapshot, "text/html", build))


@bp.get("/boards/<board_id>/feed.atom")
@language_in_url
def feed(board_id: str) -> Response:
    """An Atom feed of the board's status changes: in `?lang=`'s language (no cookie needed), else the reader's.

    Each language's feed has one id and self link, `…/feed.atom?lang=fr`, whichever address it was fetched at.
    """
    asked = board_asked(board_id)
    found, snapshot, language = asked.board, asked.snapshot, asked.language
    base = services().settings.base_url

    def build() -> str:
        with services().sessions() as session:
            history = board_history(session, board_id)
        status_updated = found.updated_at or _file_time(snapshot)
        updated = max([status_updated, *(e.recorded_at for e in history)])
        page_url = f"{base}{url_for('public.board', board_id=board_id, lang=language)}"
        feed_url = f"{base}{url_for('public.feed', board_id=board_id, lang=language)}"
        current = found.at(now_toronto())
        return render_template(
            "public/feed.atom", board=current, history=history,
            version=version_of(current.model_dump_json().encode()), updated=updated,
            status_updated=status_updated, page_url=page_url, feed_id=feed_url, self_url=feed_url,
        )

    return respond(asked.cached("feed", "application/atom+xml", build))


@bp.get("/favicon.ico")
def favicon() -> Response:
    """The site's icon where browsers and feed readers look for it unasked (the pages also link the SVG)."""
    return send_from_directory(current_app.static_folder or "static", "favicon.ico",
                               mimetype="image/vnd.microsoft.icon", max_age=7 * 24 * 3600)


@bp.app_errorhandler(404)
def not_found(error: NotFound) -> tuple[str | dict[str, str], int]:
    """A page in the reader's language that helps them find their board (the API answers in JSON)."""
    if request.path.startswith("/api/"):
        return {"error": "not-found"}, 404
    return render_template("public/error.html", code=404), 404


@bp.app_errorhandler(BoardFileError)
def unavailable(error: BoardFileError) -> tuple[str, int, dict[str, str]]:
    """boards.yaml was never valid and nothing is recorded: say so plainly, and ask caches to retry soon."""
    return render_template("public/error.html", code=503), 503, {"Retry-After": "60", "Cache-Control": "no-store"}


def _render_index(snapshot: Snapshot, query: str) -> str:
    boards = snapshot.status.boards
    language = select_language()
    now = now_toronto()
    chosen = [b.at(now) for b in boards if _matches(b, query)] if query else [b.at(now) for b in boards]
    # Most disruptive now first; at the same level, boards with a change announced ahead, then by withdrawals.
    chosen.sort(key=lambda b: (-b.worst_status.severity, not b.upcoming, -len(b.withdrawals),
                               _fold(b.display_name(language))))
    return render_template(
        "public/index.html", boards=chosen, total=len(boards), query=query, as_of=_file_time(snapshot),
        disrupted=[b for b in chosen if b.is_disrupted or b.upcoming],
        calm=[b for b in chosen if not (b.is_disrupted or b.upcoming)],
    )


def _fold(text: str) -> str:
    """Lowercase without accents, so "ecole" finds "École" and sorting ignores accents."""
    return "".join(c for c in unicodedata.normalize("NFKD", text.casefold()) if not unicodedata.combining(c))


def _matches(board: Board, query: str) -> bool:
    needle = _fold(query)
    return any(needle in _fold(text) for text in (board.name, board.name_fr or "", board.id))


def _file_time(snapshot: Snapshot) -> datetime:
    return datetime.fromtimestamp(int(snapshot.mtime), UTC)
