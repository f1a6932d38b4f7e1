"""The published status document: every version of boards.yaml's text, kept in the database every process shares.

A file on each container's own disk cannot be the truth: the web container saved a staff publish on its disk, the
clock never saw it, and its next cycle recorded the old file *back* and told parents; any deploy shipping the
repository's boards.yaml reverted every published status the same way. So the text (comments included) of each
published version is a row here, with who published it, when and why; every reader takes the newest row.

The repository's boards.yaml only *seeds* the first version, when the table is empty. After that a file reaches the
document only through `python -m notifier boards import` (or, in development, by following the checkout's file; see
`follow`). Writers hold the cycle lock (`hold_lock(session, "cycle")`), and a version names the one it was based
on (`parent_id`, unique): two edits based on the same version can never both be stored.
"""

from __future__ import annotations

import logging
import os
from collections.abc import Callable
from datetime import datetime
from pathlib import Path

from sqlalchemy import ForeignKey, Integer, String, Text, UniqueConstraint, select
from sqlalchemy.orm import Mapped, Session, mapped_column, sessionmaker

from notifier.db import Base, UtcDateTime, hold_lock, utcnow
from notifier.errors import BoardFileError, NotifierError
from notifier.masking import mask_email
from notifier.status import document
from notifier.status.document import Problem, Snapshot

log = logging.getLogger(__name__)

SEED_AUTHOR = "seed"
FILE_AUTHOR = "file"


class StatusDocument(Base):
    """One published version of the status document: its full text, who published it, when, and why."""

    __tablename__ = "status_documents"
    __table_args__ = (UniqueConstraint("parent_id", name="uq_status_documents_parent_id"),)

    id: Mapped[int] = mapped_column(Integer, primary_key=True, autoincrement=True)
    text: Mapped[str] = mapped_column(Text)
    author: Mapped[str] = mapped_column(String(254))
    note: Mapped[str] = mapped_column(Text, default="")
    created_at: Mapped[datetime] = mapped_column(UtcDateTime, default=utcnow)
    # The version this one was made from (None for the seed): unique, so a version is superseded only once.
    parent_id: Mapped[int | None] = mapped_column(ForeignKey("status_documents.id"), nullable=True)
    # The fingerprint of the file this version was read from or written to (seed, import, development's
    # follow mode); None for an edit that never touched a file.
    file_sha: Mapped[str | None] = mapped_column(String(64), nullable=True)

    @property
    def version(self) -> str:
        """The fingerprint of the text: the pages' ETag and the version an edit form was rendered from."""
        return document.version_of(self.text.encode("utf-8"))

    @property
    def label(self) -> str:
        """How problems in this version are located (`status document 12:LINE: message`)."""
        return f"status document {self.id}"


class Outdated(NotifierError):
    """The version a change was based on is no longer the newest: someone published in between."""

    def __init__(self, based_on: int | None, newest: StatusDocument | None) -> None:
        self.based_on, self.newest = based_on, newest
        found = (f"the newest is version {newest.id} (by {newest.author} at {newest.created_at:%Y-%m-%d %H:%M} UTC)"
                 if newest else "there is no version any more")
        super().__init__(
            f"the status document changed while this change was prepared: it was based on version {based_on}, "
            f"{found}; nothing was stored, start again from the newest version")


def newest(session: Session) -> StatusDocument | None:
    """The published version every process serves and the clock diffs (None before the seed)."""
    return session.scalars(select(StatusDocument).order_by(StatusDocument.id.desc()).limit(1)).first()


def newest_id(session: Session) -> int | None:
    """The newest version's number: what a process polls to learn that a new version was published."""
    return session.scalar(select(StatusDocument.id).order_by(StatusDocument.id.desc()).limit(1))


def history(session: Session, limit: int = 20) -> list[StatusDocument]:
    """The newest versions first."""
    return list(session.scalars(select(StatusDocument).order_by(StatusDocument.id.desc()).limit(limit)))


def snapshot(version: StatusDocument, now: datetime | None = None) -> Snapshot:
    """The validated boards of a stored version; raises `BoardFileError` (`status document N:LINE: …`)."""
    status = document.parse(version.text, version.label, now)
    return Snapshot(status, version.version, version.created_at.timestamp(), version.id)


