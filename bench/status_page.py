"""How much does the status page cost compared with "hello world"? Requests/second under gunicorn, same run.

Starts gunicorn with the Procfile's web settings (same worker count and options, on a free loopback port) serving
the real boards.yaml and a temporary SQLite database, then loads `/`, `/api/boards` and a trivial endpoint of the
same app (`/bench/hello`, added by bench/benchapp.py only) in interleaved rounds, and prints each rate and the
ratios (target: at least 0.8; the median of per-round ratios). The load generator is `wrk` when installed, else a
bounded pool of Python threads with http.client connections; either stops by itself after the set duration.

    python bench/status_page.py [--seconds 2] [--rounds 9] [--connections 16] [--python]
"""

from __future__ import annotations

import argparse
import http.client
import os
import re
import shlex
import shutil
import socket
import statistics
import subprocess
import sys
import tempfile
import time
from concurrent.futures import ThreadPoolExecutor
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
TRIVIAL = "/bench/hello"
PATHS = ["/", "/api/boards", TRIVIAL]
HEADERS = {"Accept-Language": "en-CA,en;q=0.9,fr;q=0.5", "User-Agent": "notifier-bench"}
TARGET = 0.8


def procfile_web() -> list[str]:
    """The Procfile's web line with ${VAR:-default} expanded from the environment (or the default)."""
    line = next(x for x in (ROOT / "Procfile").read_text().splitlines() if x.startswith("web:"))
    expanded = re.sub(r"\$\{(\w+):-([^}]*)\}", lambda m: os.environ.get(m.group(1), m.group(2)), line[4:])
    return shlex.split(expanded)


def gunicorn_command(port: int) -> list[str]:
    """The Procfile's gunicorn command, bound to loopback:port, serving the bench wrapper of the same factory."""
    words = procfile_web()
    assert words[0] == "gunicorn" and words[-1] == "notifier:create_app()", words
    args = words[1:-1]
    if "--bind" in args:
        del args[args.index("--bind"):args.index("--bind") + 2]
    gunicorn = str(Path(sys.executable).with_name("gunicorn"))
    return [gunicorn, *args, "--bind", f"127.0.0.1:{port}", "--pythonpath", str(ROOT / "bench"),
            "benchapp:create_app()"]


def free_port() -> int:
    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        return sock.getsockname()[1]


def wait_until_up(port: int, server: subprocess.Popen, timeout: float = 60.0) -> None:
    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline:
        if server.poll() is not None:
            raise SystemExit(f"gunicorn exited with {server.returncode}")
        try:
            connection = http.client.HTTPConnection("127.0.0.1", port, timeout=2)
            connection.request("GET", "/healthz")
            if connection.getresponse().status == 200:
                return
        except OSError:
            pass
        time.sleep(0.2)
    raise SystemExit("gunicorn did not answer /healthz in time")


def load_with_wrk(port: int, path: str, seconds: float, connections: int) -> float:
    """Requests/second measured by wrk (2 threads)."""
    headers = [arg for key, value in HEADERS.items() for arg in ("-H", f"{key}: {value}")]
    result = subprocess.run(
        ["wrk", "-t2", f"-c{connections}", f"-d{seconds}s", "--latency", *headers, f"http://127.0.0.1:{port}{path}"],
        capture_output=True, text=True, timeout=seconds + 30, check=True,
    )
    non_2xx = re.search(r"Non-2xx or 3xx responses: (\d+)", result.stdout)
    if non_2xx:
        raise SystemExit(f"{path}: {non_2xx.group(1)} error responses\n{result.stdout}")
    return float(re.search(r"Requests/sec:\s+([\d.]+)", result.stdout).group(1))


