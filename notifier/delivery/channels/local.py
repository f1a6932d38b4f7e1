"""The local outbox: with no SMTP server or Twilio account configured, messages are written to a folder instead.

This keeps `make run` useful on a fresh machine (see what parents would receive at /dev/outbox in debug mode)
without an account anywhere. Each message is one JSON file named after its reference, so a resend overwrites.
"""

from __future__ import annotations

import json
import os
import re
import tempfile
from pathlib import Path
from typing import Any

from notifier.db import utcnow
from notifier.delivery.channels import segments
from notifier.delivery.channels.base import SMS, Channel, Message, Receipt


class OutboxChannel(Channel):
    """Writes messages of one channel (`email` or `sms`) as JSON files into `folder`."""

    def __init__(self, folder: str | os.PathLike[str], kind: str) -> None:
        self.folder = Path(folder)
        self.name = kind

    def units(self, message: Message) -> int:
        """Texts in segments, as their provider would count them; anything else one each."""
        return max(1, segments.segments(message.text)) if self.name == SMS else 1

    def _send(self, message: Message) -> Receipt:
        self.folder.mkdir(parents=True, exist_ok=True)
        name = f"{self.name}-{re.sub(r'[^A-Za-z0-9_.-]', '_', message.reference)}.json"
        record = {
            "channel": self.name, "to": message.to, "subject": message.subject, "text": message.text,
            "html": message.html, "headers": message.headers, "language": message.language,
            "reference": message.reference, "written_at": utcnow().isoformat(),
        }
        fd, tmp = tempfile.mkstemp(dir=self.folder, suffix=".tmp")
        with os.fdopen(fd, "w", encoding="utf-8") as handle:
            json.dump(record, handle, ensure_ascii=False, indent=2)
        os.replace(tmp, self.folder / name)
        return Receipt(provider_id=name, status="sent")


def read_outbox(folder: str | os.PathLike[str]) -> list[dict[str, Any]]:
    """Every message in the outbox folder, newest first (for /dev/outbox and tests)."""
    path = Path(folder)
    if not path.exists():
        return []
    files = sorted(path.glob("*.json"), key=lambda p: p.stat().st_mtime, reverse=True)
    return [json.loads(f.read_text(encoding="utf-8")) for f in files]
