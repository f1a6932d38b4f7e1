"""Saving one board's edit as a new version of the published status document: against the version edited, round-trip.

Only the edited board's changed fields are touched; comments, order, quoting and layout of everything else stay
as they were, so the text exported with `boards export` still reads like the hand-written file. If the board
changed since the form was shown (another staff member, an import, or in development a hand edit of the file),
nothing is stored and the caller is told what changed.
"""

from __future__ import annotations

import io
import os
from collections.abc import Callable
from dataclasses import dataclass
from datetime import datetime
from typing import Any

from ruamel.yaml import YAML
from ruamel.yaml.comments import CommentedMap, CommentedSeq
from sqlalchemy.orm import Session

from notifier.errors import NotifierError
from notifier.formatting import TORONTO
from notifier.status import document, published
from notifier.status.boards import Board, Panel, StatusFile
from notifier.status.changes import Change, diff

FIELD_ORDER = list(Board.model_fields)
EDITED_FIELDS = ("status", "panels", "effective", "message", "announcement", "withdrawals", "upcoming", "updated_at")


class EditConflict(NotifierError):
    """The board changed after the form was shown; `current` is the board now, `changes` what differs."""

    def __init__(self, current: Board, changes: list[Change]) -> None:
        self.current = current
        self.changes = changes
        super().__init__(f"board {current.id} changed since the form was shown ({len(changes)} change(s))")


@dataclass(frozen=True)
class Saved:
    """A saved edit: the board before and after, what changed, and the document version stored."""

    old: Board
    new: Board
    changes: list[Change]
    status: StatusFile
    version: str
    number: int


class _Timestamp(str):
    """A date-time written unquoted, like the hand-written ones (`2026-11-23T00:01:00-05:00`)."""


def _yaml() -> YAML:
    yaml = document.round_trip_yaml()
    yaml.representer.add_representer(
        _Timestamp, lambda r, d: r.represent_scalar("tag:yaml.org,2002:timestamp", str(d)))
    return yaml


def stamp(board: Board, now: datetime) -> Board:
    """The board with `updated_at` set to `now` (Toronto time, whole seconds): the "as of" parents see."""
    data = board.model_dump(mode="json", exclude_none=True)
    data["updated_at"] = now.astimezone(TORONTO).replace(microsecond=0).isoformat()
    return Board.model_validate(data)


def save_board(session: Session, current: published.StatusDocument, edited: Board, base: Board, version: str,
               now: datetime, author: str, mirror: str | os.PathLike[str] | None = None) -> Saved:
    """Store `edited` over its board as a new version, unless the board differs from `base`, the one the form showed.

    `current` is the newest published version (read by the caller in this transaction, under the cycle lock) and
    `version` the one the form was rendered from: when it is still current nothing can have changed; when the
    document moved on because of other boards, the edit still applies to the newest text (only this board is
    written). `mirror` is development's boards.yaml, written too (follow mode). The caller commits.
    Raises `EditConflict` or `BoardFileError` (the newest version no longer validates); nothing is stored.
    """
    current_file = document.parse(current.text, current.label)
    board = current_file.by_id().get(edited.id)
    if board is None:
        raise EditConflict(base, [])
    if current.version != version and _dump(board) != _dump(base):
        raise EditConflict(board, diff(base, board, now))
    new = stamp(edited, now)
    text = apply(current.text, board, new)
    changes = diff(board, new, now)
    note = f"{edited.id}: " + (", ".join(sorted({change.kind.value for change in changes})) or "no change")
    stored = published.publish(session, text, author, note, now, current.id, mirror=mirror)
    return Saved(board, new, changes, document.parse(text, stored.label, now), stored.version, stored.id)


