"""The project's exceptions: one base class, so callers can catch everything `notifier` raises on purpose."""


class NotifierError(Exception):
    """Base class of every error this project raises deliberately."""


class ConfigError(NotifierError):
    """An environment setting is missing or malformed; the message names the variable."""


class BoardFileError(NotifierError):
    """boards.yaml cannot be used; `problems` holds one `Problem` per mistake, each with its line."""

    def __init__(self, problems: list) -> None:
        self.problems = problems
        super().__init__("\n".join(str(p) for p in problems))


class DeliveryError(NotifierError):
    """A message could not be handed to its provider."""


class TemporaryDeliveryError(DeliveryError):
    """Worth retrying later: timeouts, connection errors, SMTP 4xx, Twilio 429 and 5xx."""


class PermanentDeliveryError(DeliveryError):
    """Never worth retrying: the contact is invalid or has opted out; `code` says why (e.g. Twilio 21610)."""

    def __init__(self, message: str, code: str | int | None = None) -> None:
        self.code = code
        super().__init__(message)
