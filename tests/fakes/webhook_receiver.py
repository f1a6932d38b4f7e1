"""A webhook receiver on loopback: records every request (headers, body) and answers with scripted statuses."""

from __future__ import annotations

import threading
from dataclasses import dataclass
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer


@dataclass(frozen=True)
class Received:
    path: str
    headers: dict[str, str]
    body: bytes


class WebhookReceiver:
    """`url` to send to; `requests` received; `fail(status, times)` answers `status` to the next `times` requests."""

    def __init__(self) -> None:
        self.requests: list[Received] = []
        self.script: list[int] = []
        self.lock = threading.Lock()
        receiver = self

        class Handler(BaseHTTPRequestHandler):
            def do_POST(self) -> None:  # noqa: N802 - http.server's hook
                length = int(self.headers.get("Content-Length") or 0)
                body = self.rfile.read(length)
                with receiver.lock:
                    receiver.requests.append(Received(self.path, {k.lower(): v for k, v in self.headers.items()},
                                                      body))
                    status = receiver.script.pop(0) if receiver.script else 204
                self.send_response(status)
                if 300 <= status < 400:
                    self.send_header("Location", "http://127.0.0.1:9/elsewhere")
                self.send_header("Content-Length", "0")
                self.end_headers()

            def log_message(self, *args) -> None:
                pass

        self.server = ThreadingHTTPServer(("127.0.0.1", 0), Handler)
        self.url = f"http://127.0.0.1:{self.server.server_address[1]}/hooks/school-status"
        self.thread = threading.Thread(target=self.server.serve_forever, daemon=True)
        self.thread.start()

    def fail(self, status: int, times: int = 1) -> None:
        with self.lock:
            self.script.extend([status] * times)

    def close(self) -> None:
        self.server.shutdown()
        self.server.server_close()
