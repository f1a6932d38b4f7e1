"""Catalogues compiled on first use: readable by every process that serves them, and safe when two processes (two
test workers, the web app and the clock of a fresh clone) compile them at the same moment."""

from __future__ import annotations

import os
import shutil
import stat
import subprocess
import sys

from babel.support import Translations

from notifier.config import ROOT
from notifier.i18n import TRANSLATIONS, compile_catalogues


def _copy(tmp_path):
    root = tmp_path / "translations"
    shutil.copytree(TRANSLATIONS, root, ignore=shutil.ignore_patterns("LC_MESSAGES"))
    return root


def test_a_compiled_catalogue_is_readable_as_the_umask_allows(tmp_path):
    root = _copy(tmp_path)
    compile_catalogues(root)
    umask = os.umask(0)
    os.umask(umask)
    mode = stat.S_IMODE((root / "fr" / "LC_MESSAGES" / "messages.mo").stat().st_mode)
    assert mode == 0o644 & ~umask


def test_processes_compiling_at_once_leave_one_whole_catalogue(tmp_path):
    root = _copy(tmp_path)
    code = ("from pathlib import Path; from notifier.i18n import compile_catalogues; "
            f"compile_catalogues(Path({str(root)!r}))")
    processes = [subprocess.Popen([sys.executable, "-c", code], cwd=ROOT) for _ in range(4)]
    assert [p.wait(timeout=120) for p in processes] == [0, 0, 0, 0]
    assert sorted(p.name for p in (root / "fr" / "LC_MESSAGES").iterdir()) == ["messages.mo"]
    french = Translations.load(str(root), ["fr"], "messages")
    assert french.gettext("Sign up by text") == "S’abonner par texto"
