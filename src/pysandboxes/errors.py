"""The exceptions python-sb raises (SPEC §3.7).

Every refusal is an instance of :class:`SandBoxError` *and* of the builtin exception the refused
operation would raise on its own (``PermissionError``, ``ModuleNotFoundError``, ...), so that code
written for plain Python keeps its ``except OSError`` / ``except ImportError`` fallbacks and a
caller can still catch every refusal with ``except SandBoxError``.

A refusal carries a :class:`Denial` record: what was refused, by which rule (or that none allowed
it), where that rule comes from, and the line that would allow it. ``sandbox_denials(exc)`` walks
an exception chain and returns those records.

This module is imported by the child interpreter before the program runs: standard library only,
and nothing heavy (no ``dataclasses``: see :class:`_Record`).
"""

from __future__ import annotations

import errno

from pysandboxes.record import Record as _Record

TYPE_CHECKING = False  # as typing.TYPE_CHECKING, without importing typing at run time
if TYPE_CHECKING:  # annotations only: ``typing`` and ``collections.abc`` cost at start-up
    from collections.abc import Iterator, Sequence
    from typing import Any


__all__ = [
    "ConfigError",
    "ConfigProblem",
    "Denial",
    "EvalAttributeDenied",
    "EvalCallDenied",
    "EvalMemoryError",
    "EvalOutputError",
    "EvalRecursionError",
    "EvalSyntaxRejected",
    "EvalTimeout",
    "EvalWorkerError",
    "ProviderUnavailableError",
    "RuleApiPermissionError",
    "RuleConnectionRefusedError",
    "RuleEvalError",
    "RuleFileNotFoundError",
    "RuleImportError",
    "RuleModuleNotFoundError",
    "RulePermissionError",
    "SandBoxError",
    "sandbox_denials",
]


_set = object.__setattr__


class Denial(_Record):
    """One refused access, as structured data.

    ``kind`` is one of ``file``, ``net``, ``import``, ``env``, ``api``, ``eval``.
    ``rule`` is the rule text that refused it (``net=DENY|*|10.0.0.0/8|*|OUT``) or ``None`` when
    no rule allowed it; ``origin`` is that rule's origin (``.py-sandboxes(4)``) or ``None``.
    ``suggestion`` is the rule line that would allow the access (``None`` when no line can, as
    for a ``net=DENY``, which no ALLOW overrides).
    """

    __slots__ = ("detail", "kind", "origin", "rule", "suggestion", "target")
    _fields = ("kind", "target", "rule", "origin", "suggestion", "detail")
    kind: str
    target: str
    rule: str | None
    origin: str | None
    suggestion: str | None
    detail: str | None

    def __init__(
        self,
        kind: str,
        target: str,
        rule: str | None = None,
        origin: str | None = None,
        suggestion: str | None = None,
        detail: str | None = None,
    ) -> None:
        _set(self, "kind", kind)
        _set(self, "target", target)
        _set(self, "rule", rule)
        _set(self, "origin", origin)
        _set(self, "suggestion", suggestion)
        _set(self, "detail", detail)


class SandBoxError(Exception):
    """Base class of everything python-sb raises on purpose."""

    denial: Denial | None = None

    def __init__(self, *args: object, denial: Denial | None = None) -> None:
        super().__init__(*args)
        if denial is not None:
            self.denial = denial


# -- configuration ------------------------------------------------------------------------------


class ConfigProblem(_Record):
    """One problem in a rule file set: where (``FILE(LINE)`` or ``<arg>``) and what.

    ``sort_key`` orders problems (file, line); it takes no part in equality.
    """

    __slots__ = ("message", "sort_key", "where")
    _fields = ("where", "message", "sort_key")
    where: str
    message: str
    sort_key: tuple[str, int]

    def __init__(self, where: str, message: str, sort_key: tuple[str, int] = ("", 0)) -> None:
        _set(self, "where", where)
        _set(self, "message", message)
        _set(self, "sort_key", sort_key)

    def _values(self) -> tuple[Any, ...]:
        return (self.where, self.message)

    def __reduce__(self) -> tuple[Any, ...]:
        return (type(self), (self.where, self.message, self.sort_key))

    def __str__(self) -> str:
        return f"{self.where}: {self.message}"


