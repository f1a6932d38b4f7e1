"""gunicorn's settings for the web process (Procfile: `--config python:notifier.web.gunicorn_conf`).

Prometheus' multiprocess mode: each worker writes its figures to files in PROMETHEUS_MULTIPROC_DIR and /metrics
adds them up, whichever worker answers. The folder must be set before any worker imports prometheus_client and
emptied at each start (files of a previous run would be counted again); `child_exit` marks a worker that ended,
so its live gauges stop counting. Without PROMETHEUS_MULTIPROC_DIR the folder is `metrics/` in the instance folder
(NOTIFIER_INSTANCE_DIR): one web process per instance folder, like the database file.

The command line's options (bind, workers, logger class) still apply; this file only adds hooks.
"""

from __future__ import annotations

import os
from pathlib import Path

from notifier.config import INSTANCE

if not os.environ.get("PROMETHEUS_MULTIPROC_DIR"):  # decided in the master, before prometheus_client is imported
    os.environ["PROMETHEUS_MULTIPROC_DIR"] = str(Path(os.environ.get("NOTIFIER_INSTANCE_DIR") or INSTANCE) / "metrics")


def on_starting(server) -> None:
    """Empty the metrics folder of a previous run (or make it)."""
    folder = Path(os.environ["PROMETHEUS_MULTIPROC_DIR"])
    folder.mkdir(parents=True, exist_ok=True)
    for stale in folder.glob("*.db"):
        stale.unlink()


def child_exit(server, worker) -> None:
    """A worker ended: its live gauges no longer count (its counters and histograms still do)."""
    from prometheus_client import multiprocess

    multiprocess.mark_process_dead(worker.pid)
