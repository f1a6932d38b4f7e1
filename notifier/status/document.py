"""Reading and writing boards.yaml: people edit it by hand, so every mistake is reported as `PATH:LINE: message`.

YAML 1.2 (ruamel) is used so that `status: off` stays the string "off" (and is then refused) instead of
becoming `False`. Date-times are kept as text until the model parses them, so a bad one is reported with its line.
Writing a file (`boards export`, development's follow mode) is atomic: temp file, fsync, rename. The published
document itself lives in the database (`status.published`); this module only reads, checks and writes YAML text.
"""

from __future__ import annotations

import hashlib
import io
import os
import re
import stat
import tempfile
import threading
from collections.abc import Mapping
from dataclasses import dataclass
from datetime import UTC, datetime
from pathlib import Path
from typing import Any

from pydantic import ValidationError
from ruamel.yaml import YAML
from ruamel.yaml.comments import CommentedMap, CommentedSeq
from ruamel.yaml.constructor import RoundTripConstructor
from ruamel.yaml.error import MarkedYAMLError, YAMLError

from notifier.errors import BoardFileError
from notifier.status.boards import Category, Panel, Status, StatusFile


@dataclass(frozen=True)
class Problem:
    """One mistake in the file, printed the way compilers do so editors can jump to it."""

    path: str
    line: int
    message: str

    def __str__(self) -> str:
        return f"{self.path}:{self.line}: {self.message}"


@dataclass(frozen=True)
class Snapshot:
    """A validated document and the fingerprint of its text (used as its version and as the pages' ETag).

    `number` is the published version's number in the database (`status.published`), None for a file on disk.
    """

    status: StatusFile
    version: str
    mtime: float
    number: int | None = None


class _TextTimestamps(RoundTripConstructor):
    """Keeps date-times as their text, so the model parses them and a bad one gets a line number."""


_TextTimestamps.add_constructor(
    "tag:yaml.org,2002:timestamp", lambda self, node: str(self.construct_scalar(node))
)


def _reader() -> YAML:
    yaml = YAML(typ="rt")
    yaml.Constructor = _TextTimestamps
    return yaml


def round_trip_yaml() -> YAML:
    """The YAML instance used for edits: keeps comments, order, quotes and layout of the rest of the file."""
    yaml = YAML(typ="rt")
    yaml.indent(mapping=2, sequence=4, offset=2)
    yaml.preserve_quotes = True
    yaml.width = 4096
    return yaml


def version_of(data: bytes) -> str:
    """The version of a file's content: a short SHA-256, stable across processes and machines."""
    return hashlib.sha256(data).hexdigest()[:16]


def load(path: str | os.PathLike[str], now: datetime | None = None) -> Snapshot:
    """Read and validate the file at `path`; raise `BoardFileError` listing every problem with its line."""
    path = Path(path)
    try:
        data = path.read_bytes()
        mtime = path.stat().st_mtime
    except OSError as error:
        raise BoardFileError([Problem(str(path), 0, f"cannot read the file: {error.strerror}")]) from None
    return Snapshot(parse(data, str(path), now), version_of(data), mtime)


def parse(data: bytes | str, path: str = "boards.yaml", now: datetime | None = None) -> StatusFile:
    """Validate the text of a status file; raise `BoardFileError` with `PATH:LINE: message` problems.

    `now` (default: the current time) is when the file is read: a board's own `effective` time says since when its
    status is in force, so it may not lie ahead of it (a change announced ahead goes under `upcoming:`).
    """
    text = data.decode("utf-8", errors="replace") if isinstance(data, bytes) else data
    known = _recent.get(text)
    if known is None:
        document, status = _validate(text, path, now)
        _recent.keep(text, (document, status))
    else:
        document, status = known
    problems = _announced_as_effective(document, status, path, now or datetime.now(UTC))
    if problems:
        raise BoardFileError(sorted(set(problems), key=lambda p: (p.line, p.message)))
    return status


