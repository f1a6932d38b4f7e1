"""Board staff accounts: who may publish which board's status.

Several people per board can publish (the clerical staff who usually run a board's channels may themselves be on
job action), and a province-wide administrator may publish for any board. There are no passwords: staff sign in
with an emailed single-use link (`notifier.staff.signin`).
"""

from __future__ import annotations

from collections.abc import Iterable
from datetime import datetime

from email_validator import EmailNotValidError, validate_email
from sqlalchemy import delete, select
from sqlalchemy.orm import Session

from notifier.db import utcnow
from notifier.errors import NotifierError
from notifier.staff import sessions
from notifier.staff.models import SigninToken, StaffBoard, StaffMember


class StaffError(NotifierError):
    """A staff account cannot be created or changed as asked; the message says why (for the CLI and admin page)."""


def normalise_email(raw: str) -> str:
    """The address in the form it is stored and compared in (lower case); `StaffError` when it is not one."""
    try:
        return validate_email(raw.strip(), check_deliverability=False).normalized.lower()
    except EmailNotValidError as error:
        raise StaffError(f"{raw!r} is not an email address: {error}") from None


def find(session: Session, email: str) -> StaffMember | None:
    """The account for `email`, if there is one (any spelling of the address that normalises the same)."""
    try:
        address = normalise_email(email)
    except StaffError:
        return None
    return session.scalars(select(StaffMember).where(StaffMember.email == address)).first()


def add(session: Session, email: str, boards: Iterable[str], admin: bool, known_boards: Iterable[str],
        now: datetime | None = None) -> StaffMember:
    """Create the account, or give an existing one more boards (and admin rights when `admin`)."""
    boards = list(dict.fromkeys(boards))
    unknown = sorted(set(boards) - set(known_boards))
    if unknown:
        raise StaffError(f"unknown board id(s): {', '.join(unknown)} (see boards.yaml)")
    if not boards and not admin:
        raise StaffError("give at least one --board, or --admin")
    address = normalise_email(email)
    member = find(session, address)
    if member is None:
        member = StaffMember(email=address, is_admin=admin, created_at=now or utcnow())
        session.add(member)
        session.flush()
    member.is_admin = member.is_admin or admin
    have = boards_of(session, member)
    for board_id in boards:
        if board_id not in have:
            session.add(StaffBoard(staff_id=member.id, board_id=board_id))
    session.flush()
    return member


def remove(session: Session, email: str) -> bool:
    """Delete the account, its boards, its unused sign-in links and its sessions; False when there was none."""
    member = find(session, email)
    if member is None:
        return False
    sessions.end_all(session, member.id)
    session.execute(delete(SigninToken).where(SigninToken.staff_id == member.id))
    session.execute(delete(StaffBoard).where(StaffBoard.staff_id == member.id))
    session.delete(member)
    session.flush()
    return True


def boards_of(session: Session, member: StaffMember) -> set[str]:
    """The ids of the boards given to `member` (administrators may edit others too: see `may_edit`)."""
    return set(session.scalars(select(StaffBoard.board_id).where(StaffBoard.staff_id == member.id)))


def may_edit(session: Session, member: StaffMember, board_id: str) -> bool:
    """True when `member` may read the edit form of, and publish for, `board_id`."""
    return member.is_admin or board_id in boards_of(session, member)


def everyone(session: Session) -> list[tuple[StaffMember, list[str]]]:
    """Every account with its boards, by address (for `staff list` and the admin page)."""
    members = list(session.scalars(select(StaffMember).order_by(StaffMember.email)))
    return [(member, sorted(boards_of(session, member))) for member in members]