def publish(session: Session, text: str, author: str, note: str, now: datetime, based_on: int | None,
            mirror: str | os.PathLike[str] | None = None, path: str = "boards.yaml",
            file_sha: str | None = None) -> StatusDocument:
    """Store `text` as the newest version, if it validates and `based_on` is still the newest version.

    Raises `BoardFileError` (problems located at `path`:LINE) or `Outdated`; either way nothing is stored.
    With `mirror` (development's follow mode) the text is also written to that file, under the same lock and
    before the commit, so the file and the document never disagree for a follower. The caller commits.
    """
    document.parse(text, path, now)
    hold_lock(session, "cycle")
    current = newest(session)
    if (current.id if current else None) != based_on:
        raise Outdated(based_on, current)
    if mirror is not None:
        document.write(mirror, text)
        file_sha = document.version_of(text.encode("utf-8"))
    version = StatusDocument(text=text, author=author, note=note, created_at=now, parent_id=based_on,
                             file_sha=file_sha)
    session.add(version)
    session.flush()
    log.info("status document version %s published by %s: %s", version.id,
             mask_email(author) if "@" in author else author, note or "(no note)")
    return version


def seed(session: Session, path: str | os.PathLike[str], now: datetime) -> StatusDocument:
    """When nothing is published yet, publish the file at `path` as the first version; return the newest.

    Raises `BoardFileError` when there is nothing published and the file is missing or invalid.
    """
    current = newest(session)
    if current is not None:
        return current
    hold_lock(session, "cycle")
    current = newest(session)  # another process may have seeded while this one waited for the lock
    if current is not None:
        return current
    data = _read(path)
    return publish(session, data.decode("utf-8", errors="replace"), SEED_AUTHOR, f"seeded from {path}", now, None,
                   path=str(path), file_sha=document.version_of(data))


def follow(session: Session, path: str | os.PathLike[str], now: datetime) -> StatusDocument | None:
    """Development only: publish the checkout's file if it changed since it was last read or written here.

    The file's fingerprint is compared with the newest version that came from (or went to) a file, not with the
    newest version: a staff publish is written back to the file, so an unchanged file never reverts it. Returns
    the new version, or None when the file did not change. Raises `BoardFileError` for an invalid hand edit.
    """
    if newest(session) is None:
        return seed(session, path, now)
    data = _read(path)
    sha = document.version_of(data)
    if _last_file_sha(session) == sha:
        return None
    hold_lock(session, "cycle")
    if _last_file_sha(session) == sha:
        return None
    current = newest(session)
    text = data.decode("utf-8", errors="replace")
    if current is not None and current.text == text:
        current.file_sha = sha
        return None
    return publish(session, text, FILE_AUTHOR, f"hand edit of {path}", now, current.id if current else None,
                   path=str(path), file_sha=sha)


def newer_than_now(sessions: sessionmaker[Session], path: str | os.PathLike[str],
                   follow_file: bool = False) -> Callable[[], bool]:
    """A check for "a newer status waits to be recorded": a version published after this call (`boards import`),
    or, when following the file in development, a hand edit saved after it. For long work that should make way."""
    with sessions() as session:
        known = newest_id(session)
    sha = _file_sha(path) if follow_file else None

    def newer() -> bool:
        with sessions() as session:
            if newest_id(session) != known:
                return True
        return follow_file and _file_sha(path) != sha

    return newer


def _file_sha(path: str | os.PathLike[str]) -> str | None:
    try:
        return document.version_of(_read(path))
    except BoardFileError:  # unreadable now: the cycle will say so
        return None


def _last_file_sha(session: Session) -> str | None:
    return session.scalar(select(StatusDocument.file_sha).where(StatusDocument.file_sha.is_not(None))
                          .order_by(StatusDocument.id.desc()).limit(1))


def current(session: Session, path: str | os.PathLike[str], now: datetime, follow_file: bool = False) \
        -> StatusDocument:
    """The newest version, seeding it from `path` first if nothing is published (and following the file in
    development). Raises `BoardFileError` when the file must be read and is invalid."""
    if follow_file:
        follow(session, path, now)
    version = seed(session, path, now)
    if version is None:  # seed returns the newest version or raises; never None once it returns
        raise BoardFileError([Problem(str(path), 0, "nothing is published and the file could not seed it")])
    return version


def _read(path: str | os.PathLike[str]) -> bytes:
    try:
        return Path(path).read_bytes()
    except OSError as error:
        raise BoardFileError([Problem(str(path), 0, f"cannot read the file: {error.strerror}")]) from None