class ConfigError(SandBoxError, ValueError):
    """The rules cannot be used: syntax, unknown key, lock, missing file, ...

    ``problems`` holds every problem found, sorted by file and line; ``str()`` gives them one per
    line, ready for stderr. The command line exits with status 2 on this error and runs nothing.
    """

    def __init__(self, problems: Sequence[ConfigProblem] | str) -> None:
        if isinstance(problems, str):
            problems = [ConfigProblem("<config>", problems)]
        self.problems: tuple[ConfigProblem, ...] = tuple(sorted(problems, key=lambda p: p.sort_key))
        super().__init__("\n".join(str(p) for p in self.problems))

    def __reduce__(self) -> tuple[Any, ...]:
        # Rebuild from the problems, not from the joined message (partial mode pickles errors).
        return (type(self), (list(self.problems),), dict(self.__dict__))


class ProviderUnavailableError(ConfigError):
    """The selected ``os-sandbox`` provider cannot run on this machine (never a silent fallback)."""


# -- run-time refusals --------------------------------------------------------------------------


def _rebuild_os_error(
    cls: type[OSError], message: str, filename: str | None, state: dict[str, Any]
) -> OSError:
    exc = cls(message) if filename is None else cls(message, filename=filename)  # type: ignore[call-arg]
    exc.__dict__.update(state)
    return exc


class _OSRefusal(OSError):
    """Pickles as ``cls(message, filename=...)``: OSError's own reduction passes
    ``(errno, strerror, filename)`` positionally, which these constructors do not take."""

    def __reduce__(self) -> tuple[Any, ...]:
        return (
            _rebuild_os_error,
            (type(self), str(self.strerror), self.filename, dict(self.__dict__)),
        )


class RulePermissionError(PermissionError, _OSRefusal, SandBoxError):
    """A file or operation refused by the rules (``PermissionError``, errno EACCES)."""

    def __init__(self, message: str, *, denial: Denial | None = None, filename: str | None = None):
        if filename is not None:
            PermissionError.__init__(self, errno.EACCES, message, filename)
        else:
            PermissionError.__init__(self, errno.EACCES, message)
        if denial is not None:
            self.denial = denial

    def __str__(self) -> str:
        # The message already names the path; OSError's "[Errno 13] msg: 'path'" form repeats it.
        return str(self.strerror)


class RuleFileNotFoundError(FileNotFoundError, _OSRefusal, SandBoxError):
    """A path hidden by ``ignore=`` (for the program it does not exist), or a read of a path
    that does not exist and that no rule exposes: code that catches ``FileNotFoundError``
    behaves as without the sandbox."""

    def __init__(self, message: str, *, denial: Denial | None = None, filename: str | None = None):
        if filename is not None:
            FileNotFoundError.__init__(self, errno.ENOENT, message, filename)
        else:
            FileNotFoundError.__init__(self, errno.ENOENT, message)
        if denial is not None:
            self.denial = denial

    def __str__(self) -> str:
        return str(self.strerror)


class RuleConnectionRefusedError(ConnectionRefusedError, _OSRefusal, SandBoxError):
    """A network access refused by the ``net=`` rules."""

    def __init__(self, message: str, *, denial: Denial | None = None):
        ConnectionRefusedError.__init__(self, errno.ECONNREFUSED, message)
        if denial is not None:
            self.denial = denial

    def __str__(self) -> str:
        return str(self.strerror)


class RuleApiPermissionError(RulePermissionError):
    """A sensitive call (``python-api``) refused by the rules."""


class RuleImportError(ImportError, SandBoxError):
    """An import refused for a reason other than the module name (kept for completeness)."""

    def __init__(self, message: str, *, name: str | None = None, denial: Denial | None = None):
        ImportError.__init__(self, message, name=name)
        if denial is not None:
            self.denial = denial