def apply(text: str, current: Board, new: Board) -> str:
    """The file `text` with board `new.id`'s changed fields replaced; every other byte kept where possible."""
    yaml = _yaml()
    document = yaml.load(text)
    node = next(b for b in document["boards"] if isinstance(b, CommentedMap) and b.get("id") == new.id)
    before, after = _dump(current), _dump(new)
    for name in EDITED_FIELDS:
        if before.get(name) == after.get(name) and name in node or (name not in after and name not in node):
            continue
        if name not in after:
            node.pop(name, None)
        elif name == "withdrawals":
            node[name] = _reuse(node.get(name), before.get(name, []), after[name], _withdrawal)
        elif name == "upcoming":
            node[name] = _reuse(node.get(name), before.get(name, []), after[name], _period)
        elif name in node:
            node[name] = _node(name, after[name])
        else:
            node.insert(_position(node, name), name, _node(name, after[name]))
    out = io.StringIO()
    yaml.dump(document, out)
    return out.getvalue()


def _dump(board: Board) -> dict[str, Any]:
    data = board.model_dump(mode="json", exclude_none=True)
    for name in ("panels", "upcoming"):  # none is written as no key at all
        if not data.get(name):
            data.pop(name, None)
    return data


def _position(node: CommentedMap, name: str) -> int:
    """Where a new key goes: after the last key that comes before it in the model's field order."""
    rank = FIELD_ORDER.index(name)
    keys = list(node.keys())
    position = 0
    for index, key in enumerate(keys):
        if key in FIELD_ORDER and FIELD_ORDER.index(key) < rank:
            position = index + 1
    return position


def _node(name: str, value: Any) -> Any:
    if name in ("effective", "updated_at"):
        return _Timestamp(value)
    if name in ("panels", "announcement"):
        return _flow(value)
    if name == "message":
        return CommentedMap(value)
    return value


def _flow(value: dict[str, Any]) -> CommentedMap:
    mapping = CommentedMap(value)
    mapping.fa.set_flow_style()
    return mapping


def _reuse(old_node: Any, before: list[dict[str, Any]], after: list[dict[str, Any]],
           make: Callable[[dict[str, Any]], Any]) -> CommentedSeq:
    """The new list, reusing the file's own item for every entry that did not change (keeps its comments)."""
    unused = list(range(len(before)))
    items = []
    for entry in after:
        match = next((i for i in unused if before[i] == entry), None)
        if match is not None and isinstance(old_node, CommentedSeq) and match < len(old_node):
            unused.remove(match)
            items.append(old_node[match])
        else:
            items.append(make(entry))
    if isinstance(old_node, CommentedSeq) and len(items) == len(old_node) \
            and all(a is b for a, b in zip(items, old_node, strict=True)):
        return old_node
    sequence = CommentedSeq(items)
    if not items:
        sequence.fa.set_flow_style()
    return sequence


def _withdrawal(withdrawal: dict[str, Any]) -> CommentedMap:
    item = CommentedMap(category=withdrawal["category"])
    if sorted(withdrawal.get("panels", [])) != sorted(p.value for p in Panel):
        panels = CommentedSeq(withdrawal["panels"])
        panels.fa.set_flow_style()
        item["panels"] = panels
    item["description"] = _flow(withdrawal["description"])
    if withdrawal.get("advice"):
        item["advice"] = _flow(withdrawal["advice"])
    return item


def _period(period: dict[str, Any]) -> CommentedMap:
    """A period as a person would write it: one line when it is only times, a status and panels."""
    item = CommentedMap({"from": _Timestamp(period["from"])})
    if period.get("until"):
        item["until"] = _Timestamp(period["until"])
    item["status"] = period["status"]
    if sorted(period.get("panels", [])) != sorted(p.value for p in Panel):
        panels = CommentedSeq(period["panels"])
        panels.fa.set_flow_style()
        item["panels"] = panels
    if period.get("message"):
        item["message"] = _flow(period["message"])
    if period.get("withdrawals") is not None:
        item["withdrawals"] = CommentedSeq([_withdrawal(w) for w in period["withdrawals"]])
    else:
        item.fa.set_flow_style()
    return item
