"""What the sandboxed child needs to know about its run, besides the policy.

The launcher builds a :class:`RunContext` in the parent; it crosses to the child as JSON next to
the policy (``pysandboxes.launch``) and is handed to ``pysandboxes.guard.arm``. Kept apart from
``policy`` because it describes one run (where the temp directory is, which program), not the
rules.
"""

from __future__ import annotations

from dataclasses import asdict, dataclass
from typing import Any, Literal

Mode = Literal["enforce", "learn", "audit"]
ProgramKind = Literal["script", "module", "code", "stdin", "repl"]


@dataclass(frozen=True, slots=True)
class RunContext:
    """One run, as the child sees it.

    - ``mode``: ``enforce`` refuses; ``learn`` allows and records every access; ``audit`` allows
      and records only what the rules would refuse.
    - ``record_fd``: in ``learn``/``audit`` mode, an inherited descriptor where the guard writes one
      JSON line per access (the supervising parent turns them into rules or a summary); ``-1``
      when not recording.
    - ``denials_file``: ``--denials=FILE``; every refusal is appended there as one JSON line.
    - ``tmpdir``: the private temporary directory (also ``TMPDIR`` in the child's environment).
    - ``program_kind``/``program``: the script path (absolute), module name or ``None``.
    - ``python``: the interpreter path, ``prefixes``: its installation and site directories
      (readable by default, SPEC §3.1), computed by the parent.
    """

    mode: Mode = "enforce"
    provider: str = "subprocess"
    cwd: str = "/"
    tmpdir: str | None = None
    program_kind: ProgramKind = "script"
    program: str | None = None
    python: str = ""
    prefixes: tuple[str, ...] = ()
    record_fd: int = -1
    denials_file: str | None = None

    def to_dict(self) -> dict[str, Any]:
        data = asdict(self)
        data["prefixes"] = list(self.prefixes)
        return data

    @classmethod
    def from_dict(cls, data: dict[str, Any]) -> RunContext:
        data = dict(data)
        data["prefixes"] = tuple(data.get("prefixes", ()))
        return cls(**data)