class RuleModuleNotFoundError(ModuleNotFoundError, SandBoxError):
    """An import refused by ``python-import``: ``Module named 'socket' is not allowed by a rule``.

    A ``ModuleNotFoundError`` so that ``try: import x / except ImportError`` fallbacks still work.
    """

    def __init__(self, message: str, *, name: str | None = None, denial: Denial | None = None):
        ModuleNotFoundError.__init__(self, message, name=name)
        if denial is not None:
            self.denial = denial


class RuleEvalError(SandBoxError):
    """Base of the errors of the guarded ``eval``/``exec`` (``eval-*`` rules)."""


class EvalSyntaxRejected(SyntaxError, RuleEvalError):
    """Evaluated source uses constructs the ``eval-*`` rules do not allow; lists every one."""

    def __init__(self, message: str, *, violations: Sequence[Denial] = ()):
        SyntaxError.__init__(self, message)
        self.violations: tuple[Denial, ...] = tuple(violations)
        if self.violations:
            self.denial = self.violations[0]


class EvalTimeout(TimeoutError, RuleEvalError):
    """A guarded evaluation ran past ``eval-timeout`` or ``eval-max-iterations``.

    Raised in the caller, never inside the evaluated code (which cannot catch it)."""

    def __init__(
        self, message: str, *, denial: Denial | None = None, filename: str | None = None
    ) -> None:
        # An own __init__: OSError.__new__ then accepts the keywords partial mode's rebuild
        # of a worker's error passes (filename is not used: a timeout names no file).
        TimeoutError.__init__(self, message)
        if denial is not None:
            self.denial = denial


class EvalMemoryError(MemoryError, RuleEvalError):
    """A guarded evaluation would allocate more than ``eval-max-alloc`` (or its worker ran out
    of memory)."""


class EvalRecursionError(RecursionError, RuleEvalError):
    """Functions of an evaluated source nested deeper than ``eval-max-call-depth``."""


class EvalOutputError(OverflowError, RuleEvalError):
    """A guarded evaluation printed more than ``eval-max-output`` characters."""


class EvalAttributeDenied(AttributeError, RuleEvalError):
    """An attribute read or write refused by the ``eval-*`` rules while the source ran."""

    def __init__(self, message: str, *, denial: Denial | None = None):
        AttributeError.__init__(self, message)
        if denial is not None:
            self.denial = denial


class EvalCallDenied(TypeError, RuleEvalError):
    """A call refused while the source ran (``type()`` with three arguments, a metaclass)."""

    def __init__(self, message: str, *, denial: Denial | None = None):
        TypeError.__init__(self, message)
        if denial is not None:
            self.denial = denial


class EvalWorkerError(RuntimeError, RuleEvalError):
    """The worker process of a guarded evaluation died (the call is never re-run)."""


# -- structured access ----------------------------------------------------------------------------


def _chain(exc: BaseException) -> Iterator[BaseException]:
    seen: set[int] = set()
    stack: list[BaseException] = [exc]
    while stack:
        current = stack.pop()
        if id(current) in seen:
            continue
        seen.add(id(current))
        yield current
        if isinstance(current, BaseExceptionGroup):
            stack.extend(reversed(current.exceptions))
        if current.__context__ is not None:
            stack.append(current.__context__)
        if current.__cause__ is not None:
            stack.append(current.__cause__)


def sandbox_denials(exc: BaseException | None) -> list[Denial]:
    """Every refusal recorded in ``exc``, its causes, contexts and exception-group members.

    Returns structured :class:`Denial` records (kind, target, rule, origin, suggestion), outermost
    first. An exception that holds no refusal gives an empty list.
    """

    if exc is None:
        return []
    found: list[Denial] = []
    for item in _chain(exc):
        if isinstance(item, EvalSyntaxRejected) and item.violations:
            found.extend(item.violations)
            continue
        denial = getattr(item, "denial", None)
        if isinstance(item, SandBoxError) and isinstance(denial, Denial):
            found.append(denial)
    return found
