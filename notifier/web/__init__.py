"""The web application: thin blueprints over the domain core.

`create_app` reads like a table of contents: settings, services, language, security, then one blueprint per
concern. It never starts a scheduler: the clock is its own process (`python -m notifier clock`).
"""

from __future__ import annotations

import os
from typing import Any

from flask import Flask
from flask_babel import Babel
from werkzeug.middleware.proxy_fix import ProxyFix

from notifier import i18n, masking
from notifier.config import ROOT, Settings, log_secrets
from notifier.formatting import install_filters
from notifier.telemetry import logs
from notifier.web.security import csrf, install_headers
from notifier.web.services import Services, current_language, named_language, select_language


def create_app(test_config: dict[str, Any] | None = None) -> Flask:
    """Build the app. `test_config` may override environment settings (NOTIFIER_*, TWILIO_*) and Flask config."""
    overrides = dict(test_config or {})
    env_overrides = {k: str(v) for k, v in overrides.items() if k.startswith(("NOTIFIER_", "TWILIO_"))}
    settings = Settings.from_env({**os.environ, **env_overrides})
    logs.configure("web", settings.log_format == "json")
    masking.install(log_secrets(settings))  # every handler, gunicorn's included: no address or token in a log

    app = Flask(
        __name__,
        template_folder=str(ROOT / "templates"),
        static_folder=str(ROOT / "static"),
        instance_path=str(settings.instance_dir),
    )
    app.config.from_mapping(
        SECRET_KEY=settings.secret_key,
        DEBUG=settings.debug,
        SESSION_COOKIE_HTTPONLY=True,
        SESSION_COOKIE_SAMESITE="Lax",
        SESSION_COOKIE_SECURE=settings.base_url.startswith("https://"),
        BABEL_TRANSLATION_DIRECTORIES=str(i18n.TRANSLATIONS),
        WTF_CSRF_TIME_LIMIT=None,
    )
    app.config.update({k: v for k, v in overrides.items() if k not in env_overrides})
    if settings.trusted_proxies:  # X-Forwarded-* only from the proxies we were told of: anyone can send them
        hops = settings.trusted_proxies
        app.wsgi_app = ProxyFix(app.wsgi_app, x_for=hops, x_proto=hops, x_host=hops)  # type: ignore[method-assign]

    app.extensions["notifier"] = Services.build(settings)
    i18n.compile_catalogues()
    Babel(app, locale_selector=select_language)
    install_filters(app.jinja_env, current_language)
    app.context_processor(lambda: {"language": current_language(), "named_language": named_language()})
    app.jinja_env.add_extension("jinja2.ext.do")
    csrf.init_app(app)
    install_headers(app, https=settings.base_url.startswith("https://"))

    from notifier.web import (
        api,
        calendar,
        dev,
        health,
        manage,
        metrics,
        public,
        push,
        staff,
        subscribe,
        twilio_inbound,
        twilio_status,
        webhook_owner,
        widgets,
    )

    for module in (public, calendar, widgets, api, health, metrics, subscribe, manage, twilio_inbound, twilio_status,
                   staff, webhook_owner, dev, push):
        app.register_blueprint(module.bp)
    metrics.install(app)
    app.context_processor(push.template_globals)
    return app
