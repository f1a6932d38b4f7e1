"""Public pages: every board at a glance, one page per board, an Atom feed per board, and the language toggle.

Every page is rendered once per generation (see `pagecache`) and served as bytes; views only pick the cached page.
"""

from __future__ import annotations

import unicodedata
from datetime import UTC, datetime
from typing import Any

from flask import (
    Blueprint,
    abort,
    current_app,
    has_request_context,
    render_template,
    request,
    send_from_directory,
    url_for,
)
from werkzeug.exceptions import NotFound
from werkzeug.wrappers import Response

from notifier.errors import BoardFileError
from notifier.status.boards import Board, Panel, now_toronto
from notifier.status.document import Snapshot, version_of
from notifier.status.history import board_history
from notifier.web.calendar import feed_urls
from notifier.web.pagecache import respond
from notifier.web.services import (
    LANGUAGE_COOKIE,
    board_asked,
    explicit_language,
    language_in_url,
    select_language,
    services,
)
from notifier.web.widgets import snippets

bp = Blueprint("public", __name__)

MAX_QUERY = 100


@bp.after_app_request
def remember_language(response: Response) -> Response:
    """A page asked for with `?lang=fr` (the visible toggle, every link in a French email or text) answers in French
    at once, and remembers the choice in a cookie on that same answer.

    No redirect: a mail app's in-app browser or a link preview keeps no cookie, and must still get the language the
    link names. The cookie is set only when it changes, on an answer marked private so no shared cache keeps (or
    hands out) it. Views marked `language_in_url` (feeds, the API) answer in the asked language and set no cookie.
    """
    chosen = explicit_language()
    if (chosen is None or request.method not in ("GET", "HEAD") or request.cookies.get(LANGUAGE_COOKIE) == chosen
            or _language_in_url()):
        return response
    response.set_cookie(LANGUAGE_COOKIE, chosen, max_age=365 * 24 * 3600, samesite="Lax", httponly=True)
    response.headers["Cache-Control"] = "private, no-cache"
    return response


# Not pages: files, the icon, the push worker and its JSON calls read the same in every language (and a service
# worker's script address must stay one, or each language would replace the other's registration).
_NO_LANGUAGE = frozenset({"static", "public.favicon", "push.service_worker", "push.key", "push.subscribe",
                          "push.unsubscribe"})


@bp.app_url_defaults
def keep_named_language(endpoint: str, values: dict[str, Any]) -> None:
    """On a page asked for with `?lang=`, every link to another of our pages names that language too.

    A mail app's in-app browser keeps no cookie: without this, the page after a French link's page would fall back
    to the browser's Accept-Language. A link that names its own language (the toggle, feeds) is left as it is.
    """
    if "lang" in values or endpoint in _NO_LANGUAGE or not has_request_context():
        return
    named = explicit_language()
    if named is not None:
        values["lang"] = named


def _language_in_url() -> bool:
    if request.path.startswith("/api/"):  # the API answers even its 404 in JSON, and sets no cookie
        return True
    view = current_app.view_functions.get(request.endpoint) if request.endpoint else None
    return bool(getattr(view, "language_in_url", False))


@bp.get("/")
def index() -> Response:
    """All boards, disrupted first; `?q=` filters by name (a plain form: no JavaScript needed)."""
    language = select_language()
    found = services()
    snapshot = found.boards.snapshot
    query = " ".join(request.args.get("q", "").split())[:MAX_QUERY]
    named = explicit_language() is not None  # its links then name the language too (`keep_named_language`)
    key = ("index", language, named, _fold(query) if query else "")
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

    named = explicit_language() is not None  # its links then name the language too (`keep_named_language`)
    return respond(services().pages.get(("board", board_id, language, named), snapshot, "text/html", build))


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