def load_with_python(port: int, path: str, seconds: float, connections: int) -> float:
    """Requests/second from `connections` threads, each reusing an http.client connection while the server allows."""
    stop = time.monotonic() + seconds
    counts = [0] * connections
    failures: list[str] = []

    def worker(index: int) -> None:
        connection = http.client.HTTPConnection("127.0.0.1", port, timeout=10)
        while time.monotonic() < stop and not failures:
            try:
                connection.request("GET", path, headers=HEADERS)
                response = connection.getresponse()
                response.read()
                if response.status != 200:
                    failures.append(f"{path}: HTTP {response.status}")
                counts[index] += 1
                if response.getheader("Connection", "").lower() == "close":
                    connection.close()
            except (OSError, http.client.HTTPException):
                connection.close()
                connection = http.client.HTTPConnection("127.0.0.1", port, timeout=10)
        connection.close()

    started = time.monotonic()
    with ThreadPoolExecutor(max_workers=connections) as pool:
        list(pool.map(worker, range(connections)))
    if failures:
        raise SystemExit(failures[0])
    return sum(counts) / (time.monotonic() - started)


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--seconds", type=float, default=2.0, help="duration of each measurement")
    parser.add_argument("--rounds", type=int, default=9, help="interleaved rounds (ratios: median of rounds)")
    parser.add_argument("--connections", type=int, default=16)
    parser.add_argument("--python", action="store_true", help="use the Python load generator even if wrk exists")
    options = parser.parse_args()
    use_wrk = shutil.which("wrk") is not None and not options.python
    load = load_with_wrk if use_wrk else load_with_python
    if use_wrk:
        options.seconds = max(1, round(options.seconds))

    sys.path.insert(0, str(ROOT))
    from notifier import migrate

    with tempfile.TemporaryDirectory(prefix="notifier-bench-") as tmp:
        database = f"sqlite:///{Path(tmp) / 'bench.sqlite3'}"
        migrate.upgrade(database)
        env = {k: v for k, v in os.environ.items() if not k.startswith(("NOTIFIER_", "TWILIO_"))}
        env.update(NOTIFIER_DATABASE_URL=database, NOTIFIER_BOARDS_FILE=str(ROOT / "boards.yaml"),
                   NOTIFIER_INSTANCE_DIR=str(Path(tmp) / "instance"), NOTIFIER_SECRET_KEY="bench-only")  # noqa: S106 - a throwaway key for a local run
        port = free_port()
        command = gunicorn_command(port)
        log = (Path(tmp) / "gunicorn.log").open("w")
        server = subprocess.Popen(command, cwd=ROOT, env=env, stdout=log, stderr=subprocess.STDOUT)
        try:
            wait_until_up(port, server)
            print(f"gunicorn: {' '.join(command[1:])}")
            print(f"load: {'wrk' if use_wrk else 'python threads'}, {options.connections} connections, "
                  f"{options.seconds:g} s x {options.rounds} rounds per path, on {os.cpu_count()} CPUs")
            for path in PATHS:  # warm up: every worker renders its cache and imports everything once
                load(port, path, 1, options.connections)
            rates: dict[str, list[float]] = {path: [] for path in PATHS}
            for round_number in range(options.rounds):
                # Rotate the order each round so a slow moment of the machine does not always hit the same path.
                shift = round_number % len(PATHS)
                for path in PATHS[shift:] + PATHS[:shift]:
                    rates[path].append(load(port, path, options.seconds, options.connections))
        finally:
            server.terminate()
            server.wait(timeout=30)
            log.close()
        in_process = per_request_cost(env)

    print("\nunder gunicorn, requests/second (best of rounds; the machine's other work only ever slows a round):")
    for path in PATHS:
        rounds = ", ".join(f"{r:.0f}" for r in rates[path])
        print(f"  {path:<14} {max(rates[path]):7.0f} req/s   (rounds: {rounds})")
    print("in-process, no sockets, microseconds per request through the WSGI app (best of batches):")
    for path in PATHS:
        print(f"  {path:<14} {in_process[path]:7.0f} us")
    print(f"load average of the machine (1, 5, 15 min): {', '.join(f'{x:.1f}' for x in os.getloadavg())}")
    missed = False
    for path in PATHS[:-1]:
        # Each round measures the three paths a few seconds apart, so a round's ratio is the least disturbed by
        # whatever else the machine does; the median of rounds is the figure compared with the target.
        per_round = [a / b for a, b in zip(rates[path], rates[TRIVIAL], strict=True)]
        ratio = statistics.median(per_round)
        missed |= ratio < TARGET
        print(f"ratio {path} / {TRIVIAL}: {ratio:.2f} (target >= {TARGET}; per round: "
              f"{', '.join(f'{r:.2f}' for r in per_round)}; best rates {max(rates[path]) / max(rates[TRIVIAL]):.2f}; "
              f"in-process {in_process[TRIVIAL] / in_process[path]:.2f})")
    return 1 if missed else 0


def per_request_cost(env: dict[str, str], batches: int = 7, requests: int = 400) -> dict[str, float]:
    """Microseconds per request through the app's WSGI callable, without sockets: the app's own cost per path.

    Paths are measured in interleaved batches and the fastest batch counts (like `timeit`), so a moment when the
    machine is busy elsewhere does not count against one path.
    """
    from werkzeug.test import EnvironBuilder

    os.environ.update({k: v for k, v in env.items() if k.startswith("NOTIFIER_")})
    sys.path.insert(0, str(ROOT / "bench"))
    import benchapp

    app = benchapp.create_app()
    environs = {path: EnvironBuilder(path=path, headers=HEADERS).get_environ() for path in PATHS}

    def start_response(*args: object) -> None:
        return None

    best = {path: float("inf") for path in PATHS}
    for batch in range(batches + 1):
        for path in PATHS:
            started = time.perf_counter()
            for _ in range(requests):
                b"".join(app(dict(environs[path]), start_response))
            if batch:  # the first batch only warms the page cache
                best[path] = min(best[path], (time.perf_counter() - started) / requests * 1e6)
    app.extensions["notifier"].engine.dispose()
    return best


if __name__ == "__main__":
    sys.exit(main())
