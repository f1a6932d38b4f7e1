"""The project's exceptions: one base class, so callers can catch everything `notifier` raises on purpose.

Delivery errors say whose fault a failure is, because that decides what happens next:

- `TemporaryDeliveryError`: nobody's; try again later (`pushback` when the provider asked us to slow down).
- `UncertainDeliveryError`: the request may have reached the provider; look before sending again.
- `RecipientError`: this address cannot receive; mark the contact, never retry.
- `MessageError`: this one message cannot be sent as it is; fail that row alone, mark nobody.
- `AccountError`: our account or configuration is refused; pause the channel, mark nobody, keep every row.
"""

from typing import Any


class NotifierError(Exception):
    """Base class of every error this project raises deliberately."""


class ConfigError(NotifierError):
    """An environment setting is missing or malformed; the message names the variable."""


class BoardFileError(NotifierError):
    """boards.yaml cannot be used; `problems` holds one `Problem` per mistake, each with its line."""

    def __init__(self, problems: list[Any]) -> None:
        self.problems = problems
        super().__init__("\n".join(str(p) for p in problems))


class DeliveryError(NotifierError):
    """A message could not be handed to its provider; `code` is the provider's (Twilio code, SMTP reply code)."""

    def __init__(self, message: str, code: str | int | None = None) -> None:
        self.code = code
        super().__init__(message)


class TemporaryDeliveryError(DeliveryError):
    """Worth retrying later, nobody's fault.

    Twilio: HTTP 429 and code 20429 (too many requests), 30001 (queue overflow), HTTP 5xx, timeouts before the
    request was sent, refused connections. SMTP: every 4xx reply (421 service closing, 450/451/452), dropped
    connections. Web Push: 429 and 5xx, timeouts, connection errors. `pushback` is True when the provider asked us to
    slow down (429, 20429, SMTP 421 and 451): the shared sending rate is lowered, then recovers gradually.
    `retry_after` is the wait the provider asked for (Web Push's `Retry-After`): no retry comes sooner.
    """

    def __init__(self, message: str, code: str | int | None = None, pushback: bool = False,
                 retry_after: float | None = None) -> None:
        self.pushback = pushback
        self.retry_after = retry_after  # seconds the provider asked us to wait (Retry-After), if it said
        super().__init__(message, code)


class UncertainDeliveryError(TemporaryDeliveryError):
    """The request may have reached the provider (a read timeout, a connection reset after sending).

    Never retried blindly: a text is looked up in Twilio's list before anything is sent again.
    """


class PermanentDeliveryError(DeliveryError):
    """Never worth retrying as it is: the base of `RecipientError` and `MessageError`."""


class RecipientError(PermanentDeliveryError):
    """The recipient's fault: the contact is marked (opted out or invalid) and never written to again.

    Twilio: 21211 (invalid To), 21614 (not a mobile number), 21612 (To not reachable from this sender), 21408
    (no permission for the To's region), 21610 (the person texted STOP: opted out); delivery callbacks 30004
    (blocked: opted out), 30005 (unknown number) and 30006 (landline or unreachable carrier). SMTP: 550 5.1.x and
    other 5xx refusals of RCPT TO (mailbox unknown, 551 user not local, 553 mailbox name not allowed), and 5xx after
    DATA that name the recipient (552 mailbox full, 5.2.x). Web Push: 404 and 410 (the subscription is gone; it is
    deleted at once).
    """


class MessageError(PermanentDeliveryError):
    """This message cannot be sent as it is (it could not be built, or the provider refused its content).

    The row fails with the reason; the contact is not marked and the other rows go on. Twilio: 21617 (body over
    1,600 characters), 21619 (no body), 30007 (filtered as spam). Web Push: 413 (too big), 400, 403 (a subscription
    made under another key) and an endpoint no longer on NOTIFIER_PUSH_SERVICES. Any exception while building a
    message, e.g. a control character in an email subject.
    """


class AccountError(DeliveryError):
    """Our account or configuration is refused: the channel pauses, nobody is marked, every row stays pending.

    Twilio: HTTP 401 and 20003 (authentication), 20404 on the Messages URL (no such account), 10001 (account not
    active), 30002 (account suspended), 21606 (From is not an SMS-capable number of this account), 21212 (invalid
    From), 21603 (From missing), 21608 (a trial account may only text verified numbers), 21659/21660 (From not a
    Twilio number or not of this account), 21701–21705 (Messaging Service not found or without senders). SMTP: 530
    (authentication required), 534/535 (authentication refused), 550 5.7.1 (relaying denied), any 5xx to MAIL FROM
    (sender refused), and a server that offers no STARTTLS when a password must be sent. Web Push: 401 (our VAPID
    signature refused). The operator fixes the
    setting; a probe resumes the channel by itself.
    """
