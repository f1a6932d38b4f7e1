"""How every process writes its log: plain lines (the default) or, with NOTIFIER_LOG_FORMAT=json, one JSON object a
line on standard error, for a machine to read.

A JSON line holds at least `time` (UTC, ISO 8601, milliseconds), `level`, `logger`, `message`, the process `role`
(web, clock, worker or the command's name) and `process` (its id), then `exception` when there is a traceback and
whatever a caller passed in `extra` under FIELDS (the access log's method, path, status and duration; an outbox
row's id, a message's reference). The masking filter (`notifier.masking.MaskingFilter`) runs before any formatter,
so a JSON line is masked exactly as a plain one is; the extra fields, which the filter does not see, are masked here.
"""

from __future__ import annotations

import json
import logging
import os
import sys
from datetime import UTC, datetime
from typing import TextIO

from notifier.masking import redact

TEXT_FORMAT = "%(asctime)s %(levelname)s %(name)s: %(message)s"
# Attributes a caller may add to a record with `extra=` that a JSON line carries (none holds personal data).
FIELDS = ("request_id", "outbox_id", "reference", "method", "route", "path", "status", "duration_ms")


def wants_json(value: str | None = None) -> bool:
    """True when NOTIFIER_LOG_FORMAT (or `value`) asks for JSON (lenient: the settings report a typo)."""
    raw = os.environ.get("NOTIFIER_LOG_FORMAT", "") if value is None else value
    return raw.strip().lower() == "json"


class JsonFormatter(logging.Formatter):
    """One JSON object a line."""

    def __init__(self, role: str) -> None:
        super().__init__()
        self.role = role

    def format(self, record: logging.LogRecord) -> str:
        line = {
            "time": datetime.fromtimestamp(record.created, UTC).isoformat(timespec="milliseconds"),
            "level": record.levelname,
            "logger": record.name,
            "message": record.getMessage(),
            "role": self.role,
            "process": record.process,
        }
        for name in FIELDS:
            value = getattr(record, name, None)
            if value is not None:
                line[name] = redact(value) if isinstance(value, str) else value  # extras skip the filter
        if record.exc_info and not record.exc_text:
            record.exc_text = self.formatException(record.exc_info)
        if record.exc_text:
            line["exception"] = record.exc_text
        if record.stack_info:
            line["stack"] = record.stack_info
        return json.dumps(line, ensure_ascii=False, default=str)


def configure(role: str, json_format: bool | None = None) -> None:
    """Set up the root logger of this process (INFO, standard error) in the chosen format. Call before
    `masking.install`, which puts its filter on the handlers there are."""
    json_format = wants_json() if json_format is None else json_format
    if not json_format:
        logging.basicConfig(level=logging.INFO, format=TEXT_FORMAT)
        return
    root = logging.getLogger()
    root.setLevel(logging.INFO)
    for handler in root.handlers:
        if getattr(handler, "_notifier_json", False):
            handler.setFormatter(JsonFormatter(role))
            return
    handler = logging.StreamHandler(sys.stderr)
    handler._notifier_json = True  # type: ignore[attr-defined]
    handler.setFormatter(JsonFormatter(role))
    for old in list(root.handlers):  # a plain handler set up before (an earlier basicConfig) would write twice
        if isinstance(old, logging.StreamHandler) and getattr(old, "stream", None) in (sys.stderr, sys.stdout):
            root.removeHandler(old)
    root.addHandler(handler)


def use_json_on(logger: logging.Logger, role: str, stream: TextIO | None = None) -> None:
    """Give every handler of `logger` the JSON formatter (gunicorn's own loggers); `stream` moves stream handlers."""
    for handler in logger.handlers:
        handler.setFormatter(JsonFormatter(role))
        if stream is not None and isinstance(handler, logging.StreamHandler):
            handler.setStream(stream)
