"""What a webhook says: the JSON document an organisation's system reads, or one chat line (Slack, Teams).

The JSON carries the board as it stands after the change (statuses, message, withdrawn services, since when, a
link) and the changes themselves; the chat line says the change in a parent's words, in the endpoint's language,
with the same sentences as the digests (`templates/webhook/slack.txt`).
"""

from __future__ import annotations

import json
import re
from datetime import UTC, datetime
from typing import Any

from notifier.config import Settings
from notifier.links import in_language
from notifier.notices import templates
from notifier.notices.digests import Event
from notifier.notices.render import board_digests
from notifier.status.boards import Board, Panel
from notifier.subscribers.webhooks import Format

TYPE = "board.status_changed"
SPACES = re.compile(r"[ \t\r\n]+")  # not str.split(): French keeps its no-break spaces


def body(endpoint_format: str, language: str, board: Board, events: list[Event], settings: Settings,
         at: datetime) -> str:
    """The request body for one endpoint: JSON text, compact and with keys in a stable order."""
    if endpoint_format == Format.SLACK.value:
        document: dict[str, Any] = {"text": chat_line(board, events, language, settings)}
    else:
        document = {"type": TYPE, "timestamp": _iso(at), "data": data(board, events, language, settings)}
    return json.dumps(document, ensure_ascii=False, separators=(",", ":"))


def data(board: Board, events: list[Event], language: str, settings: Settings) -> dict[str, Any]:
    """The board after the change, and the change events, as plain JSON values."""
    url = f"{settings.base_url}/boards/{board.id}"
    return {
        "board_id": board.id,
        "board_name": board.display_name(language),
        "board_names": {"en": board.name, "fr": board.name_fr or board.name},
        "status": board.status.value,
        "panels": {panel.value: board.panel_status(panel).value for panel in Panel},
        "message": board.message.model_dump(mode="json") if board.message else None,
        "withdrawals": [w.model_dump(mode="json") for w in board.withdrawals],
        "effective_from": _iso(board.effective) if board.effective else None,
        "url": in_language(url, language),
        "changes": [{"event_id": e.id, "kind": e.kind, "panel": e.panel, "before": e.before, "after": e.after}
                    for e in events],
    }


def chat_line(board: Board, events: list[Event], language: str, settings: Settings) -> str:
    """The change in a sentence or two, in `language`, with a link to the board's page."""
    told = [e for e in events if e.kind != "status"]  # the board-wide summary: the per-panel events say it
    items = board_digests(told, {board.id: board}, settings)
    if not items:  # nothing a parent would notice: still say where to look
        url = in_language(f"{settings.base_url}/boards/{board.id}", language)
        name = templates.gettext(language, "%(board)s:", board=board.display_name(language))
        return f"{name} {templates.gettext(language, 'Details:')} {url}"
    return SPACES.sub(" ", templates.render("webhook/slack.txt", language, items=items)).strip()


def _iso(moment: datetime) -> str:
    """UTC with a Z, as docs/webhooks.md promises (a board's times are written with Toronto's offset)."""
    return moment.astimezone(UTC).isoformat().replace("+00:00", "Z")
