"""Sending processes, registered in the database, so a claim names a process start rather than a PID.

Each process that sends registers once (host, pid, start time) and beats a heartbeat every few seconds; every
claim it makes carries its registration (`sender:<id>`). A registration is gone when it stopped cleanly, when its
process is dead on this host, when this very process has its PID (a restart in a container usually gets the same
PID and host name), or when its heartbeat is stale; its claims are then reconciled at once, without waiting for
the lease. Without NOTIFIER_REDIS_URL the rate limit lives in one process, so a second live sender is refused.
"""

from __future__ import annotations

import logging
import os
import secrets
import socket
import threading
from dataclasses import dataclass, field
from datetime import datetime, timedelta

from sqlalchemy import Integer, String, select, update
from sqlalchemy.orm import Mapped, Session, mapped_column, sessionmaker

from notifier.db import Base, UtcDateTime, hold_lock, rowcount, utcnow
from notifier.errors import NotifierError

log = logging.getLogger(__name__)

HEARTBEAT_SECONDS = 5.0
STALE_SECONDS = 30.0  # a registration silent this long is gone; a sender silent half as long stops sending
PREFIX = "sender:"


class SenderRow(Base):
    """One start of one sending process."""

    __tablename__ = "senders"

    id: Mapped[int] = mapped_column(Integer, primary_key=True)
    host: Mapped[str] = mapped_column(String(255))
    pid: Mapped[int] = mapped_column(Integer)
    kind: Mapped[str] = mapped_column(String(16))  # clock, worker, tick, drain
    started_at: Mapped[datetime] = mapped_column(UtcDateTime, default=utcnow)
    heartbeat_at: Mapped[datetime] = mapped_column(UtcDateTime, default=utcnow)
    stopped_at: Mapped[datetime | None] = mapped_column(UtcDateTime, nullable=True)


class SenderRefused(NotifierError):
    """Another process is already sending and no shared rate limiter is configured."""


def host() -> str:
    """This machine's name, as registrations and claims record it."""
    return socket.gethostname()[:255]


def pid_alive(pid: int) -> bool:
    """True when a process with this PID runs on this host (or may: we are not allowed to signal it)."""
    if pid <= 0:
        return False
    try:
        os.kill(pid, 0)
    except ProcessLookupError:
        return False
    except PermissionError:
        return True
    return True


def is_gone(row: SenderRow, now: datetime, current: int | None = None) -> bool:
    """True when the registration's process cannot be sending any more (see the module's docstring)."""
    if row.stopped_at is not None:
        return True
    if row.host == host() and row.id != current:
        if row.pid == os.getpid() or not pid_alive(row.pid):
            return True
    return row.heartbeat_at < now - timedelta(seconds=STALE_SECONDS)


def live(session: Session, now: datetime | None = None) -> list[SenderRow]:
    """Registrations whose process may be sending now."""
    now = now or utcnow()
    rows = session.scalars(select(SenderRow).where(SenderRow.stopped_at.is_(None))).all()
    return [row for row in rows if not is_gone(row, now, _current_id())]


def claim_gone(session: Session, token: str | None, now: datetime) -> bool | None:
    """For a `sender:<id>` claim, whether its registration is gone; None for claims of another form."""
    if not token or not token.startswith(PREFIX):
        return None
    try:
        sender_id = int(token.removeprefix(PREFIX))
    except ValueError:
        return True
    row = session.get(SenderRow, sender_id)
    return row is None or is_gone(row, now, _current_id())


def other_claim_gone(token: str) -> bool:
    """For a claim of the form `<kind>:<host>:<pid>:…` (the web's own sends, claims made before registrations):
    gone when its process is dead on this host; on another host only the lease can tell."""
    parts = token.split(":")
    if parts and parts[0] == "web":
        parts = parts[1:]
    if len(parts) < 2 or parts[0] != host()[:32] and parts[0] != host():
        return False
    try:
        return not pid_alive(int(parts[1]))
    except ValueError:
        return True