def _validate(text: str, path: str, now: datetime | None) -> tuple[CommentedMap, StatusFile]:
    """The YAML and the model of a text, or `BoardFileError` with every problem found (the part of `parse` that
    does not depend on the time, bar the announced-ahead check it adds to a report of other problems)."""
    try:
        document = _reader().load(io.StringIO(text))
    except MarkedYAMLError as error:
        mark = error.problem_mark or error.context_mark
        line = mark.line + 1 if mark else 1
        reason = error.problem or error.context or "invalid YAML"
        raise BoardFileError([Problem(path, line, f"YAML syntax: {reason}")]) from None
    except YAMLError as error:
        raise BoardFileError([Problem(path, 1, f"YAML syntax: {error}")]) from None
    except ValueError as error:  # ruamel reads an int-looking scalar it then cannot convert (e.g. "1_a")
        raise BoardFileError([Problem(path, _line_of_unreadable_number(text), f"YAML value: {error}")]) from None
    if not isinstance(document, CommentedMap):
        raise BoardFileError([Problem(path, 1, "the file must be a mapping with a top-level 'boards:' list")])

    problems = _duplicate_ids(document, path)
    try:
        status = StatusFile.model_validate(document)
    except ValidationError as error:
        problems += [_problem(document, item, path) for item in error.errors()]
    else:
        if not problems:
            return document, status
        problems += _announced_as_effective(document, status, path, now or datetime.now(UTC))
    raise BoardFileError(sorted(set(problems), key=lambda p: (p.line, p.message)))


class _Recent:
    """The last few texts that validated, with their YAML and model: the clock reads the same document every
    second, and a publish is read again by the cycle that records it. A round-trip YAML load and the model cost
    tens of milliseconds, in the process that also sends, between a correction's save and its record. The models
    are frozen, and whether a text is valid does not depend on the time, bar the announced-ahead check that
    `parse` makes on every call."""

    SIZE = 4

    def __init__(self) -> None:
        self._items: dict[str, tuple[CommentedMap, StatusFile]] = {}
        self._lock = threading.Lock()

    def get(self, text: str) -> tuple[CommentedMap, StatusFile] | None:
        with self._lock:
            return self._items.get(text)

    def keep(self, text: str, parsed: tuple[CommentedMap, StatusFile]) -> None:
        with self._lock:
            self._items[text] = parsed
            while len(self._items) > self.SIZE:
                del self._items[next(iter(self._items))]


_recent = _Recent()


def _line_of_unreadable_number(text: str) -> int:
    """The line of the first scalar YAML takes for an integer that is not one (1 when none is found)."""
    from ruamel.yaml.nodes import MappingNode, ScalarNode, SequenceNode

    pending = [YAML(typ="rt").compose(io.StringIO(text))]
    while pending:
        node = pending.pop(0)
        if isinstance(node, ScalarNode) and str(getattr(node.tag, "value", node.tag)) == "tag:yaml.org,2002:int":
            try:
                int(node.value.replace("_", ""), 0)
            except ValueError:
                return int(node.start_mark.line) + 1
        elif isinstance(node, SequenceNode):
            pending.extend(node.value)
        elif isinstance(node, MappingNode):
            pending.extend(part for pair in node.value for part in pair)
    return 1


def _duplicate_ids(document: CommentedMap, path: str) -> list[Problem]:
    boards = document.get("boards")
    if not isinstance(boards, CommentedSeq):
        return []
    seen: dict[str, int] = {}
    problems = []
    for index, board in enumerate(boards):
        if not isinstance(board, CommentedMap) or not isinstance(board.get("id"), str):
            continue
        line = board.lc.value("id")[0] + 1
        if board["id"] in seen:
            problems.append(
                Problem(path, line, f"boards.{index}.id: duplicate id {board['id']!r} (first used on line "
                                    f"{seen[board['id']]})")
            )
        else:
            seen[board["id"]] = line
    return problems


def _announced_as_effective(document: CommentedMap, status: StatusFile, path: str, now: datetime) -> list[Problem]:
    """A board's own `effective` lying ahead: the old way of announcing ahead, which hid what is in force today."""
    problems = []
    for index, board in enumerate(status.boards):
        if board.effective is not None and board.effective > now:
            when = board.effective.isoformat(timespec="minutes")
            problems.append(Problem(path, _line_of(document, ["boards", index, "effective"], False),
                                    f"boards.{index}.effective: {when} is still ahead; `status` and `effective` say "
                                    f"what is in force now and since when. To announce a change ahead, add it under "
                                    f"`upcoming:`, e.g. upcoming: [{{from: {when}, status: {board.status}}}]"))
    return problems


