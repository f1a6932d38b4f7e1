"""A small JSON-over-HTTP control channel for a fake that runs as its own process, and the client tests use.

A fake started with `python -m tests.fakes.<name>` serves `ControlServer({"GET /stats": fn, "POST /down": fn})`:
each function takes the request's JSON body (GET: its query string) as a dict and returns something JSON can
write. `ControlClient(url).post("/down")` calls it. `run_until_signalled()` keeps such a process alive until
SIGTERM or SIGINT. Loopback only; no authentication (nothing here leaves the machine).
"""

from __future__ import annotations

import json
import signal
import threading
import urllib.error
import urllib.request
from collections.abc import Callable
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from typing import Any
from urllib.parse import parse_qsl, urlencode, urlsplit

Route = Callable[[dict], Any]


class ControlServer:
    """Serves `routes` ({"METHOD /path": function(body) -> JSON-able}) on loopback in a thread."""

    def __init__(self, routes: dict[str, Route], port: int = 0, host: str = "127.0.0.1") -> None:
        self.routes = routes
        self._server = ThreadingHTTPServer((host, port), self._handler())
        self._server.daemon_threads = True
        self._thread = threading.Thread(target=self._server.serve_forever, args=(0.05,), daemon=True)

    @property
    def url(self) -> str:
        host, port = self._server.server_address[:2]
        return f"http://{host}:{port}"

    def start(self) -> ControlServer:
        self._thread.start()
        return self

    def stop(self) -> None:
        self._server.shutdown()
        self._server.server_close()

    def _handler(self):
        routes = self.routes

        class Handler(BaseHTTPRequestHandler):
            def log_message(self, *args) -> None:
                pass

            def do_GET(self) -> None:  # noqa: N802 - http.server's naming
                parts = urlsplit(self.path)
                self._answer("GET", parts.path, dict(parse_qsl(parts.query)))

            def do_POST(self) -> None:  # noqa: N802
                length = int(self.headers.get("Content-Length") or 0)
                raw = self.rfile.read(length) if length else b""
                try:
                    body = json.loads(raw) if raw else {}
                except json.JSONDecodeError as error:
                    return self._json(400, {"error": f"the body is not JSON: {error}"})
                self._answer("POST", urlsplit(self.path).path, body)

            def _answer(self, method: str, path: str, body: dict) -> None:
                route = routes.get(f"{method} {path}")
                if route is None:
                    return self._json(404, {"error": f"no {method} {path}; known: {sorted(routes)}"})
                try:
                    result = route(body)
                except (KeyError, TypeError, ValueError) as error:
                    return self._json(400, {"error": f"{type(error).__name__}: {error}"})
                self._json(200, {"ok": True} if result is None else result)

            def _json(self, status: int, body: Any) -> None:
                data = json.dumps(body, default=str).encode()
                self.send_response(status)
                self.send_header("Content-Type", "application/json")
                self.send_header("Content-Length", str(len(data)))
                self.end_headers()
                self.wfile.write(data)

        return Handler


class ControlError(RuntimeError):
    """The fake answered a control call with an error."""


class ControlClient:
    """Calls a fake's control endpoints: `get(path, **query)`, `post(path, **body)`; both return the JSON answer."""

    def __init__(self, url: str, timeout: float = 30.0) -> None:
        self.url = url.rstrip("/")
        self.timeout = timeout

    def get(self, path: str, **query: Any) -> Any:
        """GET `path` with `query` as its query string."""
        suffix = f"?{urlencode(query)}" if query else ""
        return self._call(urllib.request.Request(self.url + path + suffix))

    def post(self, path: str, **body: Any) -> Any:
        """POST `body` as JSON to `path`."""
        data = json.dumps(body).encode()
        return self._call(urllib.request.Request(self.url + path, data=data, method="POST",
                                                 headers={"Content-Type": "application/json"}))

    def _call(self, request: urllib.request.Request) -> Any:
        try:
            with urllib.request.urlopen(request, timeout=self.timeout) as response:  # noqa: S310 - loopback
                return json.loads(response.read())
        except urllib.error.HTTPError as error:
            raise ControlError(f"{request.get_method()} {request.full_url}: {error.code} {error.read()[:500]!r}") \
                from None


def run_until_signalled(*announcements: str) -> None:
    """Print each announcement (one line each, flushed: a harness waits for them), then block until SIGTERM/SIGINT."""
    stop = threading.Event()
    for signum in (signal.SIGTERM, signal.SIGINT):
        signal.signal(signum, lambda *_: stop.set())
    for line in announcements:
        print(line, flush=True)
    while not stop.wait(0.5):
        pass
