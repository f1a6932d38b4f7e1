"""/healthz: is the service serving, is the database reachable, and which status document version is served?

`boards_file.document` is the number of the published version served (the same in every process once each has
looked, within a second). For load balancers and operators: "ok" (all well), "degraded" (serving, but the newest
version, or in development a hand edit of boards.yaml, is invalid, so the last good state, or the state recorded in
the database, is shown, with the problems listed as file:line; or a
channel is paused because the provider refuses our account, listed under `paused_channels` with the reason and
since when), or "failing" (503: nothing can be served, or the database is unreachable).

The details (the server's paths, the file's problems, the pause reasons) are for operators: a request from this
machine that no proxy relayed, or one carrying `Authorization: Bearer <NOTIFIER_HEALTH_TOKEN>`. Anyone else gets
the state alone, `{"status": …}`, with the same status code.
"""

from __future__ import annotations

from typing import Any

from flask import Blueprint, jsonify
from sqlalchemy import text
from sqlalchemy.exc import SQLAlchemyError
from werkzeug.wrappers import Response

from notifier.delivery import health
from notifier.status.history import last_cycle
from notifier.status.store import DATABASE
from notifier.web.callers import bears, from_this_machine
from notifier.web.services import services

bp = Blueprint("health", __name__)


@bp.get("/healthz")
def healthz() -> tuple[Response, int]:
    """200 while pages can be served (even from the last good state, marked "degraded"); 503 otherwise."""
    store = services().boards
    store.refresh()
    boards_file: dict[str, Any] = {"path": str(store.path), "valid": not store.problems, "problems": store.problems}
    settings = services().settings
    body: dict[str, Any] = {"boards_file": boards_file, "channels": {
        "email": "smtp" if settings.email_configured else "local outbox",
        "sms": "twilio" if settings.sms_configured else "local outbox",
        "push": "on" if settings.push_configured else "off"}}
    good = store.last_good
    if good is not None:
        boards_file["version"] = good.version
        boards_file["document"] = good.number
        boards_file["boards"] = len(good.status.boards)
        boards_file["serving"] = _serving(store.source, bool(store.problems))
    try:
        with services().sessions() as session:
            session.execute(text("SELECT 1"))
            cycle = last_cycle(session)
            pauses = health.pauses(session)
        body["database"] = "ok"
        body["paused_channels"] = [{"channel": p.channel, "reason": p.reason, "code": p.code,
                                    "since": p.since.isoformat()} for p in pauses]
        if cycle:
            body["last_cycle"] = {"started_at": cycle.started_at.isoformat(), "outcome": cycle.outcome}
    except SQLAlchemyError as error:
        body["database"] = f"unavailable: {type(error).__name__}"
    serving = good is not None and body["database"] == "ok"
    healthy = store.healthy and not body.get("paused_channels")
    body["status"] = ("ok" if healthy else "degraded") if serving else "failing"
    operator = from_this_machine() or bears(services().settings.health_token)
    response = jsonify(body if operator else {"status": body["status"]})
    response.headers["Cache-Control"] = "no-store"
    return response, 200 if serving else 503


def _serving(source: str | None, invalid: bool) -> str:
    if source == DATABASE:
        return "last recorded state (database)"
    return "last good version" if invalid else "newest published version"
