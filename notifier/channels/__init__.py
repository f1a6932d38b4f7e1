"""Channels: one small interface for every way a message leaves the building (email, SMS, the local outbox).

`Channel.send()` does the shared work (timing, masked logging, turning provider errors into
`TemporaryDeliveryError` or `PermanentDeliveryError`); each provider implements only `_send()`. The delivery code
never knows which provider is behind a channel.
"""

from __future__ import annotations

import logging
import time
from abc import ABC, abstractmethod
from collections.abc import Iterable, Iterator
from dataclasses import dataclass, field

from notifier.errors import DeliveryError, PermanentDeliveryError, TemporaryDeliveryError
from notifier.masking import mask

log = logging.getLogger(__name__)

EMAIL = "email"
SMS = "sms"


@dataclass(frozen=True)
class Message:
    """One message to one person. `reference` is the caller's unique key (the outbox row), used for idempotency."""

    channel: str
    to: str
    text: str
    reference: str
    language: str = "en"
    subject: str | None = None
    html: str | None = None
    headers: dict[str, str] = field(default_factory=dict)


@dataclass(frozen=True)
class Receipt:
    """What the provider said: its id for the message (Twilio SID, Message-ID, file name) and a status."""

    provider_id: str
    status: str = "sent"


class Channel(ABC):
    """A way to send `Message`s. Subclasses implement `_send`, and may override `session` to reuse a connection."""

    name: str = "channel"

    def send(self, message: Message) -> Receipt:
        """Send one message; raises `TemporaryDeliveryError` (retry later) or `PermanentDeliveryError` (never)."""
        started = time.monotonic()
        try:
            receipt = self._send(message)
        except DeliveryError as error:
            kind = "permanent" if isinstance(error, PermanentDeliveryError) else "temporary"
            log.warning("%s to %s failed (%s): %s", self.name, mask(message.to), kind, error)
            raise
        log.debug("%s to %s sent as %s in %.0f ms", self.name, mask(message.to), receipt.provider_id,
                  (time.monotonic() - started) * 1000)
        return receipt

    def send_many(self, messages: Iterable[Message]) -> Iterator[tuple[Message, Receipt | DeliveryError]]:
        """Send several messages over one session (one SMTP connection, for instance); yields each outcome."""
        with self.session():
            for message in messages:
                try:
                    yield message, self.send(message)
                except DeliveryError as error:
                    yield message, error

    def session(self):
        """A context manager holding a provider connection open across sends (nothing by default)."""
        from contextlib import nullcontext

        return nullcontext()

    @abstractmethod
    def _send(self, message: Message) -> Receipt:
        """Hand one message to the provider; raise Temporary/PermanentDeliveryError on failure."""


def build(settings) -> dict[str, Channel]:
    """The channels this process uses: real providers where configured, else the local outbox folder."""
    from notifier.channels.outbox import OutboxChannel

    channels: dict[str, Channel] = {EMAIL: OutboxChannel(settings.outbox_dir, EMAIL),
                                    SMS: OutboxChannel(settings.outbox_dir, SMS)}
    if settings.email_configured:
        from notifier.channels.email import SmtpChannel

        channels[EMAIL] = SmtpChannel(settings.smtp_url, settings.mail_from)
    if settings.sms_configured:
        from notifier.channels.sms import TwilioChannel

        channels[SMS] = TwilioChannel(
            settings.twilio_account_sid,
            settings.twilio_auth_token,
            from_number=settings.twilio_from_number,
            messaging_service_sid=settings.twilio_messaging_service_sid,
            api_base_url=settings.twilio_api_base_url,
            timeout=settings.twilio_timeout,
            status_callback=f"{settings.base_url}/twilio/status",
            validity_period=settings.sms_validity_seconds,
        )
    return channels


__all__ = ["EMAIL", "SMS", "Channel", "Message", "Receipt", "TemporaryDeliveryError", "PermanentDeliveryError",
           "build"]
