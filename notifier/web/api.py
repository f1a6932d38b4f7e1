"""The JSON API: the same status as the pages, for news sites, apps and the boards' own web teams.

`docs/openapi.json` describes exactly what these views return (a test checks real responses against it). Bodies
are cached like the pages: built once per change of boards.yaml or of the recorded history.
"""

from __future__ import annotations

import json
from datetime import datetime
from typing import Any

from flask import Blueprint, Response, abort, request, url_for

from notifier.config import ROOT
from notifier.i18n import LANGUAGES
from notifier.status.boards import Board, Panel, now_toronto
from notifier.status.history import ChangeEvent, board_history
from notifier.web.pagecache import respond
from notifier.web.services import explicit_language, language_in_url, services

bp = Blueprint("api", __name__, url_prefix="/api")

OPENAPI = ROOT / "docs" / "openapi.json"


@bp.before_request
def only_offered_languages() -> tuple[dict[str, str], int] | None:
    """`?lang=` other than en or fr is a 400, as docs/openapi.json says (a page falls back; a script should know)."""
    if request.endpoint != "api.openapi" and "lang" in request.args and request.args["lang"] not in LANGUAGES:
        return {"error": "unknown-language"}, 400
    return None


@bp.get("/boards")
@language_in_url
def boards() -> Response:
    """Every board with its status (same order as boards.yaml); `?lang=fr` links to the French pages and feeds."""
    snapshot = services().boards.snapshot
    language = explicit_language()

    def build() -> str:
        now = now_toronto()
        listed = [board_json(b, now, language) for b in snapshot.status.boards]
        return _json({"version": snapshot.version, "boards": listed})

    key = ("api", "boards", language)
    return respond(services().pages.get(key, snapshot, "application/json", build, vary_language=False))


@bp.get("/boards/<board_id>")
@language_in_url
def board(board_id: str) -> Response:
    """One board with its status and its recorded history of changes, newest first."""
    snapshot = services().boards.snapshot
    found = snapshot.status.by_id().get(board_id) or abort(404)
    language = explicit_language()

    def build() -> str:
        with services().sessions() as session:
            history = [event_json(e) for e in board_history(session, board_id)]
        data = {"version": snapshot.version, "board": board_json(found, now_toronto(), language), "history": history}
        return _json(data)

    key = ("api", "board", board_id, language)
    return respond(services().pages.get(key, snapshot, "application/json", build, vary_language=False))


@bp.get("/openapi.json")
def openapi() -> Response:
    """The OpenAPI 3.1 document of this API."""
    response = Response(OPENAPI.read_bytes(), mimetype="application/json")
    response.headers["Cache-Control"] = "public, max-age=3600"
    return response


def board_json(board: Board, now: datetime, language: str | None = None) -> dict[str, Any]:
    """A board as the API shows it: what is in force at `now` (each panel's status, withdrawals, message), the
    periods still announced ahead under `upcoming`, and, for a period in force, when it ends (`until`).

    With a `language`, the page and feed links name it, so whoever follows them reads that language.
    """
    in_force = board.period_at(now)
    board = board.at(now)
    data = board.model_dump(mode="json", exclude_none=True)
    data["panels"] = {panel.value: board.panel_status(panel).value for panel in Panel}
    data["worst_status"] = board.worst_status.value
    data["disrupted"] = board.is_disrupted
    data["announced_ahead"] = bool(board.upcoming)
    if in_force is not None and in_force.end is not None:
        data["until"] = in_force.end.isoformat()
    data["url"] = url_for("public.board", board_id=board.id, lang=language)
    data["feed"] = url_for("public.feed", board_id=board.id, lang=language)
    return data


def event_json(event: ChangeEvent) -> dict[str, Any]:
    """One recorded change, as stored by the clock."""
    return {
        "id": event.id, "kind": event.kind, "panel": event.panel, "key": event.key,
        "before": event.before, "after": event.after, "urgent": event.urgent,
        "effective_at": event.effective_at.isoformat() if event.effective_at else None,
        "scheduled": bool(event.scheduled),
        "recorded_at": event.recorded_at.isoformat(),
    }


def _json(data: Any) -> str:
    return json.dumps(data, ensure_ascii=False, separators=(",", ":"))
