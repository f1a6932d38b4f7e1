"""What changed between two versions of a board, in terms a parent would notice.

`diff(old, new, now)` is a pure function of two `Board`s and a moment: comments, whitespace and key order never reach
it, and fields parents don't see (`updated_at`, `website`, names, the `effective` bookkeeping) are ignored. It
compares what is in force at `now` in each version (statuses, withdrawals, message) and the periods still ahead
(announced, changed, called off). Each `Change` is typed, so a digest can say "secondary schools now closed" or
"buses withdrawn" instead of "the file changed".
"""

from __future__ import annotations

from dataclasses import dataclass, replace
from datetime import UTC, datetime
from enum import StrEnum
from typing import Any

from notifier.status.boards import Board, Panel, Period, Status


class Kind(StrEnum):
    """The kinds of change a parent can be told about."""

    STATUS = "status"  # the board's overall status
    PANEL_STATUS = "panel_status"  # what one panel's schools do now (board-wide or panel-specific change)
    WITHDRAWAL_ADDED = "withdrawal_added"
    WITHDRAWAL_REMOVED = "withdrawal_removed"
    WITHDRAWAL_CHANGED = "withdrawal_changed"
    MESSAGE = "message"  # the public message changed
    PERIOD_ADDED = "period_added"  # a change announced ahead (a strike day, a work-to-rule from Monday)
    PERIOD_CHANGED = "period_changed"  # an announced period moved its end, status, message or withdrawals
    PERIOD_REMOVED = "period_removed"  # an announced period was called off before it started
    # Kinds recorded by earlier versions, kept so their history still reads: the time a status announced ahead
    # would take effect moved, and a status announced ahead became current.
    EFFECTIVE = "effective"
    TOOK_EFFECT = "took_effect"


PERIOD_KINDS = (Kind.PERIOD_ADDED, Kind.PERIOD_CHANGED, Kind.PERIOD_REMOVED)


@dataclass(frozen=True)
class Change:
    """One noticeable change of one board; `panel` is None when it concerns the whole board.

    `scheduled` changes happened by themselves, as announced (a period started or ended): parents were told when it
    was announced, so only those who asked to hear "now in effect" are told again.
    """

    board_id: str
    kind: Kind
    before: Any = None
    after: Any = None
    panel: Panel | None = None
    key: str | None = None
    scheduled: bool = False

    @property
    def urgent(self) -> bool:
        """Closures, and their end, go out at once to everyone concerned, whatever their frequency or quiet hours.

        That is a panel closing now or a closure announced ahead, or either of them over or called off (parents who
        heard of it are making plans around it); never what happens as announced.
        """
        if self.scheduled:
            return False
        return self._closed(self.after) or self._closed(self.before)

    def _closed(self, state: Any) -> bool:
        if self.kind in (Kind.STATUS, Kind.PANEL_STATUS):
            return bool(state == Status.CLOSED.value)
        if self.kind in PERIOD_KINDS:
            return (state or {}).get("status") == Status.CLOSED.value
        return False

    def panels(self) -> tuple[Panel, ...]:
        """The panels this change concerns: its own panel, a withdrawal's or a period's panels, or both panels."""
        if self.panel is not None:
            return (self.panel,)
        if self.kind.startswith(("withdrawal_", "period_")):
            data = self.after or self.before or {}
            return tuple(Panel(p) for p in data.get("panels", [p.value for p in Panel]))
        return tuple(Panel)


def diff(old: Board | None, new: Board, now: datetime | None = None) -> list[Change]:
    """The changes that turn `old` into `new` as seen at `now`; a board seen for the first time (`old` None) yields
    none."""
    if old is None:
        return []
    now = now or datetime.now(UTC)
    return diff_state(old.at(now), new.at(now)) + diff_schedule(old, new, now)


def diff_state(old: Board, new: Board) -> list[Change]:
    """The changes between two states in force: the board's and each panel's status, withdrawals, message."""
    changes: list[Change] = []
    if old.status != new.status:
        changes.append(Change(new.id, Kind.STATUS, old.status.value, new.status.value))
    for panel in Panel:
        before, after = old.panel_status(panel), new.panel_status(panel)
        if before != after:
            changes.append(Change(new.id, Kind.PANEL_STATUS, before.value, after.value, panel=panel))
    changes += _withdrawal_changes(old, new)
    if _dump(old.message) != _dump(new.message):
        changes.append(Change(new.id, Kind.MESSAGE, _dump(old.message), _dump(new.message)))
    return changes


def diff_schedule(old: Board, new: Board, now: datetime) -> list[Change]:
    """Periods still ahead at `now` that were announced, changed or called off (one that started is in force, and
    the state diff says what it changed)."""
    before = {period.key: period for period in old.ahead(now)}
    after = {period.key: period for period in new.ahead(now)}
    changes = []
    for key, period in after.items():
        if key not in before:
            changes.append(Change(new.id, Kind.PERIOD_ADDED, None, _dump(period), key=key))
        elif before[key] != period:
            changes.append(Change(new.id, Kind.PERIOD_CHANGED, _dump(before[key]), _dump(period), key=key))
    for key, period in before.items():
        if key not in after:
            changes.append(Change(new.id, Kind.PERIOD_REMOVED, _dump(period), None, key=key))
    return changes


def as_scheduled(changes: list[Change]) -> list[Change]:
    """The same changes, marked as having happened by themselves, as announced."""
    return [replace(change, scheduled=True) for change in changes]


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


def period_of(data: dict[str, Any]) -> Period:
    """A period back from a change's `before` or `after`."""
    return Period.model_validate(data)
