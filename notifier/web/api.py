"""The JSON API: the same status as the pages, for news sites, apps and the boards' own web teams.

`docs/openapi.json` describes exactly what these views return (a test checks real responses against it). Bodies
are cached like the pages: built once per change of boards.yaml or of the recorded history.
"""

from __future__ import annotations

import json
from datetime import datetime
from typing import Any

from flask import Blueprint, Response, abort, url_for

from notifier.config import ROOT
from notifier.status.boards import Board, Panel, now_toronto
from notifier.status.history import ChangeEvent, board_history
from notifier.web.pagecache import respond
from notifier.web.services import services

bp = Blueprint("api", __name__, url_prefix="/api")

OPENAPI = ROOT / "docs" / "openapi.json"


@bp.get("/boards")
def boards() -> Response:
    """Every board with its status (same order as boards.yaml)."""
    snapshot = services().boards.snapshot

    def build() -> str:
        now = now_toronto()
        return _json({"version": snapshot.version, "boards": [board_json(b, now) for b in snapshot.status.boards]})

    return respond(services().pages.get(("api", "boards"), snapshot, "application/json", build, vary_language=False))


@bp.get("/boards/<board_id>")
def board(board_id: str) -> Response:
    """One board with its status and its recorded history of changes, newest first."""
    snapshot = services().boards.snapshot
    found = snapshot.status.by_id().get(board_id) or abort(404)

    def build() -> str:
        with services().sessions() as session:
            history = [event_json(e) for e in board_history(session, board_id)]
        return _json({"version": snapshot.version, "board": board_json(found, now_toronto()), "history": history})

    page = services().pages.get(("api", "board", board_id), snapshot, "application/json", build, vary_language=False)
    return respond(page)


@bp.get("/openapi.json")
def openapi() -> Response:
    """The OpenAPI 3.1 document of this API."""
    response = Response(OPENAPI.read_bytes(), mimetype="application/json")
    response.headers["Cache-Control"] = "public, max-age=3600"
    return response


def board_json(board: Board, now: datetime) -> dict[str, Any]:
    """A board as the API shows it: what is in force at `now` (each panel's status, withdrawals, message), the
    periods still announced ahead under `upcoming`, and, for a period in force, when it ends (`until`)."""
    in_force = board.period_at(now)
    board = board.at(now)
    data = board.model_dump(mode="json", exclude_none=True)
    data["panels"] = {panel.value: board.panel_status(panel).value for panel in Panel}
    data["worst_status"] = board.worst_status.value
    data["disrupted"] = board.is_disrupted
    data["announced_ahead"] = bool(board.upcoming)
    if in_force is not None and in_force.end is not None:
        data["until"] = in_force.end.isoformat()
    data["url"] = url_for("public.board", board_id=board.id)
    data["feed"] = url_for("public.feed", board_id=board.id)
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
