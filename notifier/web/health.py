"""/healthz: is the service serving, is the database reachable, and is boards.yaml valid right now?"""

from __future__ import annotations

from flask import Blueprint, jsonify
from sqlalchemy import text
from werkzeug.wrappers import Response

from notifier.history import last_cycle
from notifier.web.services import services

bp = Blueprint("health", __name__)


@bp.get("/healthz")
def healthz() -> tuple[Response, int]:
    """200 while pages can be served (even from the last good file, marked "degraded"); 503 otherwise."""
    store = services().boards
    store.refresh()
    body: dict = {"boards_file": {"valid": not store.problems, "problems": store.problems}}
    good = store.last_good
    if good is not None:
        body["boards_file"]["version"] = good.version
        body["boards_file"]["boards"] = len(good.status.boards)
        if store.problems:
            body["boards_file"]["serving"] = "last good version"
    try:
        with services().sessions() as session:
            session.execute(text("SELECT 1"))
            cycle = last_cycle(session)
        body["database"] = "ok"
        if cycle:
            body["last_cycle"] = {"started_at": cycle.started_at.isoformat(), "outcome": cycle.outcome}
    except Exception as error:  # noqa: BLE001 - any database failure means "not healthy"
        body["database"] = f"unavailable: {type(error).__name__}"
    serving = good is not None and body["database"] == "ok"
    body["status"] = ("ok" if store.healthy else "degraded") if serving else "failing"
    response = jsonify(body)
    response.headers["Cache-Control"] = "no-store"
    return response, 200 if serving else 503
