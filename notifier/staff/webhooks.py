"""Adding and removing organisations' webhooks, for the staff console and `python -m notifier webhooks`.

Both check the same things before anything is stored: the board exists and has fewer endpoints than
NOTIFIER_WEBHOOKS_PER_BOARD allows, the URL may be sent to (see `subscribers.webhook_urls`: https to a public
address in production), the format, panels, language and the owner's address, which is then emailed a link to
confirm it (no other mail goes to it until then). The secret is returned once, to be shown once; lists never show
it. Each addition and removal is audited with the URL masked (a Slack URL's path is its secret).
"""

from __future__ import annotations

from collections.abc import Iterable
from datetime import datetime

from email_validator import EmailNotValidError, validate_email
from sqlalchemy.orm import Session

from notifier.config import Settings
from notifier.db import utcnow
from notifier.notices import webhooks as planned
from notifier.staff.models import AuditEntry
from notifier.subscribers import webhook_urls, webhooks
from notifier.subscribers.webhooks import WebhookEndpoint, WebhookError, WebhookLimitError


def add(session: Session, settings: Settings, known_boards: Iterable[str], board_id: str, url: str,
        format: str = "json", panels: Iterable[str] = (), language: str = "en", owner_email: str | None = None,
        actor: str = "cli", ip: str = "", now: datetime | None = None) -> WebhookEndpoint:
    """Check and store a new endpoint; raises `WebhookError` saying what is wrong. Its `secret` is shown once."""
    board_id = board_id.strip().lower()
    if board_id not in set(known_boards):
        raise WebhookError(f"unknown board {board_id!r}")
    limit = settings.webhooks_per_board
    if webhooks.count(session, board_id) >= limit:
        raise WebhookLimitError(f"{board_id} already has {limit} webhooks, the most allowed "
                                "(NOTIFIER_WEBHOOKS_PER_BOARD): remove one first")
    url = webhook_urls.check(url, settings.webhooks_allow_private)
    owner = None
    if owner_email and owner_email.strip():
        try:
            owner = validate_email(owner_email.strip(), check_deliverability=False).normalized
        except EmailNotValidError as error:
            raise WebhookError(f"{owner_email!r} is not an email address: {error}") from None
    endpoint = webhooks.add(session, board_id, url, format=format, language=language, panels=list(panels),
                            owner_email=owner, added_by=actor, now=now)
    _audit(session, actor, "webhook_add", endpoint, ip, endpoint.created_at)
    planned.ask_owner(session, settings, endpoint, endpoint.created_at)
    return endpoint


def remove(session: Session, public_id: str, allowed_boards: Iterable[str] | None = None, actor: str = "cli",
           ip: str = "", now: datetime | None = None) -> WebhookEndpoint | None:
    """Remove the endpoint `public_id` (only of `allowed_boards`, when given); None when there is no such one."""
    endpoint = webhooks.find(session, public_id.strip())
    if endpoint is None or (allowed_boards is not None and endpoint.board_id not in set(allowed_boards)):
        return None
    _audit(session, actor, "webhook_remove", endpoint, ip, now or utcnow())
    planned.remove(session, endpoint)
    return endpoint


def _audit(session: Session, actor: str, action: str, endpoint: WebhookEndpoint, ip: str, now: datetime) -> None:
    session.add(AuditEntry(at=now, staff_email=actor, action=action,
                           board_id=endpoint.board_id, changes=[], ip=ip[:64],
                           summary=f"{action} {endpoint.public_id} {endpoint.masked_url()} ({endpoint.format})"))
