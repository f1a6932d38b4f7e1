"""Web security pieces shared by the blueprints: CSRF protection for every form (Flask-WTF)."""

from __future__ import annotations

from flask_wtf.csrf import CSRFProtect

csrf = CSRFProtect()
