"""Announced periods from the console: list a board's periods still ahead, call one off, or move/change one.

A deal at 11 p.m. calls off the strike announced for Thursday: staff pick the period on the board's page instead of
editing the file by hand. Each function takes the board as published now and returns the board to publish, so the
caller hands it to `publishing.publish` like any other edit (audit, publish report, delivery unchanged). A period
is named by its `key` (when it starts, for which panels) and, on the confirmation page, by a fingerprint of all its
fields: a period that is gone, has started, or changed since the page was shown is refused (`PeriodError`), never
guessed at.
"""

from __future__ import annotations

import hashlib
import json
from collections.abc import Mapping
from datetime import datetime
from typing import Any

from pydantic import ValidationError

from notifier.errors import NotifierError
from notifier.staff.form import parse_time
from notifier.status.boards import Board, Panel, Period, Status

TEXT_LIMIT = 1000  # as the edit form's message


class PeriodError(NotifierError):
    """The period named cannot be used: `code` is "missing" (gone, started, or never there) or "stale" (changed)."""

    def __init__(self, code: str) -> None:
        self.code = code
        super().__init__(code)


def announced(board: Board, now: datetime) -> tuple[Period, ...]:
    """The board's periods still ahead at `now`, soonest first (those staff may still call off or change)."""
    return board.ahead(now)


def fingerprint(period: Period) -> str:
    """A short digest of every field of `period`: the confirmation page names exactly the period it showed."""
    data = json.dumps(period.model_dump(mode="json", exclude_none=True), sort_keys=True)
    return hashlib.sha256(data.encode()).hexdigest()[:16]


def find(board: Board, key: str, now: datetime, seen: str | None = None) -> Period:
    """The period ahead named `key` (and, with `seen`, unchanged since its fingerprint was shown)."""
    period = next((p for p in announced(board, now) if p.key == key), None)
    if period is None:
        raise PeriodError("missing")
    if seen is not None and seen != fingerprint(period):
        raise PeriodError("stale")
    return period


def call_off(board: Board, key: str, now: datetime, seen: str | None = None) -> Board:
    """The board without the period `key`: what is in force now and every other period stay as they are."""
    gone = find(board, key, now, seen)
    return board.model_copy(update={"upcoming": tuple(p for p in board.upcoming if p is not gone)})


def change(board: Board, key: str, fields: Mapping[str, Any], now: datetime,
           seen: str | None = None) -> tuple[Board | None, dict[str, str]]:
    """The board with period `key` replaced by the posted fields (from, until, status, message_en/fr as text,
    panels as a list, or a form's `getlist`), or None and {field: error code} (the edit form's codes) when they
    would not make a valid period."""
    old = find(board, key, now, seen)
    errors: dict[str, str] = {}
    start = parse_time(str(fields.get("from", "")).strip(), errors, "from")
    if start is None and "from" not in errors:
        errors["from"] = "datetime"
    end = parse_time(str(fields.get("until", "")).strip(), errors, "until")
    status = str(fields.get("status", ""))
    if status not in {s.value for s in Status}:
        errors["status"] = "choice"
    panels = list(fields.getlist("panels")) if hasattr(fields, "getlist") else list(fields.get("panels", []))
    if not panels or any(p not in {x.value for x in Panel} for p in panels):
        errors["panels"] = "panels"
    message = {k: str(fields.get(f"message_{k}", "")).strip() for k in ("en", "fr")}
    for k, text in message.items():
        if len(text) > TEXT_LIMIT:
            errors[f"message_{k}"] = "long"
    if start is not None and "from" not in errors and start <= now:
        errors["from"] = "past"
    if start is not None and end is not None and end <= start:
        errors["until"] = "order"
    if errors:
        return None, errors
    data: dict[str, Any] = {"from": start, "until": end, "status": status, "panels": sorted(set(panels))}
    if any(message.values()):
        data["message"] = {k: v for k, v in message.items() if v}
    if old.withdrawals is not None:
        data["withdrawals"] = [w.model_dump(mode="json", exclude_none=True) for w in old.withdrawals]
    try:
        new = Period.model_validate(data)
    except ValidationError as error:
        where = error.errors()[0]["loc"]
        return None, {"message_en" if where and where[0] == "message" else "from": "invalid"}
    others = [p for p in board.upcoming if p is not old]
    if any(new.overlaps(other) for other in others):
        return None, {"from": "overlap"}
    upcoming = tuple(sorted((*others, new), key=lambda p: p.start))
    try:
        return Board.model_validate({**board.model_dump(mode="json", exclude_none=True),
                                     "upcoming": [p.model_dump(mode="json", exclude_none=True) for p in upcoming]}), {}
    except ValidationError:
        return None, {"from": "invalid"}
