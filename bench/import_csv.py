"""Bulk import benchmark: write a CSV of N rows (every row an email, every other row a mobile number too, boards
and panels varied, a few bad lines), then run the real command `python -m notifier subscribers import` on it,
twice: the first run stores everything, the second finds every row already stored.

Prints rows/second and elapsed time per run, then checks nothing was stored twice.

    .venv/bin/python bench/import_csv.py --rows 250000
    .venv/bin/python bench/import_csv.py --rows 250000 --database-url postgresql://postgres@127.0.0.1/bench
    .venv/bin/python bench/import_csv.py --rows 250000 --invite   # pending + invitations queued (a sender "runs")
"""

from __future__ import annotations

import argparse
import os
import resource
import shutil
import subprocess
import sys
import tempfile
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))

BOARDS = ("tdsb", "peel", "ocdsb", "cepeo", "hdsb")
PANELS = ("elementary", "secondary", "both", "")
BAD_EVERY = 10_000  # one bad line (an invalid email) per this many rows


def write_csv(path: Path, rows: int) -> int:
    """The file; returns how many of its lines are bad."""
    bad = 0
    with path.open("w", encoding="utf-8") as handle:
        handle.write("email,phone,board,panel,language\n")
        for i in range(1, rows + 1):
            if i % BAD_EVERY == 0:
                handle.write(f"parent{i}@example,,tdsb,,en\n")
                bad += 1
                continue
            # 613 and 416 with exchanges 200-999: 1.6 million distinct valid Canadian numbers.
            phone = f"{613 if i % 4 else 416}-{200 + (i // 10000) % 800}-{i % 10000:04d}" if i % 2 == 0 else ""
            handle.write(f"parent{i}@example.org,{phone},{BOARDS[i % len(BOARDS)]},{PANELS[i % len(PANELS)]},"
                         f"{'fr' if i % 5 == 0 else 'en'}\n")
    return bad


def _children_cpu() -> float:
    usage = resource.getrusage(resource.RUSAGE_CHILDREN)
    return usage.ru_utime + usage.ru_stime


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--rows", type=int, default=250_000)
    parser.add_argument("--database-url", help="default: a temporary SQLite file")
    parser.add_argument("--invite", action="store_true",
                        help="import as pending and queue the invitations (default: --confirmed, no invitations)")
    args = parser.parse_args()

    from sqlalchemy import func, select, text

    from notifier import migrate
    from notifier.config import Settings
    from notifier.db import make_engine, make_sessionmaker
    from notifier.delivery import senders
    from notifier.delivery.outbox import OutboxRow
    from notifier.subscribers.models import Consent, Contact, Follow, Subscriber

    workdir = Path(tempfile.mkdtemp(prefix="import-"))
    url = args.database_url or f"sqlite:///{workdir / 'bench.sqlite3'}"
    url = Settings.from_env({"NOTIFIER_DATABASE_URL": url}).database_url
    engine = make_engine(url)
    if engine.dialect.name == "postgresql":
        with engine.begin() as connection:
            connection.execute(text("DROP SCHEMA public CASCADE"))
            connection.execute(text("CREATE SCHEMA public"))
    migrate.upgrade(url)
    sessions = make_sessionmaker(engine)
    csv_path = workdir / "contacts.csv"
    bad = write_csv(csv_path, args.rows)
    env = {**os.environ, "NOTIFIER_DATABASE_URL": url, "NOTIFIER_BOARDS_FILE": str(ROOT / "boards.yaml"),
           "NOTIFIER_SECRET_KEY": "bench", "NOTIFIER_BASE_URL": "https://status.example.org",
           "NOTIFIER_OUTBOX_DIR": str(workdir / "outbox"), "NOTIFIER_INSTANCE_DIR": str(workdir / "instance")}
    command = [sys.executable, "-m", "notifier", "subscribers", "import", str(csv_path)]
    if not args.invite:
        command += ["--confirmed", "--consent-note", "benchmark"]
    registration = senders.acquire(sessions, "bench", shared_limiter=False) if args.invite else None
    mode = "pending + invitations queued" if args.invite else "confirmed"
    print(f"{args.rows} rows ({bad} bad), {engine.dialect.name}, {mode}, load average {os.getloadavg()[0]:.1f}")
    try:
        for run in ("first", "second"):
            started, cpu = time.perf_counter(), _children_cpu()
            result = subprocess.run(command, cwd=ROOT, env=env, capture_output=True, text=True, check=False)
            elapsed, cpu = time.perf_counter() - started, _children_cpu() - cpu
            summary = result.stdout.strip().splitlines()[-1] if result.stdout.strip() else result.stderr[-2000:]
            print(f"{run} run: {elapsed:.1f} s, {args.rows / elapsed:,.0f} rows/s (command CPU {cpu:.1f} s, "
                  f"{args.rows / cpu:,.0f} rows per CPU second) — {summary}")
    finally:
        if registration is not None:
            senders.release(sessions, registration)
    with sessions() as session:
        counts = {t.__name__: session.scalar(select(func.count()).select_from(t))
                  for t in (Subscriber, Contact, Follow, Consent, OutboxRow)}
    print("stored:", ", ".join(f"{name} {number:,}" for name, number in counts.items()))
    good = args.rows - bad
    expected_contacts = good + sum(1 for i in range(2, args.rows + 1, 2) if i % BAD_EVERY)
    ok = counts["Contact"] == expected_contacts and counts["Subscriber"] == good
    print("nothing stored twice" if ok else f"MISMATCH: expected {expected_contacts} contacts, {good} subscribers")
    engine.dispose()
    shutil.rmtree(workdir, ignore_errors=True)
    return 0 if ok else 1


if __name__ == "__main__":
    raise SystemExit(main())
