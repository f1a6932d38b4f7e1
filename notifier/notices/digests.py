"""Who gets what: from change events to the net changes one contact should hear about.

A contact hears about the boards and panels their family follows, in one digest covering every change since their
last message. Changes undone before the digest went out cancel out ("closed" then "open" again says nothing);
events published with "notify parents" off and board-wide status events (the per-panel events say what a parent
experiences) are never sent; "now in effect" goes only to parents who asked for it.
"""

from __future__ import annotations

from collections.abc import Iterable
from dataclasses import dataclass
from datetime import datetime
from typing import Any, NamedTuple

from notifier.status.boards import Board, Panel, Status
from notifier.status.changes import Change, Kind
from notifier.status.history import ChangeEvent

PANELS = tuple(p.value for p in Panel)
Follows = dict[str, frozenset[str]]  # board id -> the panels followed there


@dataclass(frozen=True)
class Event:
    """A change event as the digest code needs it (from a `ChangeEvent` row, or from a `Change` for previews)."""

    id: int
    board_id: str
    kind: str
    panel: str | None = None
    key: str | None = None
    before: Any = None
    after: Any = None
    notify: bool = True
    effective_at: datetime | None = None
    recorded_at: datetime | None = None
    scheduled: bool = False

    @classmethod
    def from_row(cls, row: ChangeEvent) -> Event:
        return cls(row.id, row.board_id, row.kind, row.panel, row.key, row.before, row.after, row.notify,
                   row.effective_at, row.recorded_at, bool(row.scheduled))

    @classmethod
    def from_change(cls, number: int, change: Change, board: Board | None = None) -> Event:
        return cls(number, change.board_id, change.kind.value, change.panel.value if change.panel else None,
                   change.key, change.before, change.after, True, board.effective if board else None, None,
                   change.scheduled)

    def panels(self) -> tuple[str, ...]:
        """The panels this event concerns: its own, a withdrawal's or a period's, or both."""
        if self.panel:
            return (self.panel,)
        if self.kind.startswith(("withdrawal_", "period_")):
            return tuple((self.after or self.before or {}).get("panels", PANELS))
        return PANELS

    @property
    def family(self) -> tuple[str, str, str | None, str | None]:
        """What this event is a change *of*: two events of one family net out against each other."""
        kind = self.kind.partition("_")[0] if self.kind.startswith(("withdrawal_", "period_")) else self.kind
        return (self.board_id, kind, self.panel, self.key)


@dataclass(frozen=True)
class NetChange:
    """The net change of one family of events: `before` from the first, `after` from the last."""

    board_id: str
    kind: str
    panel: str | None
    key: str | None
    before: Any
    after: Any
    events: tuple[int, ...]
    scheduled: bool = False

    @property
    def urgent(self) -> bool:
        """A panel closing now, or a closure announced ahead, or either called off; never what happened by itself,
        as announced."""
        if self.scheduled:
            return False
        return _closed(self.kind, self.after) or self.ends_closure

    @property
    def ends_closure(self) -> bool:
        """A closure parents heard of is over or called off: whoever heard it may be changing their plans now, so
        this goes before every other digest (a correction overtakes the closure it corrects)."""
        return not self.scheduled and _closed(self.kind, self.before) and not _closed(self.kind, self.after)


def _closed(kind: str, state: Any) -> bool:
    """Whether `state` (a panel's status, or an announced period) of a change of `kind` means schools closed."""
    if kind == Kind.PANEL_STATUS.value:
        return bool(state == Status.CLOSED.value)
    if kind in (Kind.PERIOD_ADDED.value, Kind.PERIOD_CHANGED.value, Kind.PERIOD_REMOVED.value):
        return (state or {}).get("status") == Status.CLOSED.value
    return False


class Selection(NamedTuple):
    """What one family's digest says: its events, whether it is urgent, whether it ends a closure."""

    events: list[Event]
    urgent: bool = False
    ends_closure: bool = False


def relevant(event: Event, follows: Follows, notify_on_effect: bool) -> bool:
    """True when this event may appear in the digest of a family following `follows`."""
    if not event.notify or event.kind == Kind.STATUS.value:
        return False
    if (event.scheduled or event.kind == Kind.TOOK_EFFECT.value) and not notify_on_effect:
        return False  # it happened as announced: only those who asked hear "now in effect"
    followed = follows.get(event.board_id, frozenset())
    return any(panel in followed for panel in event.panels())


def net(events: Iterable[Event]) -> list[NetChange]:
    """Fold events (oldest first) into net changes, dropping those that ended where they began."""
    groups: dict[tuple[Any, ...], list[Event]] = {}
    for event in sorted(events, key=lambda e: e.id):
        groups.setdefault(event.family, []).append(event)
    changes = []
    for family, group in groups.items():
        before, after = group[0].before, group[-1].after
        if before == after and family[1] != Kind.TOOK_EFFECT.value:
            continue
        kind = family[1]
        if kind in ("withdrawal", "period"):
            kind = f"{kind}_{'added' if before is None else 'removed' if after is None else 'changed'}"
        changes.append(NetChange(family[0], kind, family[2], family[3], before, after, tuple(e.id for e in group),
                                 all(e.scheduled for e in group)))
    return changes


def select_for(events: Iterable[Event], follows: Follows, notify_on_effect: bool) -> Selection:
    """The events worth a digest for one family; no events when nothing nets out."""
    chosen = [e for e in events if relevant(e, follows, notify_on_effect)]
    changes = net(chosen)
    if not changes:
        return Selection([])
    kept = {i for c in changes for i in c.events}
    return Selection([e for e in chosen if e.id in kept], any(c.urgent for c in changes),
                     any(c.ends_closure for c in changes))


def follows_of(rows: Iterable[tuple[str, str]]) -> Follows:
    """Group (board_id, panel) pairs into a `Follows` mapping."""
    grouped: dict[str, set[str]] = {}
    for board_id, panel in rows:
        grouped.setdefault(board_id, set()).add(panel)
    return {board_id: frozenset(panels) for board_id, panels in grouped.items()}
