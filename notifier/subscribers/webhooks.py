"""Webhook endpoints: an organisation (a daycare, a bus operator, a program, a municipality) that follows a board,
and optionally some of its panels, at a URL of its own, receiving each change as signed JSON or as a chat line.

An endpoint has a random public id (for URLs, logs and the outbox), a `whsec_` secret shown once when it is added,
and a failure record: `failing_since` is set by the first failed delivery and cleared by the next success; a day of
continuous failures (or a 410 Gone) disables it, and its owner is emailed once (`owner_notified_at`), if the owner
confirmed their address (`owner_confirmed_at`, from the link emailed when the endpoint was added, `owner_asked_at`).
"""

from __future__ import annotations

import base64
import secrets
from datetime import datetime, timedelta
from enum import StrEnum

from sqlalchemy import Integer, String, Text, func, select
from sqlalchemy.orm import Mapped, Session, mapped_column

from notifier.db import Base, UtcDateTime, utcnow
from notifier.errors import NotifierError
from notifier.status.boards import Panel

SECRET_PREFIX = "whsec_"  # noqa: S105 - the Standard Webhooks prefix, not a secret
FAILING_FOR = timedelta(days=1)  # continuous failures for this long disable an endpoint


class Format(StrEnum):
    JSON = "json"  # {"type": "board.status_changed", "timestamp": ..., "data": {...}}
    SLACK = "slack"  # {"text": "..."}: what Slack and Teams incoming webhooks accept


class WebhookError(NotifierError):
    """An endpoint cannot be added as asked (unknown board, bad URL, format or language); the message says why."""


class WebhookLimitError(WebhookError):
    """A board already has as many endpoints as NOTIFIER_WEBHOOKS_PER_BOARD allows."""


class WebhookEndpoint(Base):
    """One organisation's URL following one board (all panels, or those listed in `panels`)."""

    __tablename__ = "webhook_endpoints"
    __table_args__ = {"sqlite_autoincrement": True}

    id: Mapped[int] = mapped_column(Integer, primary_key=True)
    public_id: Mapped[str] = mapped_column(String(32), unique=True)
    board_id: Mapped[str] = mapped_column(String(32), index=True)
    panels: Mapped[str] = mapped_column(String(64), default="")  # "elementary,secondary"; empty: every panel
    url: Mapped[str] = mapped_column(Text)
    format: Mapped[str] = mapped_column(String(8), default=Format.JSON.value)
    language: Mapped[str] = mapped_column(String(2), default="en")
    secret: Mapped[str] = mapped_column(String(128))
    owner_email: Mapped[str | None] = mapped_column(String(254), nullable=True)
    added_by: Mapped[str] = mapped_column(String(254))
    created_at: Mapped[datetime] = mapped_column(UtcDateTime, default=utcnow)
    failing_since: Mapped[datetime | None] = mapped_column(UtcDateTime, nullable=True)
    last_error: Mapped[str | None] = mapped_column(Text, nullable=True)
    disabled_at: Mapped[datetime | None] = mapped_column(UtcDateTime, nullable=True)
    disabled_reason: Mapped[str | None] = mapped_column(Text, nullable=True)
    owner_notified_at: Mapped[datetime | None] = mapped_column(UtcDateTime, nullable=True)
    # The owner's address gets nothing but its confirmation until its owner confirms it (a link in that email).
    owner_asked_at: Mapped[datetime | None] = mapped_column(UtcDateTime, nullable=True)
    owner_confirmed_at: Mapped[datetime | None] = mapped_column(UtcDateTime, nullable=True)

    @property
    def panel_list(self) -> list[str]:
        return [p for p in self.panels.split(",") if p]

    @property
    def active(self) -> bool:
        return self.disabled_at is None

    def masked_url(self) -> str:
        """The URL for logs and pages: scheme and host only (a Slack URL's path is its secret)."""
        return masked_url(self.url)


def masked_url(url: str) -> str:
    """`https://hooks.slack.com/services/T0/B0/xyz?token=1` -> `https://hooks.slack.com/…`."""
    scheme, _, rest = url.partition("://")
    host = rest.split("/", 1)[0].split("?", 1)[0].split("#", 1)[0].rpartition("@")[2]
    tail = "/…" if len(rest) > len(host) else ""
    return f"{scheme}://{host}{tail}"


def new_secret() -> str:
    """A Standard Webhooks secret: `whsec_` and 32 random bytes in base64."""
    return SECRET_PREFIX + base64.b64encode(secrets.token_bytes(32)).decode("ascii")


def add(session: Session, board_id: str, url: str, format: str = Format.JSON.value, language: str = "en",
        panels: list[str] | tuple[str, ...] = (), owner_email: str | None = None, added_by: str = "command line",
        staff_id: int | None = None, now: datetime | None = None) -> WebhookEndpoint:
    """Store a new endpoint with a fresh secret (the caller checked the board and the URL, and shows the secret)."""
    if format not in {f.value for f in Format}:
        raise WebhookError(f"unknown format {format!r}: expected json or slack")
    if language not in ("en", "fr"):
        raise WebhookError(f"unknown language {language!r}: expected en or fr")
    known = {p.value for p in Panel}
    for panel in panels:
        if panel not in known:
            raise WebhookError(f"unknown panel {panel!r}: expected {' or '.join(sorted(known))}")
    endpoint = WebhookEndpoint(
        public_id="wh_" + secrets.token_urlsafe(12), board_id=board_id, url=url, format=format, language=language,
        panels=",".join(sorted(set(panels))), secret=new_secret(), owner_email=owner_email or None,
        added_by=added_by, created_at=now or utcnow(),
    )
    session.add(endpoint)
    session.flush()
    return endpoint


def find(session: Session, public_id: str) -> WebhookEndpoint | None:
    return session.scalar(select(WebhookEndpoint).where(WebhookEndpoint.public_id == public_id))


def listed(session: Session, board_id: str | None = None) -> list[WebhookEndpoint]:
    """Every endpoint (of `board_id`, if given), oldest first."""
    query = select(WebhookEndpoint).order_by(WebhookEndpoint.id)
    if board_id is not None:
        query = query.where(WebhookEndpoint.board_id == board_id)
    return list(session.scalars(query))


def count(session: Session, board_id: str) -> int:
    """How many endpoints `board_id` has, disabled ones included (they hold their place until removed)."""
    return session.scalar(select(func.count()).select_from(WebhookEndpoint)
                          .where(WebhookEndpoint.board_id == board_id)) or 0


def following(session: Session, board_ids: list[str]) -> list[WebhookEndpoint]:
    """The active endpoints following any of `board_ids`."""
    return list(session.scalars(select(WebhookEndpoint).where(WebhookEndpoint.board_id.in_(board_ids),
                                                              WebhookEndpoint.disabled_at.is_(None))
                                .order_by(WebhookEndpoint.id)))


def succeeded(session: Session, endpoint: WebhookEndpoint) -> None:
    """A delivery went through: the endpoint is failing no longer."""
    if endpoint.failing_since is not None:
        endpoint.failing_since, endpoint.last_error = None, None


def failed(session: Session, endpoint: WebhookEndpoint, reason: str, now: datetime, gone: bool = False) -> bool:
    """Record a failed delivery; disable the endpoint after a day of continuous failures (at once when `gone`).
    True when it was disabled now."""
    endpoint.last_error = reason[:500]
    if endpoint.failing_since is None:
        endpoint.failing_since = now
    if endpoint.disabled_at is None and (gone or now - endpoint.failing_since >= FAILING_FOR):
        endpoint.disabled_at = now
        endpoint.disabled_reason = reason[:500]
        return True
    return False
