"""A TCP proxy on loopback that breaks on demand, for what a flaky network does to a database connection.

`TcpProxy("127.0.0.1", 5432).start()` forwards `proxy.port` to the target, byte for byte (it understands no
protocol: PostgreSQL, Redis, SMTP all pass). Faults:
- `cut()` resets every open connection, both ways (TCP RST: the client's next read fails at once, the server's
  backend ends, as when a NAT or a failover drops a connection);
- `refuse(seconds)` closes the listening socket for that long, so new connections are refused (then it listens on
  the same port again);
- `pause()` / `resume()` stop and restart moving bytes, connections kept open (a stalled network; nothing is lost).
It does not imitate latency, bandwidth, half-open connections nor packet loss.

Standalone: `python -m tests.fakes.tcp_proxy --target 127.0.0.1:5432 [--port N] [--control-port M]` prints
`proxy listening on 127.0.0.1:N` and `control on http://127.0.0.1:M`; `ProxyControl(url)` drives it
(POST /cut, /refuse {"seconds"}, /pause, /resume; GET /stats).
"""

from __future__ import annotations

import argparse
import select
import socket
import struct
import threading
import time
from typing import Any

from tests.fakes.control import ControlClient, ControlServer, run_until_signalled

POLL = 0.05  # how often idle threads look at the fault switches (seconds)


class _Link:
    """One client connection and its upstream connection, pumped by one thread."""

    def __init__(self, client: socket.socket, upstream: socket.socket) -> None:
        self.client = client
        self.upstream = upstream
        self.cut = False

    def reset(self) -> None:
        for sock in (self.client, self.upstream):
            try:
                sock.setsockopt(socket.SOL_SOCKET, socket.SO_LINGER, struct.pack("ii", 1, 0))  # close = RST
            except OSError:
                pass
            sock.close()


