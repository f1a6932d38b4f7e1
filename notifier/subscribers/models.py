"""The subscribers' tables: a family, their contact points (email, mobile), and their boards and panels.

A `Subscriber` is one family's settings (language); each `Contact` is one address on one channel with its own
state (pending until confirmed, active, opted out, invalid) and frequency (immediate or daily). `Follow` rows say
which board and panel the family follows. Consent evidence lives in `Consent` rows, which outlive the contact data
(CASL asks the sender to prove consent; MFIPPA asks us to keep no more contact data than needed).
"""

from __future__ import annotations

import secrets
from datetime import datetime
from enum import StrEnum

from sqlalchemy import Boolean, ForeignKey, Integer, String, Text, UniqueConstraint, false
from sqlalchemy.orm import Mapped, mapped_column, relationship

from notifier.db import Base, UtcDateTime, utcnow

# An opted-out contact keeps its row (so START can resume it and old links stay harmless) but not its address:
# the address is replaced by this prefix and its keyed hash (see `consent.address_hash`).
FORGOTTEN = "#"


class ContactStatus(StrEnum):
    PENDING = "pending"  # waiting for the double opt-in; receives nothing but the confirmation
    ACTIVE = "active"  # confirmed: receives digests
    OPTED_OUT = "opted_out"  # said STOP or unsubscribed: receives nothing, ever, until they opt back in
    INVALID = "invalid"  # the provider says the address cannot receive (21211, 21614, SMTP 5xx)


class Frequency(StrEnum):
    IMMEDIATE = "immediate"  # on the next cycle after a change
    DAILY = "daily"  # once a day at NOTIFIER_DAILY_DIGEST_AT, if anything changed (closures still go at once)


class Subscriber(Base):
    """One family: their language and, through contacts and follows, how and about what to reach them."""

    __tablename__ = "subscribers"
    __table_args__ = {"sqlite_autoincrement": True}  # ids in signed links must never be reused

    id: Mapped[int] = mapped_column(Integer, primary_key=True)
    language: Mapped[str] = mapped_column(String(2), default="en")
    # Also tell me when a status announced ahead takes effect ("now in effect"); off unless the parent asks.
    notify_on_effect: Mapped[bool] = mapped_column(Boolean, default=False)
    created_at: Mapped[datetime] = mapped_column(UtcDateTime, default=utcnow)

    contacts: Mapped[list[Contact]] = relationship(back_populates="subscriber", cascade="all, delete-orphan")
    follows: Mapped[list[Follow]] = relationship(back_populates="subscriber", cascade="all, delete-orphan")


class Contact(Base):
    """One address on one channel. `seen_event_id` is the newest change event already covered by a digest."""

    __tablename__ = "contacts"
    __table_args__ = (UniqueConstraint("channel", "address", name="uq_contacts_channel_address"),
                      # ids in unsubscribe links must never be reused; half-full pages keep planning's update of
                      # `seen_event_id` in place on PostgreSQL (migration 0015)
                      {"sqlite_autoincrement": True, "postgresql_with": {"fillfactor": 50}})

    id: Mapped[int] = mapped_column(Integer, primary_key=True)
    subscriber_id: Mapped[int] = mapped_column(ForeignKey("subscribers.id", ondelete="CASCADE"), index=True)
    channel: Mapped[str] = mapped_column(String(8))  # "email", "sms" or "push"
    address: Mapped[str] = mapped_column(String(320))  # lower-cased email, E.164 number, or a push endpoint's hash
    status: Mapped[str] = mapped_column(String(16), default=ContactStatus.PENDING.value, index=True)
    frequency: Mapped[str] = mapped_column(String(16), default=Frequency.IMMEDIATE.value)
    created_at: Mapped[datetime] = mapped_column(UtcDateTime, default=utcnow)
    confirmed_at: Mapped[datetime | None] = mapped_column(UtcDateTime, nullable=True)
    status_changed_at: Mapped[datetime | None] = mapped_column(UtcDateTime, nullable=True)
    seen_event_id: Mapped[int] = mapped_column(Integer, default=0)
    # When the last texted keyword (STOP, START, a board's code) was applied: an older one arriving later loses.
    keyword_at: Mapped[datetime | None] = mapped_column(UtcDateTime, nullable=True)
    # A short reminder each school morning while a followed board or panel is closed or working to rule (opt-in).
    morning_reminder: Mapped[bool] = mapped_column(Boolean, default=False, server_default=false())
    # A random value bound into this contact's unsubscribe links, so a link names this contact and no other
    # (migration 0017; see `notifier.links.unsubscribe_url`).
    link_key: Mapped[str] = mapped_column(String(32), default=lambda: secrets.token_urlsafe(16))

    subscriber: Mapped[Subscriber] = relationship(back_populates="contacts")


class Follow(Base):
    """A board and panel a family follows (a family may follow several boards and both panels)."""

    __tablename__ = "follows"
    __table_args__ = (UniqueConstraint("subscriber_id", "board_id", "panel", name="uq_follows_subscriber_board"),)

    id: Mapped[int] = mapped_column(Integer, primary_key=True)
    subscriber_id: Mapped[int] = mapped_column(ForeignKey("subscribers.id", ondelete="CASCADE"), index=True)
    board_id: Mapped[str] = mapped_column(String(32), index=True)
    panel: Mapped[str] = mapped_column(String(16))  # "elementary" or "secondary"

    subscriber: Mapped[Subscriber] = relationship(back_populates="follows")


class Consent(Base):
    """Evidence of consent given, confirmed or withdrawn; kept after the contact itself is deleted."""

    __tablename__ = "consents"

    id: Mapped[int] = mapped_column(Integer, primary_key=True)
    subscriber_id: Mapped[int | None] = mapped_column(Integer, nullable=True, index=True)  # no FK: outlives it
    channel: Mapped[str] = mapped_column(String(8))
    address_hash: Mapped[str] = mapped_column(String(64), index=True)  # SHA-256 of the address, keyed by secret
    address_masked: Mapped[str] = mapped_column(String(64))
    action: Mapped[str] = mapped_column(String(16))  # given, confirmed, withdrawn
    method: Mapped[str] = mapped_column(String(16))  # web, sms-keyword, sms-reply, email-link, import, provider
    source: Mapped[str] = mapped_column(String(128), default="")  # IP address, masked number, file name
    text_version: Mapped[str] = mapped_column(String(32), default="")
    language: Mapped[str] = mapped_column(String(2), default="en")
    note: Mapped[str] = mapped_column(Text, default="")
    at: Mapped[datetime] = mapped_column(UtcDateTime, default=utcnow)


class InboundText(Base):
    """A text Twilio delivered to us, by its MessageSid: the same message twice (a retry, or a replayed signed
    request, which Twilio's signature cannot tell apart) is acted on once. Holds no number and no words."""

    __tablename__ = "inbound_texts"

    sid: Mapped[str] = mapped_column(String(64), primary_key=True)
    received_at: Mapped[datetime] = mapped_column(UtcDateTime, default=utcnow)
