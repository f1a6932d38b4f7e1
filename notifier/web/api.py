"""The JSON API: the same status as the pages, for news sites, apps and the boards' own web teams."""

from __future__ import annotations

import json
from datetime import UTC, datetime
from typing import Any

from flask import Blueprint, Response, abort, url_for

from notifier.boards import Board, Panel, now_toronto
from notifier.config import ROOT
from notifier.history import ChangeEvent, board_history
from notifier.web.pagecache import respond
from notifier.web.services import services

bp = Blueprint("api", __name__, url_prefix="/api")

OPENAPI = ROOT / "docs" / "openapi.json"


@bp.get("/boards")
def boards() -> Response:
    snapshot = services().boards.snapshot

    def build() -> str:
        return _json({"version": snapshot.version, "boards": [board_json(b) for b in snapshot.status.boards]})

    page = services().pages.get(("api", "boards"), snapshot.version, _modified(snapshot.mtime),
                                "application/json", build)
    return respond(page, vary_language=False)


@bp.get("/boards/<board_id>")
def board(board_id: str) -> Response:
    snapshot = services().boards.snapshot
    found = snapshot.status.by_id().get(board_id) or abort(404)

    def build() -> str:
        with services().sessions() as session:
            history = [event_json(e) for e in board_history(session, board_id)]
        return _json({"version": snapshot.version, "board": board_json(found), "history": history})

    page = services().pages.get(("api", "board", board_id), snapshot.version, _modified(snapshot.mtime),
                                "application/json", build)
    return respond(page, vary_language=False)


@bp.get("/openapi.json")
def openapi() -> Response:
    response = Response(OPENAPI.read_bytes(), mimetype="application/json")
    response.headers["Cache-Control"] = "public, max-age=3600"
    return response


def board_json(board: Board) -> dict[str, Any]:
    """A board as the API shows it: the file's fields plus each panel's status and whether it is upcoming."""
    data = board.model_dump(mode="json", exclude_none=True)
    data["panels"] = {panel.value: board.panel_status(panel).value for panel in Panel}
    data["upcoming"] = board.is_upcoming(now_toronto())
    data["url"] = url_for("public.board", board_id=board.id, _external=False)
    return data


def event_json(event: ChangeEvent) -> dict[str, Any]:
    return {
        "id": event.id, "kind": event.kind, "panel": event.panel, "key": event.key,
        "before": event.before, "after": event.after, "urgent": event.urgent,
        "recorded_at": event.recorded_at.isoformat(),
    }


def _json(data: Any) -> str:
    return json.dumps(data, ensure_ascii=False, separators=(",", ":"))


def _modified(mtime: float) -> datetime:
    return datetime.fromtimestamp(int(mtime), UTC)
