"""Web security pieces shared by the blueprints: CSRF protection for every form (Flask-WTF) and the headers that
tell a browser what our pages may do (Flask-Talisman).

The policy: scripts, styles, images and forms from this site only, nothing inline (no <script> or <style> blocks,
no on* attributes: put them in static/); no page inside another site's frame (frame-ancestors 'none' and
X-Frame-Options DENY: a framed staff console could be clicked through unseen); no MIME sniffing; the Referer stays
on this site (links carry tokens; "same-origin", not "no-referrer", because Flask-WTF checks the Referer of forms
posted over HTTPS); and HSTS when NOTIFIER_BASE_URL is https.

A view that must be framed by other sites (a board's embeddable widget) says so with `@embeddable`: it gets
frame-ancestors * and no X-Frame-Options, with the rest of the policy unchanged.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import TypeVar

from flask import Flask
from flask_talisman import Talisman
from flask_wtf.csrf import CSRFProtect

csrf = CSRFProtect()

POLICY = {
    "default-src": "'self'",
    "script-src": "'self'",
    "style-src": "'self'",
    "img-src": "'self' data:",
    "object-src": "'none'",
    "base-uri": "'none'",
    "form-action": "'self'",
    "frame-ancestors": "'none'",
}
REFERRER_POLICY = "same-origin"

View = TypeVar("View", bound=Callable)


def install_headers(app: Flask, https: bool) -> None:
    """Send the security headers on every answer; HSTS only for a site served over HTTPS (`https`)."""
    Talisman(  # one per app: Talisman keeps its settings on the instance
        app,
        content_security_policy=POLICY,
        frame_options="DENY",
        referrer_policy=REFERRER_POLICY,
        force_https=False,  # the platform's proxy redirects; the app may also run on plain http locally
        strict_transport_security=https,
        strict_transport_security_include_subdomains=False,
        session_cookie_secure=False,  # SESSION_COOKIE_SECURE already follows NOTIFIER_BASE_URL
        permissions_policy={"browsing-topics": "()", "camera": "()", "microphone": "()", "geolocation": "()"},
    )


def embeddable(view: View, policy: dict[str, str] | None = None) -> View:
    """Let other sites show this view in a frame (frame-ancestors *), under `policy` (default: the site's own).

    Talisman's per-view options (what `@Talisman(...)(view)` sets), without needing the app's instance here.
    """
    view.talisman_view_options = {"frame_options": None,  # type: ignore[attr-defined]
                                  "content_security_policy": {**(policy or POLICY), "frame-ancestors": "*"}}
    return view
