"""The one interface every way a message leaves the building implements (email, SMS, webhooks, Web Push, the
local outbox).

`Channel.send()` does the shared work (timing, masked logging, and making sure every failure is a `DeliveryError`
that says whose fault it is: see `notifier.errors`); each provider implements only `_send()`, turning its own
refusals into those errors. The delivery code never knows which provider is behind a channel.
"""

from __future__ import annotations

import logging
import time
from abc import ABC, abstractmethod
from collections.abc import Iterable, Iterator
from contextlib import AbstractContextManager
from dataclasses import dataclass, field

from notifier.errors import AccountError, DeliveryError, MessageError, TemporaryDeliveryError
from notifier.masking import mask
from notifier.telemetry import metrics

log = logging.getLogger(__name__)

EMAIL = "email"
SMS = "sms"
WEBHOOK = "webhook"
PUSH = "push"


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
        """Send one message; every failure raises a `DeliveryError` subclass saying whose fault it is."""
        started = time.monotonic()
        try:
            receipt = self._send(message)
        except DeliveryError as error:
            self._measure(started, _outcome(error))
            log.warning("%s to %s failed (%s): %s", self.name, mask(message.to), type(error).__name__, error,
                        extra={"reference": message.reference})
            raise
        except Exception as error:  # anything else is this one message's problem, never the whole drain's
            self._measure(started, "message")
            log.warning("%s to %s could not be sent: %s", self.name, mask(message.to), type(error).__name__,
                        extra={"reference": message.reference})
            raise MessageError(f"{type(error).__name__}: {error}"[:500]) from error
        self._measure(started, "sent")
        log.debug("%s to %s sent as %s in %.0f ms", self.name, mask(message.to), receipt.provider_id,
                  (time.monotonic() - started) * 1000)
        return receipt

    def _measure(self, started: float, outcome: str) -> None:
        """The provider's time for this message, and a push-back when it refused us for now or for good."""
        metrics.PROVIDER_SECONDS.labels(self.name, outcome).observe(time.monotonic() - started)
        if outcome in ("temporary", "account"):
            metrics.PUSHBACKS.labels(self.name, outcome).inc()

    def send_many(self, messages: Iterable[Message]) -> Iterator[tuple[Message, Receipt | DeliveryError]]:
        """Send several messages over one session (one SMTP connection, for instance); yields each outcome."""
        with self.session():
            for message in messages:
                try:
                    yield message, self.send(message)
                except DeliveryError as error:
                    yield message, error

    def units(self, message: Message) -> int:
        """How many of the provider's units `message` costs, which pacing spends (one by default; a text is
        counted in segments, as its provider bills and rate-limits it)."""
        return 1

    def warm(self) -> None:
        """Do the first use's work (the provider library's lazy imports) before the first paced send, so that the
        send leaves in its slot: several threads importing at once leave late and together (nothing by default)."""
        return None

    def session(self) -> AbstractContextManager[object]:
        """A context manager holding a provider connection open across sends (nothing by default)."""
        from contextlib import nullcontext

        return nullcontext()

    @abstractmethod
    def _send(self, message: Message) -> Receipt:
        """Hand one message to the provider; raise Temporary/PermanentDeliveryError on failure."""


def _outcome(error: DeliveryError) -> str:
    """A refusal's kind, as the metrics label it: temporary, account, recipient or message."""
    if isinstance(error, TemporaryDeliveryError):
        return "temporary"
    if isinstance(error, AccountError):
        return "account"
    return "message" if isinstance(error, MessageError) else "recipient"
