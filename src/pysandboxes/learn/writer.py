"""Write learned rules: a new rule file from the template, or a dated block added to an old one.

- A **new file** is the full commented template (``pysandboxes.policy.template.render_template``)
  with the learned lines in their sections.
- An **existing file** keeps every byte it had; the lines it lacks (compared by meaning, before
  this module is reached: :func:`pysandboxes.learn.generalize.generalize` drops what the file
  already grants) are appended under a dated header, between the marker comments that tell the
  rule parser a missing exposed path there is a warning, not an error. The file is copied to a
  dated backup first (``FILE.YYYYMMDD-HHMMSS.bak``, never overwriting an older backup).
- Every write is atomic: a temporary file in the same directory, ``fsync``, ``os.replace``, then
  ``fsync`` of the directory. A crash leaves the old file or the new one, never half of one.
- Nothing learned, nothing written (the caller checks :attr:`Learned.empty`).
"""

from __future__ import annotations

import contextlib
import os
import shutil
import stat
import tempfile
from collections.abc import Mapping, Sequence
from datetime import UTC, datetime
from typing import IO, Any

from pysandboxes.learn.generalize import SECTIONS, Learned
from pysandboxes.policy.template import LEARNED_BEGIN, LEARNED_END, render_template

#: The heading of each section inside a dated block.
SECTION_TITLES: Mapping[str, str] = {
    "files": "Files and directories",
    "network": "Network",
    "imports": "Modules",
    "environment": "Environment variables",
    "api": "Sensitive calls",
    "eval": "Dynamically evaluated code",
}


def _markers() -> tuple[str, str]:
    """The marker comments the rule parser recognises around a learned block (SPEC §2.2)."""

    return LEARNED_BEGIN, LEARNED_END


def dated_block(learned: Learned, when: datetime, *, source: str = "") -> str:
    """The block appended to an existing file: markers, date, one heading per section."""

    begin, end = _markers()
    stamp = when.astimezone(UTC).strftime("%Y-%m-%d %H:%M UTC")
    lines = [f"{begin} {stamp} ---"]
    lines.append("# Added by python-sb learning mode" + (f" ({source})" if source else "") + ".")
    lines.append("# It grants what the program did in that run: review before relying on it.")
    for section in SECTIONS:
        body = learned.sections.get(section)
        if not body:
            continue
        lines.append(f"# {SECTION_TITLES.get(section, section)}")
        lines.extend(body)
    lines.append(end)
    return "\n".join(lines) + "\n"


def merge_text(existing: str, learned: Learned, when: datetime, *, source: str = "") -> str:
    """``existing`` unchanged, then a blank line and the dated block of ``learned``."""

    text = existing
    if text and not text.endswith("\n"):
        text += "\n"
    if text.strip():
        text += "\n"
    return text + dated_block(learned, when, source=source)


def new_file_text(learned: Learned, default_provider: str) -> str:
    """The full template with the learned lines in their sections."""

    sections: dict[str, Sequence[str]] = {
        name: list(learned.sections[name]) for name in SECTIONS if learned.sections.get(name)
    }
    return render_template(default_provider=default_provider, learned_sections=sections)


def default_provider() -> str:
    """``landlock`` where Landlock works on this machine, else ``subprocess`` (SPEC §5.1)."""

    try:
        from pysandboxes.providers import get_provider

        if get_provider("landlock").availability().ok:
            return "landlock"
    except Exception:  # an unavailable provider module is the same answer: not here
        pass
    return "subprocess"


def atomic_write(path: str, text: str | bytes, *, mode: int | None = None) -> None:
    """Replace ``path`` with ``text`` atomically (same-directory temp file, fsync, rename):
    ``str`` written as UTF-8, ``bytes`` as they are (the start's units, ``launch/unit.py``)."""

    directory = os.path.dirname(path) or "."
    fd, temp = tempfile.mkstemp(
        dir=directory, prefix="." + os.path.basename(path) + ".", suffix=".tmp"
    )
    try:
        if isinstance(text, bytes):
            handle: IO[Any] = os.fdopen(fd, "wb")
        else:
            handle = os.fdopen(fd, "w", encoding="utf-8", newline="")
        with handle:
            handle.write(text)
            handle.flush()
            os.fsync(handle.fileno())
        if mode is None:
            umask = os.umask(0)
            os.umask(umask)
            mode = 0o666 & ~umask
        os.chmod(temp, mode)
        os.replace(temp, path)
    except BaseException:
        with contextlib.suppress(OSError):
            os.unlink(temp)
        raise
    _fsync_directory(directory)


def _fsync_directory(directory: str) -> None:
    try:
        dir_fd = os.open(directory, os.O_RDONLY | getattr(os, "O_DIRECTORY", 0))
    except OSError:
        return
    try:
        os.fsync(dir_fd)
    except OSError:
        pass
    finally:
        os.close(dir_fd)


def backup_path(path: str, when: datetime) -> str:
    """``FILE.YYYYMMDD-HHMMSS.bak``, with ``-2``, ``-3``... if that name is taken."""

    stamp = when.astimezone(UTC).strftime("%Y%m%d-%H%M%S")
    candidate = f"{path}.{stamp}.bak"
    counter = 2
    while os.path.lexists(candidate):
        candidate = f"{path}.{stamp}-{counter}.bak"
        counter += 1
    return candidate


def backup(path: str, when: datetime) -> str:
    """Copy ``path`` (bytes and mode) to a new dated backup, atomically; returns its name."""

    target = backup_path(path, when)
    directory = os.path.dirname(target) or "."
    fd, temp = tempfile.mkstemp(
        dir=directory, prefix="." + os.path.basename(path) + ".", suffix=".bak.tmp"
    )
    try:
        with open(path, "rb") as source, os.fdopen(fd, "wb") as handle:
            shutil.copyfileobj(source, handle)
            handle.flush()
            os.fsync(handle.fileno())
        shutil.copymode(path, temp)
        os.link(temp, target)  # fails instead of overwriting a backup made meanwhile
    finally:
        with contextlib.suppress(OSError):
            os.unlink(temp)
    _fsync_directory(directory)
    return target


def write_learned(
    path: str,
    learned: Learned,
    *,
    when: datetime | None = None,
    provider: str | None = None,
    source: str = "",
) -> tuple[str, str | None]:
    """Write ``learned`` into the rule file ``path`` (new or existing).

    Returns ``(real path written, backup path or None)``. ``path`` may be a symbolic link: the
    file it points to is updated and the link kept. Raises ``OSError`` when the file cannot be
    read or written; nothing is changed then.
    """

    when = when or datetime.now(UTC)
    real = os.path.realpath(path)
    try:
        with open(real, "rb") as handle:
            raw = handle.read()
        current_mode: int | None = stat.S_IMODE(os.stat(real).st_mode)
    except FileNotFoundError:
        raw = None
        current_mode = None
    if raw is None:
        atomic_write(real, new_file_text(learned, provider or default_provider()))
        return real, None
    existing = raw.decode("utf-8")  # a rule file is UTF-8 (SPEC §2.1); anything else is refused
    saved = backup(real, when)
    atomic_write(real, merge_text(existing, learned, when, source=source), mode=current_mode)
    return real, saved
