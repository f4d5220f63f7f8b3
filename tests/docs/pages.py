"""Read the documentation's examples: every fenced block of README.md and docs/**/*.md.

The page format (docs/architecture.md, "Docs as tests"):

- Every fence names its kind in its info string. ``console`` (or ``sh``, ``shell``, ``bash``):
  shell commands; ``python``: a Python program; ``py-sandboxes``: a rule file; ``text`` (or
  ``yaml``, ``json``, ``toml``): shown, never run (output, diagrams, synopses). A fence with no
  kind fails the suite: the reader must be told what it is looking at, and so must the runner.
- A ``console`` block holds ``$ command`` lines, each followed by the output it shows (a
  trailing ``\\`` continues a command). A shell block without ``$`` is one command per line,
  each of which must succeed.
- An HTML comment right before the fence tunes the run (invisible on the rendered page):
  ``<!-- docs-test: OPTION ... -->``. Options: ``skip: REASON`` (REASON says why, and
  ``covered-by=tests/PATH.py::test_name`` names the test that runs it: the runner checks that
  the test exists and holds the command), ``fixture=NAME`` (the files of
  ``tests/docs/fixtures/NAME`` are copied into the block's directory), ``env=NAME=VALUE``,
  ``needs=PROVIDER`` (skipped, or failed under PYSANDBOXES_REQUIRE_ALL, where it cannot run),
  ``stand-in=URL`` (a Python block's URL is served by a local stand-in: the page needs a
  network), ``match=exact`` (the output must be the shown text, not just hold its lines),
  ``same-as=PATH`` (a rule-file block must be lines of that file of the repository).
- Shown output: every shown line must appear in the output, in order; ``...`` alone on a line
  stands for any lines, and inside a line for any text.
"""

from __future__ import annotations

import re
from dataclasses import dataclass, field
from pathlib import Path

from tests.helpers import REPO

SHELL = frozenset({"console", "sh", "shell", "bash"})
SHOWN = frozenset({"text", "yaml", "json", "toml"})
KINDS = SHELL | SHOWN | {"python", "py-sandboxes"}

_FENCE = re.compile(r"^(\s*)(`{3,})\s*([\w.+-]*)(.*)$")
_MARKER = re.compile(r"<!--\s*docs-test:(.*?)-->", re.S)


@dataclass
class Block:
    """One fenced block of a page, with the options of the marker before it."""

    page: Path
    line: int  # 1-based line of the opening fence
    kind: str
    text: str
    options: dict[str, list[str]] = field(default_factory=dict)

    @property
    def id(self) -> str:
        return f"{self.page.relative_to(REPO)}:{self.line}"

    def option(self, name: str) -> str | None:
        values = self.options.get(name)
        return values[-1] if values else None


def pages() -> list[Path]:
    """README.md and every page under docs/, in a stable order."""

    return [REPO / "README.md", *sorted((REPO / "docs").rglob("*.md"))]


def parse_options(text: str) -> dict[str, list[str]]:
    """``skip: reason with words covered-by=x`` -> {"skip": ["reason with words"], ...}."""

    options: dict[str, list[str]] = {}
    text = " ".join(text.split())
    skip = re.match(r"skip:\s*(.*?)(?=\s+[\w-]+=|$)", text)
    if skip:
        options["skip"] = [skip.group(1).strip()]
        text = text[skip.end() :]
    for word in text.split():
        name, eq, value = word.partition("=")
        options.setdefault(name, []).append(value if eq else "")
    return options


def blocks(page: Path) -> list[Block]:
    """The fenced blocks of ``page`` (nested fences of a longer opening fence included)."""

    lines = page.read_text(encoding="utf-8").splitlines()
    found: list[Block] = []
    i = 0
    while i < len(lines):
        match = _FENCE.match(lines[i])
        if not match:
            i += 1
            continue
        indent, fence, kind = match.group(1), match.group(2), match.group(3)
        start = i
        body: list[str] = []
        i += 1
        while i < len(lines) and not (
            lines[i].strip().startswith(fence) and lines[i].strip().strip("`") == ""
        ):
            line = lines[i]
            body.append(line[len(indent) :] if line.startswith(indent) else line.lstrip())
            i += 1
        i += 1
        before = "\n".join(lines[max(0, start - 6) : start])
        markers = list(_MARKER.finditer(before))
        options: dict[str, list[str]] = {}
        if markers and before[markers[-1].end() :].strip() == "":
            options = parse_options(markers[-1].group(1))
        found.append(Block(page, start + 1, kind, "\n".join(body) + "\n", options))
    return found


def all_blocks() -> list[Block]:
    return [block for page in pages() for block in blocks(page)]


# -- console blocks ---------------------------------------------------------------------------


@dataclass
class Step:
    """One ``$ command`` of a console block and the output the page shows for it."""

    command: str
    shown: list[str]


def console_steps(text: str) -> list[Step]:
    """The commands of a console block (``$ `` lines) and their shown output; for a block
    without any ``$``, every non-blank line that is not a comment is a command."""

    lines = text.splitlines()
    if not any(line.startswith("$ ") or line == "$" for line in lines):
        return [
            Step(line, [])
            for line in _joined(lines)
            if line.strip() and not line.lstrip().startswith("#")
        ]
    steps: list[Step] = []
    for line in lines:
        if line.startswith("$ "):
            steps.append(Step(line[2:], []))
        elif steps and steps[-1].command.endswith("\\"):
            steps[-1].command = steps[-1].command[:-1] + "\n" + line
        elif steps:
            steps[-1].shown.append(line)
    return steps


def _joined(lines: list[str]) -> list[str]:
    out: list[str] = []
    for line in lines:
        if out and out[-1].endswith("\\"):
            out[-1] = out[-1][:-1] + "\n" + line
        else:
            out.append(line)
    return out


def shown_in(shown: list[str], output: str) -> str | None:
    """``None`` when ``output`` holds the ``shown`` lines in order (``...`` wildcards), else
    what is missing."""

    actual = output.splitlines()
    position = 0
    for want in shown:
        if want.strip() in ("...", ""):
            continue
        pattern = _line_pattern(want)
        while position < len(actual) and not pattern.fullmatch(actual[position].rstrip()):
            position += 1
        if position >= len(actual):
            return f"the shown line {want!r} is not in the output (in this order)"
        position += 1
    return None


def exactly(shown: list[str], output: str) -> str | None:
    """``match=exact``: the output is the shown lines (``...`` wildcards inside a line)."""

    actual = [line.rstrip() for line in output.splitlines()]
    wanted = [line.rstrip() for line in shown]
    while wanted and not wanted[-1]:
        wanted.pop()
    if len(actual) != len(wanted) or not all(
        _line_pattern(w).fullmatch(a) for w, a in zip(wanted, actual, strict=True)
    ):
        return "the output is not the shown text:\n" + "\n".join(actual)
    return None


def _line_pattern(line: str) -> re.Pattern[str]:
    parts = [re.escape(part) for part in line.rstrip().split("...")]
    return re.compile(".*".join(parts))
