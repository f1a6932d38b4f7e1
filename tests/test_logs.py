"""JSON log lines: one object a line with the fields a machine reads, masked like a plain line."""

from __future__ import annotations

import io
import json
import logging

from notifier.masking import MaskingFilter
from notifier.telemetry.logs import JsonFormatter

ADDRESS = "parent.json@example.org"


def _logged(*args, **kwargs) -> dict:
    stream = io.StringIO()
    handler = logging.StreamHandler(stream)
    handler.setFormatter(JsonFormatter("clock"))
    handler.addFilter(MaskingFilter())
    logger = logging.getLogger("tests.json")
    logger.addHandler(handler)
    logger.propagate = False
    try:
        logger.warning(*args, **kwargs)
    finally:
        logger.removeHandler(handler)
    (line,) = stream.getvalue().splitlines()
    return json.loads(line)


def test_a_json_line_holds_time_level_logger_message_role_and_process():
    line = _logged("sent %d", 3)
    assert line["message"] == "sent 3" and line["level"] == "WARNING" and line["logger"] == "tests.json"
    assert line["role"] == "clock" and isinstance(line["process"], int) and line["time"].endswith("+00:00")


def test_a_json_line_holds_no_whole_address_in_its_message_or_traceback():
    try:
        raise ValueError(f"refused {ADDRESS}")
    except ValueError:
        line = _logged("email to %s failed", ADDRESS, exc_info=True)
    assert ADDRESS not in json.dumps(line)
    assert "p***@example.org" in line["message"] and "p***@example.org" in line["exception"]


def test_a_json_line_carries_an_outbox_id_and_masks_extra_text():
    line = _logged("failed for good", extra={"outbox_id": 42, "reference": f"to {ADDRESS}"})
    assert line["outbox_id"] == 42 and ADDRESS not in line["reference"]
