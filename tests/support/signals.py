"""Starting a project command the way a script's background job does, and making sure a test leaves no process
behind.

A shell starts a background job with SIGINT ignored, and the job's children inherit that: Python then installs no
KeyboardInterrupt, so only a handler of the process's own makes Ctrl-C (or a test's SIGINT) stop it.
"""

from __future__ import annotations

import os
import signal
import subprocess
import sys
import time
from collections.abc import Iterator, Mapping
from contextlib import contextmanager
from pathlib import Path
from typing import IO

from notifier.config import ROOT


def _ignore_sigint() -> None:
    signal.signal(signal.SIGINT, signal.SIG_IGN)


@contextmanager
def started_with_sigint_ignored(args: list[str], env: Mapping[str, str], out: IO) -> Iterator[subprocess.Popen]:
    """`python -m notifier ARGS` in a process group of its own with SIGINT ignored as it starts; the whole group
    is killed on the way out, whatever the test did."""
    process = subprocess.Popen([sys.executable, "-m", "notifier", *args], cwd=ROOT, env={**os.environ, **env},
                               stdout=out, stderr=subprocess.STDOUT, start_new_session=True,
                               preexec_fn=_ignore_sigint)
    try:
        yield process
    finally:
        try:
            os.killpg(process.pid, signal.SIGKILL)
        except ProcessLookupError:
            pass
        process.wait()


def wait_for_line(log: Path, text: str, timeout: float = 60.0) -> bool:
    """Wait until `text` appears in the file at `log` (a busy machine may take a while to import and start)."""
    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline:
        if text in log.read_text():
            return True
        time.sleep(0.2)
    return False
