"""The durable outbox: one row per digest to one contact, created once and sent only from `pending`.

A row's `digest_key` is unique per contact, so planning the same changes twice (a cycle run twice, a restart after a
crash) never makes a second row. Rows move pending → sending → sent (or failed, cancelled); a status callback adds
the provider's view (`delivered`, `undelivered`) in `receipts`, keyed by the provider's message id, in any order.

Besides digests, the outbox carries the messages a parent is waiting for (confirmations, manage links, replies to
texted keywords): their words are fixed when asked for and kept in `payload` until they are sent, they go first
(`priority` 0), and they count against the sender's rate like every other text.
"""

from __future__ import annotations

from datetime import datetime
from enum import StrEnum

from sqlalchemy import Boolean, ForeignKey, Index, Integer, String, Text, UniqueConstraint, text
from sqlalchemy.orm import Mapped, mapped_column

from notifier.db import Base, UtcDateTime, utcnow
from notifier.subscribers import models  # noqa: F401 - declares `contacts`, which outbox rows point at


class RowStatus(StrEnum):
    PENDING = "pending"  # waiting for its due time (now, the end of quiet hours, the daily digest)
    SENDING = "sending"  # claimed by a worker; after a crash it is reconciled before any resend
    SENT = "sent"  # the provider accepted it; `provider_id` says under which id
    FAILED = "failed"  # a permanent error (the contact was marked) or too many temporary ones
    CANCELLED = "cancelled"  # merged into a newer digest, undone before it went out, or the contact left
    SUPERSEDED = "superseded"  # found stale when about to leave (a correction came after it): merged, not sent


REMINDER_KEY_PREFIX = "reminder-"  # a morning reminder's `digest_key` ("reminder-2026-11-24"): see notices.reminders


class Priority:
    """Claiming order: what a parent waits for on a page or a phone, then the end of a closure (a correction goes
    before the stale closures it overtook, which are only settled when claimed), then every digest (urgent ones
    first)."""

    ACCOUNT = 0  # confirmations, manage links, replies to texted keywords
    ENDING = 1  # digests saying a closure is over or called off (migration 0016)
    DIGEST = 2


class Failure(StrEnum):
    """Why a row failed, for the page a parent is waiting on and for `status`."""

    OPTED_OUT = "opted_out"  # the recipient said stop (Twilio 21610)
    INVALID = "invalid"  # the recipient cannot receive (21211, 21614, SMTP 5.1.1, ...)
    MESSAGE = "message"  # this message could not be built or was refused for its content
    TEMPORARY = "temporary"  # retried until NOTIFIER_MAX_ATTEMPTS, then given up


class OutboxRow(Base):
    """One digest for one contact: which change events it covers, when it is due, and how sending went."""

    __tablename__ = "outbox"
    __table_args__ = (
        UniqueConstraint("contact_id", "digest_key", name="uq_outbox_contact_id"),
        Index("ix_outbox_due", "status", "channel", "due_at"),
        # The claim order, over pending rows only: a claim reads the first few due rows in this order.
        Index("ix_outbox_claim_order", "channel", "priority", text("urgent DESC"), "id",
              sqlite_where=text("status = 'pending'"), postgresql_where=text("status = 'pending'")),
        # Webhook rows have no contact: their key (endpoint and change event) is unique on its own.
        Index("uq_outbox_webhook_key", "digest_key", unique=True,
              sqlite_where=text("channel = 'webhook'"), postgresql_where=text("channel = 'webhook'")),
        # Only sent rows have a provider id: a planned row adds no entry (migration 0015).
        Index("ix_outbox_provider_id", "provider_id", sqlite_where=text("provider_id IS NOT NULL"),
              postgresql_where=text("provider_id IS NOT NULL")),
    )

    id: Mapped[int] = mapped_column(Integer, primary_key=True)
    # None only for a reply to a number that is no contact of ours (its address is in `payload`).
    contact_id: Mapped[int | None] = mapped_column(ForeignKey("contacts.id", ondelete="CASCADE"), nullable=True)
    channel: Mapped[str] = mapped_column(String(8))
    digest_key: Mapped[str] = mapped_column(String(64))
    event_ids: Mapped[str] = mapped_column(Text)  # "12,13,17": the change events this digest covers
    urgent: Mapped[bool] = mapped_column(Boolean, default=False)
    status: Mapped[str] = mapped_column(String(16), default=RowStatus.PENDING.value)
    due_at: Mapped[datetime] = mapped_column(UtcDateTime)
    attempts: Mapped[int] = mapped_column(Integer, default=0)
    claim: Mapped[str | None] = mapped_column(String(64), nullable=True)
    claimed_at: Mapped[datetime | None] = mapped_column(UtcDateTime, nullable=True)
    provider_id: Mapped[str | None] = mapped_column(String(255), nullable=True)
    last_error: Mapped[str | None] = mapped_column(Text, nullable=True)
    created_at: Mapped[datetime] = mapped_column(UtcDateTime, default=utcnow)
    sent_at: Mapped[datetime | None] = mapped_column(UtcDateTime, nullable=True)
    priority: Mapped[int] = mapped_column(Integer, default=Priority.DIGEST, server_default="2")
    # A message whose words were fixed when it was asked for (JSON, see `delivery.express`); erased once settled.
    payload: Mapped[str | None] = mapped_column(Text, nullable=True)
    failure: Mapped[str | None] = mapped_column(String(16), nullable=True)


class DeliveryReceipt(Base):
    """The provider's latest word on one message (Twilio status callbacks), kept even if it beats our own record."""

    __tablename__ = "delivery_receipts"

    provider_id: Mapped[str] = mapped_column(String(255), primary_key=True)
    status: Mapped[str] = mapped_column(String(16))
    error_code: Mapped[str | None] = mapped_column(String(16), nullable=True)
    updated_at: Mapped[datetime] = mapped_column(UtcDateTime, default=utcnow)


PLANNED_THROUGH = "planned_through"  # the ClockState every contact is planned through (see notices.planning)


class ClockState(Base):
    """Small named values the clock and its helpers share: the planning cursor, a wake-up request."""

    __tablename__ = "clock_state"

    name: Mapped[str] = mapped_column(String(32), primary_key=True)
    number: Mapped[int] = mapped_column(Integer, default=0)
    at: Mapped[datetime | None] = mapped_column(UtcDateTime, nullable=True)


def event_ids(row_value: str) -> list[int]:
    """The event ids stored in a row's `event_ids` column."""
    return [int(part) for part in row_value.split(",") if part]