class TcpProxy:
    """Forwards 127.0.0.1:`port` (0: any free port) to `target_host:target_port`; see the module docstring."""

    def __init__(self, target_host: str, target_port: int, port: int = 0, host: str = "127.0.0.1") -> None:
        self.target = (target_host, target_port)
        self.host = host
        self._listener = self._listen(port)
        self.port = self._listener.getsockname()[1]
        self._links: set[_Link] = set()
        self._lock = threading.Lock()
        self._running = threading.Event()  # set = bytes move; clear = paused
        self._running.set()
        self._stopped = threading.Event()
        self._refuse_until = 0.0
        self.accepted = 0
        self.cuts = 0
        self._thread = threading.Thread(target=self._accept_loop, daemon=True, name="tcp-proxy-accept")

    def start(self) -> TcpProxy:
        self._thread.start()
        return self

    def stop(self) -> None:
        """Stop listening and reset every connection."""
        self._stopped.set()
        self._running.set()
        self._thread.join(timeout=5)
        self.cut()

    @property
    def address(self) -> tuple[str, int]:
        return self.host, self.port

    @property
    def open_connections(self) -> int:
        with self._lock:
            return len(self._links)

    def cut(self) -> int:
        """Reset every open connection (both sides); returns how many there were."""
        with self._lock:
            links = list(self._links)
            self._links.clear()
        for link in links:
            link.cut = True
            link.reset()
        self.cuts += len(links)
        return len(links)

    def refuse(self, seconds: float) -> None:
        """Refuse new connections for `seconds` (the listening socket is closed meanwhile); open ones are kept."""
        with self._lock:
            self._refuse_until = time.monotonic() + seconds
            if self._listener is not None:
                # shutdown() stops listening at once; a bare close() would wait for the accept thread's select()
                # to let go of the socket, and accept (then reset) connections meanwhile.
                try:
                    self._listener.shutdown(socket.SHUT_RDWR)
                except OSError:
                    pass
                self._listener.close()
                self._listener = None

    def pause(self) -> None:
        """Stop moving bytes in either direction; connections stay open and nothing is lost."""
        self._running.clear()

    def resume(self) -> None:
        """Move bytes again (what waited is delivered)."""
        self._running.set()

    def stats(self) -> dict[str, Any]:
        """Counts and switches, for a test's failure message."""
        return {"port": self.port, "target": f"{self.target[0]}:{self.target[1]}", "accepted": self.accepted,
                "open": self.open_connections, "cut": self.cuts, "paused": not self._running.is_set(),
                "refusing": self._listener is None}

    # --- the threads ---------------------------------------------------------------------------------------------

    def _listen(self, port: int) -> socket.socket:
        listener = socket.socket(socket.AF_INET, socket.SOCK_STREAM)
        listener.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
        listener.bind((self.host, port))
        listener.listen(128)
        return listener

    def _accept_loop(self) -> None:
        while not self._stopped.is_set():
            with self._lock:
                if self._listener is None and time.monotonic() >= self._refuse_until:
                    self._listener = self._listen(self.port)
                listener = self._listener
            if listener is None:
                time.sleep(POLL / 5)
                continue
            try:
                readable, _, _ = select.select([listener], [], [], POLL)
                if not readable:
                    continue
                client, _ = listener.accept()
            except (OSError, ValueError):  # closed by refuse() meanwhile
                continue
            self.accepted += 1
            try:
                upstream = socket.create_connection(self.target, timeout=10)
            except OSError:
                _Link(client, socket.socket()).reset()  # the target is down: so is the proxy, for this client
                continue
            link = _Link(client, upstream)
            with self._lock:
                self._links.add(link)
            threading.Thread(target=self._pump, args=(link,), daemon=True, name="tcp-proxy-pump").start()
        with self._lock:
            if self._listener is not None:
                self._listener.close()
                self._listener = None

    def _pump(self, link: _Link) -> None:
        peers = {link.client: link.upstream, link.upstream: link.client}
        try:
            while not link.cut:
                if not self._running.wait(POLL):
                    continue
                readable, _, _ = select.select(list(peers), [], [], POLL)
                if not self._running.is_set():
                    continue  # paused between select and read: leave the bytes where they are
                for sock in readable:
                    data = sock.recv(65536)
                    if not data:
                        raise ConnectionError("closed by one side")
                    peers[sock].sendall(data)
        except (OSError, ValueError):
            pass
        finally:
            with self._lock:
                self._links.discard(link)
            if not link.cut:
                for sock in peers:
                    sock.close()


class ProxyControl(ControlClient):
    """Drives a standalone proxy (`python -m tests.fakes.tcp_proxy`) through its control port."""

    def cut(self) -> int:
        return self.post("/cut")["cut"]

    def refuse(self, seconds: float) -> None:
        self.post("/refuse", seconds=seconds)

    def pause(self) -> None:
        self.post("/pause")

    def resume(self) -> None:
        self.post("/resume")

    def stats(self) -> dict:
        return self.get("/stats")


def main(argv: list[str] | None = None) -> None:
    parser = argparse.ArgumentParser(description="A TCP proxy that cuts, refuses and pauses on demand.")
    parser.add_argument("--target", required=True, help="host:port to forward to, e.g. 127.0.0.1:5432")
    parser.add_argument("--port", type=int, default=0, help="port to listen on (0: any free port)")
    parser.add_argument("--control-port", type=int, default=0)
    args = parser.parse_args(argv)
    host, _, port = args.target.rpartition(":")
    proxy = TcpProxy(host, int(port), port=args.port).start()
    control = ControlServer({
        "POST /cut": lambda _: {"cut": proxy.cut()},
        "POST /refuse": lambda body: proxy.refuse(float(body["seconds"])),
        "POST /pause": lambda _: proxy.pause(),
        "POST /resume": lambda _: proxy.resume(),
        "GET /stats": lambda _: proxy.stats(),
    }, port=args.control_port).start()
    run_until_signalled(f"proxy listening on 127.0.0.1:{proxy.port} -> {args.target}", f"control on {control.url}")
    control.stop()
    proxy.stop()


if __name__ == "__main__":
    main()
