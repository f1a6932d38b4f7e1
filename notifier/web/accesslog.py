"""gunicorn's access log without link tokens: the Procfile's `--logger-class` masks every atom of a request line.

Manage, unsubscribe, confirm and staff sign-in links carry their secret in the path; the request line, the path
and the Referer would write it verbatim. The app's `MaskingFilter` (notifier.masking) also sits on gunicorn's
handlers once the app is built; this class masks before formatting, so nothing depends on the app having loaded,
and puts a masking filter of its own on gunicorn's handlers for the master's lines.

With NOTIFIER_LOG_FORMAT=json, gunicorn's own lines and its access lines are JSON objects on standard error like
every other line (`notifier.telemetry.logs`); an access line also carries `method`, `path` (masked), `status` and
`duration_ms`.
"""

from __future__ import annotations

import sys
import traceback
from typing import Any

from gunicorn.glogging import Logger

from notifier.masking import MaskingFilter, redact
from notifier.telemetry import logs


class RedactingLogger(Logger):
    """gunicorn's Logger whose access-log atoms (request line, path, query, Referer…) are masked."""

    def setup(self, cfg: Any) -> None:
        super().setup(cfg)
        if logs.wants_json():
            logs.use_json_on(self.error_log, "web")
            logs.use_json_on(self.access_log, "web", stream=sys.stderr)
        for logger in (self.error_log, self.access_log):
            for handler in logger.handlers:
                if not any(isinstance(f, MaskingFilter) for f in handler.filters):
                    handler.addFilter(MaskingFilter())

    def atoms(self, resp: Any, req: Any, environ: dict, request_time: Any) -> dict:
        atoms = super().atoms(resp, req, environ, request_time)
        return {key: redact(value) if isinstance(value, str) else value for key, value in atoms.items()}

    def access(self, resp: Any, req: Any, environ: dict, request_time: Any) -> None:
        if not logs.wants_json():
            super().access(resp, req, environ, request_time)
            return
        if not self.access_log_enabled:
            return
        atoms = self.atoms(resp, req, environ, request_time)
        status = str(atoms.get("s", ""))
        fields = {"method": atoms.get("m"), "path": atoms.get("U"),
                  "status": int(status) if status.isdigit() else status,
                  "duration_ms": round(request_time.total_seconds() * 1000, 1)}
        try:
            self.access_log.info(self.cfg.access_log_format, self.atoms_wrapper_class(atoms), extra=fields)
        except Exception:
            self.error(traceback.format_exc())
