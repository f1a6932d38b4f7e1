"""Links in messages: signed ones (confirm an email address, manage a subscription, unsubscribe in one click), and
any link carrying the reader's language.

Links are absolute (NOTIFIER_BASE_URL) and signed with NOTIFIER_SECRET_KEY by `itsdangerous`, each kind with its
own salt so one kind of token never opens another kind of page. They carry a timestamp and expire: confirmation
after 7 days (unconfirmed sign-ups are deleted then), manage links after 90 days (a fresh one is a form away),
unsubscribe links after 400 days (CASL wants at least 60), a webhook owner's confirmation after 30 days. A family's
calendar link never expires (a calendar app cannot ask for a fresh one); it stops working when the family leaves.
"""

from __future__ import annotations

import hashlib
import hmac
from datetime import UTC, datetime
from typing import Any
from urllib.parse import urlsplit

from itsdangerous import BadSignature, SignatureExpired, URLSafeTimedSerializer

from notifier.errors import NotifierError

DAY = 24 * 3600
CONFIRM_MAX_AGE = 7 * DAY
MANAGE_MAX_AGE = 90 * DAY
UNSUBSCRIBE_MAX_AGE = 400 * DAY
OWNER_MAX_AGE = 30 * DAY  # a webhook owner's confirmation: staff may add an endpoint days before its owner looks


class LinkError(NotifierError):
    """A link that cannot be used; `reason` is "expired" or "invalid" (tampered, truncated, of another kind)."""

    def __init__(self, reason: str) -> None:
        self.reason = reason
        super().__init__(f"link {reason}")


def _serializer(settings: Any, kind: str) -> URLSafeTimedSerializer:
    return URLSafeTimedSerializer(settings.secret_key, salt=f"notifier-{kind}")


def _load(settings: Any, kind: str, token: str, max_age: int | None) -> Any:
    try:
        return _serializer(settings, kind).loads(token, max_age=max_age)
    except SignatureExpired:
        raise LinkError("expired") from None
    except BadSignature:
        raise LinkError("invalid") from None


def _fingerprint(address: str) -> str:
    return hashlib.sha256(address.encode("utf-8")).hexdigest()[:16]


def in_language(url: str, language: str) -> str:
    """`url` with `?lang=` added: a French parent opening a link from a French message reads French, whatever their
    browser says and whether or not it keeps cookies (a site's bare address gets its "/" first)."""
    if not urlsplit(url).path:
        url += "/"
    return f"{url}{'&' if '?' in url else '?'}lang={language}"


def manage_url(settings: Any, subscriber_id: int) -> str:
    """The link to a family's settings page (no password: the signed link is the key)."""
    return f"{settings.base_url}/manage/{_serializer(settings, 'manage').dumps(subscriber_id)}"


def unsubscribe_url(settings: Any, contact_id: int, link_key: str | None = None) -> str:
    """The RFC 8058 one-click target for one contact: POST unsubscribes; GET shows a page with a button.

    With the contact's `link_key` (migration 0017) the link names that contact and no other; without it (a bulk
    invitation, a link made before 0017) it is honoured only for a contact created before the link was signed
    (`unsubscribe_names`)."""
    value: Any = [contact_id, link_key] if link_key else contact_id
    return f"{settings.base_url}/unsubscribe/{_serializer(settings, 'unsubscribe').dumps(value)}"


def calendar_url(settings: Any, subscriber_id: int, scheme: str = "https") -> str:
    """The family's own calendar feed (their boards and panels); `scheme` "webcal" opens it in a calendar app."""
    url = f"{settings.base_url}/calendar/{_serializer(settings, 'calendar').dumps(subscriber_id)}/family.ics"
    return "webcal://" + url.split("://", 1)[1] if scheme == "webcal" else url


def confirm_url(settings: Any, contact_id: int, address: str) -> str:
    """The double opt-in link for an email contact; bound to the address, so it confirms nothing else."""
    token = _serializer(settings, "confirm").dumps([contact_id, _fingerprint(address)])
    return f"{settings.base_url}/confirm/{token}"


def read_manage(settings: Any, token: str) -> int:
    """The subscriber id in a manage link; raises `LinkError`."""
    value = _load(settings, "manage", token, MANAGE_MAX_AGE)
    if not isinstance(value, int):
        raise LinkError("invalid")
    return value


def read_calendar(settings: Any, token: str) -> int:
    """The subscriber id in a calendar link (no expiry); raises `LinkError`."""
    value = _load(settings, "calendar", token, None)
    if not isinstance(value, int):
        raise LinkError("invalid")
    return value


def read_unsubscribe(settings: Any, token: str) -> tuple[int, str | None, datetime]:
    """(contact id, link key or None, when the link was signed) from an unsubscribe link; raises `LinkError`."""
    try:
        value, signed_at = _serializer(settings, "unsubscribe").loads(token, max_age=UNSUBSCRIBE_MAX_AGE,
                                                                      return_timestamp=True)
    except SignatureExpired:
        raise LinkError("expired") from None
    except BadSignature:
        raise LinkError("invalid") from None
    if isinstance(value, int) and not isinstance(value, bool):
        return value, None, signed_at
    if isinstance(value, list) and len(value) == 2 and isinstance(value[0], int) and isinstance(value[1], str):
        return value[0], value[1], signed_at
    raise LinkError("invalid")


def unsubscribe_names(link_key: str | None, signed_at: datetime, contact_key: str | None,
                      contact_created_at: datetime | None) -> bool:
    """Whether an unsubscribe link read by `read_unsubscribe` names this contact, not an earlier holder of its id:
    its key matches, or (a link without one) the contact existed when the link was signed."""
    if link_key is not None:
        return contact_key is not None and hmac.compare_digest(link_key, contact_key)
    if contact_created_at is None:
        return False
    created = contact_created_at if contact_created_at.tzinfo else contact_created_at.replace(tzinfo=UTC)
    return created.replace(microsecond=0) <= signed_at.astimezone(UTC)


def read_confirm(settings: Any, token: str) -> tuple[int, str]:
    """(contact id, address fingerprint) from a confirmation link; raises `LinkError`."""
    value = _load(settings, "confirm", token, CONFIRM_MAX_AGE)
    if not (isinstance(value, list) and len(value) == 2 and isinstance(value[0], int)):
        raise LinkError("invalid")
    return value[0], value[1]


def webhook_owner_url(settings: Any, endpoint_public_id: str, address: str) -> str:
    """The link a webhook's owner follows to confirm their address; bound to it, so it confirms nothing else."""
    token = _serializer(settings, "webhook-owner").dumps([endpoint_public_id, _fingerprint(address)])
    return f"{settings.base_url}/webhooks/owner/{token}"


def read_webhook_owner(settings: Any, token: str) -> tuple[str, str]:
    """(endpoint public id, address fingerprint) from a webhook owner's confirmation link; raises `LinkError`."""
    value = _load(settings, "webhook-owner", token, OWNER_MAX_AGE)
    if not (isinstance(value, list) and len(value) == 2 and all(isinstance(v, str) for v in value)):
        raise LinkError("invalid")
    return value[0], value[1]


def matches(address: str, fingerprint: str) -> bool:
    """True when a confirmation link was made for `address`."""
    return _fingerprint(address) == fingerprint
