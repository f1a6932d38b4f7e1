"""/webhooks/owner/<token>: the owner of an organisation's webhook confirms their address (the link emailed when the
endpoint was added). Opening the link shows a Confirm button, since mail scanners follow links; until the owner
presses it, no mail but that confirmation goes to the address."""

from __future__ import annotations

from flask import Blueprint, render_template

from notifier import links
from notifier.db import transaction, utcnow
from notifier.subscribers import webhooks
from notifier.subscribers.webhooks import WebhookEndpoint
from notifier.web.services import services, speak

bp = Blueprint("webhook_owner", __name__, url_prefix="/webhooks/owner")


def _endpoint_for(session, token: str) -> tuple[WebhookEndpoint | None, str | None]:
    """The endpoint a link names, if its owner is still the address the link was made for; else the problem."""
    try:
        public_id, fingerprint = links.read_webhook_owner(services().settings, token)
    except links.LinkError as error:
        return None, error.reason
    endpoint = webhooks.find(session, public_id)
    if endpoint is None or not endpoint.owner_email or not links.matches(endpoint.owner_email, fingerprint):
        return None, "invalid"
    return endpoint, None


def _page(endpoint: WebhookEndpoint | None, problem: str | None, token: str) -> tuple[str, int]:
    if endpoint is None:
        return render_template("webhook/owner.html", problem=problem), 400
    speak(endpoint.language)
    return render_template("webhook/owner.html", problem=None, token=token, hook_url=endpoint.masked_url(),
                           code=endpoint.board_id.upper(), done=endpoint.owner_confirmed_at is not None), 200


@bp.get("/<token>")
def confirm_page(token: str) -> tuple[str, int]:
    """The page behind the emailed link: which webhook, and a Confirm button (opening a link confirms nothing)."""
    with services().sessions() as session:
        endpoint, problem = _endpoint_for(session, token)
        return _page(endpoint, problem, token)


@bp.post("/<token>")
def confirm(token: str) -> tuple[str, int]:
    """Record that the owner confirmed their address: from now on they are told if the webhook is turned off."""
    with transaction(services().sessions) as session:
        endpoint, problem = _endpoint_for(session, token)
        if endpoint is not None and endpoint.owner_confirmed_at is None:
            endpoint.owner_confirmed_at = utcnow()
        return _page(endpoint, problem, token)
