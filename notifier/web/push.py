"""Web Push over HTTP: the server's public key, subscribing and unsubscribing a browser, the service worker and
the web app manifest (what lets an iPhone add the site to its home screen, and so receive notifications).

The subscription views take JSON from the page's script (static/push.js) with the header `X-CSRFToken` carrying
the token every page holds in `<meta name="csrf-token">`. Pages are cached and shared (pagecache), so that token
cannot belong to a session: it is one keyed value per installation (`page_token`), and a session's Flask-WTF
token is accepted too. What stops another site is that a cross-site request with that header (or with a JSON
body) needs a CORS preflight this app never grants; nothing here acts on a cookie.
"""

from __future__ import annotations

import hashlib
import hmac
import json

from flask import Blueprint, Response, current_app, request, send_from_directory, url_for
from flask_wtf.csrf import ValidationError, validate_csrf

from notifier.db import transaction, utcnow
from notifier.delivery.channels.push import public_key
from notifier.subscribers import push, ratelimit
from notifier.web.security import csrf
from notifier.web.services import language_in_url, services

bp = Blueprint("push", __name__)

HOUR = 3600


def page_token() -> str:
    """The token pages carry for the push API: the same for everyone, so a cached page works for everyone."""
    key = services().settings.secret_key.encode()
    return hmac.new(key, b"push-api", hashlib.sha256).hexdigest()[:40]


def template_globals() -> dict:
    """What every page's template needs for push: the API token, and whether to offer the control at all."""
    return {"page_token": page_token, "push_enabled": services().settings.push_configured}


def _token_ok() -> bool:
    given = request.headers.get("X-CSRFToken", "")
    if given and hmac.compare_digest(given, page_token()):
        return True
    try:
        validate_csrf(given)
    except ValidationError:
        return False
    return True


def _error(field: str, reason: str, status: int = 400) -> tuple[Response, int]:
    return _json({"error": f"{field}: {reason}", "field": field}), status


def _json(data: dict) -> Response:
    response = Response(json.dumps(data, ensure_ascii=False), mimetype="application/json")
    response.headers["Cache-Control"] = "no-store"
    return response


@bp.get("/api/push/key")
def key() -> Response | tuple[Response, int]:
    """The VAPID public key browsers subscribe with; 404 while push is off (no NOTIFIER_VAPID_PRIVATE_KEY)."""
    settings = services().settings
    if not settings.push_configured:
        return _error("push", "Web Push is not enabled on this site", 404)
    response = _json({"public_key": public_key(settings.vapid_private_key or "")})
    response.headers["Cache-Control"] = "public, max-age=300"
    return response


@bp.post("/api/push/subscriptions")
@csrf.exempt
def subscribe() -> tuple[Response, int]:
    """Store a browser's subscription (201), or replace the boards and language of a known one (200)."""
    settings, sessions = services().settings, services().sessions
    if not _token_ok():
        return _error("X-CSRFToken", "missing or invalid token", 403)
    if not settings.push_configured:
        return _error("push", "Web Push is not enabled on this site", 404)
    with transaction(sessions) as session:
        allowed = ratelimit.allow(session, f"push:ip:{request.remote_addr or 'unknown'}",
                                  settings.signup_limit_per_ip, HOUR, utcnow())
    if not allowed:
        return _error("subscription", "too many requests from this address; try again later", 429)
    try:
        valid = push.parse(request.get_json(silent=True), services().boards.snapshot.status.by_id(),
                           settings.push_services)
        with transaction(sessions) as session:
            created = push.store(session, valid, source=_source())
    except push.PushSubscriptionError as error:
        return _error(error.field, error.reason)
    return _json({"status": "subscribed" if created else "updated"}), 201 if created else 200


@bp.delete("/api/push/subscriptions")
@csrf.exempt
def unsubscribe() -> Response | tuple[Response, int]:
    """Forget a browser's subscription: nothing is sent to that endpoint afterwards (204 whether or not known)."""
    if not _token_ok():
        return _error("X-CSRFToken", "missing or invalid token", 403)
    body = request.get_json(silent=True)
    endpoint = body.get("endpoint") if isinstance(body, dict) else None
    try:
        with transaction(services().sessions) as session:
            push.remove(session, endpoint, source=_source())
    except push.PushSubscriptionError as error:
        return _error(error.field, error.reason)
    return Response(status=204)


@bp.get("/sw.js")
def service_worker() -> Response:
    """The service worker, from the root so that its scope is the whole site."""
    response = send_from_directory(current_app.static_folder or "", "sw.js", mimetype="text/javascript",
                                   max_age=0)
    response.headers["Cache-Control"] = "no-cache"
    return response


@bp.get("/manifest.webmanifest")
@language_in_url
def manifest() -> Response:
    """The web app manifest: what a phone needs to add the site to its home screen."""
    from notifier.i18n import translations

    language = request.args.get("lang", "en") if request.args.get("lang") in ("en", "fr") else "en"
    words = translations(language)
    data = {
        "name": words.gettext("Ontario school status"),
        "short_name": words.gettext("School status"),
        "lang": language,
        # English starts at the plain "/" (lang=None also keeps `keep_named_language` from adding ?lang=en).
        "start_url": url_for("public.index", lang=language if language != "en" else None),
        "scope": "/",
        "display": "standalone",
        "background_color": "#ffffff",
        "theme_color": "#1d4e89",
        "icons": [{"src": url_for("static", filename=f"icons/icon-{size}.png"), "sizes": f"{size}x{size}",
                   "type": "image/png", "purpose": "any"} for size in (192, 512)],
    }
    response = Response(json.dumps(data, ensure_ascii=False), mimetype="application/manifest+json")
    response.headers["Cache-Control"] = "public, max-age=3600"
    return response


def _source() -> str:
    """Where consent was given: the page the script ran on (its path) and the caller's address."""
    page = request.headers.get("Referer", "")
    path = page.split("://", 1)[-1].partition("/")[2] if "://" in page else ""
    return f"/{path.split('?')[0]} {request.remote_addr or ''}".strip()[:128]
