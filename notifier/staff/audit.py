"""The staff audit trail: who changed which board, what changed, when, and from where.

Kept apart from the public history (`status.history.ChangeEvent`), which parents see without any names.
Account changes made by administrators are recorded here too.
"""

from __future__ import annotations

from datetime import datetime
from typing import Any

from sqlalchemy import select
from sqlalchemy.orm import Session

from notifier.staff.models import AuditEntry
from notifier.status.changes import Change


def change_record(change: Change) -> dict[str, Any]:
    """A `Change` as JSON, with the same fields the templates' `describe_change` reads."""
    return {"kind": change.kind.value, "panel": change.panel.value if change.panel else None, "key": change.key,
            "before": change.before, "after": change.after}


def summarise(changes: list[Change]) -> str:
    """A one-line, log-style summary (for operators reading the table directly; pages describe each change)."""
    if not changes:
        return "confirmed unchanged (updated_at only)"
    parts = []
    for change in changes:
        where = f"[{change.panel.value}]" if change.panel else ""
        if change.kind.startswith("withdrawal_"):
            parts.append(f"{change.kind.value} {change.key}")
        elif change.kind in ("status", "panel_status"):
            parts.append(f"{change.kind.value}{where} {change.before} -> {change.after}")
        else:
            parts.append(change.kind.value)
    return "; ".join(parts)


def record_edit(session: Session, staff_email: str, board_id: str, changes: list[Change], notify: bool, ip: str,
                version: str, now: datetime) -> AuditEntry:
    """Record a published edit of one board."""
    entry = AuditEntry(at=now, staff_email=staff_email, action="edit", board_id=board_id,
                       summary=summarise(changes), changes=[change_record(c) for c in changes], notify=notify,
                       ip=ip[:64], file_version=version)
    session.add(entry)
    session.flush()
    return entry


def record_account(session: Session, actor_email: str, action: str, subject_email: str, boards: list[str],
                   ip: str, now: datetime) -> AuditEntry:
    """Record an account added or removed (by an administrator on the page, or `cli` from the command line)."""
    entry = AuditEntry(at=now, staff_email=actor_email, action=action, board_id=None,
                       summary=f"{action} {subject_email} boards={','.join(boards) or '-'}", changes=[], ip=ip[:64])
    session.add(entry)
    session.flush()
    return entry


def for_board(session: Session, board_id: str, limit: int = 50) -> list[AuditEntry]:
    """The board's audit entries, newest first (shown on the staff history page)."""
    query = (select(AuditEntry).where(AuditEntry.board_id == board_id, AuditEntry.action.not_like("webhook_%"))
             .order_by(AuditEntry.id.desc()).limit(limit))
    return list(session.scalars(query))


def authors(session: Session, board_id: str, versions: list[str]) -> dict[str, str]:
    """Who published each of these document versions of the board from the console ({version: email}); versions
    stored otherwise (an import, the clock's own time-driven changes) are missing."""
    if not versions:
        return {}
    query = select(AuditEntry.file_version, AuditEntry.staff_email).where(
        AuditEntry.board_id == board_id, AuditEntry.action == "edit", AuditEntry.file_version.in_(versions))
    return {version: email for version, email in session.execute(query) if version is not None}
