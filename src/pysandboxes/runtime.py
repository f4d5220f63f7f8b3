"""What the sandboxed child needs to know about its run, besides the policy.

The launcher builds a :class:`RunContext` in the parent; it crosses to the child as JSON next to
the policy (``pysandboxes.launch``) and is handed to ``pysandboxes.guard.arm``. Kept apart from
``policy`` because it describes one run (where the temp directory is, which program), not the
rules.
"""

from __future__ import annotations

from pysandboxes.record import Record as _Record

TYPE_CHECKING = False  # as typing.TYPE_CHECKING, without importing typing at run time
if TYPE_CHECKING:
    from typing import Any, Literal, TypeAlias

    Mode: TypeAlias = Literal["enforce", "learn", "audit"]
    ProgramKind: TypeAlias = Literal["script", "module", "code", "stdin", "repl"]
else:  # plain ``str`` at run time: this module is on the child's start-up path
    Mode = ProgramKind = str

_set = object.__setattr__

#: The python-sb command's environment variable that chooses whether the audit hook uses its
#: compiled accelerator (pysandboxes/guard/accelerator.py), and its values (the first is the
#: default): ``auto`` when it loads, ``off`` never, ``require`` or stop before the program.
ACCELERATOR_ENV = "PYSANDBOXES_ACCELERATOR"
ACCELERATOR_CHOICES = ("auto", "off", "require")


def accelerator_choice(environ: Any) -> str:
    """``PYSANDBOXES_ACCELERATOR`` of ``environ`` (unset or empty: ``auto``); ``ValueError``
    saying what is expected for any other value."""

    value = str(environ.get(ACCELERATOR_ENV, "") or ACCELERATOR_CHOICES[0]).strip().lower()
    if value not in ACCELERATOR_CHOICES:
        raise ValueError(
            f"{ACCELERATOR_ENV}={environ.get(ACCELERATOR_ENV)!r}: expected one of "
            + ", ".join(ACCELERATOR_CHOICES)
        )
    return value


#: RunContext fields and their defaults, in constructor order.
_DEFAULTS: tuple[tuple[str, Any], ...] = (
    ("mode", "enforce"),
    ("provider", "subprocess"),
    ("cwd", "/"),
    ("tmpdir", None),
    ("program_kind", "script"),
    ("program", None),
    ("python", ""),
    ("prefixes", ()),
    ("record_fd", -1),
    ("denials_file", None),
    ("home", ""),
    ("accelerator", "auto"),
)


class RunContext(_Record):
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
    - ``home``: python-sb's home directory, the ``~`` of the rules, for showing origins as
      ``~/...`` (SPEC §2.1) in the child, whose environment need not hold ``HOME``; ``""``:
      none to show.
    - ``accelerator``: ``PYSANDBOXES_ACCELERATOR`` of the python-sb command (``auto``, ``off``,
      ``require``): whether the hook uses its compiled accelerator (guard/accelerator.py).
    """

    __slots__ = tuple(sorted(name for name, _ in _DEFAULTS))
    _fields = tuple(name for name, _ in _DEFAULTS)

    mode: Mode
    provider: str
    cwd: str
    tmpdir: str | None
    program_kind: ProgramKind
    program: str | None
    python: str
    prefixes: tuple[str, ...]
    record_fd: int
    denials_file: str | None
    home: str
    accelerator: str

    def __init__(self, **values: Any) -> None:
        unknown = set(values) - set(self._fields)
        if unknown:
            raise TypeError(f"RunContext() got unexpected fields: {', '.join(sorted(unknown))}")
        for name, default in _DEFAULTS:
            _set(self, name, values.get(name, default))
        _set(self, "prefixes", tuple(self.prefixes))

    def to_dict(self) -> dict[str, Any]:
        data = _Record.to_dict(self)
        data["prefixes"] = list(self.prefixes)
        return data

    @classmethod
    def from_dict(cls, data: dict[str, Any]) -> RunContext:
        data = dict(data)
        data["prefixes"] = tuple(data.get("prefixes", ()))
        return cls(**data)
