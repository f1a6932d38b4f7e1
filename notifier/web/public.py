"""Public pages: every board at a glance, one page per board, an Atom feed per board, and the language toggle."""

from __future__ import annotations

import unicodedata
from datetime import UTC, datetime

from flask import Blueprint, abort, redirect, render_template, request, url_for
from werkzeug.wrappers import Response

from notifier.boards import Board, Panel, now_toronto
from notifier.history import board_history
from notifier.i18n import LANGUAGES
from notifier.web.pagecache import respond
from notifier.web.services import LANGUAGE_COOKIE, select_language, services

bp = Blueprint("public", __name__)


@bp.before_app_request
def remember_language() -> Response | None:
    """`?lang=fr` (the visible toggle) is remembered in a cookie, then the clean URL is shown."""
    chosen = request.args.get("lang")
    if chosen not in LANGUAGES or request.method != "GET":
        return None
    args = {k: v for k, v in request.args.items() if k != "lang"}
    response = redirect(url_for(request.endpoint, **(request.view_args or {}), **args)) if request.endpoint \
        else redirect(request.path)
    response.set_cookie(LANGUAGE_COOKIE, chosen, max_age=365 * 24 * 3600, samesite="Lax", httponly=True)
    response.headers["Cache-Control"] = "no-store"
    return response


@bp.get("/")
def index() -> Response:
    language = select_language()
    store = services().boards
    snapshot = store.snapshot
    query = request.args.get("q", "").strip()[:100]
    if query:
        response = Response(_render_index(snapshot.status.boards, language, query))
        response.headers["Cache-Control"] = "public, max-age=30"
        return response
    page = services().pages.get(("index", language), snapshot.version, _modified(snapshot.mtime), "text/html",
                                lambda: _render_index(snapshot.status.boards, language, ""))
    return respond(page)


@bp.get("/boards/<board_id>")
def board(board_id: str) -> Response:
    language = select_language()
    snapshot = services().boards.snapshot
    found = snapshot.status.by_id().get(board_id) or abort(404)

    def build() -> str:
        with services().sessions() as session:
            history = board_history(session, board_id)
        return render_template("public/board.html", board=found, panels=list(Panel), history=history,
                               upcoming=found.is_upcoming(now_toronto()))

    page = services().pages.get(("board", board_id, language), snapshot.version, _modified(snapshot.mtime),
                                "text/html", build)
    return respond(page)


@bp.get("/boards/<board_id>/feed.atom")
def feed(board_id: str) -> Response:
    language = select_language()
    snapshot = services().boards.snapshot
    found = snapshot.status.by_id().get(board_id) or abort(404)
    base = services().settings.base_url

    def build() -> str:
        with services().sessions() as session:
            history = board_history(session, board_id)
        updated = max([_modified(snapshot.mtime), *(e.recorded_at for e in history)])
        return render_template(
            "public/feed.atom", board=found, history=history, version=snapshot.version, updated=updated,
            feed_id=f"{base}/boards/{board_id}/feed.atom?lang={language}",
            self_url=f"{base}{url_for('public.feed', board_id=board_id)}?lang={language}",
            page_url=f"{base}{url_for('public.board', board_id=board_id)}?lang={language}",
        )

    page = services().pages.get(("feed", board_id, language), snapshot.version, _modified(snapshot.mtime),
                                "application/atom+xml", build)
    return respond(page)


def _render_index(boards: tuple[Board, ...], language: str, query: str) -> str:
    chosen = [b for b in boards if _matches(b, query)] if query else list(boards)
    chosen.sort(key=lambda b: (-b.worst_status.severity, -len(b.withdrawals), _fold(b.display_name(language))))
    return render_template(
        "public/index.html", boards=chosen, total=len(boards), query=query,
        disrupted=[b for b in chosen if b.is_disrupted], calm=[b for b in chosen if not b.is_disrupted],
    )


def _fold(text: str) -> str:
    """Lowercase without accents, so "ecole" finds "École" and sorting ignores accents."""
    return "".join(c for c in unicodedata.normalize("NFKD", text.casefold()) if not unicodedata.combining(c))


def _matches(board: Board, query: str) -> bool:
    needle = _fold(query)
    return any(needle in _fold(text) for text in (board.name, board.name_fr or "", board.id))


def _modified(mtime: float) -> datetime:
    return datetime.fromtimestamp(int(mtime), UTC)
