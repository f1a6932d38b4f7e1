"""gunicorn's access log without link tokens: the Procfile's `--logger-class` masks every atom of a request line.

Manage, unsubscribe, confirm and staff sign-in links carry their secret in the path; the request line, the path
and the Referer would write it verbatim. The app's `MaskingFilter` (notifier.masking) also sits on gunicorn's
handlers once the app is built; this class masks before formatting, so nothing depends on the app having loaded.
"""

from __future__ import annotations

from typing import Any

from gunicorn.glogging import Logger

from notifier.masking import redact


class RedactingLogger(Logger):
    """gunicorn's Logger whose access-log atoms (request line, path, query, Referer…) are masked."""

    def atoms(self, resp: Any, req: Any, environ: dict, request_time: Any) -> dict:
        atoms = super().atoms(resp, req, environ, request_time)
        return {key: redact(value) if isinstance(value, str) else value for key, value in atoms.items()}