_ALLOWED = {
    "status": [s.value for s in Status],
    "panel": [p.value for p in Panel],
    "category": [c.value for c in Category],
}


def _problem(document: CommentedMap, error: Mapping[str, Any], path: str) -> Problem:
    """Turn one pydantic error into a sentence a board's staff member can act on, at the right line."""
    loc = [part for part in error["loc"] if part != "[key]"]
    hinted = _HINT.match(str(error.get("msg", "")).removeprefix("Value error, "))
    if hinted and error["type"] == "value_error":  # a rule about several fields names the one to look at
        loc += [int(part) if part.isdigit() else part for part in hinted.group(1).split(".")]
        error = {**error, "msg": hinted.group(2)}
    where = ".".join(str(part) for part in loc) or "boards"
    line = _line_of(document, loc, missing=error["type"] == "missing")
    kind = error["type"]
    if kind == "extra_forbidden":
        message = f"{where}: unknown field {loc[-1]!r}"
    elif kind == "missing":
        message = f"{where}: missing required field {loc[-1]!r}"
    elif kind == "enum":
        message = f"{where}: {_enum_message(error)}"
    else:
        message = f"{where}: {error['msg'].removeprefix('Value error, ')}"
    return Problem(path, line, message)


_HINT = re.compile(r"^([a-z_]+(?:\.\d+)?(?:\.[a-z_]+)?): (.+)$", re.S)


def _enum_message(error: Mapping[str, Any]) -> str:
    value = error.get("input")
    expected = str(error.get("ctx", {}).get("expected", ""))
    for what, allowed in _ALLOWED.items():
        if f"'{allowed[-1]}'" in expected:
            label = "withdrawal category" if what == "category" else what
            return f"unknown {label} {value!r}; allowed: {', '.join(allowed)}"
    return str(error["msg"])


def _line_of(document: Any, loc: list[Any], missing: bool) -> int:
    """1-based line of the deepest part of `loc` that exists in the file (for a missing field: its parent)."""
    node, line = document, 1
    for part in loc:
        if isinstance(node, CommentedMap) and part in node:
            line = node.lc.key(part)[0] + 1
            node = node[part]
        elif isinstance(node, CommentedSeq) and isinstance(part, int) and 0 <= part < len(node):
            line = node.lc.item(part)[0] + 1
            node = node[part]
        else:
            break
    return line


def save(path: str | os.PathLike[str], text: str) -> None:
    """Replace the file with `text` atomically: validated first, then temp file, fsync, rename, fsync the folder.

    A reader sees the old file or the new one, never a half-written one. The new file keeps the old one's mode
    (mkstemp makes 0600, which would lock out readers running as another user) and, where allowed, its owner.
    """
    parse(text, str(path))  # raises before anything on disk changes
    write(path, text)


def write(path: str | os.PathLike[str], text: str) -> None:
    """Replace the file with `text` atomically (temp file, fsync, rename, fsync the folder), without validating."""
    path = Path(path)
    try:
        before: os.stat_result | None = path.stat()
    except FileNotFoundError:
        before = None
    fd, tmp = tempfile.mkstemp(prefix=f".{path.name}.", suffix=".tmp", dir=path.parent)
    try:
        if before is not None:
            os.fchmod(fd, stat.S_IMODE(before.st_mode))
            try:
                os.fchown(fd, before.st_uid, before.st_gid)
            except PermissionError:  # only root may give a file away; a group we are not in is refused too
                pass
        else:
            os.fchmod(fd, 0o666 & ~_umask())
        with os.fdopen(fd, "w", encoding="utf-8") as handle:
            handle.write(text)
            handle.flush()
            os.fsync(handle.fileno())
        os.replace(tmp, path)
    except BaseException:
        Path(tmp).unlink(missing_ok=True)
        raise
    directory = os.open(path.parent, os.O_RDONLY)
    try:
        os.fsync(directory)
    finally:
        os.close(directory)


def _umask() -> int:
    """The process's umask (read by setting it, then putting it back)."""
    current = os.umask(0o022)
    os.umask(current)
    return current
