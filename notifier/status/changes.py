"""What changed between two versions of a board, in terms a parent would notice.

`diff(old, new)` is a pure function of two `Board`s: comments, whitespace and key order never reach it, and
fields parents don't see (`updated_at`, `website`, names) are ignored. Each `Change` is typed, so a digest can say
"secondary schools now closed" or "buses withdrawn" instead of "the file changed".
"""

from __future__ import annotations

from dataclasses import dataclass
from datetime import datetime
from enum import StrEnum
from typing import Any

from notifier.status.boards import Board, Panel, Status


class Kind(StrEnum):
    """The kinds of change a parent can be told about."""

    STATUS = "status"  # the board's overall status
    PANEL_STATUS = "panel_status"  # what one panel's schools do now (board-wide or panel-specific change)
    WITHDRAWAL_ADDED = "withdrawal_added"
    WITHDRAWAL_REMOVED = "withdrawal_removed"
    WITHDRAWAL_CHANGED = "withdrawal_changed"
    EFFECTIVE = "effective"  # the time the status takes effect moved
    MESSAGE = "message"  # the public message changed
    TOOK_EFFECT = "took_effect"  # a status announced ahead is now current (recorded by the clock, not by diff)


@dataclass(frozen=True)
class Change:
    """One noticeable change of one board; `panel` is None when it concerns the whole board."""

    board_id: str
    kind: Kind
    before: Any = None
    after: Any = None
    panel: Panel | None = None
    key: str | None = None

    @property
    def urgent(self) -> bool:
        """Closures go out at once to everyone concerned, whatever their frequency or quiet hours."""
        return self.kind in (Kind.STATUS, Kind.PANEL_STATUS) and self.after == Status.CLOSED.value

    def panels(self) -> tuple[Panel, ...]:
        """The panels this change concerns: its own panel, a withdrawal's panels, or both panels."""
        if self.panel is not None:
            return (self.panel,)
        if self.kind.startswith("withdrawal_"):
            data = self.after or self.before or {}
            return tuple(Panel(p) for p in data.get("panels", [p.value for p in Panel]))
        return tuple(Panel)


def diff(old: Board | None, new: Board) -> list[Change]:
    """The changes that turn `old` into `new`; a board seen for the first time (`old` None) yields none."""
    if old is None:
        return []
    changes: list[Change] = []
    if old.status != new.status:
        changes.append(Change(new.id, Kind.STATUS, old.status.value, new.status.value))
    for panel in Panel:
        before, after = old.panel_status(panel), new.panel_status(panel)
        if before != after:
            changes.append(Change(new.id, Kind.PANEL_STATUS, before.value, after.value, panel=panel))
    changes += _withdrawal_changes(old, new)
    if old.effective != new.effective:
        changes.append(Change(new.id, Kind.EFFECTIVE, _iso(old.effective), _iso(new.effective)))
    if _dump(old.message) != _dump(new.message):
        changes.append(Change(new.id, Kind.MESSAGE, _dump(old.message), _dump(new.message)))
    return changes


def _withdrawal_changes(old: Board, new: Board) -> list[Change]:
    before = {w.key: w for w in old.withdrawals}
    after = {w.key: w for w in new.withdrawals}
    changes = []
    for key, withdrawal in after.items():
        if key not in before:
            changes.append(Change(new.id, Kind.WITHDRAWAL_ADDED, None, _dump(withdrawal), key=key))
        elif before[key] != withdrawal:
            changes.append(
                Change(new.id, Kind.WITHDRAWAL_CHANGED, _dump(before[key]), _dump(withdrawal), key=key)
            )
    for key, withdrawal in before.items():
        if key not in after:
            changes.append(Change(new.id, Kind.WITHDRAWAL_REMOVED, _dump(withdrawal), None, key=key))
    return changes


def _dump(model: Any) -> Any:
    return None if model is None else model.model_dump(mode="json", exclude_none=True)


def _iso(moment: datetime | None) -> str | None:
    return None if moment is None else moment.isoformat()