@dataclass
class Registration:
    """This process's registration while it sends: `token` goes on every claim."""

    id: int
    kind: str
    users: int = 0
    beat_ok_at: float = 0.0
    taken_over: bool = False
    running: dict[str, int] = field(default_factory=dict)  # channel -> this process's pipelines sending it now

    def start(self, channel: str) -> bool:
        """Count a pipeline of `channel` in; True when it is the only one (its claims left over are then a failed
        run's, not a sibling's still in flight)."""
        with _lock:
            self.running[channel] = self.running.get(channel, 0) + 1
            return self.running[channel] == 1

    def finish(self, channel: str) -> None:
        with _lock:
            self.running[channel] -= 1

    @property
    def token(self) -> str:
        return f"{PREFIX}{self.id}"

    def may_send(self) -> bool:
        """False once this registration was taken over, or its heartbeat has failed for a while (others may soon
        reconcile its claims, so sending them now could send twice)."""
        import time

        return not self.taken_over and time.monotonic() - self.beat_ok_at < STALE_SECONDS / 2


_lock = threading.Lock()
_registration: Registration | None = None
_pid: int | None = None
_stop_beating = threading.Event()


def _current_id() -> int | None:
    return _registration.id if _registration is not None and _pid == os.getpid() else None


def acquire(sessions: sessionmaker[Session], kind: str, shared_limiter: bool) -> Registration:
    """This process's registration, made on first use (drains in one process share it); raises `SenderRefused`
    when another process is sending and there is no shared limiter."""
    global _registration, _pid
    import time

    with _lock:
        if _registration is None or _pid != os.getpid() or _registration.taken_over:
            _registration, _pid = Registration(_register(sessions, kind, shared_limiter), kind), os.getpid()
            _registration.beat_ok_at = time.monotonic()
            _stop_beating.clear()
            threading.Thread(target=_beat, args=(sessions, _registration), name="sender-heartbeat",
                             daemon=True).start()
        _registration.users += 1
        return _registration


def release(sessions: sessionmaker[Session], registration: Registration) -> None:
    """Done sending for one user; the last one marks the registration stopped (its claims are all settled)."""
    global _registration
    with _lock:
        registration.users -= 1
        if registration.users > 0 or registration is not _registration:
            return
        _registration = None
        _stop_beating.set()
    with sessions() as session, session.begin():
        session.execute(update(SenderRow).where(SenderRow.id == registration.id).values(stopped_at=utcnow()))


def _register(sessions: sessionmaker[Session], kind: str, shared_limiter: bool) -> int:
    with sessions() as session, session.begin():
        hold_lock(session, "senders")  # two processes starting at once must not both see "nobody sends"
        now = utcnow()
        others = session.scalars(select(SenderRow).where(SenderRow.stopped_at.is_(None))).all()
        for row in others:
            if is_gone(row, now):
                row.stopped_at = now
                log.warning("sender #%s (%s, pid %s on %s) is gone: its claims are taken over now",
                            row.id, row.kind, row.pid, row.host)
        still = [row for row in others if row.stopped_at is None]
        if still and not shared_limiter:
            first = still[0]
            raise SenderRefused(
                f"another process is already sending ({first.kind}, pid {first.pid} on {first.host}, since "
                f"{first.started_at:%Y-%m-%d %H:%M:%S} UTC). Without NOTIFIER_REDIS_URL only one process may send, "
                "or the sender's rate would be exceeded: set NOTIFIER_REDIS_URL (e.g. redis://127.0.0.1:6379/0) "
                "on every process to send from several."
            )
        row = SenderRow(host=host(), pid=os.getpid(), kind=kind, started_at=now, heartbeat_at=now)
        session.add(row)
        session.flush()
        log.info("registered as sender #%s (%s, pid %s)", row.id, kind, os.getpid())
        return row.id


def _beat(sessions: sessionmaker[Session], registration: Registration) -> None:
    import time

    while not _stop_beating.wait(HEARTBEAT_SECONDS):
        try:
            with sessions() as session, session.begin():
                done = session.execute(update(SenderRow).where(SenderRow.id == registration.id,
                                                               SenderRow.stopped_at.is_(None))
                                       .values(heartbeat_at=utcnow()))
            if rowcount(done) == 0:
                registration.taken_over = True
                log.error("sender #%s was taken over by another process; it sends nothing more", registration.id)
                return
            registration.beat_ok_at = time.monotonic()
        except Exception:  # the database is away: may_send() turns False after a while
            log.warning("sender #%s: heartbeat failed; will try again", registration.id, exc_info=True)


def web_claim() -> str:
    """The claim a web process puts on a message it sends itself (when no sender process runs)."""
    return f"web:{host()[:32]}:{os.getpid()}:{secrets.token_hex(4)}"
